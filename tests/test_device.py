"""GPU training without a GPU: every tensor on the model's device, and GPU files read anywhere.

No test machine has a GPU, so :class:`tests.device_guard.DeviceGuard` stands in for one: it
fails an operation that mixes the model's tensors with tensors made on the host, as CUDA does.
Each shipped config trains (warm start with DAgger, self-play against snapshots, evaluation,
checkpoint, resume) under it. Policies and checkpoints whose tensors were saved on ``cuda:0``
must load, evaluate, play and resume on a machine without CUDA.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.serialization

from card_envs.agents import PolicyAgent
from card_envs.agents.features import DerivedFeatures
from card_envs.games import GAMES, get_game, make_engine
from tests.device_guard import DeviceGuard, DeviceMismatch
from training import yaml12
from training.actors import TorchPolicyActor, load_policy_net, make_actor
from training.config import from_dict, load_config, save_config
from training.evaluate import evaluate
from training.selfplay import SelfPlayVecEnv
from training.shipped import shipped_configs
from training.train import main as train_main
from training.train import train

# Nothing here depends on which engine build runs: make test runs it, make test-pure not.
pytestmark = pytest.mark.same_in_either_build

SHRINK = {
    "env": {"max_steps": 30},  # episodes cut short (a Dogpile game is thousands of ticks)
    "ppo": {"n_steps": 16, "batch_size": 32, "n_epochs": 1,
            "policy_kwargs": {"net_arch": [16, 16]}},
    "selfplay": {"n_envs": 2, "snapshot_every": 32, "pool_size": 2,
                 "opponents": {"self": 1.0}},  # every opponent a snapshot network
    "training": {"total_timesteps": 32, "checkpoint_every": 32},
    "evaluation": {"every": 10**6, "games": 1, "final_games": 0, "parallel": 1},
    # Each config's own DAgger rounds (and labeller: Deluxe Memory's is the search), one game
    # of at most 32 decisions each.
    "pretrain": {"games": 1, "epochs": 1, "batch_size": 32, "max_decisions": 32,
                 "dagger_games": 1, "dagger_epochs": 1},
}


def shrunk(path: Path, **more: dict) -> dict:
    """A shipped config cut to a few rollouts of a few games, every phase still in it (a
    section in ``more`` replaces the shrunk one)."""
    data = yaml12.load(path.read_text())
    for section, values in {**SHRINK, **more}.items():
        data[section] = {**(data.get(section) or {}), **values}
    return data


# The SB3 trainer's configs: a ``backend: rllib`` config trains on Ray (the [rllib] extra, tested
# in its own CI step, where tests/libraries/test_rllib.py puts its module under this guard).
SB3_CONFIGS = [name for name, path in shipped_configs().items()
               if (yaml12.load(path.read_text()).get("backend") or "sb3") == "sb3"]


@pytest.mark.parametrize("name", SB3_CONFIGS)
def test_training_makes_every_tensor_on_the_model_s_device(name: str, tmp_path: Path) -> None:
    """Warm start (cloning and DAgger), self-play against snapshot networks, derived features
    and scored-actions heads, evaluations, checkpoints and a resume: no host tensor meets the
    model's. (Dogpile's features made their constants with torch.zeros on the CPU; the
    evaluation fed host observations to the learner's network.)"""
    cfg = from_dict(shrunk(shipped_configs()[name]))
    run = tmp_path / "run"
    run.mkdir()
    save_config(cfg, run / "config.yaml")
    with DeviceGuard() as guard:
        summary = train(cfg, run, progress=False)
        assert summary["pretrain"]["decisions"] > 0
        cfg = from_dict({**cfg.to_dict(), "training": {**cfg.to_dict()["training"],
                                                       "total_timesteps": 64}})
        resumed = train(cfg, run, resume=True, progress=False)
    assert resumed["num_timesteps"] >= 64
    assert len((run / "eval.csv").read_text().splitlines()) >= 3  # steps 0, 32 and 64
    assert guard.checked > 100  # it did watch the model at work


def test_the_guard_fails_on_a_host_tensor_in_a_forward_pass() -> None:
    """The guard's own check: Dogpile's features as they were (constants made on the CPU)."""
    layer = torch.nn.Linear(3, 2)
    with DeviceGuard():
        layer(torch.zeros(1, 3, device="cpu"))  # moved to the model's device: fine
        with pytest.raises(DeviceMismatch, match="same device"):
            layer(torch.zeros(1, 3))  # made on the host
        out = layer(torch.as_tensor(np.zeros((1, 3), np.float32), device="cpu"))
        with pytest.raises(DeviceMismatch, match="numpy"):
            out.numpy()
        assert out.detach().cpu().numpy().shape == (1, 2)
        with pytest.raises(DeviceMismatch):
            torch.cat([out, torch.zeros(1, 2)], 1)


@pytest.mark.parametrize("game", [g for g in GAMES if get_game(g).features is not None])
def test_derived_features_run_on_any_device(game: str) -> None:
    """On the meta device (shapes only), a feature table left on the CPU fails as on CUDA."""
    engine = make_engine(game)
    space = make_engine(game)
    extractor = DerivedFeatures(
        __import__("gymnasium").spaces.Box(*space.layout.bounds(), dtype=np.float32), game, {})
    out = extractor(torch.zeros(5, engine.layout.size, device="meta"))
    assert out.device.type == "meta" and out.shape == (5, extractor.features_dim)


def _tiny_model(game: str = "roy") -> tuple[SelfPlayVecEnv, object]:
    from sb3_contrib import MaskablePPO

    venv = SelfPlayVecEnv(game, {}, 2, {"random": 1.0}, seed=0)
    return venv, MaskablePPO("MlpPolicy", venv, n_steps=8, batch_size=16, device="cpu",
                             policy_kwargs={"net_arch": [8]})


def test_snapshots_live_on_the_learner_s_device() -> None:
    """A snapshot network is made where the learner is (meta here: any device but the CPU)."""
    _, model = _tiny_model()
    policy = model.policy.to("meta")
    net = load_policy_net(policy)
    assert {p.device.type for p in net.parameters()} == {"meta"}
    assert {p.device.type for p in load_policy_net(policy, "cpu").parameters()} == {"cpu"}


@contextlib.contextmanager
def saved_as_if_on(location: str) -> Iterator[None]:
    """Every ``torch.save`` in the block records its tensors as stored on ``location``, as a
    GPU machine's files do: loading them without ``map_location`` then fails without CUDA."""
    original = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: location  # type: ignore[assignment]
    try:
        yield
    finally:
        torch.serialization.location_tag = original


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_a_run_trained_on_a_gpu_evaluates_plays_and_resumes_without_one(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = shrunk(shipped_configs()["roy"])
    data["env"].pop("max_steps")
    # In one process: the patch below would also tag the tensors pickled to worker processes.
    data["selfplay"]["workers"] = 1
    cfg = from_dict(data)
    run = tmp_path / "run"
    run.mkdir()
    save_config(cfg, run / "config.yaml")
    with saved_as_if_on("cuda:0"):
        train(cfg, run, progress=False)
    # The run's config says cuda, as a GPU run's does.
    data["training"]["device"] = "cuda"
    (run / "config.yaml").write_text(yaml12.dump(data))
    with pytest.raises(RuntimeError, match="CUDA"):  # what a plain torch.load meets here
        torch.load(run / "checkpoint.pt", weights_only=False)

    report = evaluate("roy", [str(run), "random"], games=4, seed=0, config=cfg.env)
    assert report["matches"][0]["games"] == 4
    agent = PolicyAgent(run / "best.zip", deterministic=False, seed=0)
    engine = make_engine("roy", **cfg.env)
    engine.reset(seed=0)
    seat = engine.current_player
    assert engine.legal_mask()[agent.act(engine.observation(seat), engine.legal_mask())]
    assert isinstance(make_actor(str(run / "final.zip"), "roy", cfg.env), TorchPolicyActor)
    summary = train_main(["--resume", str(run), "--set", "training.device=cpu",
                          "--total-timesteps", "64", "--no-progress"])
    assert summary["num_timesteps"] >= 64
    assert load_config(run / "config.yaml").training.device == "cpu"

"""Saved policies record what they were trained on (card_envs/agents/provenance.py) and are
refused elsewhere unless the caller says otherwise: as opponents (make_agent, the Gymnasium
env), in training.evaluate (Python and command line), and a checkpoint on resume."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import torch
from sb3_contrib import MaskablePPO

import card_envs
from card_envs import __version__
from card_envs.agents import PolicyAgent, make_agent
from card_envs.agents.provenance import (
    ENTRY,
    PolicyMismatchError,
    UnrecordedPolicyWarning,
    env_identity,
    read_identity,
    record_identity,
)
from card_envs.agents.search import SearchAgent
from card_envs.core.gym_env import CardGymEnv
from card_envs.games import make_engine
from card_envs.versions import env_name
from tests.test_training import game_config
from training.actors import make_actor
from training.config import from_dict
from training.evaluate import evaluate
from training.evaluate import main as evaluate_main
from training.selfplay import SelfPlayVecEnv
from training.train import main as train_main
from training.train import save_model, train

GAME_OPTIONS = {"episode": "game", "target_score": 30}


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small policy saved as the trainer saves them, for ROY played to 30 points."""
    venv = SelfPlayVecEnv("roy", GAME_OPTIONS, 2, {"random": 1.0}, seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=32, device="cpu",
                        policy_kwargs={"net_arch": [8]})
    path = tmp_path_factory.mktemp("policy") / "p.zip"
    save_model(model, path, env_identity("roy", GAME_OPTIONS))
    return path


def _rewrite_identity(src: Path, dst: Path, **changes: object) -> Path:
    """A copy of ``src`` whose recorded identity has ``changes`` (as another version of the
    package would have written it)."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w") as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename == ENTRY:
                data = json.dumps({**json.loads(data), **changes}).encode()
            new.writestr(item, data)
    return dst


def test_a_saved_policy_records_its_env(policy: Path) -> None:
    saved = read_identity(policy)
    assert saved is not None
    assert saved["game"] == "roy" and saved["env_id"] == env_name("roy")  # roy_v1 today
    assert saved["env_config"]["episode"] == "game" and saved["env_config"]["target_score"] == 30
    assert saved["package_version"] == __version__
    assert saved["observation_layout"]["size"] > 0 and len(saved["observation_layout"]["digest"])
    assert MaskablePPO.load(policy).observation_space.shape  # SB3 still reads it


def test_an_opponent_trained_on_other_options_is_refused(policy: Path) -> None:
    """The issue's case: a policy of episode=game accepted in an episode=hand env (only the
    observation's shape was checked, and it is the same)."""
    with pytest.raises(PolicyMismatchError) as info:
        make_agent(str(policy), "roy", {"episode": "hand"})
    message = str(info.value)
    assert f"policy {str(policy)!r} was not trained on this env" in message
    assert "option episode: policy 'game', env 'hand'" in message
    assert "option target_score: policy 30, env 100" in message
    assert "allow_policy_mismatch=True" in message and "--allow-policy-mismatch" in message
    with pytest.raises(PolicyMismatchError, match="option episode"):
        CardGymEnv("roy", opponent=str(policy), episode="hand")
    with pytest.raises(PolicyMismatchError, match="option episode"):
        make_actor(str(policy), "roy", {"episode": "hand"})
    # Said otherwise, explicitly: it plays.
    assert make_agent(str(policy), "roy", {"episode": "hand"}, allow_policy_mismatch=True)
    agent = PolicyAgent(policy, allow_mismatch=True)
    assert make_agent(agent, "roy", {"episode": "hand"}) is agent
    assert make_actor(str(policy), "roy", {"episode": "hand"}, allow_policy_mismatch=True)
    # Where everything matches, nothing needs saying.
    assert make_agent(str(policy), "roy", GAME_OPTIONS)
    CardGymEnv("roy", opponent=str(policy), **GAME_OPTIONS)


def test_a_search_prior_trained_on_other_options_is_refused(policy: Path) -> None:
    """The search's prior policy is checked as any policy is, and said otherwise, plays."""
    spec = f"search:policy={policy},rollout=heuristic,simulations=4"
    with pytest.raises(PolicyMismatchError, match="option episode"):
        make_agent(spec, "roy", {"episode": "hand"})
    search = make_agent(spec, "roy", {"episode": "hand"}, allow_policy_mismatch=True)
    assert isinstance(search, SearchAgent) and search._policy is not None
    engine = make_engine("roy", episode="hand")
    engine.reset(seed=0)
    assert engine.is_legal(search.act_in(engine))


@pytest.mark.parametrize(("changes", "listed"), [
    ({"package_version": "0.0.1"}, f"package version: policy '0.0.1', env {__version__!r}"),
    ({"env_id": "roy_v0"}, f"env id: policy 'roy_v0', env {env_name('roy')!r}"),
    ({"observation_layout": {"size": 1, "digest": "0" * 16}}, "observation layout: policy"),
    ({"game": "dogpile"}, "game: policy 'dogpile', env 'roy'"),
])
def test_any_recorded_difference_is_listed(policy: Path, tmp_path: Path, changes: dict,
                                           listed: str) -> None:
    other = _rewrite_identity(policy, tmp_path / "other.zip", **changes)
    with pytest.raises(PolicyMismatchError, match="was not trained on this env") as info:
        make_agent(str(other), "roy", GAME_OPTIONS)
    assert listed in str(info.value)


def test_a_policy_saved_by_sb3_itself_warns_and_can_be_recorded(policy: Path,
                                                                 tmp_path: Path) -> None:
    """SB3's own ``model.save`` records no env: loaded with a warning naming what was not
    checked; record_identity() stamps it, after which a mismatch is refused."""
    bare = tmp_path / "bare.zip"
    MaskablePPO.load(policy).save(bare)
    with pytest.warns(UnrecordedPolicyWarning, match="records no game, options or versions"):
        assert make_agent(str(bare), "roy", {"episode": "hand"})
    record_identity(bare, "roy", GAME_OPTIONS)
    assert read_identity(bare) == read_identity(policy)
    with pytest.raises(PolicyMismatchError, match="option episode: policy 'game', env 'hand'"):
        make_agent(str(bare), "roy", {"episode": "hand"})
    assert MaskablePPO.load(bare).observation_space.shape  # still SB3's file


def test_a_newer_package_refuses_an_older_policy(policy: Path, monkeypatch) -> None:
    monkeypatch.setattr(card_envs, "__version__", "9.9.9")
    with pytest.raises(PolicyMismatchError, match=r"package version: policy '.*', env '9\.9\.9'"):
        make_agent(str(policy), "roy", GAME_OPTIONS)


def test_evaluate_refuses_a_mismatched_policy_unless_told(policy: Path, tmp_path: Path,
                                                          capsys) -> None:
    with pytest.raises(PolicyMismatchError, match="option episode"):
        evaluate("roy", [str(policy), "random"], games=2, config={"episode": "hand"})
    report = evaluate("roy", [str(policy), "random"], games=2, config={"episode": "hand"},
                      allow_policy_mismatch=True)
    assert report["matches"][0]["games"] == 2
    argv = ["--game", "roy", "--agents", str(policy), "random", "--games", "2", "--env",
            "episode=hand", "--out", str(tmp_path / "e")]
    with pytest.raises(SystemExit) as exit_info:
        evaluate_main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "option episode: policy 'game', env 'hand'" in err and "Traceback" not in err
    assert evaluate_main([*argv, "--allow-policy-mismatch"])["matches"][0]["games"] == 2


def test_a_run_s_policies_and_checkpoint_record_its_env(tmp_path: Path, capsys) -> None:
    """best.zip, latest.zip and final.zip record the run's game options; so does the
    checkpoint, and a resume under another package version is refused unless allowed."""
    data = game_config("roy")
    data["training"].update(total_timesteps=256, checkpoint_every=256)
    data["evaluation"].update(every=256, final_games=0)
    run = tmp_path / "runs" / "roy" / "r"
    cfg = from_dict(data)
    train(cfg, run, progress=False)
    expected = env_identity("roy", cfg.env)
    for name in ("best.zip", "latest.zip", "final.zip"):
        assert read_identity(run / name) == expected, name
    state = torch.load(run / "checkpoint.pt", weights_only=False)
    assert state["identity"] == expected
    state["identity"] = {**expected, "package_version": "0.0.1"}
    torch.save(state, run / "checkpoint.pt")
    argv = ["--resume", str(run), "--total-timesteps", "512", "--no-progress"]
    with pytest.raises(SystemExit) as exit_info:
        train_main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert (f"package version: checkpoint '0.0.1', env {__version__!r}" in err
            and "--allow-policy-mismatch" in err), err
    assert train_main([*argv, "--allow-policy-mismatch"])["num_timesteps"] == 512

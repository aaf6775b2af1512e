"""``backend: rllib`` without Ray (the default test run): the config section and its checks,
the PPO mapping onto RLlib's names, the league's seating (Ray-free), the dispatch, and the
clear error where Ray is missing. The RLlib training itself is tested where Ray is installed
(tests/libraries/test_rllib_train.py, ``make test-rllib``)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from card_envs.adapters.rllib_league import (
    HEURISTIC,
    LEARNER,
    RANDOM,
    League,
    SnapshotPool,
    opponent_kind,
    snapshot_id,
)
from training import rllib_settings, train
from training.config import ConfigError, from_dict, load_config

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ["player_0", "player_1", "player_2"]


def _cfg(**sections: Any) -> dict[str, Any]:
    return {"game": "roy", "backend": "rllib", **sections}


def test_the_driver_s_auto_torch_threads_leave_each_env_runner_a_core(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import training.selfplay_workers as workers_module

    monkeypatch.setattr(workers_module, "available_cores", lambda: 8)
    threads = {runners: rllib_settings.driver_torch_threads(from_dict(_cfg(
        training={"torch_threads": "auto"}, rllib={"num_env_runners": runners})))
        for runners in (0, 2, 8)}
    assert threads == {0: 8, 2: 6, 8: 1}
    assert rllib_settings.driver_torch_threads(from_dict(_cfg(
        training={"torch_threads": 3}, rllib={"num_env_runners": 2}))) == 3


def test_backend_defaults_to_sb3_and_the_section_to_a_local_ray() -> None:
    cfg = from_dict({"game": "roy"})
    assert cfg.backend == "sb3"
    rl = from_dict(_cfg()).rllib
    assert (rl.address, rl.num_env_runners, rl.num_learners, rl.num_gpus_per_learner) == (
        None, 2, 0, 0.0)


@pytest.mark.parametrize(("data", "refused"), [
    (_cfg(rllib={"num_env_runner": 2}), "rllib.num_env_runner: unknown key"),
    (_cfg(rllib={"num_env_runners": -1}), "rllib.num_env_runners"),
    (_cfg(rllib={"num_envs_per_env_runner": 0}), "rllib.num_envs_per_env_runner"),
    (_cfg(rllib={"num_learners": True}), "rllib.num_learners"),
    (_cfg(rllib={"address": ""}), "rllib.address"),
    ({"game": "roy", "backend": "ray"}, "backend"),
    (_cfg(ppo={"clip_range_vf": 0.2}), "ppo.clip_range_vf: not supported with backend: rllib"),
    (_cfg(ppo={"normalize_advantage": False}), "ppo.normalize_advantage: not supported"),
    (_cfg(ppo={"target_kl": 0.02}), "ppo.target_kl: not supported"),
    (_cfg(ppo={"policy_kwargs": {"optimizer_kwargs": {"eps": 1e-5}}}),
     "ppo.policy_kwargs.optimizer_kwargs: not supported"),
    (_cfg(selfplay={"workers": 2}), "selfplay.workers: not supported"),
    (_cfg(training={"device": "cuda"}), "training.device"),
    (_cfg(rllib={"address": "auto", "num_cpus": 4}), "rllib.num_cpus: not supported"),
    (_cfg(selfplay={"n_envs": 8}, rllib={"num_env_runners": 2, "num_envs_per_env_runner": 3}),
     "rllib.num_envs_per_env_runner: 3 games in each of 2 EnvRunner(s) is 6 games, but "
     "selfplay.n_envs is 8"),
    (_cfg(rllib={"num_gpus_per_learner": 2}), "rllib.num_gpus_per_learner"),
])
def test_what_rllib_cannot_honour_is_refused_by_name(data: dict[str, Any],
                                                     refused: str) -> None:
    with pytest.raises(ConfigError, match=refused.replace("(", r"\(").replace(")", r"\)")):
        from_dict(data, check_cuda=False)


def test_the_same_keys_are_fine_under_sb3() -> None:
    from_dict({"game": "roy", "ppo": {"target_kl": 0.02}, "selfplay": {"workers": 2}})


def test_ppo_maps_onto_rllib_s_names_and_batches() -> None:
    cfg = from_dict(_cfg(ppo={"learning_rate": 1e-4, "n_steps": 64, "batch_size": 256,
                              "n_epochs": 3, "gamma": 0.98, "gae_lambda": 0.9,
                              "clip_range": 0.1, "ent_coef": 0.003, "vf_coef": 0.7,
                              "max_grad_norm": 0.4},
                         selfplay={"n_envs": 8}, rllib={"num_env_runners": 3}))
    assert rllib_settings.envs_per_runner(cfg) == 3  # 8 games over 3 runners, rounded up
    got = rllib_settings.ppo_training_settings(cfg, num_players=2, simultaneous=False)
    assert got == {"lr": 1e-4, "gamma": 0.98, "lambda_": 0.9, "clip_param": 0.1,
                   "vf_clip_param": math.inf, "entropy_coeff": 0.003, "vf_loss_coeff": 0.7,
                   "grad_clip": 0.4, "grad_clip_by": "global_norm", "num_epochs": 3,
                   "minibatch_size": 256, "use_kl_loss": False,
                   # 64 learner steps in each of 3 x 3 games, two env steps per learner step
                   "train_batch_size_per_learner": 64 * 9 * 2}
    simultaneous = rllib_settings.ppo_training_settings(cfg, 2, simultaneous=True)
    assert simultaneous["train_batch_size_per_learner"] == 64 * 9
    assert rllib_settings.rollout_fragment_length(cfg, 3, simultaneous=False) == 64 * 3
    two = from_dict(_cfg(rllib={"num_learners": 2, "num_envs_per_env_runner": 4}))
    per = rllib_settings.ppo_training_settings(two, 2, simultaneous=False)
    assert per["train_batch_size_per_learner"] == 128 * 8 * 2 // 2  # split over learners


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    real_find_spec = rllib_settings.importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        if name.split(".")[0] != "ray":  # (torch asks for its own optional modules)
            return real_find_spec(name, *args)
        raise ModuleNotFoundError(f"No module named {name.split('.')[0]!r}")

    monkeypatch.setattr(rllib_settings.importlib.util, "find_spec", find_spec)
    with pytest.raises(ConfigError, match=r"pip install 'card-envs\[rllib\]'"):
        rllib_settings.require_ray()
    config = tmp_path / "c.yaml"
    config.write_text("game: roy\nbackend: rllib\n")
    with pytest.raises(SystemExit) as stop:
        train.main(["--config", str(config), "--runs-dir", str(tmp_path / "runs"),
                    "--no-progress"])
    assert stop.value.code == 2
    assert "card-envs[rllib]" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists(), "no run directory before the error"
    with pytest.raises(ConfigError, match="card-envs"):
        train.train(load_config(config), tmp_path / "run")


def test_ray_s_import_time_settings_come_before_ray_is_imported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray reads RAY_DISABLE_FAILURE_SIGNAL_HANDLER as it is imported (find_spec imports it):
    without it a SIGTERM while ray.init runs aborted the trainer (status 134, no summary;
    tests/libraries/test_rllib_train.py runs that). A user's own setting is kept."""
    seen: list[str | None] = []

    def find_spec(name: str) -> object:
        seen.append(os.environ.get("RAY_DISABLE_FAILURE_SIGNAL_HANDLER"))
        return object()

    monkeypatch.setattr(rllib_settings.importlib.util, "find_spec", find_spec)
    monkeypatch.delenv("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", raising=False)
    rllib_settings.require_ray()
    monkeypatch.setenv("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "0")
    rllib_settings.require_ray()
    assert seen == ["1", "0"]


def test_an_rllib_config_is_loaded_and_checked_without_importing_ray(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("game: roy\nbackend: rllib\nrllib: {num_env_runners: 4}\n")
    code = ("import sys; from training.config import load_config; import training.train; "
            f"cfg = load_config({str(config)!r}); assert cfg.rllib.num_env_runners == 4; "
            "assert not [m for m in sys.modules if m == 'ray' or m.startswith('ray.')]")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# -- the league (Ray-free) -------------------------------------------------------------------------
def _league(**kwargs: Any) -> League:
    args: dict[str, Any] = {"agents": AGENTS, "opponents": {"self": 0.5, "random": 0.2,
                                                            "heuristic": 0.3},
                            "latest_prob": 0.5, "learner_seat": "random", "seed": 7}
    league = League(**{**args, **kwargs})
    league.set_pool([0, 1, 2], newest=2)
    return league


def test_the_league_seats_opponents_at_the_selfplay_rates() -> None:
    league, n = _league(latest_prob=0.7), 6000
    seats = [league.draw() for _ in range(n)]
    learner_at = Counter(next(a for a, m in s.items() if m == LEARNER) for s in seats)
    assert all(abs(learner_at[a] / n - 1 / 3) < 0.03 for a in AGENTS), learner_at
    assert all(list(s.values()).count(LEARNER) == 1 for s in seats)
    kinds = Counter(opponent_kind(m) for s in seats for m in s.values() if m != LEARNER)
    total = sum(kinds.values())
    for kind, rate in (("self", 0.5), (RANDOM, 0.2), (HEURISTIC, 0.3)):
        assert abs(kinds[kind] / total - rate) < 0.03, kinds
    snaps = Counter(m for s in seats for m in s.values() if m.startswith("snapshot_"))
    # the newest at latest_prob, else uniform over the three: 0.7 + 0.3 / 3 for the newest
    assert abs(snaps[snapshot_id(2)] / kinds["self"] - (0.7 + 0.3 / 3)) < 0.03, snaps
    assert abs(snaps[snapshot_id(0)] / kinds["self"] - 0.3 / 3) < 0.03, snaps


def test_the_league_without_snapshots_and_with_a_fixed_seat() -> None:
    league = League(AGENTS, {"self": 1.0}, 0.5, learner_seat=1, seed=0)
    for _ in range(50):
        seats = league.draw()
        assert seats == {"player_0": RANDOM, "player_1": LEARNER, "player_2": RANDOM}
    with pytest.raises(ValueError, match="learner_seat"):
        League(AGENTS, {"self": 1.0}, 0.5, learner_seat=3, seed=0)
    with pytest.raises(ValueError, match="newest slot"):
        league.set_pool([0, 1], newest=4)


def test_the_league_draws_once_per_episode_and_reproducibly() -> None:
    class Episode:
        def __init__(self, id_: str) -> None:
            self.id_ = id_

    a, b = _league(), _league()
    episodes = [Episode(str(i)) for i in range(40)]
    first = [{agent: a(agent, e) for agent in AGENTS} for e in episodes]
    # One episode's seats are drawn once: asking again (any order) gives the same modules.
    assert first == [{agent: a(agent, e) for agent in reversed(AGENTS)} for e in episodes]
    assert first == [{agent: b(agent, e) for agent in AGENTS} for e in episodes]
    b.bind(worker_index=2, generation=0)  # another EnvRunner: its own stream
    assert first != [{agent: b(agent, Episode("x" + e.id_)) for agent in AGENTS}
                     for e in episodes]


def test_the_snapshot_pool_overwrites_its_oldest_slot() -> None:
    pool = SnapshotPool(2)
    assert [pool.add(s) for s in (0, 10, 20, 30)] == [0, 1, 0, 1]
    assert pool.steps == {0: 20, 1: 30} and pool.newest == 1
    again = SnapshotPool(2)
    again.load_state_dict(pool.state_dict())
    assert (again.steps, again.newest, again.next_slot()) == (pool.steps, 1, 0)


def test_rllib_runs_keep_their_outputs_in_the_run_directory_list() -> None:
    assert "rllib" in train.RUN_OUTPUTS  # a restarted run directory drops RLlib's folders too


def test_checkpoints_from_before_the_backend_key_resume_and_rllib_runs_may_move(
        tmp_path: Path) -> None:
    from training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

    sb3 = from_dict({"game": "roy"}).to_dict()
    old = {k: v for k, v in sb3.items() if k not in ("backend", "rllib")}
    save_checkpoint(tmp_path / "old.pt", {"config": old, "num_timesteps": 5})
    assert load_checkpoint(tmp_path / "old.pt", sb3)["num_timesteps"] == 5
    with pytest.raises(CheckpointError, match="backend: checkpoint 'sb3', now 'rllib'"):
        load_checkpoint(tmp_path / "old.pt", from_dict(_cfg()).to_dict())
    ran = from_dict(_cfg()).to_dict()
    save_checkpoint(tmp_path / "rl.pt", {"config": ran, "num_timesteps": 7})
    # Resumed on a cluster, with more EnvRunners and its own runtime_env: the same run.
    moved = from_dict(_cfg(rllib={"address": "10.0.0.1:6379", "num_env_runners": 8,
                                  "runtime_env": {"pip": ["card-envs[rllib]"]}})).to_dict()
    assert load_checkpoint(tmp_path / "rl.pt", moved)["num_timesteps"] == 7
    with pytest.raises(CheckpointError, match="rllib.num_learners: checkpoint 0, now 2"):
        load_checkpoint(tmp_path / "rl.pt", from_dict(_cfg(rllib={"num_learners": 2})).to_dict())

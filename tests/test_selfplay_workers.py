"""``selfplay.workers``: the self-play games in worker processes, the learner in this one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from tests.test_training import (
    StopAfter,
    _csv_rows,
    _exact_config,
    _policy_params,
    game_config,
)
from training.checkpoint import CheckpointError
from training.config import ConfigError, from_dict, save_config
from training.selfplay import SelfPlayVecEnv
from training.selfplay_workers import (
    WorkerSelfPlayVecEnv,
    available_cores,
    resolve_torch_threads,
    resolve_workers,
    worker_seeds,
)
from training.train import train

RATES = {"self": 0.5, "random": 0.25, "heuristic": 0.25}


def _play(env, policy_source, steps: int) -> list[bytes]:
    """Observations, rewards and dones of ``steps`` steps, the learner playing its first legal
    move, after two snapshots of ``policy_source`` went into the pool."""
    env.pool.add(policy_source, 0)
    env.pool.add(policy_source, 1)
    out = [env.reset().tobytes()]
    for _ in range(steps):
        obs, rewards, dones, infos = env.step(env.action_masks().argmax(axis=1))
        out += [obs.tobytes(), rewards.tobytes(), dones.tobytes(),
                repr([(i.get("winners"), i.get("opponent")) for i in infos]).encode()]
    return out


@pytest.fixture(scope="module")
def policy():
    env = SelfPlayVecEnv("roy", {}, 2, {"random": 1.0}, seed=0)
    return MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, device="cpu", seed=0,
                       policy_kwargs={"net_arch": [16]}).policy


def test_workers_play_each_slice_as_one_process_would(policy) -> None:
    """Worker w's games are those of an in-process VecEnv over its slice with its seed: the
    workers add processes, not behaviour; the same seed plays the same games again."""
    workers = WorkerSelfPlayVecEnv("roy", {}, 5, RATES, 2, seed=11, pool_size=2)
    try:
        got = _play(workers, policy, 40)
        assert [len(s) for s in workers.slices] == [3, 2]
        assert workers.get_attr("learner_seat") == [int(s) for s in
                                                    workers.get_attr("learner_seat")]
    finally:
        workers.close()
    again = WorkerSelfPlayVecEnv("roy", {}, 5, RATES, 2, seed=11, pool_size=2)
    try:
        assert _play(again, policy, 40) == got
    finally:
        again.close()
    parts = [SelfPlayVecEnv("roy", {}, n, RATES, pool_size=2, seed=s)
             for n, s in zip((3, 2), worker_seeds(11, 2), strict=True)]
    for part in parts:
        part.pool.add(policy, 0)
        part.pool.add(policy, 1)
    joined = [np.concatenate([p.reset() for p in parts]).tobytes()]
    assert joined[0] == got[0]
    for k in range(40):
        steps = [p.step(p.action_masks().argmax(axis=1)) for p in parts]
        assert np.concatenate([s[0] for s in steps]).tobytes() == got[1 + 4 * k]
        assert np.concatenate([s[1] for s in steps]).tobytes() == got[2 + 4 * k]


def test_a_worker_s_error_names_the_worker_and_its_envs(policy) -> None:
    env = WorkerSelfPlayVecEnv("roy", {}, 4, {"random": 1.0}, 2, seed=0)
    try:
        env.reset()
        illegal = (~env.action_masks()).argmax(axis=1)
        with pytest.raises(ValueError, match=r"self-play worker 0 \(envs 0..1\): env 0: the "
                                             r"learner chose illegal action"):
            env.step(illegal)
    finally:
        env.close()


def test_auto_is_the_machine_s_cores_less_the_learner_s_capped_by_n_envs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import training.selfplay_workers as workers_module

    assert resolve_workers("auto", 10_000) == max(1, available_cores() - 1)
    for cores, n_envs, expected in ((16, 32, 15), (16, 8, 8), (2, 32, 1), (1, 32, 1)):
        monkeypatch.setattr(workers_module, "available_cores", lambda c=cores: c)
        assert resolve_workers("auto", n_envs) == expected, (cores, n_envs)
    assert resolve_workers("auto", 1) == 1
    assert resolve_workers(3, 4) == 3
    with pytest.raises(ValueError, match="at most one worker per game"):
        resolve_workers(5, 4)
    with pytest.raises(ConfigError, match=r"^selfplay.workers: 9 worker processes for "
                                          r"selfplay.n_envs 8 games"):
        from_dict(game_config("roy", selfplay={"n_envs": 8, "workers": 9}))
    with pytest.raises(ConfigError, match="selfplay.workers"):
        from_dict(game_config("roy", selfplay={"workers": 0}))


def test_auto_torch_threads_are_the_cores_the_worker_processes_leave(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import training.selfplay_workers as workers_module

    for cores, busy, expected in ((2, 0, 2), (16, 15, 1), (16, 8, 8), (1, 0, 1), (4, 6, 1)):
        monkeypatch.setattr(workers_module, "available_cores", lambda c=cores: c)
        assert resolve_torch_threads("auto", busy) == expected, (cores, busy)
    assert resolve_torch_threads(3, 15) == 3  # a number is taken as given
    with pytest.raises(ConfigError, match=r"training.torch_threads: expected an integer in "
                                          r"1\.\.1024 or 'auto', got 'all'"):
        from_dict(game_config("roy", training={"torch_threads": "all"}))


@pytest.mark.parametrize(("workers", "cores", "threads"), [(1, 3, 3), (2, 5, 3)])
def test_a_run_gives_torch_the_cores_its_workers_leave(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workers: int, cores: int,
        threads: int) -> None:
    """In one process the games and the update take turns (all cores for torch); worker
    processes each keep one."""
    import training.selfplay_workers as workers_module
    import training.train as train_module

    set_to: list[int] = []
    monkeypatch.setattr(workers_module, "available_cores", lambda: cores)
    monkeypatch.setattr(train_module.torch, "set_num_threads", set_to.append)
    data = _exact_config(workers=workers).to_dict()
    data["training"].update(torch_threads="auto", total_timesteps=256)
    cfg = from_dict(data)
    save_config(cfg, tmp_path / "config.yaml")
    train(cfg, tmp_path, progress=False, final_eval=False)
    assert set_to[0] == threads


def test_two_torch_threads_repeat_a_run_exactly(tmp_path: Path) -> None:
    """docs/training.md: a run repeats on the same thread count (the shipped configs' auto
    is 2 on 2 cores)."""
    before = torch.get_num_threads()
    data = _exact_config().to_dict()
    data["training"].update(torch_threads=2, total_timesteps=512)
    # The shipped width and whole rollouts as minibatches: products big enough to be split.
    data["ppo"].update(batch_size=256, policy_kwargs={"net_arch": [256, 256]})
    cfg = from_dict(data)
    try:
        for run in ("a", "b"):
            save_config(cfg, tmp_path / run / "config.yaml")
            train(cfg, tmp_path / run, progress=False, final_eval=False)
    finally:
        torch.set_num_threads(before)
    a, b = _policy_params(tmp_path / "a"), _policy_params(tmp_path / "b")
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def two_worker_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cfg = _exact_config(workers=2)
    run = tmp_path_factory.mktemp("workers")
    save_config(cfg, run / "config.yaml")
    train(cfg, run, progress=False)
    return run


def test_two_workers_give_the_same_run_for_the_same_seed(two_worker_run: Path,
                                                         tmp_path: Path) -> None:
    cfg = _exact_config(workers=2)
    save_config(cfg, tmp_path / "config.yaml")
    train(cfg, tmp_path, progress=False)
    a, b = _policy_params(two_worker_run), _policy_params(tmp_path)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert _csv_rows(tmp_path / "eval.csv") == _csv_rows(two_worker_run / "eval.csv")
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    assert len(state["venv"]["workers"]) == 2


def test_resume_with_two_workers_continues_exactly(two_worker_run: Path, tmp_path: Path) -> None:
    """Stopped between checkpoints and resumed (workers: auto adopts the checkpoint's 2), the
    run ends as the uninterrupted one did; a resume asking for another count is refused."""
    cfg = _exact_config(workers=2)
    save_config(cfg, tmp_path / "config.yaml")
    train(cfg, tmp_path, progress=False, extra_callbacks=[StopAfter(900)])
    with pytest.raises(CheckpointError, match=r"selfplay.workers: the checkpoint's games run "
                                              r"in 2 worker process\(es\), the config asks for 1"):
        train(_exact_config(workers=1), tmp_path, resume=True, progress=False)
    train(_exact_config(workers="auto"), tmp_path, resume=True, progress=False)
    a, b = _policy_params(two_worker_run), _policy_params(tmp_path)
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    assert _csv_rows(tmp_path / "progress.csv") == _csv_rows(two_worker_run / "progress.csv")
    assert _csv_rows(tmp_path / "eval.csv") == _csv_rows(two_worker_run / "eval.csv")


def test_worker_seeds_are_distinct_and_follow_the_seed() -> None:
    """Workers with one seed would deal every slice the same games."""
    seeds = worker_seeds(11, 4)
    assert len(set(seeds)) == 4 and seeds == worker_seeds(11, 4)
    assert worker_seeds(12, 4) != seeds

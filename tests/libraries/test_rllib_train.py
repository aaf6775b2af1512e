"""``backend: rllib`` for real (``make test-rllib``; skipped without Ray): RLlib PPO with our
league on a local Ray. The league's mechanics in one process (only the learner learns; a
snapshot is the learner's weights, frozen; every opponent kind plays), then the command line:
a self-play run of ROY with two EnvRunner processes, killed (SIGKILL) after a checkpoint,
refused to a second process while it runs, resumed and stopped by SIGTERM during its last
iteration, resumed and sent SIGTERM while it shuts Ray down, resumed to the end, and its
exported policy evaluated in a process that never imports Ray."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402
import torch  # noqa: E402

from card_envs.adapters.rllib import TurnBasedEnv  # noqa: E402
from card_envs.adapters.rllib_league import LEARNER, snapshot_id  # noqa: E402
from training import rllib_algo, rllib_settings, rllib_train  # noqa: E402
from training.config import from_dict  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: The raylet waits for its agents 100 s by default: too little on a loaded CI machine (the
#: trainer sets it for a local Ray itself; the test's own processes get it here).
RAY_ENV = {"RAY_agent_register_timeout_ms": "300000",
           "RAY_gcs_rpc_server_connect_timeout_s": "180"}
SMALL = {"ppo": {"n_steps": 32, "batch_size": 64, "n_epochs": 2,
                 "policy_kwargs": {"net_arch": [32, 32]}},
         "selfplay": {"n_envs": 4, "pool_size": 2,
                      "opponents": {"self": 1.0, "random": 1.0, "heuristic": 1.0}}}


@pytest.fixture(autouse=True)
def _ray_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in RAY_ENV.items():
        monkeypatch.setenv(key, value)


def _weights(algo: Any, module: str) -> dict[str, np.ndarray]:
    weights = algo.learner_group.get_weights(module_ids=[module])[module]
    return {k: np.array(v, copy=True) for k, v in weights.items()}


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_the_league_trains_only_the_learner_and_freezes_its_snapshots() -> None:
    cfg = from_dict({"game": "roy", "backend": "rllib", "seed": 5, "env": {"num_players": 2},
                     **SMALL, "rllib": {"num_env_runners": 0},
                     "pretrain": {"games": 2, "epochs": 1}})
    assert rllib_algo.init_ray(cfg)
    try:
        algo = rllib_algo.build_algorithm_config(cfg).build_algo()
        empty_slot = _weights(algo, snapshot_id(1))
        # The warm start (the SB3 trainer's behaviour cloning) is what the learner starts from.
        cloned, stats = rllib_train.initial_weights(cfg)
        assert cloned is not None and stats["decisions"] > 0
        algo.learner_group.set_weights({LEARNER: cloned})
        assert _same(_weights(algo, LEARNER), {k: v.numpy() for k, v in cloned.items()})
        rllib_algo.take_snapshot(algo, 0)
        rllib_algo.sync_league(algo, [0], newest=0, generation=0)
        start = _weights(algo, LEARNER)
        assert _same(_weights(algo, snapshot_id(0)), start)
        played: dict[str, float] = {}
        wins: dict[str, list[float]] = {}
        for _ in range(3):
            result = algo.train()
            for module, games in result["env_runners"]["league"].items():
                played[module] = played.get(module, 0) + games
            for kind in ("self", "random", "heuristic"):
                wins.setdefault(kind, []).append(result["env_runners"].get(f"win_vs_{kind}"))
        assert not _same(_weights(algo, LEARNER), start), "the learner was not trained"
        assert _same(_weights(algo, snapshot_id(0)), start), "a snapshot moved"
        assert _same(_weights(algo, snapshot_id(1)), empty_slot), "an empty slot moved"
        # The EnvRunner plays the snapshot's weights, not its initial ones.
        runner_module = algo.env_runner.module[snapshot_id(0)]
        for key, value in runner_module.state_dict().items():
            np.testing.assert_array_equal(value.numpy(), start[key])
        # Every opponent kind played; the empty slot never did.
        assert {LEARNER, snapshot_id(0), "random", "heuristic"} == set(played), played
        assert played[LEARNER] >= 10
        for kind, rates in wins.items():  # (NaN in an iteration that had no such game)
            assert any(0.0 <= r <= 1.0 for r in rates if r is not None), (kind, rates)
        # Only the learner's samples reached the learner.
        assert result["learners"][LEARNER]["num_module_steps_trained"] > 0
        for module in (snapshot_id(0), "random", "heuristic"):
            assert not result["learners"].get(module, {}).get("num_module_steps_trained"), module
        algo.stop()
    finally:
        ray.shutdown()


def test_a_local_ray_that_misses_its_start_wait_is_started_again(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Ray waits a fixed 30 s for a new node's raylet; on a loaded machine it missed that,
    and the session ended with status 1 before it trained. A local Ray is started again
    (each time with the config's runtime_env, which ray.init rewrites); a cluster is not."""
    env = {"env_vars": {"CARD_ENVS_PURE_PYTHON": "1"}}
    calls: list[dict[str, Any]] = []
    shutdowns: list[int] = []
    timeouts = [2]  # how many starts time out

    def init(**kwargs: Any) -> None:
        calls.append(kwargs)
        assert kwargs["runtime_env"] == env
        kwargs["runtime_env"]["env_vars"] = "rewritten, as Ray does"
        if len(calls) <= timeouts[0]:
            raise Exception("The current node timed out during startup. This could happen "
                            "because some of the raylet failed to startup or the GCS has "
                            "become overloaded.")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: shutdowns.append(len(calls)))
    cfg = from_dict({"game": "roy", "backend": "rllib", "rllib": {"runtime_env": env}})
    assert rllib_algo.init_ray(cfg)
    assert len(calls) == 3 and shutdowns == [1, 2]
    assert "Starting Ray again (3 of 3)" in capsys.readouterr().err
    assert cfg.rllib.runtime_env == env
    # A third time out is the session's error; so is any other error, and a cluster's.
    calls.clear()
    timeouts[0] = 3
    with pytest.raises(Exception, match="timed out during startup"):
        rllib_algo.init_ray(cfg)
    assert len(calls) == 3
    calls.clear()
    cluster = from_dict({"game": "roy", "backend": "rllib",
                         "rllib": {"address": "127.0.0.1:6379", "runtime_env": env}})
    with pytest.raises(Exception, match="timed out during startup"):
        rllib_algo.init_ray(cluster)
    assert len(calls) == 1


def test_zero_sum_payout_matches_the_sb3_trainer_s() -> None:
    env = TurnBasedEnv({"game": "roy", "env": {"num_players": 3, "reward": "score"},
                        "reward": "zero_sum", "reward_scale": 0.01})
    own = TurnBasedEnv({"game": "roy", "env": {"num_players": 3, "reward": "score"}})
    rng = np.random.default_rng(0)
    paid = {a: 0.0 for a in env.possible_agents}
    paid_own = dict(paid)
    obs, _ = env.reset(seed=4)
    own.reset(seed=4)
    while True:
        agent = next(iter(obs))
        action = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
        obs, rewards, terms, truncs, _ = env.step({agent: action})
        _, rewards_own, _, _, _ = own.step({agent: action})
        for a, r in rewards.items():
            paid[a] += r
        for a, r in rewards_own.items():
            paid_own[a] += r
        if terms["__all__"] or truncs["__all__"]:
            break
    total = sum(paid_own.values())
    for a in paid:  # own points less the others' mean, scaled
        assert paid[a] == pytest.approx(0.01 * (paid_own[a] - (total - paid_own[a]) / 2))
    assert sum(paid.values()) == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="reward_scale"):
        TurnBasedEnv({"game": "roy", "reward_scale": 0})


CONFIG = """\
game: roy
backend: rllib
seed: 11
env: {num_players: 2}
ppo: {n_steps: 32, batch_size: 64, n_epochs: 2, policy_kwargs: {net_arch: [32, 32]}}
selfplay: {n_envs: 4, pool_size: 2, snapshot_every: 400,
           opponents: {self: 0.4, random: 0.3, heuristic: 0.3}}
training: {total_timesteps: 2400, checkpoint_every: 400, keep_policies: true}
evaluation: {every: 1000, games: 20, final_games: 30, parallel: 8}
rllib: {num_env_runners: 2}
"""


def _train(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, **RAY_ENV, "PYTHONPATH": str(ROOT), "CARD_ENVS_PURE_PYTHON": "1"}
    # Its own session: SIGKILL goes to the driver and the local Ray it started, nothing else.
    return subprocess.Popen([sys.executable, "-m", "training.train", *args, "--no-progress"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


#: The command line with a SIGTERM that the driver sends itself at one moment, patched in here
#: (the trainer has no test hook): moments a signal from outside hits only by chance.
#: ray_init: inside ray.init, after Ray set its SIGTERM handlers (its Python one, sys.exit,
#: and its core worker's C++ crash handler, which aborted the run: status 134, no summary);
#: last_iteration: as the iteration that reaches training.total_timesteps ends; teardown: when
#: the training is done, final.zip written, and RLlib's Algorithm is being stopped (where
#: ray.init's own SIGTERM handler, sys.exit, used to be back and end the run unsummarised).
SIGNALLED = """\
import os, signal, sys
from training import train

def sigterm():
    print("test: SIGTERM now", flush=True)
    os.kill(os.getpid(), signal.SIGTERM)

def patch(moment):
    # Ray imported only now, where the trainer imports it (after its import-time settings).
    import ray
    from ray.rllib.algorithms.algorithm import Algorithm
    from training import rllib_train
    if moment == "ray_init":  # once ray.init has set Ray's handlers, before it returns
        init = ray.init
        def initialising(*args, **kwargs):
            done = init(*args, **kwargs)
            sigterm()
            return done
        ray.init = initialising
    elif moment == "last_iteration":
        record = rllib_train.RLlibRun.record
        def recorded(self, result, fps):
            record(self, result, fps)
            if self.num_timesteps >= self.cfg.training.total_timesteps:
                sigterm()
        rllib_train.RLlibRun.record = recorded
    else:
        stop = Algorithm.stop
        def stopping(self):
            sigterm()
            stop(self)
        Algorithm.stop = stopping

locked = train.train_locked
def train_locked(*args, **kwargs):
    patch(sys.argv[1])
    return locked(*args, **kwargs)
train.train_locked = train_locked
train.main([*sys.argv[2:], "--no-progress"])
"""


def _train_signalled(moment: str, *args: str) -> tuple[int, str]:
    env = {**os.environ, **RAY_ENV, "PYTHONPATH": str(ROOT), "CARD_ENVS_PURE_PYTHON": "1"}
    for key in rllib_settings.RAY_IMPORT_ENV:  # (this process's tests set them): the trainer's
        env.pop(key, None)
    done = subprocess.run([sys.executable, "-c", SIGNALLED, moment, *args], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=600, start_new_session=True)
    assert done.stdout.count("test: SIGTERM now") == 1, done.stdout[-3000:]
    return done.returncode, done.stdout


def _checkpoint_step(run: Path) -> int:
    try:
        state = torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=False)
    except (OSError, EOFError, RuntimeError):
        return -1
    return int(state["num_timesteps"])


def _steps(path: Path) -> list[int]:
    with open(path, newline="") as f:
        return [int(row["step"]) for row in csv.DictReader(f)]


def test_a_run_killed_resumes_and_its_policy_plays_without_ray(tmp_path: Path) -> None:
    config = tmp_path / "roy_rllib.yaml"
    config.write_text(CONFIG)
    runs, run = tmp_path / "runs", tmp_path / "runs" / "roy" / "r"
    first = _train("--config", str(config), "--runs-dir", str(runs), "--run-name", "r")
    try:
        deadline = time.time() + 400
        while _checkpoint_step(run) < 400:
            assert first.poll() is None, first.communicate()[0][-3000:]
            assert time.time() < deadline, "no checkpoint past step 0 in time"
            time.sleep(1)
        # Frozen here, so the run is certain to be unfinished when killed (a fast machine
        # could otherwise train it to the end during the check below).
        os.kill(first.pid, signal.SIGSTOP)
        # A second process never writes a run that one is training.
        second = _train("--resume", str(run))
        out, _ = second.communicate(timeout=120)
        assert second.returncode == 2 and "is in use by process" in out, out[-2000:]
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.communicate()
    killed_at = _checkpoint_step(run)
    assert 400 <= killed_at < 2400
    assert not (run / "final.zip").exists()
    assert (run / "latest.zip").is_file() and (run / "best.zip").is_file()
    rows_before = _steps(run / "progress.csv")

    # Resumed, and SIGTERM as its last iteration ends: it stops there after a checkpoint
    # (unfinished: no final.zip, no closing evaluation), as at any other iteration.
    code, out = _train_signalled("last_iteration", "--resume", str(run))
    assert f"resuming from the checkpoint at step {killed_at}" in out, out[-3000:]
    assert code == 128 + signal.SIGTERM, out[-4000:]
    stopped_at = _checkpoint_step(run)
    assert stopped_at >= 2400
    assert f"stopped by SIGTERM after a checkpoint at step {stopped_at}" in out, out[-3000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"].startswith(f"stopped at step {stopped_at} by SIGTERM: unfinished")
    assert not (run / "final.zip").exists()

    # Resumed with nothing left to train: its last evaluation, final.zip, then SIGTERM while
    # Ray is stopped. It still exits as stopped, its summary saying so; only the closing
    # evaluation is left.
    code, out = _train_signalled("teardown", "--resume", str(run))
    assert f"resuming from the checkpoint at step {stopped_at}" in out, out[-3000:]
    assert code == 128 + signal.SIGTERM, out[-4000:]
    assert f"stopped by SIGTERM after a checkpoint at step {stopped_at}" in out, out[-3000:]
    assert _checkpoint_step(run) == stopped_at and (run / "final.zip").is_file()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == (f"finished at step {stopped_at}; its closing evaluation "
                                 "skipped (SIGTERM): resume it to run it"), summary
    assert "evaluation" not in summary and not (run / "evaluation.json").exists()

    resumed = _train("--resume", str(run))
    out, _ = resumed.communicate(timeout=600)
    assert f"resuming from the checkpoint at step {stopped_at}" in out
    assert resumed.returncode == 0, out[-4000:]
    assert set(json.loads((run / "summary.json").read_text())["evaluation"]) == {
        f"{policy} vs {opponent}" for policy in ("best.zip", "final.zip")
        for opponent in ("random", "heuristic")}
    steps = _steps(run / "progress.csv")
    assert steps == sorted(steps) and len(set(steps)) == len(steps), steps
    assert steps[-1] >= 2400
    # The rows up to the checkpoint are kept; those the kill left after it are redone.
    assert [s for s in rows_before if s <= killed_at] == [s for s in steps if s <= killed_at]
    assert _steps(run / "eval.csv")[0] == 0 and _steps(run / "eval.csv")[-1] == steps[-1]
    assert len(list((run / "rllib").iterdir())) == 1, "old RLlib checkpoints are deleted"
    assert (run / "policies").is_dir() and list((run / "policies").glob("step-*.zip"))
    for name in ("final.zip", "training_curve.png", "evaluation.json", "summary.json"):
        assert (run / name).is_file(), name
    assert list((run / "tb").iterdir())
    assert "finished at step" in (run / "summary.json").read_text()

    # The exported policy, played by the project's evaluator in a process without Ray.
    # (final.zip, and the run directory as training.evaluate resolves it, against heuristic.)
    code = ("import sys\n"
            "from training.evaluate import main\n"
            f"report = main(['--game', 'roy', '--agents', {str(run / 'final.zip')!r}, "
            f"{str(run)!r}, 'heuristic', '--first-vs-rest', '--games', '20', '--out', "
            f"{str(tmp_path / 'ev')!r}])\n"
            "assert sum(m['games'] for m in report['matches']) == 40, report\n"
            "assert not [m for m in sys.modules if m == 'ray' or m.startswith('ray.')]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CARD_ENVS_PURE_PYTHON": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_a_sigterm_while_ray_starts_stops_after_the_warm_start_with_its_figures(
        tmp_path: Path) -> None:
    """A SIGTERM while ray.init runs reaches the trainer's handler (not Ray's sys.exit, which
    ended the process with status 15 and no summary). Its message says what the RLlib trainer
    does with a warm start in progress: it finishes, then the step-0 checkpoint, then the
    stop. The summary reports the warm start as the SB3 trainer's does, resumed or not."""
    config = tmp_path / "roy_rllib.yaml"
    config.write_text(CONFIG.replace("total_timesteps: 2400", "total_timesteps: 300")
                      .replace("final_games: 30", "final_games: 4")
                      .replace("rllib: {num_env_runners: 2}", "rllib: {num_env_runners: 1}")
                      + "pretrain: {games: 4, epochs: 1}\n")
    runs, run = tmp_path / "runs", tmp_path / "runs" / "roy" / "w"
    code, out = _train_signalled("ray_init", "--config", str(config), "--runs-dir", str(runs),
                                 "--run-name", "w")
    assert code == 128 + signal.SIGTERM, out[-4000:]
    assert ("SIGTERM: the run stops at the next iteration boundary, after a checkpoint (a warm "
            "start in progress finishes first)") in out, out[-3000:]
    assert "behaviour cloning:" in out and _checkpoint_step(run) == 0, out[-3000:]
    assert "stopped by SIGTERM after a checkpoint at step 0" in out, out[-3000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"].startswith("stopped at step 0 by SIGTERM: unfinished"), summary
    warm = summary["pretrain"]
    assert warm["decisions"] > 0 and 0 <= warm["bc_accuracy"] <= 1, summary
    assert {"seconds", "teacher_seconds", "clone_seconds", "bc_val_accuracy"} <= set(warm)

    resumed = _train("--resume", str(run))
    out, _ = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, out[-4000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"].startswith("finished at step"), summary
    assert summary["pretrain"] == warm  # kept in the checkpoint

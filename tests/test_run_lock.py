"""One process at a time in a run directory (training/run_lock.py): two starts with one
--run-name, or two --resume of one run, at the same moment; a SIGKILLed holder."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_training import game_config
from training import yaml12
from training.config import from_dict, load_config
from training.run_lock import LOCK_NAME, RunLock, RunLockedError
from training.train import train

# Nothing here depends on which engine build runs: make test runs it, make test-pure not.
pytestmark = pytest.mark.same_in_either_build

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_a_second_lock_is_refused_naming_the_holder(tmp_path: Path) -> None:
    run = tmp_path / "roy" / "r"
    with RunLock(run) as lock:
        holder = json.loads((run / LOCK_NAME).read_text())
        assert holder["pid"] == os.getpid() and holder["host"] and holder["started"]
        assert "pytest" in holder["command"] or "python" in holder["command"]
        # Another lock on the same directory, from this very process too, is refused.
        with pytest.raises(RunLockedError, match=rf"is in use by process {os.getpid()} on "):
            RunLock(run).acquire(hint="choose another --run-name")
        assert lock.held
    assert (run / LOCK_NAME).read_text() == ""  # released: no stale identity to quote
    RunLock(run).acquire().release()


def _script(body: str) -> list[str]:
    return [sys.executable, "-c", body]


def test_a_sigkilled_holder_leaves_no_lock(tmp_path: Path) -> None:
    run = tmp_path / "roy" / "k"
    holder = subprocess.Popen(_script(
        "import sys, time\n"
        "from training.run_lock import RunLock\n"
        f"RunLock({str(run)!r}).acquire()\n"
        "print('locked', flush=True)\n"
        "time.sleep(600)\n"), cwd=ROOT, env=_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunLockedError, match=rf"process {holder.pid} on "):
            RunLock(run).acquire()
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        RunLock(run).acquire().release()  # the kernel dropped the lock with its holder
    finally:
        holder.kill()
        holder.wait()


def test_creating_a_run_directory_is_race_free(tmp_path: Path) -> None:
    """Four processes create one run directory at the same instant (make_run_dir, as the
    command line does): one gets it, the other three are refused naming the winner (one of
    them used to find it empty and empty it again)."""
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(yaml12.dump(game_config("roy")))
    start = time.time() + 8  # after every process has imported the trainer
    body = (
        "import sys, time\n"
        "from training.config import load_config\n"
        "from training.run_lock import RunLockedError\n"
        "from training.train import make_run_dir\n"
        f"cfg = load_config({str(cfg_path)!r})\n"
        f"time.sleep(max(0.0, {start} - time.time()))\n"
        "try:\n"
        f"    run_dir, lock = make_run_dir(cfg, {str(tmp_path / 'runs')!r}, 'same')\n"
        "except RunLockedError as err:\n"
        "    print('refused', err, flush=True)\n"
        "    sys.exit(3)\n"
        "print('won', flush=True)\n"
        "time.sleep(4)\n")
    procs = [subprocess.Popen(_script(body), cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = [p.returncode for p in procs]
    assert sorted(codes) == [0, 3, 3, 3], outs
    winner = procs[codes.index(0)].pid
    for (out, _), code in zip(outs, codes, strict=True):
        if code == 3:
            assert f"process {winner} on " in out, out


def _train_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "training.train", "--no-progress", *args]


def _run_at_once(commands: list[list[str]]
                 ) -> tuple[list[subprocess.CompletedProcess[str]], list[int]]:
    """Start every command at once; their results and pids."""
    procs = [subprocess.Popen(c, cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for c in commands]
    results = []
    for command, proc in zip(commands, procs, strict=True):
        out, err = proc.communicate(timeout=600)
        results.append(subprocess.CompletedProcess(command, proc.returncode, out, err))
    return results, [p.pid for p in procs]


def _refused_by_the_other(results: list[subprocess.CompletedProcess[str]],
                          pids: list[int]) -> int:
    """Exactly one of two finished (exit 0); the other exited 2 naming it. The winner's index."""
    codes = [r.returncode for r in results]
    assert sorted(codes) == [0, 2], [(r.returncode, r.stderr[-2000:]) for r in results]
    won = codes.index(0)
    refusal = results[1 - won].stderr
    assert re.search(rf"is in use by process {pids[won]} on \S+, started \S+: .*training",
                     refusal), refusal
    assert "Traceback" not in refusal
    return won


def _steps(path: Path) -> list[int]:
    return [int(line.split(",")[0]) for line in path.read_text().splitlines()[1:]]


def test_two_starts_with_one_run_name_one_is_refused(tmp_path: Path) -> None:
    """The issue's case: both used to exit 0, the directory holding one run's config and
    checkpoint and both runs' eval.csv rows."""
    configs = []
    for seed in (1, 2):
        data = game_config("roy", seed=seed)
        data["training"].update(total_timesteps=1024)
        path = tmp_path / f"seed{seed}.yaml"
        path.write_text(yaml12.dump(data))
        configs.append(path)
    commands = [_train_command("--config", str(c), "--runs-dir", str(tmp_path / "runs"),
                               "--run-name", "same") for c in configs]
    won = _refused_by_the_other(*_run_at_once(commands))
    run = tmp_path / "runs" / "roy" / "same"
    assert load_config(run / "config.yaml").seed == won + 1  # the winner's run, whole
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "finished at step 1024"
    for name in ("progress.csv", "eval.csv"):
        steps = _steps(run / name)
        assert steps == sorted(set(steps)), (name, steps)


def test_two_resumes_of_one_run_one_is_refused(tmp_path: Path) -> None:
    """The issue's second case: both were accepted, progress.csv ending with duplicated steps
    out of order."""
    data = game_config("roy")
    data["training"].update(total_timesteps=512)
    data["evaluation"].update(final_games=0)
    run = tmp_path / "runs" / "roy" / "r"
    train(from_dict(data), run, progress=False)
    commands = [_train_command("--resume", str(run), "--total-timesteps", "2048")] * 2
    _refused_by_the_other(*_run_at_once(commands))
    steps = _steps(run / "progress.csv")
    assert steps == sorted(set(steps)) and steps[-1] == 2048, steps


def test_train_from_python_refuses_a_locked_directory(tmp_path: Path) -> None:
    run = tmp_path / "roy" / "p"
    cfg = from_dict(game_config("roy"))
    with RunLock(run), pytest.raises(RunLockedError, match="train in another directory"):
        train(cfg, run, progress=False)
    assert not (run / "config.yaml").exists()  # refused before anything was written

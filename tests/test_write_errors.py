"""A run's writes under real faults: a full disk (a small tmpfs filled up), a read-only
filesystem (the tmpfs remounted read-only) and a run directory deleted mid-run. Each write
fails with a RunWriteError naming the path and the cause, the last good checkpoint stays,
and the command line exits 1 with a command that continues the run once the cause is gone.

Mounting needs root (CI runs as root); elsewhere those tests skip, saying so.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from stable_baselines3.common.callbacks import BaseCallback

from tests.test_training import game_config
from training import yaml12
from training.checkpoint import load_checkpoint, save_checkpoint
from training.config import from_dict, load_config
from training.files import RunWriteError, atomic_write_bytes
from training.train import (
    CsvLog,
    quiet_tensorboard_thread,
    tensorboard_logger,
    train,
    write_scalars,
)

# Nothing here depends on which engine build runs: make test runs it, make test-pure not.
pytestmark = pytest.mark.same_in_either_build

ROOT = Path(__file__).resolve().parents[1]
ENOSPC_TEXT = "No space left on device (ENOSPC, the disk is full)"


def _mount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], check=True,
                   capture_output=True, text=True)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 32 MiB tmpfs of its own, unmounted afterwards."""
    folder = tmp_path / "fs"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    try:
        _mount(folder, "size=32m")
    except (subprocess.CalledProcessError, FileNotFoundError) as err:
        detail = getattr(err, "stderr", "") or err
        pytest.skip(f"this machine refuses to mount a tmpfs ({detail!s:.200}); CI, as root on "
                    "a machine like this one, runs it")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    """Fill the filesystem of ``folder`` to the last byte: a real ENOSPC for any write that
    needs a new block. Returns the filler file (delete it to free the space)."""
    filler = folder / f"filler-{uuid.uuid4().hex}"
    with open(filler, "wb", buffering=0) as f:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError as err:
                assert err.errno == errno.ENOSPC, err
    return filler


# -- each writer on a full disk -----------------------------------------------------------------
def _until_it_fails(write, attempts: int = 20_000) -> RunWriteError:
    """Appends fill the block they end in before they need a new one: repeat the write."""
    for _ in range(attempts):
        try:
            write()
        except RunWriteError as err:
            return err
    pytest.fail("the write never failed on a full disk")


def test_a_full_disk_keeps_the_checkpoint_and_names_its_path(small_fs: Path) -> None:
    path = small_fs / "checkpoint.pt"
    save_checkpoint(path, {"config": {}, "num_timesteps": 512, "weights": torch.zeros(10)})
    fill(small_fs)
    with pytest.raises(RunWriteError) as info:
        save_checkpoint(path, {"config": {}, "num_timesteps": 1024, "weights": torch.zeros(10)})
    assert str(info.value) == f"could not write {path}: {ENOSPC_TEXT}"
    assert info.value.errno == errno.ENOSPC and info.value.path == str(path)
    assert load_checkpoint(path, {})["num_timesteps"] == 512  # the last good one, whole
    assert not [p for p in small_fs.iterdir() if ".tmp" in p.name]  # no temporary left


def test_a_full_disk_fails_a_csv_row_and_tensorboard_by_name(small_fs: Path) -> None:
    csv_log = CsvLog(small_fs / "progress.csv", ["step", "value"], keep_until=None)
    logger = tensorboard_logger(small_fs / "tb", None)
    fill(small_fs)
    step = iter(range(10**9))
    err = _until_it_fails(lambda: csv_log.append({"step": next(step), "value": 0.5}))
    assert str(err) == f"could not write {small_fs / 'progress.csv'}: {ENOSPC_TEXT}"
    with quiet_tensorboard_thread():  # as train() runs: the thread's copy unprinted
        err = _until_it_fails(lambda: write_scalars(logger, next(step), {"eval/x": 0.5}))
    assert str(err) == f"could not write {small_fs / 'tb'}: {ENOSPC_TEXT}"


def test_an_sb3_dump_to_tensorboard_fails_by_name(small_fs: Path) -> None:
    """SB3's own dumps (inside learn()) go through the same named errors."""
    logger = tensorboard_logger(small_fs / "tb", None)
    fill(small_fs)
    step = iter(range(10**9))

    def dump() -> None:
        logger.record("train/loss", 0.25)
        logger.dump(next(step))

    with quiet_tensorboard_thread():
        err = _until_it_fails(dump)
    assert str(err) == f"could not write {small_fs / 'tb'}: {ENOSPC_TEXT}"


def test_a_read_only_filesystem_is_named(small_fs: Path) -> None:
    path = small_fs / "summary.json"
    atomic_write_bytes(path, b"{}")
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    with pytest.raises(RunWriteError) as info:
        atomic_write_bytes(path, b'{"a": 1}')
    assert str(info.value) == (f"could not write {path}: Read-only file system "
                               "(EROFS, the filesystem is read-only)")
    assert path.read_bytes() == b"{}"


# -- a training run under each fault ---------------------------------------------------------------
class FaultAt(BaseCallback):
    """Once ``steps`` are done (after the step-0 checkpoint), breaks the run's filesystem."""

    def __init__(self, steps: int, fault) -> None:
        super().__init__()
        self.steps, self.fault, self.done = steps, fault, False

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.steps and not self.done:
            self.done = True
            self.fault()
        return True


def _tiny(total: int = 2048) -> dict:
    data = game_config("roy")
    data["training"].update(total_timesteps=total, checkpoint_every=256)
    data["evaluation"].update(every=512, final_games=4)
    return data


def test_a_run_on_a_full_disk_stops_with_its_checkpoint(small_fs: Path) -> None:
    run = small_fs / "roy" / "full"
    fillers: list[Path] = []
    with pytest.raises(RunWriteError) as info:
        train(from_dict(_tiny()), run, progress=False,
              extra_callbacks=[FaultAt(600, lambda: fillers.append(fill(small_fs)))])
    assert info.value.errno == errno.ENOSPC
    assert Path(info.value.path).is_relative_to(run), info.value.path
    cfg = load_config(run / "config.yaml")
    step = load_checkpoint(run / "checkpoint.pt", cfg.to_dict())["num_timesteps"]
    assert 0 < step <= 768
    assert not (run / "final.zip").exists() and not (run / "summary.json").exists()
    assert not list(run.rglob(".*tmp*"))
    fillers[0].unlink()  # space again: the run continues from its checkpoint and finishes
    summary = train(cfg, run, resume=True, progress=False)
    assert summary["status"] == "finished at step 2048"


def test_a_run_whose_directory_is_deleted_says_so(tmp_path: Path) -> None:
    run = tmp_path / "roy" / "gone"
    with pytest.raises(RunWriteError) as info:
        train(from_dict(_tiny()), run, progress=False,
              extra_callbacks=[FaultAt(600, lambda: shutil.rmtree(run))])
    assert info.value.errno == errno.ENOENT
    assert "(ENOENT, the directory is gone (deleted or moved while the run was writing))" in str(
        info.value)


def test_the_command_line_exits_1_and_its_advice_continues_the_run(small_fs: Path) -> None:
    """The issue's case: a raw torch traceback ("basic_ios::clear: iostream error") and
    nothing saying what happened. Now one line naming the path and the cause, exit 1, and a
    command that, once there is space again, continues the run from its last checkpoint."""
    data = _tiny(total=200_000)
    cfg_path = small_fs.parent / "cfg.yaml"
    cfg_path.write_text(yaml12.dump(data))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "training.train", "--config", str(cfg_path), "--runs-dir",
         str(small_fs / "runs"), "--run-name", "cli", "--no-progress"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = small_fs / "runs" / "roy" / "cli"
    try:
        deadline = time.time() + 180
        while not (run / "latest.zip").exists():  # the step-0 checkpoint is whole
            assert time.time() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.1)
        filler = fill(small_fs)
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 1, err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err, err
    match = re.fullmatch(r"python -m training\.train: error: could not write (\S+): "
                         + re.escape(ENOSPC_TEXT) + r"\. The last good checkpoint \(step (\d+)\)"
                         r" is kept; once the cause is fixed, continue with: (.+)", last)
    assert match, last
    assert Path(match[1]).is_relative_to(run)
    state = load_checkpoint(run / "checkpoint.pt", load_config(run / "config.yaml").to_dict())
    assert state["num_timesteps"] == int(match[2])
    filler.unlink()
    command = shlex.split(match[3])
    assert command[:3] == ["python", "-m", "training.train"]
    done = subprocess.run([sys.executable, *command[1:], "--total-timesteps",
                           str(state["num_timesteps"] + 256), "--no-progress"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"resuming from the checkpoint at step {state['num_timesteps']}" in done.stdout

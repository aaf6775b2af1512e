"""One process at a time in a run directory: an exclusive OS lock held from the directory's
creation (or a resume's first look at it) to the process's exit.

The lock is ``fcntl.flock`` on ``<run>/run.lock``: the kernel drops it when the process ends
however it ends (SIGKILL, a crash, a lost node), so no stale lock can outlive its holder and
nothing needs cleaning up by hand. The holder writes who it is into the file (pid, host,
command, start time), which the refused process quotes. The ``filelock`` package takes the
same kernel lock but truncates the file when it opens it, which would erase the holder's
identity each time another process tries, so this module takes the lock itself.

flock locks are per open file: a second attempt from the same process is refused too. They
work on local filesystems and on NFS (Linux emulates them with NFS byte-range locks).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import socket
import sys
import time
from pathlib import Path
from typing import Any

#: The lock file's name inside a run directory (it stays there; only the lock is released).
LOCK_NAME = "run.lock"


class RunLockedError(RuntimeError):
    """Another process holds the run directory."""


class RunLock:
    """The exclusive lock on one run directory; :meth:`acquire` creates the directory."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, hint: str = "") -> RunLock:
        """Take the lock without waiting, or raise :class:`RunLockedError` naming the holder.
        Creating the directory and its lock file is race-free: ``mkdir -p`` and ``O_CREAT``
        both succeed for whichever process comes second, and only the lock decides."""
        if self._fd is not None:
            raise RuntimeError(f"{self.run_dir}: the run lock is already held by this RunLock")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLockedError(self._refusal(hint)) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        try:
            self._write_holder()
        except BaseException:
            self.release()
            raise
        return self

    def release(self) -> None:
        """Give the lock up (the process's exit does the same). The file stays: removing it
        would let a process that opened it before the removal lock a file nobody else sees."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        # No stale identity for a reader to quote; should this fail, the close still unlocks.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)

    def __enter__(self) -> RunLock:
        """``with RunLock(d):`` takes the lock; ``with RunLock(d).acquire(hint):`` has it."""
        return self if self.held else self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _write_holder(self) -> None:
        assert self._fd is not None
        data = json.dumps(holder_identity()).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)
        os.fsync(self._fd)

    def _refusal(self, hint: str) -> str:
        holder = read_holder(self.path)
        if holder is None:
            who = "another process (it has not written its identity yet)"
        else:
            who = (f"process {holder.get('pid')} on {holder.get('host')}, started "
                   f"{holder.get('started')}: {holder.get('command')}")
        return (f"{self.run_dir} is in use by {who}. Two processes in one run directory "
                f"would overwrite each other's checkpoint and mix their metrics; wait for it "
                f"to end{', or ' + hint if hint else ''}")


def holder_identity() -> dict[str, Any]:
    """What a lock holder writes about itself."""
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "command": shlex.join([sys.executable, *sys.argv]),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def read_holder(path: Path, wait: float = 1.0) -> dict[str, Any] | None:
    """The identity in a lock file, waiting up to ``wait`` seconds for a holder that has just
    taken the lock to write it; None if it never does (or the file is unreadable)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            data = json.loads(path.read_text())
            if isinstance(data, dict):
                return data
        except (OSError, ValueError):
            pass
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)

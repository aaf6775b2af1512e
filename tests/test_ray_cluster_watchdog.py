"""The loopback cluster's watchdog (benchmarks/ray_cluster.py), without Ray: the sessions it
watches die when the process that started them is SIGKILLed, and live on when it disarms."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ray_cluster import kill_session, session_processes  # noqa: E402

#: An owner: starts a watchdog and a stand-in "node" (a sleep in its own session), prints the
#: node's session id, then either waits to be killed or disarms and exits.
OWNER = """
import subprocess, sys, time
from benchmarks.ray_cluster import SessionWatchdog
watchdog = SessionWatchdog()
node = subprocess.Popen(["sleep", "300"], start_new_session=True)
watchdog.watch(node.pid)
if sys.argv[1] == "disarm":
    watchdog.disarm()
print(node.pid, flush=True)
time.sleep(300)
"""


def _owner(mode: str) -> tuple[subprocess.Popen[str], int]:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, mode], cwd=ROOT, text=True,
                             stdout=subprocess.PIPE)
    assert owner.stdout is not None
    return owner, int(owner.stdout.readline())


def _gone(sid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while session_processes(sid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_a_sigkilled_owner_leaves_no_node_behind() -> None:
    owner, sid = _owner("watch")
    try:
        assert session_processes(sid), "the stand-in node did not start"
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        assert _gone(sid, within=30), f"session {sid} outlived its SIGKILLed owner"
    finally:
        owner.kill()
        owner.wait()
        kill_session(sid)


def test_a_disarmed_watchdog_kills_nothing() -> None:
    owner, sid = _owner("disarm")
    try:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        time.sleep(2)
        assert session_processes(sid), "a disarmed watchdog killed the session"
    finally:
        owner.kill()
        owner.wait()
        assert kill_session(sid) == []

"""A real multi-node Ray cluster on one host, for the cluster CI step and the RLlib benchmark.

Each node is its own ``ray start --block`` (the head, then ``--address <head>``), with its own
temp directory and ports, started in a new session. Ray's daemons (GCS, raylet, agents) and
every worker process a raylet forks stay in that session, so stopping the cluster kills exactly
these processes, by session id, and checks that none is left. ``ray stop`` is not used: it
kills every Ray process of the user on the machine, other people's clusters included.

Ray advertises a node started on ``127.0.0.1`` under the host's own address (it swaps loopback
for a reachable IP); the traffic still never leaves the host. Token authentication is on with a
fresh token per cluster (Ray 2.60 turns it on whenever ``~/.ray/auth_token`` exists, and a
worker node or driver without the token is refused): drivers get the token from :attr:`env`.

A watchdog process (:class:`SessionWatchdog`) outlives the process that started the nodes: if
that process dies without stopping them (a SIGKILLed pytest, a CI step's timeout), the watchdog
kills the nodes' sessions, so no Ray daemon is left running.

    python benchmarks/ray_cluster.py --nodes 2 --cpus 1   # start, print the address, wait
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Ray prints this once a node is up (``ray start``'s own success line).
_STARTED = "Ray runtime started."


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A TCP port nothing listens on now (any interface), and not handed out before by this
    process (the kernel may offer a port again once it is closed: Ray refuses a port given to
    two of its components)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("", 0))
            port: int = s.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def ephemeral_low() -> int:
    """The lowest port the kernel hands out for ``bind(0)`` (Linux's default 32768)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_WORKER_BLOCKS: set[int] = set()


def worker_port_block(size: int = 100) -> int:
    """The first port of ``size`` ports for one node's workers: below the ephemeral range, so
    no :func:`free_port` falls inside it (a random block there once took a port already given
    to a daemon and Ray refused the node), and apart from the blocks of this process's other
    nodes."""
    top = max(ephemeral_low() - size, 10000 + size)
    while True:
        low = random.randrange(10000, top, size)
        if low not in _WORKER_BLOCKS:
            _WORKER_BLOCKS.add(low)
            return low


def session_processes(sid: int) -> list[tuple[int, str]]:
    """(pid, command line or process title) of every live process in session ``sid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            # Fields after the parenthesised name: state ppid pgrp session ...
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[3]) != sid or fields[0] == "Z":
                continue
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        found.append((int(entry.name), cmd.strip()))
    return found


def share_priority(pid: int) -> None:
    """Give session leader ``pid``'s scheduler autogroup this process's nice value. Linux
    schedules each session as one group; a new session's starts at nice 0, so nodes started
    from a low-priority shell would otherwise escape its priority. Nothing where there are no
    autogroups."""
    try:
        nice = Path("/proc/self/autogroup").read_text().split("nice")[1].strip()
        Path(f"/proc/{pid}/autogroup").write_text(nice)
    except (OSError, IndexError):
        pass


def kill_session(sid: int, grace: float = 15.0) -> list[tuple[int, str]]:
    """SIGTERM every process of session ``sid``, SIGKILL what is left after ``grace`` seconds;
    returns what is still alive after that (should be nothing)."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        for pid, _ in session_processes(sid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while session_processes(sid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not session_processes(sid):
            return []
    return session_processes(sid)


#: The watchdog's program: session ids arrive one per line on its stdin, whose write end only
#: the watching process holds; end of file (that process closed it, or died, SIGKILL included)
#: means "kill them". Run from the repository root, so that it imports this module.
_WATCHDOG = ("import sys\n"
             "from benchmarks.ray_cluster import kill_session\n"
             "for sid in [int(line) for line in sys.stdin if line.strip()]:\n"
             "    kill_session(sid)\n")


class SessionWatchdog:
    """Kills the sessions it is told of once this process is gone, however it went."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, start_new_session=True,  # a process-group kill spares it
            cwd=Path(__file__).resolve().parents[1])

    def watch(self, sid: int) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{sid}\n".encode())
        self.process.stdin.flush()

    def disarm(self) -> None:
        """Stop watching without killing (the owner stops the sessions itself): a session id
        is a process id, which the system may give to another process once those are gone."""
        self.process.kill()
        self.process.wait()
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()


@dataclass
class Node:
    """One ``ray start --block`` process (the session leader of the node's processes)."""

    name: str
    process: subprocess.Popen[bytes]
    temp: Path

    @property
    def sid(self) -> int:
        return self.process.pid


@dataclass
class LoopbackCluster:
    """``nodes`` Ray nodes of ``cpus`` CPUs each on this host (module docstring).

    ``ray``: the ``ray`` executable (the virtualenv's); ``env``: variables for the nodes (and
    so for every worker they start). The nodes do not inherit this process's ``PYTHONPATH``:
    what workers import beyond the virtualenv comes with the driver's ``runtime_env``, or with
    a ``PYTHONPATH`` given in ``env``, as on a real cluster."""

    ray: str
    nodes: int = 2
    cpus: int = 1
    env: dict[str, str] = field(default_factory=dict)
    start_timeout: float = 240.0
    object_store_bytes: int = 256 * 1024 * 1024
    root: Path = field(init=False)
    address: str = field(init=False, default="")
    started: list[Node] = field(init=False, default_factory=list)
    watchdog: SessionWatchdog | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.nodes < 1 or self.cpus < 1:
            raise ValueError(f"nodes and cpus must be >= 1, got {self.nodes}, {self.cpus}")
        # Short: Ray's unix sockets live under it (107-byte limit on socket paths).
        self.root = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
        token = self.root / "auth_token"
        token.write_text(secrets.token_hex(32))
        token.chmod(0o600)
        self.env = {**self.env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
                    "RAY_USAGE_STATS_ENABLED": "0", "PYTHONUNBUFFERED": "1",
                    # A loaded machine answers slowly: the GCS gets three minutes.
                    "RAY_gcs_rpc_server_connect_timeout_s": "180"}

    def _node_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_ADDRESS")}
        return {**env, **self.env}

    def driver_env(self) -> dict[str, str]:
        """The environment a driver needs to join: this process's, the nodes' variables and
        ``RAY_ADDRESS``."""
        return {**os.environ, **self.env, "RAY_ADDRESS": self.address}

    def start(self) -> str:
        """Start the head, then the other nodes; returns the head's ``host:port``."""
        self.watchdog = SessionWatchdog()
        try:
            port = free_port()
            self._start_node("head", ["--head", "--node-ip-address", "127.0.0.1",
                                      "--port", str(port), "--include-dashboard", "false",
                                      "--dashboard-port", str(free_port()),
                                      "--ray-client-server-port", str(free_port())])
            self.address = self._advertised_address(port)
            for k in range(1, self.nodes):
                self._start_node(f"node{k}", ["--address", self.address])
        except BaseException:
            self.stop()
            raise
        return self.address

    def _start_node(self, name: str, args: list[str], attempts: int = 3) -> None:
        """Start one node; again (up to ``attempts`` times) when Ray gives up waiting for its
        raylet: ``ray start`` waits a fixed 30 s for it to register, which a loaded machine
        has missed."""
        for attempt in range(1, attempts + 1):
            try:
                self._start_node_once(f"{name}-{attempt}" if attempt > 1 else name, name, args)
                return
            except RuntimeError as err:
                node = self.started.pop()
                left = kill_session(node.sid)
                if left or attempt == attempts or "timed out during startup" not in str(err):
                    raise
                print(f"ray start ({name}): the raylet missed Ray's 30 s start wait; again",
                      file=sys.stderr, flush=True)

    def _start_node_once(self, folder: str, name: str, args: list[str]) -> None:
        temp = self.root / folder
        temp.mkdir()
        low = worker_port_block()  # each node its own block of worker ports
        cmd = [self.ray, "start", "--block", *args, "--num-cpus", str(self.cpus),
               "--num-gpus", "0", "--temp-dir", str(temp),
               "--object-store-memory", str(self.object_store_bytes),
               "--node-manager-port", str(free_port()),
               "--object-manager-port", str(free_port()),
               "--metrics-export-port", str(free_port()),
               "--dashboard-agent-listen-port", str(free_port()),
               "--dashboard-agent-grpc-port", str(free_port()),
               "--runtime-env-agent-port", str(free_port()),
               "--min-worker-port", str(low), "--max-worker-port", str(low + 99),
               "--disable-usage-stats"]
        log = self.root / f"{folder}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       env=self._node_env(), cwd=temp)
        share_priority(process.pid)
        if self.watchdog is not None:
            self.watchdog.watch(process.pid)
        node = Node(name, process, temp)
        self.started.append(node)
        deadline = time.monotonic() + self.start_timeout
        while _STARTED not in log.read_text(errors="replace"):
            if process.poll() is not None:
                raise RuntimeError(f"ray start ({name}) exited with {process.returncode}:\n"
                                   + log.read_text(errors="replace")[-4000:])
            if time.monotonic() > deadline:
                raise TimeoutError(f"ray start ({name}) not up after {self.start_timeout:.0f} "
                                   "s:\n" + log.read_text(errors="replace")[-4000:])
            time.sleep(0.5)

    def _advertised_address(self, port: int) -> str:
        """The head's GCS address as Ray advertises it (it swaps 127.0.0.1 for the host's)."""
        recorded = self.started[0].temp / "ray_current_cluster"  # written by ray start --head
        return recorded.read_text().strip() if recorded.exists() else f"127.0.0.1:{port}"

    def processes(self) -> dict[str, list[tuple[int, str]]]:
        """Each node's live processes (its session's), by node name."""
        return {node.name: session_processes(node.sid) for node in self.started}

    def stop(self) -> list[tuple[int, str]]:
        """Kill every node's processes; returns any that survived (none expected). The temp
        directory (logs) goes too unless ``CARD_ENVS_KEEP_RAY_LOGS`` is set."""
        left: list[tuple[int, str]] = []
        if self.watchdog is not None:
            self.watchdog.disarm()
            self.watchdog = None
        for node in reversed(self.started):
            left += kill_session(node.sid)
            try:
                node.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                left.append((node.process.pid, "ray start"))
        self.started.clear()
        if not os.environ.get("CARD_ENVS_KEEP_RAY_LOGS"):
            shutil.rmtree(self.root, ignore_errors=True)
        return left

    def __enter__(self) -> LoopbackCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        left = self.stop()
        if left:
            raise RuntimeError(f"Ray processes survived the cluster's stop: {left}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Start a Ray cluster on this host and wait "
                                     "(Ctrl-C stops it).")
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--cpus", type=int, default=1, help="CPUs per node")
    parser.add_argument("--ray", default=str(Path(sys.executable).with_name("ray")))
    args = parser.parse_args(argv)
    with LoopbackCluster(args.ray, args.nodes, args.cpus) as cluster:
        print(f"RAY_ADDRESS={cluster.address}")
        print(f"RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH={cluster.env['RAY_AUTH_TOKEN_PATH']}",
              flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()


if __name__ == "__main__":
    main()

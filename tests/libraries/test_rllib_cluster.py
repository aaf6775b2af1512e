"""RLlib on a real two-node Ray cluster (``make test-rllib-cluster``, marker ``cluster``).

Two ``ray start`` nodes on this host, one CPU each (benchmarks/ray_cluster.py), started once
for the module. Drivers are separate processes joining it, as a user's would, from outside the
checkout; the nodes do not have card_envs, the drivers ship it (``runtime_env``). The env
runners' placement is checked by RLlib (each runner's ``get_runtime_context().get_node_id()``,
against ``ray.nodes()``) and by the operating system (the ``ray::MultiAgentEnvRunner``
processes, grouped by the session of the node that forked them). Then the trainer's command
line with ``backend: rllib`` on the cluster: killed (SIGKILL) after a checkpoint, resumed to
the end, its policy evaluated in a process without Ray. After the module, no process of either
node may be left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray.rllib")

import torch  # noqa: E402

from benchmarks.ray_cluster import LoopbackCluster, session_processes  # noqa: E402
from tests.libraries.test_rllib_train import CONFIG, _checkpoint_step, _steps  # noqa: E402

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]
RUNNER_TITLE = "ray::MultiAgentEnvRunner"
#: What a driver gives Ray to ship to every worker: this checkout's package, plain Python (its
#: compiled extensions, if built, need the shared library beside the package, not shipped).
RUNTIME_ENV = {"py_modules": [str(ROOT / "card_envs")],
               "env_vars": {"CARD_ENVS_PURE_PYTHON": "1"}}


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    # The nodes have the virtualenv (Ray, torch, SB3) but not card_envs, which is not
    # installed there: each driver ships it (RUNTIME_ENV), as to a real cluster.
    ray = str(Path(sys.executable).with_name("ray"))
    started = LoopbackCluster(ray, nodes=2, cpus=1)
    try:
        started.start()
        yield started
    finally:
        left = started.stop()
    assert not left, f"processes of the cluster survived its stop: {left}"


def runner_nodes(cluster: LoopbackCluster) -> dict[str, int]:
    """How many env-runner actor processes each node runs now (by process title)."""
    return {name: sum(title.startswith(RUNNER_TITLE) for _, title in procs)
            for name, procs in cluster.processes().items()}


#: A driver of its own: PPO (our adapter and masked module, ROY against the heuristic) with two
#: env runners of one CPU each, one training iteration; prints the runners' node ids and the
#: cluster's alive nodes as JSON.
PLAIN_PPO = """
import json, sys, ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.tune.registry import register_env
from card_envs.adapters.rllib import ENV_NAME, env_creator
from card_envs.adapters.rllib_module import agent_module_spec, module_spec

ray.init(runtime_env=json.loads(sys.argv[1]))  # RAY_ADDRESS: the cluster
register_env(ENV_NAME, env_creator)
config = (
    PPOConfig()
    .environment(ENV_NAME, env_config={"game": "roy", "env": {}})
    .env_runners(num_env_runners=2, num_envs_per_env_runner=1, num_cpus_per_env_runner=1,
                 rollout_fragment_length=64)
    .training(train_batch_size_per_learner=128, minibatch_size=64, num_epochs=1)
    .multi_agent(policies={"main", "heuristic"},
                 policy_mapping_fn=lambda a, e, **k: "main" if a == "player_0" else "heuristic",
                 policies_to_train=["main"])
    .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
        "main": module_spec("roy", policy_kwargs={"net_arch": [32, 32]}),
        "heuristic": agent_module_spec("heuristic", "roy")}))
    .debugging(seed=0)
)
algo = config.build_algo()
def where(runner):
    import card_envs
    return ray.get_runtime_context().get_node_id(), card_envs.__file__

runners = algo.env_runner_group.foreach_env_runner(where, local_env_runner=False)
result = algo.train()
print("RESULT", json.dumps({
    "runner_nodes": [node for node, _ in runners],
    "runner_card_envs": [path for _, path in runners],
    "alive_nodes": [n["NodeID"] for n in ray.nodes() if n["Alive"]],
    "env_steps": result["env_runners"]["num_env_steps_sampled_lifetime"]}), flush=True)
input()  # hold the actors until the test has looked at the processes
algo.stop()
"""


def test_two_env_runners_run_on_different_nodes(cluster: LoopbackCluster,
                                                tmp_path: Path) -> None:
    # Not from the checkout: Ray puts a driver's working directory on its workers' sys.path.
    driver = subprocess.Popen([sys.executable, "-c", PLAIN_PPO, json.dumps(RUNTIME_ENV)],
                              env=cluster.driver_env(), cwd=tmp_path,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, start_new_session=True)
    assert driver.stdin is not None and driver.stdout is not None
    lines: list[str] = []
    try:
        for line in driver.stdout:
            lines.append(line)
            if line.startswith("RESULT "):
                break
        else:
            pytest.fail(f"the driver ended without a result:\n{''.join(lines)[-6000:]}")
        result = json.loads(lines[-1].removeprefix("RESULT "))
        # RLlib's view: two runners, each on its own node of the two alive ones.
        assert len(result["runner_nodes"]) == 2
        assert set(result["runner_nodes"]) == set(result["alive_nodes"])
        assert len(result["alive_nodes"]) == 2
        assert result["env_steps"] >= 128
        # card_envs came with the runtime_env (unpacked in the node's session), not the checkout.
        for path in result["runner_card_envs"]:
            assert str(cluster.root) in path and str(ROOT) not in path, path
        # The operating system's: one runner process in each node's session.
        assert runner_nodes(cluster) == {"head": 1, "node1": 1}
        driver.stdin.write("\n")
        driver.stdin.flush()
        assert driver.wait(timeout=120) == 0, "".join(lines)[-6000:]
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    # The driver gone, its actors go: the runner processes end.
    deadline = time.monotonic() + 60
    while any(runner_nodes(cluster).values()) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any(runner_nodes(cluster).values())
    assert not session_processes(driver.pid)


def _train(cluster: LoopbackCluster, cwd: Path, *args: str) -> subprocess.Popen[str]:
    """The trainer's command line as a driver of the cluster (its own session)."""
    env = {**cluster.driver_env(), "PYTHONPATH": str(ROOT), "CARD_ENVS_PURE_PYTHON": "1"}
    return subprocess.Popen([sys.executable, "-m", "training.train", *args, "--no-progress"],
                            cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _wait(driver: subprocess.Popen[str], ready: Any, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if driver.poll() is not None:
            pytest.fail(f"the driver exited ({driver.returncode}) before {what}:\n"
                        + driver.communicate()[0][-4000:])
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} after {timeout:.0f} s")
        time.sleep(0.5)


def test_self_play_on_the_cluster_killed_resumed_and_evaluated(cluster: LoopbackCluster,
                                                               tmp_path: Path) -> None:
    # The trainer's own test config (tests/libraries/test_rllib_train.py), on the cluster.
    config = tmp_path / "roy_rllib.yaml"
    assert "rllib: {num_env_runners: 2}" in CONFIG
    config.write_text(CONFIG.replace(
        "rllib: {num_env_runners: 2}",
        "rllib: " + json.dumps({"address": cluster.address, "num_env_runners": 2,
                                "runtime_env": RUNTIME_ENV})))
    runs, run = tmp_path / "runs", tmp_path / "runs" / "roy" / "r"
    first = _train(cluster, tmp_path, "--config", str(config), "--runs-dir", str(runs),
                   "--run-name", "r")
    try:
        # Its two env runners, one on each node, then a checkpoint past the start.
        _wait(first, lambda: runner_nodes(cluster) == {"head": 1, "node1": 1},
              "env runner on each node", 300)
        _wait(first, lambda: _checkpoint_step(run) >= 400, "checkpoint past step 0", 400)
    finally:
        os.kill(first.pid, signal.SIGKILL)  # the driver only: the cluster stays up
        out = first.communicate()[0]
    killed_at = _checkpoint_step(run)
    assert 400 <= killed_at < 2400, out[-3000:]
    assert not (run / "final.zip").exists()
    # The checkpoint records the runtime_env as given (Ray rewrites the dict ray.init gets).
    state = torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=False)
    assert state["config"]["rllib"]["runtime_env"] == RUNTIME_ENV
    # The cluster ends a dead driver's actors: its env runners go.
    deadline = time.monotonic() + 120
    while any(runner_nodes(cluster).values()) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any(runner_nodes(cluster).values()), cluster.processes()

    resumed = _train(cluster, tmp_path, "--resume", str(run))
    seen: dict[str, int] = {}
    try:
        while resumed.poll() is None:  # where its env runners run, while it trains
            for node, count in runner_nodes(cluster).items():
                seen[node] = max(seen.get(node, 0), count)
            time.sleep(0.5)
    finally:
        out = resumed.communicate(timeout=600)[0]
    assert resumed.returncode == 0, out[-4000:]
    assert seen == {"head": 1, "node1": 1}, seen
    assert f"resuming from the checkpoint at step {killed_at}" in out
    steps = _steps(run / "progress.csv")
    assert steps == sorted(steps) and len(set(steps)) == len(steps) and steps[-1] >= 2400
    assert "finished at step" in (run / "summary.json").read_text()

    # The result, played by the project's evaluator in a process that never imports Ray.
    code = ("import sys\n"
            "from training.evaluate import main\n"
            f"report = main(['--game', 'roy', '--agents', {str(run)!r}, 'heuristic', "
            f"'--first-vs-rest', '--games', '20', '--out', {str(tmp_path / 'ev')!r}])\n"
            "assert sum(m['games'] for m in report['matches']) == 20, report\n"
            "assert not [m for m in sys.modules if m == 'ray' or m.startswith('ray.')]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(ROOT), "CARD_ENVS_PURE_PYTHON": "1"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_throughput_benchmark_measures_across_the_nodes(cluster: LoopbackCluster,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks/rllib_throughput.py's figure on the cluster, with tiny settings: the
    trainer's algorithm with two runners, one per node, and its three rates."""
    from benchmarks import rllib_throughput as bench

    args = bench.build_parser().parse_args([
        "--game", "roy", "--iterations", "1", "--timeout", "600",
        "--set", "selfplay.n_envs=4", "--set", "ppo.n_steps=32", "--set", "ppo.batch_size=64",
        "--set", "selfplay.pool_size=2", "--set", "ppo.policy_kwargs={net_arch: [32, 32]}",
        "--set", "rllib.runtime_env=" + json.dumps(RUNTIME_ENV)])
    figures = bench.child(args, "--one-rllib", 2, cluster.address, cluster.driver_env())
    assert isinstance(figures, dict), figures
    assert figures["nodes"] == 2 and figures["games"] == 4
    assert figures["sampling"] > 0 and figures["training"] > 0 and figures["learner"] > 0
    assert figures["learner"] < figures["training"]  # the opponents' moves are env steps too
    bench.summary([("one node (local Ray)", 2, {**figures, "sampling": figures["sampling"] / 2}),
                   ("2 loopback nodes", 2, figures)])
    assert "2 loopback nodes, 2 runners vs one node" in capsys.readouterr().out

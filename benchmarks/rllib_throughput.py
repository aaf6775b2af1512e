"""RLlib self-play throughput: env steps/s against the number of env runners, on one node and
across nodes, next to the SB3 trainer's ``learn()`` in the same run.

    python benchmarks/rllib_throughput.py --game roy                   # 1 and 2 runners, SB3
    python benchmarks/rllib_throughput.py --game roy --loopback        # + a two-node cluster here
    python benchmarks/rllib_throughput.py --game roy --address HOST:PORT --runners 1,2,4,8,16

Every RLlib figure is the trainer's own algorithm (``training.rllib_algo.
build_algorithm_config`` on the game's config with ``backend: rllib``): the league at the
config's rates, its snapshot pool filled, built in a fresh driver process per figure. Two
figures each:

* ``sampling``: env steps/s of the env runners alone, all sampling at once (what adding runners
  buys: every seat's moves, opponents' included, in the runners);
* ``training``: env steps/s of whole ``algo.train()`` iterations (sampling, then the learner's
  PPO update in the driver, then the weights sent back), and the learner's own decisions/s, the
  figure comparable to SB3's (whose ``num_timesteps`` counts the learner's decisions only).

By default the config's ``selfplay.n_envs`` games are shared out over the runners (strong
scaling: the same work, more processes), as ``num_envs_per_env_runner: auto`` trains.
``--games-per-runner G`` holds each runner's load instead (weak scaling, RLlib's own reading
of ``num_envs_per_env_runner``): ``selfplay.n_envs`` is G x runners and ``ppo.n_steps`` shrinks
to keep the config's samples per iteration, so every figure's PPO update is the same size.

``--loopback`` starts two Ray nodes on this host (one CPU each, benchmarks/ray_cluster.py) and
measures the same runner counts there (at most one runner per node's CPU), so the cost of
crossing nodes is the ratio to the one-node figure. ``--address`` measures on a cluster you
started (``ray start``; token auth as your cluster has it). SB3's figure is ``learn()`` of the
same config (``selfplay.workers`` 1, or ``--sb3-workers``). The machine (cores, GPU, load) is
printed at the top: compare figures only within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.counts import parse_counts  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def load(args: argparse.Namespace, overrides: dict[str, Any]) -> Any:
    """The game's config with ``--set`` and ``overrides`` applied."""
    from training.assignments import parse_assignments
    from training.config import load_config

    path = args.config or ROOT / "configs" / f"{args.game}.yaml"
    return load_config(path, {**parse_assignments(args.set, "--set"), **overrides})


# -- one figure, in its own process --------------------------------------------------------------
def measure_rllib(args: argparse.Namespace) -> dict[str, float]:
    """One RLlib figure (``--one-rllib N``): the trainer's algorithm, its pool filled."""
    import ray
    import torch

    from training.rllib_algo import build_algorithm_config, init_ray, sync_league, take_snapshot
    from training.rllib_settings import driver_torch_threads

    cfg = load(args, {"backend": "rllib", "rllib.num_env_runners": args.one_rllib,
                      "rllib.address": args.address})
    torch.set_num_threads(driver_torch_threads(cfg))  # the driver's, as the trainer sets it
    init_ray(cfg)  # (starts a local Ray again where its raylet missed Ray's start wait)
    algo = build_algorithm_config(cfg).build_algo()
    try:
        slots = list(range(cfg.selfplay.pool_size))
        for slot in slots:  # a full pool, as a run has after its first snapshots
            take_snapshot(algo, slot)
        sync_league(algo, slots, slots[-1], 0)
        nodes = algo.env_runner_group.foreach_env_runner(
            lambda r: ray.get_runtime_context().get_node_id(), local_env_runner=False)

        def sample_all() -> int:
            counts = algo.env_runner_group.foreach_env_runner(
                lambda r: sum(len(e) for e in r.sample()), local_env_runner=False)
            return int(sum(counts))

        sample_all()  # warm-up
        start, steps = time.perf_counter(), 0
        for _ in range(args.iterations):
            steps += sample_all()
        sampling = steps / (time.perf_counter() - start)

        algo.train()  # warm-up
        start, env_steps, learner_steps = time.perf_counter(), 0, 0
        for _ in range(args.iterations):
            result = algo.train()["env_runners"]
            env_steps += int(result["num_env_steps_sampled"])
            learner_steps += int(result["num_module_steps_sampled"].get("learner", 0))
        wall = time.perf_counter() - start
        return {"sampling": sampling, "training": env_steps / wall,
                "learner": learner_steps / wall, "nodes": len(set(nodes)),
                "games": cfg.selfplay.n_envs}
    finally:
        algo.stop()
        ray.shutdown()


def measure_sb3(args: argparse.Namespace) -> dict[str, float]:
    """SB3's figure (``--one-sb3 W``): MaskablePPO ``learn()`` on the same config, the
    config's opponent mix, ``selfplay.workers`` W (benchmarks/training_throughput.py)."""
    import torch

    from benchmarks.training_throughput import learn_rate
    from training.selfplay_workers import learner_torch_threads, make_selfplay_venv
    from training.train import policy_class, ppo_arguments

    cfg = load(args, {})
    torch.set_num_threads(learner_torch_threads(cfg.training.torch_threads, args.one_sb3))
    sp = cfg.selfplay
    venv = make_selfplay_venv(cfg.game, cfg.env, sp.n_envs,
                              {str(k): w for k, w in sp.opponents.items()}, args.one_sb3,
                              pool_size=sp.pool_size, latest_prob=sp.latest_prob,
                              learner_seat=sp.learner_seat,
                              opponent_deterministic=sp.opponent_deterministic,
                              seed=cfg.seed, reward=sp.reward, reward_scale=sp.reward_scale)
    steps = args.iterations * cfg.ppo["n_steps"] * sp.n_envs
    return {"learner": learn_rate(venv, policy_class(cfg), ppo_arguments(cfg), steps, cfg.seed,
                                  fill_pool=sp.pool_size)}


def weak_scaling_sets(n_envs: int, n_steps: int, games_per_runner: int,
                      runners: int) -> list[str]:
    """``--set`` items that give each of ``runners`` runners ``games_per_runner`` games while
    keeping ``n_envs x n_steps`` samples per iteration (``--games-per-runner``)."""
    games = games_per_runner * max(1, runners)
    samples = n_envs * n_steps
    if games_per_runner < 1 or samples % games:
        raise ValueError(
            f"--games-per-runner {games_per_runner} with {runners} runner(s) is {games} games, "
            f"which does not divide the config's {samples} samples per iteration "
            f"(selfplay.n_envs {n_envs} x ppo.n_steps {n_steps}); choose a divisor")
    return [f"selfplay.n_envs={games}", f"ppo.n_steps={samples // games}"]


def child(args: argparse.Namespace, flag: str, value: int, address: str | None,
          env: dict[str, str] | None = None,
          extra_sets: list[str] | None = None) -> dict[str, float] | str:
    """Run one figure in a fresh process; its figures, or why it failed."""
    cmd = [sys.executable, __file__, flag, str(value), "--game", args.game,
           "--iterations", str(args.iterations)]
    cmd += ["--config", str(args.config)] if args.config else []
    cmd += ["--address", address] if address else []
    for item in [*args.set, *(extra_sets or [])]:
        cmd += ["--set", item]
    if env is None:  # a local Ray: not one that RAY_ADDRESS names
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS" or address}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("FIGURES "):
            figures: dict[str, float] = json.loads(line.removeprefix("FIGURES "))
            return figures
    tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
    return f"failed (exit {done.returncode}): " + " | ".join(tail)


def machine() -> str:
    import card_envs
    from benchmarks.training_throughput import machine as sb3_machine

    return f"{sb3_machine()}, card_envs build {card_envs.BUILD}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="roy")
    parser.add_argument("--config", default=None, help="default: configs/<game>.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="any config key, as train's --set (e.g. selfplay.n_envs=8)")
    parser.add_argument("--runners", type=parse_counts, default=[1, 2],
                        help="env-runner counts, e.g. 1,2,4,8,16 (default 1,2)")
    parser.add_argument("--games-per-runner", type=int, default=None, metavar="G",
                        help="weak scaling: G games in each runner (selfplay.n_envs = G x "
                        "runners, ppo.n_steps scaled to keep the samples per iteration); "
                        "default: the config's n_envs shared out")
    parser.add_argument("--iterations", type=int, default=3,
                        help="timed iterations per figure (after one warm-up)")
    parser.add_argument("--address", default=None,
                        help="a Ray cluster to measure on too (host:port), started by you")
    parser.add_argument("--loopback", action="store_true",
                        help="start two one-CPU Ray nodes on this host and measure there too")
    parser.add_argument("--no-sb3", action="store_true", help="leave out SB3's figures")
    parser.add_argument("--sb3-workers", type=parse_counts, default=[1],
                        help="selfplay.workers counts of SB3's figures (default 1: what "
                        "workers: auto is on 2 cores; more need card-envs installed, as the "
                        "worker processes import it by its installed name)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per figure")
    parser.add_argument("--one-rllib", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--one-sb3", type=int, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.iterations < 1:
        parser.error("--iterations must be >= 1")
    if args.one_rllib or args.one_sb3:
        figures = measure_rllib(args) if args.one_rllib else measure_sb3(args)
        print("FIGURES " + json.dumps(figures), flush=True)
        return

    cfg = load(args, {"backend": "rllib"})
    n_envs, n_steps = cfg.selfplay.n_envs, cfg.ppo["n_steps"]
    per_runner = args.games_per_runner

    def sets(runners: int) -> list[str]:
        return [] if per_runner is None else weak_scaling_sets(n_envs, n_steps, per_runner,
                                                               runners)
    try:
        for n in args.runners:
            sets(n)
    except ValueError as problem:
        parser.error(str(problem))
    print(machine())
    games = (f"{n_envs} games shared among the env runners, ppo.n_steps {n_steps}"
             if per_runner is None else
             f"{per_runner} games in each env runner (weak scaling), ppo.n_steps scaled to "
             f"keep {n_envs * n_steps} samples per iteration")
    print(f"{cfg.game}: {games}, net {cfg.ppo['policy_kwargs']}, "
          f"{args.iterations} timed iterations per figure, torch threads "
          f"{cfg.training.torch_threads} (training.torch_threads; auto: the cores less the "
          f"figure's workers)", flush=True)
    rows: list[tuple[str, int, dict[str, float] | str]] = []

    def add(where: str, runners: int, address: str | None,
            env: dict[str, str] | None = None) -> None:
        rows.append((where, runners, child(args, "--one-rllib", runners, address, env,
                                           sets(runners))))
        show(rows[-1])

    print(f"\n{'where':<24} {'runners':>7} {'games':>5} {'sampling':>10} {'training':>10} "
          f"{'learner':>9} "
          f"{'nodes':>5}   (env steps/s; learner: its decisions/s)")
    for n in args.runners:
        add("one node (local Ray)", n, None)
    if args.loopback:
        from benchmarks.ray_cluster import LoopbackCluster

        nodes = max(args.runners)
        env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                           os.environ.get("PYTHONPATH")]))}
        with LoopbackCluster(str(Path(sys.executable).with_name("ray")), nodes=max(2, nodes),
                             cpus=1, env=env) as cluster:
            for n in args.runners:
                add(f"{cluster.nodes} loopback nodes", n, cluster.address,
                    cluster.driver_env())
    if args.address:
        for n in args.runners:
            add(f"cluster {args.address}", n, args.address)
    if not args.no_sb3:
        for workers in args.sb3_workers:
            sb3 = child(args, "--one-sb3", workers, None)
            print(f"{'SB3 learn(), workers ' + str(workers):<38} {'':>10} {'':>10} "
                  + (f"{sb3['learner']:9.0f}" if isinstance(sb3, dict) else sb3), flush=True)
    summary(rows)


def show(row: tuple[str, int, dict[str, float] | str]) -> None:
    where, runners, figures = row
    if isinstance(figures, str):
        print(f"{where:<24} {runners:>7} {figures}", flush=True)
        return
    print(f"{where:<24} {runners:>7} {figures['games']:5.0f} {figures['sampling']:10.0f} "
          f"{figures['training']:10.0f} "
          f"{figures['learner']:9.0f} {figures['nodes']:5.0f}", flush=True)


def summary(rows: list[tuple[str, int, dict[str, float] | str]]) -> None:
    """The issue's two ratios, where this run measured them."""
    got = {(w, n): f for w, n, f in rows if isinstance(f, dict)}
    local = {n: f for (w, n), f in got.items() if w.startswith("one node")}
    if 1 in local:
        print("\nspeed-up over 1 runner, one node (target: 2 runners >= 1.5x):")
        for n, f in sorted(local.items()):
            print(f"  {n} runners: sampling {f['sampling'] / local[1]['sampling']:.2f}x, "
                  f"training {f['training'] / local[1]['training']:.2f}x")
    for (where, n), f in sorted(got.items()):
        if where.startswith("one node") or n not in local:
            continue
        print(f"{where}, {n} runners vs one node (target: at most 10% slower): sampling "
              f"{f['sampling'] / local[n]['sampling'] - 1:+.0%}, training "
              f"{f['training'] / local[n]['training'] - 1:+.0%}")


if __name__ == "__main__":
    main()

"""The search agent against each game's heuristic, with its measured time per decision.

    python benchmarks/search_strength.py --games 100 [--only roy:2] [--prior heuristic]
        [--method flat --rollout heuristic --time-ms 50] [--json out.json]

Plays ``training.evaluate`` (seats rotated; in three-player settings the search agent takes one
seat, the heuristic the other two) with a simulation budget per setting chosen so that a
decision takes under 50 ms on one core (the compiled build; see docs/baselines.md), and
reports the win rate with its 95% Wilson interval, the unit an episode is (the games' default
``episode`` option), the mean wall-clock time and rollouts (simulations) per searched decision.
``--time-ms`` replaces the simulation budgets by a time budget per decision (``time_ms``),
``--simulations`` by one fixed budget; ``--method`` and ``--rollout`` set those settings for
every game.

``--processes P`` plays the games in P processes, for a machine with many cores: the games are
split into P shards, shard i played with seed ``--seed + i`` (its own deals and search streams),
and the shards pooled into one win rate and interval; each shard's own result is printed as it
ends (a long match shows progress). The same seed and P give the same result
on any machine with a simulation budget; a time budget needs a core per process (refused
otherwise). P = 1 is the single run as before.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import card_envs  # noqa: E402
from card_envs.agents.search import METHODS, PRIORS, ROLLOUTS, SearchAgent  # noqa: E402
from card_envs.games import make_engine  # noqa: E402
from training.evaluate import evaluate, wilson_interval  # noqa: E402
from training.selfplay_workers import available_cores  # noqa: E402

#: (game, players, simulations per decision, rollout agent).
SETTINGS = (("roy", 2, 80, "random"), ("memory_uno", 2, 80, "random"),
            ("mega_memory", 2, 25, "random"), ("deluxe_memory", 2, 25, "random"),
            ("deluxe_memory", 3, 15, "random"), ("dogpile", 2, 15, "random"),
            ("dogpile", 3, 12, "random"))


def unit(game: str, players: int) -> str:
    config = make_engine(game, num_players=players).config
    return str(config.get("episode", "game"))


class Counted(SearchAgent):
    """The search agent, counting the simulations (rollouts) its decisions ran."""

    simulations_run = 0

    def act_in(self, engine: Any) -> int:
        move = super().act_in(engine)
        self.simulations_run += self.last_simulations
        return move


def run(game: str, players: int, sims: int, rollout: str, games: int,
        seed: int, prior: str = "none", method: str = "ismcts",
        time_ms: float | None = None) -> dict[str, object]:
    config = {"num_players": players}
    agent = Counted(game, config, simulations=sims, rollout=rollout, prior=prior,
                    method=method, time_ms=time_ms, seed=seed)
    start = time.perf_counter()
    report = evaluate(game, [agent, "heuristic"], games=games, config=config, seed=seed,
                      parallel=1, labels=["search", "heuristic"])
    match = report["matches"][0]
    return {"game": game, "players": players, "simulations": sims, "rollout": rollout,
            "prior": prior, "method": method, "time_ms": time_ms,
            "simulations_per_decision": agent.simulations_run / max(1, agent.searched),
            "unit": unit(game, players), "games": match["games"],
            "win_rate": match["win_rate"], "ci95": match["ci95"],
            "ms_per_decision": 1000 * agent.search_seconds / max(1, agent.searched),
            "decisions": agent.searched, "wall_s": time.perf_counter() - start}


def shard_sizes(games: int, players: int, shards: int) -> list[int]:
    """``games`` split into ``shards`` near-equal parts, in whole seat rotations (multiples of
    ``players``) where ``games`` allows, so that each shard seats the agents evenly."""
    block = players if games % players == 0 else 1
    blocks = games // block
    if shards > blocks:
        raise ValueError(f"--processes: {shards} shards for {games} games; at most {blocks}")
    return [block * (blocks // shards + (i < blocks % shards)) for i in range(shards)]


#: What each shard's own entry in a pooled row keeps.
SHARD_KEYS = ("seed", "games", "win_rate", "ms_per_decision", "simulations_per_decision",
              "decisions", "wall_s")


def pooled(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One setting's shards as one row: games and scores summed (a draw scores half, as in
    the evaluator), the interval from the pooled score, per-decision figures weighted by the
    decisions each shard made."""
    games = sum(int(r["games"]) for r in rows)
    score = sum(float(r["win_rate"]) * int(r["games"]) for r in rows)
    decisions = sum(int(r["decisions"]) for r in rows)

    def per_decision(key: str) -> float:
        return sum(float(r[key]) * int(r["decisions"]) for r in rows) / max(1, decisions)

    lo, hi = wilson_interval(score, games)
    return {**rows[0], "games": games, "win_rate": score / games if games else 0.0,
            "ci95": [lo, hi], "decisions": decisions,
            "ms_per_decision": per_decision("ms_per_decision"),
            "simulations_per_decision": per_decision("simulations_per_decision"),
            "wall_s": max(float(r["wall_s"]) for r in rows),
            "shards": [{key: r[key] for key in SHARD_KEYS} for r in rows]}


def run_sharded(game: str, players: int, sims: int, rollout: str, games: int, seed: int,
                prior: str, method: str, time_ms: float | None,
                processes: int) -> dict[str, Any]:
    """:func:`run` in ``processes`` processes (see the module docstring), pooled."""
    sizes = shard_sizes(games, players, processes)
    tasks = [(game, players, sims, rollout, n, seed + i, prior, method, time_ms)
             for i, n in enumerate(sizes)]
    if processes == 1:
        rows = [run(*tasks[0])]
    else:
        finished: dict[int, dict[str, Any]] = {}
        with ProcessPoolExecutor(max_workers=processes) as pool:
            shard_of = {pool.submit(run, *task): i for i, task in enumerate(tasks)}
            for future in as_completed(shard_of):  # each shard reported as it ends
                i = shard_of[future]
                finished[i] = row = future.result()
                # Its cost too: a shard that ends is reported whole even if another is
                # stopped before the pooled row is written.
                print(f"  shard seed {tasks[i][5]}: search wins {row['win_rate']:.3f} of "
                      f"{row['games']} {row['unit']}s, {row['wall_s']:.0f} s, "
                      f"{row['ms_per_decision']:.1f} ms and "
                      f"{row['simulations_per_decision']:.1f} simulations a decision over "
                      f"{row['decisions']} decisions", flush=True)
        rows = [finished[i] for i in range(len(tasks))]
    for row, task in zip(rows, tasks, strict=True):
        row["seed"] = task[5]
    return pooled(rows) if processes > 1 else rows[0]


def match_ci(row: dict[str, object]) -> tuple[float, float]:
    ci: Any = row["ci95"]
    return float(ci[0]), float(ci[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", default=None, help="game:players, e.g. roy:2")
    parser.add_argument("--json", default=None)
    parser.add_argument("--prior", default="none", choices=PRIORS,
                        help="the search's move priors (its 'prior' setting)")
    parser.add_argument("--method", default="ismcts", choices=METHODS)
    parser.add_argument("--rollout", default=None, choices=ROLLOUTS,
                        help="every setting's rollout agent (default: the table's)")
    parser.add_argument("--time-ms", type=float, default=None,
                        help="a time budget per decision instead of the simulation budgets")
    parser.add_argument("--simulations", type=int, default=None,
                        help="one simulation (rollout) budget for every setting")
    parser.add_argument("--processes", type=int, default=1,
                        help="play the games in this many processes, pooled (module docstring)")
    args = parser.parse_args(argv)
    if args.simulations is not None and args.time_ms is not None:
        parser.error("--simulations and --time-ms: give one budget, not both")
    if args.simulations is not None and args.simulations < 1:
        parser.error(f"--simulations: expected at least 1, got {args.simulations}")
    if args.processes < 1:
        parser.error(f"--processes: expected at least 1, got {args.processes}")
    cores = available_cores()
    if args.time_ms is not None and args.processes > cores:
        parser.error(f"--processes: {args.processes} processes on {cores} cores would share "
                     "cores, so --time-ms would measure the sharing; use --simulations")
    chosen = [s for s in SETTINGS if not args.only or f"{s[0]}:{s[1]}" in args.only]
    for _, players, _, _ in chosen:  # before any game is played
        try:
            shard_sizes(args.games, players, args.processes)
        except ValueError as err:
            parser.error(str(err))
    print(f"build: {card_envs.BUILD}", flush=True)
    rows = []
    for game, players, sims, rollout in chosen:
        if args.time_ms is not None:
            sims = 1_000_000  # the time decides
        elif args.simulations is not None:
            sims = args.simulations
        row = run_sharded(game, players, sims, args.rollout or rollout, args.games, args.seed,
                          args.prior, args.method, args.time_ms, args.processes)
        rows.append(row)
        lo, hi = match_ci(row)
        print(f"{game} {players}p sims={sims} time_ms={args.time_ms} method={args.method} "
              f"rollout={row['rollout']} prior={args.prior}: "
              f"search wins {row['win_rate']:.3f} "
              f"[{lo:.3f}, {hi:.3f}] of {row['games']} {row['unit']}s vs heuristic; "
              f"{row['ms_per_decision']:.1f} ms/decision, "
              f"{row['simulations_per_decision']:.1f} simulations/decision; "
              f"{row['wall_s']:.0f} s"
              + (f" ({args.processes} processes, seeds {args.seed}.."
                 f"{args.seed + args.processes - 1})" if args.processes > 1 else ""),
              flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"build": card_envs.BUILD, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

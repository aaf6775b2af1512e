"""One round robin per game (random, heuristic, search, a trained policy) with each agent's cost.

    python benchmarks/round_robin.py [--games 200] [--search-games 30] [--only roy:2 ...]
        [--policy roy=runs/roy/<run> ...] [--flat-ms 50] [--json out.json] [--markdown out.md]

Every pair of agents plays ``training.evaluate`` (two players, seats rotated, the games' default
``episode`` option as the unit); a pair with a search agent in it plays ``--search-games``
games, the others ``--games``. The search agent plays three times: the tree's default settings
(random rollouts, UCB) and its best tree setting (``prior=heuristic``), both with the per-game
simulation budget of ``benchmarks/search_strength.py`` (about 35-40 ms of CPU per decision on
this machine's compiled build, so under the issue's 50 ms), and the strongest agent of
docs/baselines.md, ``search-flat`` (``method=flat,rollout=heuristic``, ``--flat-ms``
milliseconds a decision; 0 leaves it out). Each agent's cost per decision is
timed on positions of heuristic-against-heuristic games (``act_in`` on the engine, as the
evaluator calls it). Results are written after every pair, so a cut-short run keeps what it
measured; ``--json`` with ``--resume`` keeps the pairs a file already holds and plays the rest.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import card_envs  # noqa: E402
from benchmarks.search_strength import SETTINGS, unit  # noqa: E402
from card_envs.agents import make_agent  # noqa: E402
from card_envs.games import make_engine  # noqa: E402
from training.evaluate import evaluate  # noqa: E402
from training.files import atomic_write_bytes  # noqa: E402


def agent_specs(game: str, sims: int, policy: str | None,
                flat_ms: float = 0) -> dict[str, str]:
    """Label -> agent spec for one game's round robin (``search-flat`` when ``flat_ms``)."""
    specs = {"random": "random", "heuristic": "heuristic",
             "search": f"search:simulations={sims}",
             "search-prior": f"search:simulations={sims},prior=heuristic"}
    if flat_ms:
        specs["search-flat"] = f"search:method=flat,rollout=heuristic,time_ms={flat_ms:g}"
    if policy:
        specs["policy"] = policy
    return specs


def positions(game: str, config: dict[str, Any], count: int, seed: int) -> list[Any]:
    """``count`` live positions (engine clones) from heuristic-against-heuristic games, taken
    at evenly spread decisions so that early, middle and late play are all timed."""
    heuristic = make_agent("heuristic", game, config, seed=seed)
    found: list[Any] = []
    episode = 0
    while len(found) < 4 * count:
        engine = make_engine(game, **config)
        engine.reset(seed=seed + episode)
        episode += 1
        while not engine.done:
            found.append(engine.clone())
            engine.step(heuristic.act_in(engine))
    step = len(found) / count
    return [found[int(i * step)] for i in range(count)]


def decision_ms(agent: Any, spots: list[Any]) -> tuple[float, float]:
    """Mean milliseconds of ``agent.act_in`` over ``spots`` (forced moves counted too, as a
    game would): CPU time of this process (what the agent costs; torch may add threads) and
    wall-clock time (which a loaded machine inflates)."""
    agent.act_in(spots[0])  # not timed: a saved policy loads torch and its model on first use
    wall, cpu = time.perf_counter(), time.process_time()
    for engine in spots:
        agent.act_in(engine)
    n = len(spots)
    return 1000 * (time.process_time() - cpu) / n, 1000 * (time.perf_counter() - wall) / n


def run_game(game: str, players: int, sims: int, games: int, search_games: int, seed: int,
             policy: str | None, cost_positions: int, write: Any, flat_ms: float = 0,
             earlier: dict[str, Any] | None = None) -> dict[str, Any]:
    """One game's round robin; ``earlier``: this game's result from an earlier run of the same
    agents (``--resume``), whose costs and pairs are kept, not measured again."""
    config = {"num_players": players}
    specs = agent_specs(game, sims, policy, flat_ms)
    labels = list(specs)
    if earlier is not None:
        if earlier["agents"] != specs:
            raise SystemExit(f"--resume: {game}'s earlier agents {earlier['agents']} are not "
                             f"this run's {specs}")
        if earlier.get("seed", seed) != seed:  # other deals: not one run
            raise SystemExit(f"--resume: {game}'s earlier pairs were played with --seed "
                             f"{earlier['seed']}, this run's is {seed}")
        result = earlier
    else:
        spots = positions(game, config, cost_positions, seed)
        costs, cpu_costs = {}, {}
        for label, spec in specs.items():
            agent = make_agent(spec, game, config, seed=seed, allow_policy_mismatch=True)
            timed = spots if not label.startswith("search") else spots[:max(5, len(spots) // 4)]
            cpu_costs[label], costs[label] = decision_ms(agent, timed)
        result = {"game": game, "players": players, "simulations": sims, "seed": seed,
                  "unit": unit(game, players), "agents": specs,
                  "ms_per_decision": costs, "cpu_ms_per_decision": cpu_costs, "matches": []}
    write(result)
    if games == 0:  # --cost-only
        return result
    played = {(m["a"], m["b"]) for m in result["matches"]}
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            searched = a.startswith("search") or b.startswith("search")
            n = search_games if searched else games
            # --search-games 0: the cheap pairs only; --resume: a pair already played
            if n == 0 or (a, b) in played:
                continue
            start = time.perf_counter()
            report = evaluate(game, [specs[a], specs[b]], games=n, config=config, seed=seed,
                              parallel=1 if searched else 16, labels=[a, b],
                              allow_policy_mismatch=True)
            match = report["matches"][0]
            match["wall_s"] = time.perf_counter() - start
            result["matches"].append(match)
            print(f"{game} {players}p {a} vs {b}: {match['win_rate']:.3f} "
                  f"[{match['ci95'][0]:.3f}, {match['ci95'][1]:.3f}] over {n} "
                  f"{result['unit']}s ({match['wall_s']:.0f} s)", flush=True)
            write(result)
    return result


def setting(result: dict[str, Any]) -> str:
    """A result's game and seat count as ``--only`` spells them (``roy:2``)."""
    return f"{result['game']}:{result['players']}"


def markdown(result: dict[str, Any]) -> str:
    """One game's table: the row agent's win rate against the column agent (95% interval,
    games played), and its cost per decision."""
    labels = list(result["agents"])
    cells: dict[tuple[str, str], str] = {}
    for m in result["matches"]:
        a, b = m["a"], m["b"]
        lo, hi = m["ci95"]
        cells[a, b] = f"{m['win_rate']:.2f} [{lo:.2f}, {hi:.2f}] ({m['games']})"
        cells[b, a] = f"{1 - m['win_rate']:.2f} [{1 - hi:.2f}, {1 - lo:.2f}] ({m['games']})"
    head = ("| row vs column | " + " | ".join(labels)
            + " | ms per decision (CPU / wall) |")
    rule = "| --- " * (len(labels) + 2) + "|"
    rows = [f"| {a} | " + " | ".join(cells.get((a, b), "-") for b in labels)
            + f" | {result.get('cpu_ms_per_decision', {}).get(a, float('nan')):.3g} / "
            f"{result['ms_per_decision'][a]:.3g} |" for a in labels]
    return "\n".join([head, rule, *rows])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per pair without search")
    parser.add_argument("--search-games", type=int, default=30,
                        help="games per pair with a search agent in it (0: skip those pairs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", default=None, help="game:players, e.g. roy:2")
    parser.add_argument("--policy", nargs="*", default=[], metavar="GAME=PATH",
                        help="a trained policy (.zip or run directory) to add for a game")
    parser.add_argument("--cost-positions", type=int, default=40,
                        help="positions each agent's cost per decision is timed on")
    parser.add_argument("--simulations", type=int, default=None,
                        help="the search agents' simulations per decision in every game "
                             "(default: each game's budget, benchmarks/search_strength.py)")
    parser.add_argument("--cost-only", action="store_true",
                        help="time each agent's decisions, play no games")
    parser.add_argument("--flat-ms", type=float, default=50,
                        help="search-flat's milliseconds a decision (0: leave it out)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--resume", action="store_true",
                        help="keep the games and pairs --json already holds; play the rest")
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args(argv)
    if args.flat_ms < 0:
        parser.error(f"--flat-ms: expected milliseconds >= 0, got {args.flat_ms:g}")
    if args.resume and not args.json:
        parser.error("--resume needs --json (the file whose pairs are kept)")
    if args.cost_only:
        args.games = 0
    policies = dict(item.split("=", 1) for item in args.policy)
    settings = [(g, p, args.simulations or s) for g, p, s, _ in SETTINGS if p == 2]
    known = {f"{g}:{p}" for g, p, _ in settings}
    if args.only and set(args.only) - known:
        parser.error(f"--only: unknown settings {sorted(set(args.only) - known)}; "
                     f"choose from {sorted(known)}")
    unknown = set(policies) - {g for g, _, _ in settings}
    if unknown:
        parser.error(f"--policy: unknown games {sorted(unknown)}")
    print(f"build: {card_envs.BUILD}", flush=True)
    results: list[dict[str, Any]] = []
    earlier: dict[str, dict[str, Any]] = {}
    if args.resume and Path(args.json).exists():
        for saved in json.loads(Path(args.json).read_text())["results"]:
            earlier[setting(saved)] = saved

    def write(current: dict[str, Any]) -> None:
        if args.json:
            done = [r for r in results if r is not current]
            kept = [r for key, r in earlier.items()  # --resume: games not (yet) played again
                    if key not in {setting(x) for x in [*done, current]}]
            text = json.dumps({"build": card_envs.BUILD, "results": [*done, current, *kept]},
                              indent=1)
            atomic_write_bytes(args.json, text.encode())  # --resume reads it back

    for game, players, sims in settings:
        if args.only and f"{game}:{players}" not in args.only:
            continue
        result = run_game(game, players, sims, args.games, args.search_games, args.seed,
                          policies.get(game), args.cost_positions, write, args.flat_ms,
                          earlier.get(f"{game}:{players}"))
        results.append(result)
        write(result)
        print(f"\n{game} ({players} players, {result['unit']}s)\n{markdown(result)}\n",
              flush=True)
    if args.markdown:
        Path(args.markdown).write_text("\n\n".join(
            f"### {r['game']} ({r['players']} players, unit: {r['unit']})\n\n{markdown(r)}"
            for r in results) + "\n")


if __name__ == "__main__":
    main()

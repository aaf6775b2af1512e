"""Rollouts per second of the flat search (``method=flat``, heuristic rollouts), per game.

    python benchmarks/flat_rollouts.py [--positions 30] [--simulations 60] [--only roy:2]

Every setting searches the same positions (reached by heuristic play from fixed seeds) with a
fixed rollout budget, so the work is the same moves in any build or version of the code (the
moves are held fixed by tests/test_search_reference.py): the rate compares the cost of a
rollout (its clones, resample, the heuristic's moves, the steps) and nothing else. CPU time
of this process; ``rollouts_per_50ms`` is what one decision's budget buys at that rate.
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
from card_envs.agents.search import SearchAgent  # noqa: E402
from card_envs.games import get_game, make_engine  # noqa: E402

SETTINGS = (("roy", 2), ("memory_uno", 2), ("mega_memory", 2), ("deluxe_memory", 2),
            ("deluxe_memory", 3), ("dogpile", 2), ("dogpile", 3))


def positions(game: str, players: int, count: int, seed: int = 0) -> list[Any]:
    """``count`` positions with more than one legal move, every fifth such decision of
    heuristic self-play from seeds ``seed``, ``seed + 1``, ..."""
    heuristic_class: Any = get_game(game).heuristic_class()  # takes the game's options
    heuristic = heuristic_class(num_players=players)
    heuristic.seed(seed)
    engine = make_engine(game, num_players=players)
    found: list[Any] = []
    episode, k = seed, 0
    while len(found) < count:
        engine.reset(seed=episode)
        episode += 1
        while not engine.done and len(found) < count:
            mask = engine.legal_mask()
            if int(mask.sum()) > 1:
                k += 1
                if k % 5 == 0:
                    found.append(engine.clone())
            seat = engine.current_player
            engine.step(int(heuristic.act(engine.observation(seat), mask.copy())))
    return found


def rate(game: str, players: int, count: int, simulations: int) -> dict[str, Any]:
    agent = SearchAgent(game, {"num_players": players}, method="flat", rollout="heuristic",
                        simulations=simulations, seed=0)
    found = positions(game, players, count)
    rollouts = 0
    start = time.process_time()
    for engine in found:
        agent.act_in(engine)
        rollouts += agent.last_simulations
    cpu = time.process_time() - start
    return {"game": game, "players": players, "positions": count, "rollouts": rollouts,
            "cpu_s": cpu, "rollouts_per_s": rollouts / cpu,
            "rollouts_per_50ms": rollouts / cpu * 0.05}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=30)
    parser.add_argument("--simulations", type=int, default=60)
    parser.add_argument("--only", nargs="*", default=None, help="game:players, e.g. roy:2")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    for game, players in SETTINGS:
        if args.only and f"{game}:{players}" not in args.only:
            continue
        row = rate(game, players, args.positions, args.simulations)
        rows.append(row)
        print(f"{game} {players}p ({card_envs.BUILD}): {row['rollouts']} rollouts in "
              f"{row['cpu_s']:.2f} s CPU = {row['rollouts_per_s']:.0f}/s, "
              f"{row['rollouts_per_50ms']:.1f} per 50 ms", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"build": card_envs.BUILD, "rows": rows},
                                              indent=1) + "\n")


if __name__ == "__main__":
    main()

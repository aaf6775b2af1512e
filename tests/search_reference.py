"""Recorded moves of the heuristics and of the flat search, so that work on their speed (faster
clones, a cheaper rollout loop, faster heuristics) is held to playing exactly the same moves.

    python -m tests.search_reference            # lists the settings whose moves differ
    python -m tests.search_reference --update   # records them again (only for an intended change)

For every setting: the heuristic's move at every decision (more than one legal move) of walks
that mix heuristic and random moves (positions a search's rollouts reach, and others), each
heuristic reseeded per position; and the flat search's moves (``simulations`` fixed, so
deterministic) at a few positions. ``tests/test_search_reference.py`` replays them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.agents.search import SearchAgent
from card_envs.games import get_game, make_engine

SETTINGS = [("roy", 2), ("memory_uno", 2), ("mega_memory", 2), ("deluxe_memory", 2),
            ("deluxe_memory", 3), ("dogpile", 2), ("dogpile", 3)]
PATH = Path(__file__).with_name("search_reference") / "moves.json"
#: Heuristic decisions recorded per setting, and flat-search decisions.
HEURISTIC_DECISIONS = 400
SEARCH_DECISIONS = 6
SEARCH_SIMULATIONS = 30


def walk(game: str, players: int, seed: int, count: int) -> list[tuple[Any, int]]:
    """``count`` live positions (with their walk index) with more than one legal move, from
    episodes whose moves are the heuristic's or random, half and half."""
    rng = np.random.default_rng(seed)
    heuristic = get_game(game).heuristic_class()(num_players=players)
    engine = make_engine(game, num_players=players)
    episode = 0
    engine.reset(seed=seed)
    found: list[tuple[Any, int]] = []
    i = 0
    while len(found) < count:
        if engine.done:
            episode += 1
            engine.reset(seed=seed * 1000 + episode)
        mask = engine.legal_mask()
        legal = np.flatnonzero(mask)
        if legal.size > 1:
            found.append((engine.clone(), i))
        if rng.random() < 0.5:
            heuristic.seed(i)
            seat = engine.current_player
            move = int(heuristic.act(engine.observation(seat), mask.copy()))
        else:
            move = int(legal[rng.integers(legal.size)])
        engine.step(move)
        i += 1
    return found


def heuristic_moves(game: str, players: int) -> list[int]:
    """The heuristic's move at each walked position (seeded by the position's index)."""
    heuristic = get_game(game).heuristic_class()(num_players=players)
    moves = []
    for engine, i in walk(game, players, 7, HEURISTIC_DECISIONS):
        heuristic.seed(i)
        seat = engine.current_player
        moves.append(int(heuristic.act(engine.observation(seat), engine.legal_mask().copy())))
    return moves


def search_moves(game: str, players: int) -> list[list[int]]:
    """The flat search's move, and its rollouts per move (action, count pairs), at a few
    positions, with a fixed rollout budget."""
    agent = SearchAgent(game, {"num_players": players}, method="flat", rollout="heuristic",
                        simulations=SEARCH_SIMULATIONS, seed=11)
    out = []
    for engine, _ in walk(game, players, 13, SEARCH_DECISIONS):
        move = agent.act_in(engine)
        out.append([move, *[x for a in sorted(agent.last_visits)
                            for x in (a, agent.last_visits[a])]])
    return out


def record() -> dict[str, Any]:
    return {f"{game}:{players}": {"heuristic": heuristic_moves(game, players),
                                  "search": search_moves(game, players)}
            for game, players in SETTINGS}


def main(argv: list[str]) -> int:
    current = record()
    if argv == ["--update"]:
        PATH.parent.mkdir(exist_ok=True)
        PATH.write_text(json.dumps(current) + "\n")
        print(f"recorded {PATH}")
        return 0
    saved = json.loads(PATH.read_text())
    differ = [key for key in current if current[key] != saved.get(key)]
    print("differ: " + (", ".join(differ) if differ else "none"))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

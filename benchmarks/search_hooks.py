"""Cost of the search hooks per game: ``clone()``, ``resample_hidden()`` and a ``step()``.

    python benchmarks/search_hooks.py [--positions 200] [--json out.json]

Each game is played by random moves to ``--positions`` positions (its defaults and the
player counts the baselines use); at each, one clone, one resample of the clone for the seat
to move, and one step are timed. Reports microseconds per call (median over positions) and
which build ran (compiled or plain Python). Search spends these per simulation, besides the
steps of its tree walk and rollout (see docs/baselines.md).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import card_envs
from card_envs.games import make_engine

SETTINGS = (("mega_memory", 2), ("memory_uno", 2), ("deluxe_memory", 2), ("deluxe_memory", 3),
            ("dogpile", 2), ("dogpile", 3), ("roy", 2))


def measure(game: str, players: int, positions: int, seed: int = 0) -> dict[str, float]:
    engine = make_engine(game, num_players=players)
    rng = np.random.default_rng(seed)
    engine.reset(seed=seed)
    clone_t: list[float] = []
    resample_t: list[float] = []
    step_t: list[float] = []
    rollout_steps: list[int] = []
    while len(clone_t) < positions:
        if engine.done:
            engine.reset(seed=int(rng.integers(2**31)))
        t0 = time.perf_counter()
        copy = engine.clone()
        t1 = time.perf_counter()
        copy.resample_hidden(copy.current_player, rng)
        t2 = time.perf_counter()
        legal = np.flatnonzero(copy.legal_mask())
        t3 = time.perf_counter()
        copy.step(int(legal[rng.integers(legal.size)]))
        t4 = time.perf_counter()
        clone_t.append(t1 - t0)
        resample_t.append(t2 - t1)
        step_t.append(t4 - t3)
        legal = np.flatnonzero(engine.legal_mask())
        engine.step(int(legal[rng.integers(legal.size)]))
        if len(clone_t) % 20 == 0:  # length of a random playout from here
            n = 0
            while not copy.done:
                legal = np.flatnonzero(copy.legal_mask())
                copy.step(int(legal[rng.integers(legal.size)]))
                n += 1
            rollout_steps.append(n)
    us = 1e6
    return {"clone_us": float(np.median(clone_t)) * us,
            "resample_us": float(np.median(resample_t)) * us,
            "step_us": float(np.median(step_t)) * us,
            "rollout_steps": float(np.mean(rollout_steps)) if rollout_steps else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--json", default=None, help="also write the table here")
    args = parser.parse_args()
    build = card_envs.BUILD
    print(f"build: {build}")
    print(f"{'game':<15}{'seats':>6}{'clone us':>10}{'resample us':>13}{'step us':>9}"
          f"{'rollout steps':>15}")
    rows = []
    for game, players in SETTINGS:
        row = {"game": game, "players": players, **measure(game, players, args.positions)}
        rows.append(row)
        print(f"{game:<15}{players:>6}{row['clone_us']:>10.1f}{row['resample_us']:>13.1f}"
              f"{row['step_us']:>9.1f}{row['rollout_steps']:>15.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"build": build, "version": card_envs.__version__, "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()

"""How Mega Mem-Ory rounds end: by an empty centre pile, by the deck and discard pile running
out, or by ``stall_turns`` (the rule not in the text). RULES.md section 6 quotes its figures.

    python benchmarks/mega_memory_round_ends.py --rounds 2000

Each line plays ``--rounds`` seeded rounds (seeds 0..rounds-1) between two random agents or two
heuristic ones, under each ``round_end`` reading, and counts how each round ended.
"""

from __future__ import annotations

import argparse

import numpy as np

from card_envs.agents import RandomAgent
from card_envs.agents.base import Agent
from card_envs.games.mega_memory.engine import MegaMemoryEngine
from card_envs.games.mega_memory.heuristic import MegaMemoryHeuristic


def round_ends(players: str, round_end: str, rounds: int) -> dict[str, int]:
    """Counts of rounds ended by ``centre`` (a pile emptied), ``piles`` (deck and discard pile
    depleted) and ``stall`` (``stall_turns`` turns without a score)."""
    engine = MegaMemoryEngine(round_end=round_end)
    agents: list[Agent] = [MegaMemoryHeuristic(**engine.config) if players == "heuristic"
                           else RandomAgent(seed=seat) for seat in range(2)]
    ends = {"centre": 0, "piles": 0, "stall": 0}
    obs = np.empty(engine.layout.size, np.float32)
    for seed in range(rounds):
        engine.reset(seed=seed)
        while not engine.done:
            seat = engine.current_player
            engine.write_observation(seat, obs)
            engine.step(agents[seat].act(obs.copy(), engine.legal_mask().copy()))
        if not all(engine.centre):
            ends["centre"] += 1
        elif not engine.deck or (engine.piles_ran_out and round_end == "ran_out_this_turn"):
            ends["piles"] += 1
        else:
            if engine.scoreless_turns < engine.stall_turns:
                raise AssertionError(f"seed {seed}: a round ended for no known reason")
            ends["stall"] += 1
    return ends


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    for players in ("random", "heuristic"):
        for round_end in ("ran_out_this_turn", "empty_at_turn_end"):
            ends = round_ends(players, round_end, args.rounds)
            shares = ", ".join(f"{k} {v} ({100 * v / args.rounds:.1f}%)" for k, v in ends.items())
            print(f"{players} vs {players}, round_end={round_end}: {shares}", flush=True)


if __name__ == "__main__":
    main()

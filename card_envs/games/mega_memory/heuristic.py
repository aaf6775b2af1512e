"""A rule-based Mega Mem-Ory player that reads only its own observation.

Plan: value every score the mask allows by the points it adds to the best regrouping of the
cards already scored (plus a little per card taken); reach for remembered cards: start from the
discard pile when its remembered top card scores, flip the side slot that holds a remembered
partner, dig down the discard pile only into cards it remembers. Without a known score it flips
an unknown side slot (to learn it), and when nothing scores it keeps on its side the card with
more partners still in play and discards the other. It avoids ending the round (emptying a
centre pile) while behind.

The decision itself is :func:`card_envs.games.mega_memory.heuristic_rules.decide`, on plain
lists and compiled with the engines (a search's rollouts make it most of their time).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import Agent
from card_envs.games.mega_memory.engine import MegaMemoryEngine
from card_envs.games.mega_memory.heuristic_rules import Offsets, decide


class MegaMemoryHeuristic(Agent):
    name = "heuristic"
    draws_random = False  # deterministic: a search need not reseed it

    def __init__(self, **config: Any) -> None:
        self.layout = MegaMemoryEngine(**config).layout
        self.offsets = Offsets(self.layout.slices)

    # ``Offsets`` is a compiled (mypyc) class, which copy and pickle cannot rebuild: a copy
    # (a copied env's opponents, a pickled evaluator) takes everything else and derives it
    # again from the layout.
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["offsets"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.offsets = Offsets(self.layout.slices)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if observation.shape[-1] != self.layout.size:
            self.layout.decode(observation)  # raises, naming the sizes
        return decide(observation, action_mask, self.offsets)

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

from card_envs.agents.base import CompiledReaderAgent
from card_envs.games.mega_memory.engine import MegaMemoryEngine
from card_envs.games.mega_memory.heuristic_rules import Offsets, decide


class MegaMemoryHeuristic(CompiledReaderAgent):
    name = "heuristic"
    draws_random = False  # deterministic: a search need not reseed it

    def __init__(self, **config: Any) -> None:
        self.layout = MegaMemoryEngine(**config).layout
        self.offsets = self.build_reader()

    def build_reader(self) -> Offsets:
        return Offsets(self.layout.slices)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.check_size(observation)
        return decide(observation, action_mask, self.offsets)

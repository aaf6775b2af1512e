"""A rule-based Dogpile dog that reads only its own observation.

Plan (it plays for FULLHOUND, the highest total): dig the most valuable bone it can see or
remembers when that improves its paws (feats included); otherwise turn over unknown bones to
learn the pile. A dug bone is kept when it is worth keeping given the time left (picky early,
anything late), else put back face down. With full paws it swaps its weakest bone for a clearly
better known one. Sniffs go to unknown bones; shuffled-back bones go to the first free spots.

The decision itself is :func:`card_envs.games.dogpile.heuristic_rules.decide`, on plain lists
and compiled with the engines (a search's rollouts make it most of their time).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import CompiledReaderAgent
from card_envs.games.dogpile.engine import DogpileEngine
from card_envs.games.dogpile.heuristic_rules import (
    PICKY_VALUE,
    Offsets,
    decide,
    paw_value,
)

__all__ = ["PICKY_VALUE", "DogpileHeuristic", "paw_value"]


class DogpileHeuristic(CompiledReaderAgent):
    name = "heuristic"

    def __init__(self, **config: Any) -> None:
        engine = DogpileEngine(**config)
        self.layout = engine.layout
        self.ace_high = engine.ace_high
        self.offsets = self.build_reader()
        self.rng = np.random.default_rng()

    def build_reader(self) -> Offsets:
        return Offsets(self.layout.slices)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.check_size(observation)
        return decide(observation, action_mask, self.rng, self.offsets, self.ace_high)


"""A rule-based Memory-Uno player that reads only its own observation.

Plan: keep low cards and swap out the highest known (or an unknown) card; draw from the
graveyard when its top is clearly better than the worst own card; spend effects on learning its
own unknown cards, then opponents'; swap its worst card for an opponent's known low card; throw
only cards it remembers that match the graveyard; call the round when its estimated hand is low
and clearly below every opponent's estimate.

The decision itself is :func:`card_envs.games.memory_uno.heuristic_rules.decide`, on plain
lists and compiled with the engines (a search's rollouts make it most of their time).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import CompiledReaderAgent
from card_envs.games.memory_uno.engine import KIND_MATCH_KEYS, MemoryUnoEngine
from card_envs.games.memory_uno.heuristic_rules import (
    CALL_LIMIT,
    CALL_Z,
    PATIENCE,
    UNKNOWN_SD,
    UNKNOWN_VALUE,
    Reading,
    decide,
)

__all__ = ["CALL_LIMIT", "CALL_Z", "PATIENCE", "UNKNOWN_SD", "UNKNOWN_VALUE",
           "MemoryUnoHeuristic"]


class MemoryUnoHeuristic(CompiledReaderAgent):
    reader_attribute = "reading"
    name = "heuristic"
    draws_random = False  # deterministic: a search need not reseed it

    def __init__(self, **config: Any) -> None:
        engine = MemoryUnoEngine(**config)
        self.layout = engine.layout
        self.n = engine.num_players
        self.ns = engine.num_slots
        self.throw_base = engine.throw_base
        self.match_key = KIND_MATCH_KEYS[engine.config["match"]]
        self.reading = self.build_reader()

    def build_reader(self) -> Reading:
        return Reading(self.layout.slices, self.n, self.throw_base, self.match_key)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.check_size(observation)
        return decide(observation, action_mask, self.reading)

"""A rule-based ROY player that reads only its own observation.

It plans the whole turn: among every sequence of discards the hand allows from the current top
card, it picks the one worth most, where a sequence is worth the cards it sheds, a lot more if it
empties the hand, plus bonuses for what it does to the next player (ending on an Ace makes them
answer with an Ace or draw; the King of Spades makes them draw seven and skip). Following the
text's hints, the King of Spades is held back until an opponent is close to going out or our
own hand is nearly empty, and ending a turn on an Ace counts as an attack only against a next
player with four cards or fewer, or with another Ace in hand to back it (an Ace is otherwise an
ordinary card, played like any other). Jacks are kept as wild cards for turns with no other
play; the announced suit is the one it holds most of.

The decision itself is :func:`card_envs.games.roy.heuristic_rules.decide`, on plain lists and
compiled with the engines (a search's rollouts make it most of their time).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import CompiledReaderAgent
from card_envs.games.roy.engine import RoyEngine
from card_envs.games.roy.heuristic_rules import Offsets, decide


class RoyHeuristic(CompiledReaderAgent):
    name = "heuristic"
    draws_random = False  # deterministic: a search need not reseed it

    def __init__(self, **config: Any) -> None:
        self.layout = RoyEngine(**config).layout
        self.offsets = self.build_reader()

    def build_reader(self) -> Offsets:
        return Offsets(self.layout.slices)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.check_size(observation)
        return decide(observation, action_mask, self.offsets)

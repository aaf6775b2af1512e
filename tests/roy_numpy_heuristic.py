"""The ROY heuristic as it was written on numpy (before its decision moved to the compiled
``card_envs/games/roy/heuristic_rules.py``), kept as the reference the compiled one must match
move for move (tests/test_roy_heuristic.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import Agent
from card_envs.core.cards import ACE, JACK, RANK_OF, SUIT_OF
from card_envs.games.roy.engine import DRAW, END, KING_OF_SPADES, NEXT_HIGHER, WILD_BASE, RoyEngine

_NODE_BUDGET = 4000
GO_OUT_BONUS = 100.0
JACK_COST = 1.5  # a Jack spent as an ordinary card is a wild card lost
KING_NOW_BONUS = 6.0  # the King of Spades when an opponent is about to go out
KING_EARLY_COST = 1.0  # "Don't play the King of Spades too early in the game"
ACE_BONUS = 1.0  # ending on an Ace: the next player must answer it or draw


class NumpyRoyHeuristic(Agent):
    name = "heuristic"
    draws_random = False  # deterministic: a search need not reseed it

    def __init__(self, **config: Any) -> None:
        self.layout = RoyEngine(**config).layout

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 1:
            return int(legal[0])
        view = self.layout.decode(observation)
        hand = [int(c) for c in np.flatnonzero(view["hand"] > 0.5)]
        top = int(np.argmax(view["top_card"]))
        continuing = bool(view["phase"][1] > 0.5)
        opp_sizes = view["opponent_hand_sizes"] * 52.0
        self._opp_min, self._opp_next = float(opp_sizes.min()), float(opp_sizes[0])
        self._aces = sum(1 for c in hand if RANK_OF[c] == ACE)
        self._hand_size = len(hand)

        card_moves = [int(a) for a in legal if a < 52]
        if view["ace_penalty"][0] > 0 and not continuing:
            return card_moves[0] if card_moves else DRAW

        best_move, best_value = None, -np.inf
        for c in card_moves:
            value = self._best_sequence(c, [x for x in hand if x != c])
            if value > best_value:
                best_move, best_value = c, value
        if continuing:
            stop_value = self._end_bonus(top, len(hand))
            if best_move is not None and best_value > stop_value:
                return best_move
            return END
        if best_move is not None and best_value > 0:
            return best_move
        wild = [int(a) for a in legal if WILD_BASE <= a < DRAW]
        if wild:
            counts = [0, 0, 0, 0]
            for c in hand:
                if RANK_OF[c] != JACK:
                    counts[SUIT_OF[c]] += 1
            suit = int(np.argmax(counts))
            return next((a for a in wild if (a - WILD_BASE) % 4 == suit), wild[0])
        if best_move is not None:
            return best_move
        return DRAW if DRAW in legal else int(legal[0])

    # -- sequence search --------------------------------------------------------------------
    def _card_value(self, card: int) -> float:
        value = 1.0
        if RANK_OF[card] == JACK:
            value -= JACK_COST
        if card == KING_OF_SPADES:
            value += KING_NOW_BONUS if self._opp_min <= 2 else -KING_EARLY_COST
        return value

    def _end_bonus(self, last: int, cards_left: int) -> float:
        """Worth of stopping with ``last`` on top and ``cards_left`` in hand."""
        if cards_left == 0:
            return GO_OUT_BONUS
        if RANK_OF[last] == ACE and (self._opp_next <= 4 or self._aces >= 2):
            return ACE_BONUS
        return 0.0

    def _best_sequence(self, first: int, rest: list[int]) -> float:
        """Most a turn starting with ``first`` is worth: shed cards plus end-of-turn effects,
        over every stopping point of every legal continuation."""
        budget = [_NODE_BUDGET]

        def search(top: int, remaining: list[int], gained: float) -> float:
            best = gained + self._end_bonus(top, len(remaining))
            budget[0] -= 1
            if budget[0] <= 0:
                return best
            rank, nxt = RANK_OF[top], NEXT_HIGHER[top]
            for i, c in enumerate(remaining):
                if RANK_OF[c] == rank or c == nxt:
                    value = search(c, remaining[:i] + remaining[i + 1:],
                                   gained + self._card_value(c))
                    best = max(best, value)
            return best

        return search(first, rest, self._card_value(first))

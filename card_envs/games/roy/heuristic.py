"""A rule-based ROY player that reads only its own observation.

Plan: find the longest chain of discards the hand allows from the current top card and play
it out; keep Jacks for when nothing else goes (then announce the suit it holds most of); follow
the text's hints: do not end on an Ace against a big hand unless another Ace backs it, and hold
the King of Spades until an opponent is close to going out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import Agent
from card_envs.core.cards import ACE, JACK, RANK_OF, SUIT_OF
from card_envs.games.roy.engine import (
    DRAW,
    END,
    KING_OF_SPADES,
    NEXT_HIGHER,
    WILD_BASE,
    RoyEngine,
)

_NODE_BUDGET = 3000


class RoyHeuristic(Agent):
    name = "heuristic"

    def __init__(self, **config: Any) -> None:
        self.layout = RoyEngine(**config).layout

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        view = self.layout.decode(observation)
        legal = np.flatnonzero(action_mask)
        if legal.size == 1:
            return int(legal[0])
        hand = [int(c) for c in np.flatnonzero(view["hand"] > 0.5)]
        continuing = view["phase"][1] > 0.5
        opp_min = float(view["opponent_hand_sizes"].min()) * 52.0
        opp_max = float(view["opponent_hand_sizes"].max()) * 52.0
        aces_held = sum(1 for c in hand if RANK_OF[c] == ACE)

        card_moves = [int(a) for a in legal if a < 52]
        if view["ace_penalty"][0] > 0 and not continuing:
            # Answer an Ace with an Ace when we have one; otherwise take the penalty.
            return card_moves[0] if card_moves else DRAW

        best_move, best_score = None, -1e9
        for c in card_moves:
            rest = [x for x in hand if x != c]
            length, last = self._longest(c, rest)
            score = float(length)
            if RANK_OF[c] == JACK:
                score -= 0.5  # a Jack is worth more kept as a wild card
            if c == KING_OF_SPADES and opp_min > 3 and len(hand) > 2:
                score -= 3.0  # "Don't play the King of Spades too early"
            if RANK_OF[last] == ACE and opp_max > 4 and aces_held < 2 and len(hand) > length:
                score -= 2.0  # "don't play an ace if your opponent is holding more than four"
            if score > best_score:
                best_move, best_score = c, score

        if continuing:
            # Keep going only while it empties the hand faster than stopping would.
            if best_move is not None and best_score > 0:
                return best_move
            return END
        if best_move is not None and best_score > 0:
            return best_move
        wild = [int(a) for a in legal if WILD_BASE <= a < DRAW]
        if wild:
            counts = [0, 0, 0, 0]
            for c in hand:
                if RANK_OF[c] != JACK:
                    counts[SUIT_OF[c]] += 1
            suit = int(np.argmax(counts))
            for a in wild:
                if (a - WILD_BASE) % 4 == suit:
                    return a
        if best_move is not None:
            return best_move
        if DRAW in legal:
            return DRAW
        return int(legal[0])

    def _longest(self, first: int, rest: list[int]) -> tuple[int, int]:
        """Length of the longest discard chain starting with ``first``, and its last card."""
        budget = [_NODE_BUDGET]
        best = [1, first]

        def dfs(top: int, remaining: list[int], length: int) -> None:
            if length > best[0]:
                best[0], best[1] = length, top
            budget[0] -= 1
            if budget[0] <= 0:
                return
            rank, nxt = RANK_OF[top], NEXT_HIGHER[top]
            for i, c in enumerate(remaining):
                if RANK_OF[c] == rank or c == nxt:
                    dfs(c, remaining[:i] + remaining[i + 1:], length + 1)

        dfs(first, rest, 1)
        return best[0], best[1]

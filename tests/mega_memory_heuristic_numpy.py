"""The Mega Mem-Ory heuristic's decision as it was in numpy, before it moved to
:mod:`card_envs.games.mega_memory.heuristic_rules` (compiled): a verbatim copy kept so that
tests/test_mega_memory_heuristic.py can hold the new one to the same move on every observation."""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import Agent
from card_envs.core.cards import RANK_OF, SUIT_OF
from card_envs.games.mega_memory.engine import (
    DIG_MORE,
    DISCARD,
    FIRST,
    FLIP_DISCARD,
    FLIP_SIDE_BASE,
    KEEP_FIRST,
    KEEP_SECOND,
    MULTI_BASE,
    NUM_PILES,
    POINTS_SCALE,
    REVEAL_DECK,
    REVEAL_DISCARD,
    SCORE_BASE,
    SIDE,
    SIDE_SLOTS,
    START,
    TAKE,
    MegaMemoryEngine,
)
from card_envs.games.mega_memory.grouping import best_grouping, centre_subsets, is_group

_CARD_BONUS = 0.1  # cards taken also deny them to the opponent and shorten the round
_BEHIND_PENALTY = 5.0  # ending the round while not ahead


class _View:
    """The parts of one observation the heuristic reasons about."""

    def __init__(self, layout: Any, obs: np.ndarray) -> None:
        v = layout.decode(obs)
        centre = v["centre"].reshape(NUM_PILES, 52)
        self.tops = tuple(int(np.argmax(row)) if row.any() else -1 for row in centre)
        self.pile_sizes = [round(float(x) * 5) for x in v["pile_sizes"]]
        self.mine = 0
        for c in np.flatnonzero(v["my_scored"] > 0.5):
            self.mine |= 1 << int(c)
        self.my_points = round(float(v["round_points"][0]) * POINTS_SCALE)
        self.opp_points = round(float(v["round_points"][1]) * POINTS_SCALE)
        side = v["my_side"].reshape(SIDE_SLOTS, 52)
        self.side = [int(np.argmax(row)) if row.any() else -1 for row in side]
        self.first = _one(v["first_card"])
        self.second = _one(v["second_card"])
        self.dug = [int(c) for c in np.flatnonzero(v["dug"] > 0.5)]
        self.phase = int(np.argmax(v["phase"]))
        # Remembered discard cards by depth from the top (0 = top).
        self.discard_at: dict[int, int] = {}
        for c in np.flatnonzero(v["discard_known"] > 0.5):
            self.discard_at[round(float(v["discard_depth"][c]) * 51)] = int(c)
        self.gone = v["my_scored"] + v["opp_scored"] > 0.5  # out of play for this round


def _one(block: np.ndarray) -> int:
    return int(np.argmax(block)) if block.any() else -1


class NumpyMegaMemoryHeuristic(Agent):
    name = "heuristic"
    draws_random = False  # deterministic: a search need not reseed it

    def __init__(self, **config: Any) -> None:
        self.layout = MegaMemoryEngine(**config).layout

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = [int(a) for a in np.flatnonzero(action_mask)]
        if len(legal) == 1:
            return legal[0]
        view = _View(self.layout, observation)
        if view.phase == START:
            return self._start(view, legal)
        if view.phase == FIRST:
            return self._first(view, legal)
        if view.phase == SIDE:
            return self._side(view, legal)
        if view.phase == DISCARD:
            return self._discard(view, legal)
        return self._dig(view, legal)

    # -- valuing a score ---------------------------------------------------------------------
    def _value(self, view: _View, cards: list[int], piles: int) -> float:
        mask = view.mine
        for c in cards:
            mask |= 1 << c
        count = len(cards)
        for p in range(NUM_PILES):
            if piles >> p & 1:
                mask |= 1 << view.tops[p]
                count += 1
        after = best_grouping(mask)
        value = after - view.my_points + _CARD_BONUS * count
        ends_round = any(piles >> p & 1 and view.pile_sizes[p] <= 1 for p in range(NUM_PILES))
        if ends_round and after <= view.opp_points:
            value -= _BEHIND_PENALTY
        return value

    def _best_centre(self, view: _View, fixed: list[int]) -> float:
        """Best value of scoring ``fixed`` with the centre (or -inf)."""
        best = -np.inf
        for piles in centre_subsets(tuple(fixed), view.tops):
            if piles:
                best = max(best, self._value(view, fixed, piles))
        return best

    def _discard_chain(self, view: _View, group: list[int], depth: int) -> list[int]:
        """Extend ``group`` down the remembered discard pile from ``depth`` while it fits."""
        group = list(group)
        while depth in view.discard_at and is_group(group + [view.discard_at[depth]]):
            group.append(view.discard_at[depth])
            depth += 1
        return group

    def _plan_with_first(self, view: _View, first: int, legal_flips: set[int],
                         discard_depth: int) -> tuple[float, int]:
        """Best known plan once ``first`` is revealed: (value, action to take now)."""
        best, action = -np.inf, -1
        for piles in centre_subsets((first,), view.tops):
            v = self._value(view, [first], piles)
            if v > best:
                best, action = v, SCORE_BASE + piles - 1
        for k, card in enumerate(view.side):
            if card < 0 or FLIP_SIDE_BASE + k not in legal_flips:
                continue
            v = max(self._best_centre(view, [card]), self._best_centre(view, [first, card]))
            if v > best:
                best, action = v, FLIP_SIDE_BASE + k
        nxt = view.discard_at.get(discard_depth, -1)
        if nxt >= 0 and FLIP_DISCARD in legal_flips and is_group([first, nxt]):
            group = self._discard_chain(view, [first, nxt], discard_depth + 1)
            v = self._value(view, group, 0)
            if v > best:
                best, action = v, FLIP_DISCARD
        return best, action

    # -- phases ------------------------------------------------------------------------------
    def _start(self, view: _View, legal: list[int]) -> int:
        top = view.discard_at.get(0, -1)
        if top >= 0 and REVEAL_DISCARD in legal:
            flips = {FLIP_SIDE_BASE + k for k in range(SIDE_SLOTS)} | {FLIP_DISCARD}
            value, _ = self._plan_with_first(view, top, flips, 1)
            if value > 0:
                return REVEAL_DISCARD
        return REVEAL_DECK

    def _first(self, view: _View, legal: list[int]) -> int:
        value, action = self._plan_with_first(view, view.first, set(legal), 0)
        if value > 0 and action in legal:
            return action
        unknown = [FLIP_SIDE_BASE + k for k, c in enumerate(view.side)
                   if c < 0 and FLIP_SIDE_BASE + k in legal]
        if unknown:
            return unknown[0]
        # Every side card is known and none helps: flip the least promising one to swap it.
        flips = [(self._potential(view, view.side[a - FLIP_SIDE_BASE]), a)
                 for a in legal if FLIP_SIDE_BASE <= a < FLIP_SIDE_BASE + SIDE_SLOTS]
        if flips:
            return min(flips)[1]
        return legal[0]

    def _side(self, view: _View, legal: list[int]) -> int:
        best, action = 0.0, -1
        for a in legal:
            if SCORE_BASE <= a < MULTI_BASE:
                v = self._value(view, [view.second], a - SCORE_BASE + 1)
            elif MULTI_BASE <= a < FLIP_SIDE_BASE:
                v = self._value(view, [view.first, view.second], a - MULTI_BASE)
            else:
                continue
            if v > best:
                best, action = v, a
        if action >= 0:
            return action
        return self._keep(view)

    def _discard(self, view: _View, legal: list[int]) -> int:
        if TAKE in legal:
            group = [view.first, view.second]
            nxt = view.discard_at.get(0, -1)
            if DIG_MORE in legal and nxt >= 0 and is_group(group + [nxt]):
                longer = self._discard_chain(view, group, 0)
                if self._value(view, longer, 0) > self._value(view, group, 0):
                    return DIG_MORE
            if self._value(view, group, 0) > 0:
                return TAKE
        return self._keep(view)

    def _dig(self, view: _View, legal: list[int]) -> int:
        group = [view.first, view.second, *view.dug]
        nxt = view.discard_at.get(0, -1)
        if (DIG_MORE in legal and nxt >= 0 and is_group(group + [nxt])
                and self._value(view, group + [nxt], 0) > self._value(view, group, 0)):
            return DIG_MORE
        return TAKE

    # -- no score: which card to keep ----------------------------------------------------------
    def _potential(self, view: _View, card: int) -> float:
        """How many cards still in play could group with ``card`` (centre tops count double)."""
        rank, suit = RANK_OF[card], SUIT_OF[card]
        score = 0.0
        for other in range(52):
            if other == card or view.gone[other]:
                continue
            if RANK_OF[other] == rank or (SUIT_OF[other] == suit
                                          and abs(RANK_OF[other] - rank) <= 2):
                score += 2.0 if other in view.tops else 1.0
        return score

    def _keep(self, view: _View) -> int:
        first, second = self._potential(view, view.first), self._potential(view, view.second)
        return KEEP_FIRST if first > second else KEEP_SECOND

"""The Mega Mem-Ory heuristic's decision
(:class:`~card_envs.games.mega_memory.heuristic.MegaMemoryHeuristic`) on plain lists and ints,
compiled with mypyc (``card_envs/compiled.py``).

A search's heuristic rollouts call it at nearly every step, where the numpy version (the
layout's decode, then an ``any`` and an ``argmax`` per 52-card row and a dozen more small-array
calls) cost about 70 us a move, 90% of a rollout. Here the observation is read with one numpy
pass (the indices and values of its nonzero entries), then walked as lists; the plan is the
numpy version's, line for line. The moves are the numpy version's, bit for bit, on any
observation without a NaN (``tests/test_search_reference.py`` replays the recorded ones;
``tests/test_mega_memory_heuristic.py`` compares the reading and the moves with a copy of the
numpy version, on played and on arbitrary observations).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

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
)
from card_envs.games.mega_memory.grouping import best_grouping, centre_subsets, is_group

CARD_BONUS = 0.1  # cards taken also deny them to the opponent and shorten the round
BEHIND_PENALTY = 5.0  # ending the round while not ahead
_NEG_INF = float("-inf")


class Offsets:
    """Where the fields the heuristic reads start in one observation (the layout's slices)."""

    def __init__(self, slices: dict[str, slice]) -> None:
        self.centre: int = slices["centre"].start
        self.my_scored: int = slices["my_scored"].start
        self.opp_scored: int = slices["opp_scored"].start
        self.my_side: int = slices["my_side"].start
        self.discard_known: int = slices["discard_known"].start
        self.discard_depth: int = slices["discard_depth"].start
        self.first: int = slices["first_card"].start
        self.second: int = slices["second_card"].start
        self.dug: int = slices["dug"].start
        self.phase: int = slices["phase"].start
        self.phases: int = slices["phase"].stop - self.phase
        self.pile_sizes: int = slices["pile_sizes"].start
        self.round_points: int = slices["round_points"].start
        #: The nonzero entries are looked for up to the end of the last field read.
        self.read_end: int = max(sl.stop for name, sl in slices.items() if name in (
            "centre", "my_scored", "opp_scored", "my_side", "discard_known", "discard_depth",
            "first_card", "second_card", "dug", "phase", "pile_sizes", "round_points"))


def row_argmax(idx: list[int], vals: list[float], start: int, width: int, lo: int,
               empty: int) -> int:
    """``numpy.argmax`` of the ``width`` values from ``start``, given ``idx``/``vals``, the
    ascending indices and values of the nonzero entries, ``lo`` the first of them at or past
    ``start``; ``empty`` when the row is all zero (``-1`` for the heuristic's "nothing there"
    rows, ``0`` as numpy's own argmax). The first maximum wins; a row whose nonzero values
    are all negative has its maximum, 0.0, at its first zero entry."""
    end = start + width
    i = lo
    n = len(idx)
    if i >= n or idx[i] >= end:
        return empty
    best_at = idx[i]
    best = vals[i]
    count = 0
    while i < n and idx[i] < end:
        if vals[i] > best:
            best, best_at = vals[i], idx[i]
        count += 1
        i += 1
    if best < 0.0 and count < width:  # a zero entry is the maximum: the first one
        k = start
        i = lo
        while i < n and idx[i] == k:
            i += 1
            k += 1
        return k - start
    return best_at - start


class View:
    """The parts of one observation the heuristic reasons about."""

    def __init__(self, observation: Any, at: Offsets) -> None:
        # ``!= 0`` then ``nonzero`` is twice as fast as ``nonzero`` on the floats, and keeps
        # the same entries (NaN, not -0.0).
        nonzero = (observation[:at.read_end] != 0).nonzero()[0]
        idx: list[int] = nonzero.tolist()
        vals: list[float] = observation[nonzero].tolist()
        self.observation = observation
        self.at = at
        self.idx = idx
        self.vals = vals
        tops = []
        for p in range(NUM_PILES):
            start = at.centre + p * 52
            tops.append(row_argmax(idx, vals, start, 52, bisect_left(idx, start), -1))
        self.tops: tuple[int, ...] = tuple(tops)
        sizes: list[float] = observation[at.pile_sizes:at.pile_sizes + NUM_PILES].tolist()
        self.pile_sizes: list[int] = [round(x * 5) for x in sizes]
        points: list[float] = observation[at.round_points:at.round_points + 2].tolist()
        self.my_points: int = round(points[0] * POINTS_SCALE)
        self.opp_points: int = round(points[1] * POINTS_SCALE)
        self.side: list[int] = []
        for k in range(SIDE_SLOTS):
            start = at.my_side + k * 52
            self.side.append(row_argmax(idx, vals, start, 52, bisect_left(idx, start), -1))
        self.first: int = row_argmax(idx, vals, at.first, 52, bisect_left(idx, at.first), -1)
        self.second: int = row_argmax(idx, vals, at.second, 52, bisect_left(idx, at.second),
                                      -1)
        self.phase: int = row_argmax(idx, vals, at.phase, at.phases,
                                     bisect_left(idx, at.phase), 0)
        self.dug: list[int] = [c - at.dug for c in _over_half(idx, vals, at.dug)]
        self.mine: int = 0
        for c in _over_half(idx, vals, at.my_scored):
            self.mine |= 1 << (c - at.my_scored)
        # Remembered discard cards by depth from the top (0 = top); numpy's order: by card,
        # a later card at the same depth replacing an earlier one.
        self.discard_at: dict[int, int] = {}
        for i in _over_half(idx, vals, at.discard_known):
            c = i - at.discard_known
            self.discard_at[round(_value_at(idx, vals, at.discard_depth + c) * 51)] = c
        self._gone: list[bool] | None = None

    @property
    def gone(self) -> list[bool]:
        """Out of play for this round, per card: my_scored + opp_scored > 0.5, summed as
        numpy does (in the observation's own precision) where both are nonzero. Read when
        first asked for (only a move without a score needs it)."""
        if self._gone is None:
            at, idx, vals = self.at, self.idx, self.vals
            gone = [False] * 52
            for i in _over_half(idx, vals, at.my_scored):
                gone[i - at.my_scored] = True
            for i in _over_half(idx, vals, at.opp_scored):
                gone[i - at.opp_scored] = True
            lo, hi = bisect_left(idx, at.my_scored), bisect_left(idx, at.my_scored + 52)
            for j in range(lo, hi):  # both nonzero: the sum decides (rare: never in play)
                c = idx[j] - at.my_scored
                k = bisect_left(idx, at.opp_scored + c)
                if k < len(idx) and idx[k] == at.opp_scored + c:
                    gone[c] = bool(self.observation[at.my_scored + c]
                                   + self.observation[at.opp_scored + c] > 0.5)
            self._gone = gone
        return self._gone


def _value_at(idx: list[int], vals: list[float], i: int) -> float:
    """The observation's value at index ``i``."""
    k = bisect_left(idx, i)
    return vals[k] if k < len(idx) and idx[k] == i else 0.0


def _over_half(idx: list[int], vals: list[float], start: int) -> list[int]:
    """The indices of the 52 values from ``start`` that are above 0.5, ascending."""
    out = []
    i = bisect_left(idx, start)
    n = len(idx)
    end = start + 52
    while i < n and idx[i] < end:
        if vals[i] > 0.5:
            out.append(idx[i])
        i += 1
    return out


def decide(observation: Any, action_mask: Any, at: Offsets) -> int:
    """The heuristic's move (see :mod:`card_envs.games.mega_memory.heuristic`) from one seat's
    observation."""
    legal: list[int] = action_mask.nonzero()[0].tolist()
    if len(legal) == 1:
        return legal[0]
    view = View(observation, at)
    if view.phase == START:
        return _start(view, legal)
    if view.phase == FIRST:
        return _first(view, legal)
    if view.phase == SIDE:
        return _side(view, legal)
    if view.phase == DISCARD:
        return _discard(view, legal)
    return _dig(view, legal)


# -- valuing a score -------------------------------------------------------------------------
def value(view: View, cards: list[int], piles: int) -> float:
    """What scoring ``cards`` with the tops of the centre ``piles`` (a bitmask) is worth."""
    mask = view.mine
    for c in cards:
        mask |= 1 << c
    count = len(cards)
    for p in range(NUM_PILES):
        if piles >> p & 1:
            mask |= 1 << view.tops[p]
            count += 1
    after: int = best_grouping(mask)
    worth = after - view.my_points + CARD_BONUS * count
    ends_round = False
    for p in range(NUM_PILES):
        if piles >> p & 1 and view.pile_sizes[p] <= 1:
            ends_round = True
            break
    if ends_round and after <= view.opp_points:
        worth -= BEHIND_PENALTY
    return worth


def _best_centre(view: View, fixed: list[int]) -> float:
    """Best value of scoring ``fixed`` with the centre (or -inf)."""
    best = _NEG_INF
    piles: int
    for piles in centre_subsets(tuple(fixed), view.tops):
        if piles:
            best = max(best, value(view, fixed, piles))
    return best


def _discard_chain(view: View, group: list[int], depth: int) -> list[int]:
    """Extend ``group`` down the remembered discard pile from ``depth`` while it fits."""
    group = list(group)
    while depth in view.discard_at and is_group(group + [view.discard_at[depth]]):
        group.append(view.discard_at[depth])
        depth += 1
    return group


def _plan_with_first(view: View, first: int, legal_flips: set[int],
                     discard_depth: int) -> tuple[float, int]:
    """Best known plan once ``first`` is revealed: (value, action to take now)."""
    best, action = _NEG_INF, -1
    piles: int
    for piles in centre_subsets((first,), view.tops):
        v = value(view, [first], piles)
        if v > best:
            best, action = v, SCORE_BASE + piles - 1
    for k, card in enumerate(view.side):
        if card < 0 or FLIP_SIDE_BASE + k not in legal_flips:
            continue
        v = max(_best_centre(view, [card]), _best_centre(view, [first, card]))
        if v > best:
            best, action = v, FLIP_SIDE_BASE + k
    nxt = view.discard_at.get(discard_depth, -1)
    if nxt >= 0 and FLIP_DISCARD in legal_flips and is_group([first, nxt]):
        group = _discard_chain(view, [first, nxt], discard_depth + 1)
        v = value(view, group, 0)
        if v > best:
            best, action = v, FLIP_DISCARD
    return best, action


# -- phases ----------------------------------------------------------------------------------
def _start(view: View, legal: list[int]) -> int:
    top = view.discard_at.get(0, -1)
    if top >= 0 and REVEAL_DISCARD in legal:
        flips = {FLIP_SIDE_BASE + k for k in range(SIDE_SLOTS)} | {FLIP_DISCARD}
        worth, _ = _plan_with_first(view, top, flips, 1)
        if worth > 0:
            return REVEAL_DISCARD
    return REVEAL_DECK


def _first(view: View, legal: list[int]) -> int:
    worth, action = _plan_with_first(view, view.first, set(legal), 0)
    if worth > 0 and action in legal:
        return action
    unknown = [FLIP_SIDE_BASE + k for k, c in enumerate(view.side)
               if c < 0 and FLIP_SIDE_BASE + k in legal]
    if unknown:
        return unknown[0]
    # Every side card is known and none helps: flip the least promising one to swap it.
    flips = [(potential(view, view.side[a - FLIP_SIDE_BASE]), a)
             for a in legal if FLIP_SIDE_BASE <= a < FLIP_SIDE_BASE + SIDE_SLOTS]
    if flips:
        return min(flips)[1]
    return legal[0]


def _side(view: View, legal: list[int]) -> int:
    best, action = 0.0, -1
    for a in legal:
        if SCORE_BASE <= a < MULTI_BASE:
            v = value(view, [view.second], a - SCORE_BASE + 1)
        elif MULTI_BASE <= a < FLIP_SIDE_BASE:
            v = value(view, [view.first, view.second], a - MULTI_BASE)
        else:
            continue
        if v > best:
            best, action = v, a
    if action >= 0:
        return action
    return _keep(view)


def _discard(view: View, legal: list[int]) -> int:
    if TAKE in legal:
        group = [view.first, view.second]
        nxt = view.discard_at.get(0, -1)
        if DIG_MORE in legal and nxt >= 0 and is_group(group + [nxt]):
            longer = _discard_chain(view, group, 0)
            if value(view, longer, 0) > value(view, group, 0):
                return DIG_MORE
        if value(view, group, 0) > 0:
            return TAKE
    return _keep(view)


def _dig(view: View, legal: list[int]) -> int:
    group = [view.first, view.second, *view.dug]
    nxt = view.discard_at.get(0, -1)
    if (DIG_MORE in legal and nxt >= 0 and is_group(group + [nxt])
            and value(view, group + [nxt], 0) > value(view, group, 0)):
        return DIG_MORE
    return TAKE


# -- no score: which card to keep ------------------------------------------------------------
def potential(view: View, card: int) -> float:
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


def _keep(view: View) -> int:
    first, second = potential(view, view.first), potential(view, view.second)
    return KEEP_FIRST if first > second else KEEP_SECOND

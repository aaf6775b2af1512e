"""The Dogpile heuristic's decision (:class:`~card_envs.games.dogpile.heuristic.DogpileHeuristic`)
on plain lists of ints, compiled with mypyc (``card_envs/compiled.py``).

A search's heuristic rollouts call it about 200 times a rollout, where the numpy version
(a dozen small-array calls to read the pile's 54 bones, then a Python loop over the slots)
cost 65 us a move, 85% of a rollout. Here the observation is read with one numpy pass (the
indices of its exact 1.0 entries, which are all a bone's exact encoding is made of) and a few
short slices, then walked as lists; what one more bone adds to the paws is looked up in a table
per paw hand, built once. The moves are the numpy version's, bit for bit, on any observation
(``tests/test_search_reference.py`` replays the recorded ones; ``tests/test_dogpile_rules.py``
compares the reading with the numpy one on arbitrary encodings).
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import combinations
from typing import Any

import numpy as np

from card_envs.core.cards import FACE_VALUE_OF
from card_envs.games.dogpile.engine import (
    BURY,
    CARD_FEATURES,
    COLLAR_BONUS,
    DIG,
    DOWN,
    KEEP,
    NUM_CARDS,
    NUM_SLOTS,
    PAWS,
    SLOT_FEATURES,
    STRAIGHT_BONUS,
    WAIT,
    round_feats,
)

#: A dug bone worth at least this is kept while there is plenty of time.
PICKY_VALUE = 10
#: Entries the caches below keep before they start again (a bound on their memory).
CACHE_LIMIT = 65536
_RANKS = 14  # rank one-hot (A..K, joker), then the suit one-hot
_JOKER = 13

_best_cache: dict[tuple[tuple[int, ...], bool], int] = {}
_gain_cache: dict[tuple[tuple[int, ...], bool], list[int]] = {}


class Offsets:
    """Where the fields the heuristic reads start in one observation (the layout's slices)."""

    def __init__(self, slices: dict[str, slice]) -> None:
        self.pile: int = slices["pile"].start
        self.own_paws: int = slices["own_paws"].start
        self.own_state: int = slices["own_state"].start
        self.held: int = slices["held"].start
        self.time_left: int = slices["time_left"].start
        self.phase: int = slices["phase"].start
        self.phase_end: int = slices["phase"].stop
        #: The exact 1.0 entries are looked for up to the end of the own seat's held bone.
        self.read_end: int = max(self.pile + NUM_SLOTS * SLOT_FEATURES,
                                 self.own_paws + PAWS * (CARD_FEATURES + 1),
                                 self.held + CARD_FEATURES + 1)


def exact_cards(hits: list[int], start: int, rows: int, width: int, skip: int) -> list[int]:
    """The card of each of ``rows`` rows of ``width`` values from index ``start``, whose
    values ``skip`` on are a bone's encoding (14 rank, then 4 suit one-hot values), read from
    ``hits``, the ascending indices of the exact 1.0 values: the card where exactly one rank is
    1.0 and it is the joker's, or exactly one suit is 1.0 too (the first of each, as numpy's
    ``argmax`` of the hits), else -1 (unknown, or only a belief). Which joker does not matter."""
    cards = [-1] * rows
    i = bisect_left(hits, start)
    n = len(hits)
    end = start + rows * width
    while i < n and hits[i] < end:
        row = (hits[i] - start) // width
        row_end = start + (row + 1) * width
        ranks = suits = rank = suit = 0
        while i < n and hits[i] < row_end:
            f = hits[i] - (row_end - width) - skip
            if 0 <= f < _RANKS:
                if ranks == 0:
                    rank = f
                ranks += 1
            elif f >= _RANKS:
                if suits == 0:
                    suit = f - _RANKS
                suits += 1
            i += 1
        if ranks == 1:
            if rank == _JOKER:
                cards[row] = 52
            elif suits == 1:
                cards[row] = suit * 13 + rank
    return cards


def paw_value(cards: list[int], ace_high: bool = False) -> int:
    """Round loot of the best three of ``cards`` (bone values plus feats)."""
    key = (tuple(sorted(cards)), ace_high)
    value = _best_cache.get(key)
    if value is None:
        if len(_best_cache) >= CACHE_LIMIT:
            _best_cache.clear()
        value = _best_cache[key] = _best_three(key[0], ace_high)
    return value


def _best_three(cards: tuple[int, ...], ace_high: bool) -> int:
    best = 0
    for k in range(min(PAWS, len(cards)), -1, -1):
        for combo in combinations(cards, k):
            collar, straight = round_feats(list(combo), ace_high)
            v = sum([FACE_VALUE_OF[c] for c in combo]) + COLLAR_BONUS * int(collar)
            best = max(best, v + STRAIGHT_BONUS * int(straight))
    return best


def _gains(mine: list[int], ace_high: bool) -> list[int]:
    """What each card (0..52) adds to the paws ``mine``: as one more bone while there is room,
    else in place of the paw bone whose loss costs least."""
    key = (tuple(sorted(mine)), ace_high)
    table = _gain_cache.get(key)
    if table is None:
        if len(_gain_cache) >= CACHE_LIMIT // 8:
            _gain_cache.clear()
        current = paw_value(mine, ace_high)
        table = []
        for c in range(NUM_CARDS):
            if len(mine) < PAWS:
                table.append(paw_value(mine + [c], ace_high) - current)
            else:
                table.append(max([paw_value([x for x in mine if x != w] + [c], ace_high)
                                  for w in mine]) - current)
        _gain_cache[key] = table
    return table


def feat_hope(cards: list[int]) -> bool:
    """Two bones of one rank, or two close bones of one suit: a feat may follow."""
    for a, b in combinations(cards, 2):
        if a >= 52 or b >= 52:
            continue
        if a % 13 == b % 13 or (a // 13 == b // 13 and abs(a % 13 - b % 13) <= 2):
            return True
    return False


def _pick(options: list[int], rng: Any) -> int:
    """``int(rng.choice(options))``: numpy's ``Generator.choice`` of a sequence draws
    ``integers(0, len)`` (checked in tests/test_dogpile_rules.py), without the array copy."""
    if not options:
        raise ValueError("a must be a non-empty sequence")  # what choice([]) raises
    return options[int(rng.integers(0, len(options)))]


def decide(observation: Any, action_mask: Any, rng: Any, at: Offsets, ace_high: bool) -> int:
    """The heuristic's move (see its module docstring) from one seat's observation."""
    # Array methods, not numpy's functions (flatnonzero, argmax): the same results on these
    # flat arrays, without a Python-level wrapper each.
    if np.count_nonzero(action_mask) == 1:
        return int(action_mask.nonzero()[0][0])
    hits: list[int] = (observation[:at.read_end] == 1.0).nonzero()[0].tolist()
    pile_end = at.pile + NUM_SLOTS * SLOT_FEATURES
    occupied: list[bool] = (observation[at.pile:pile_end:SLOT_FEATURES] > 0.5).tolist()
    known = exact_cards(hits, at.pile, NUM_SLOTS, SLOT_FEATURES, 2)
    for t in range(NUM_SLOTS):
        if not occupied[t]:
            known[t] = -1
    phase = int(observation[at.phase:at.phase_end].argmax())
    if phase == 1:  # sniffing: look at bones nobody has shown us
        unknown = [t for t in range(NUM_SLOTS) if occupied[t] and known[t] < 0]
        pick = unknown if unknown else [
            a - DIG for a in action_mask[:DOWN].nonzero()[0].tolist()]
        return DIG + _pick(pick, rng)
    empty = [t for t in range(NUM_SLOTS) if not occupied[t]]
    if phase == 2:  # shuffling back face down
        return DOWN + empty[0]

    width = CARD_FEATURES + 1
    paws = exact_cards(hits, at.own_paws, PAWS, width, 1)
    present = observation[at.own_paws:at.own_paws + PAWS * width:width].tolist()
    for i in range(PAWS):
        if not present[i] > 0.5:
            paws[i] = -1
    mine = [c for c in paws if c >= 0]
    state = observation[at.own_state:at.own_state + 3].tolist()
    time_left = float(observation[at.time_left])
    current = paw_value(mine, ace_high)

    if state[1] > 0.5:  # holding a dug bone
        card = exact_cards(hits, at.held, 1, width, 1)[0]
        gain = paw_value(mine + [card], ace_high) - current
        late = time_left < 0.2
        if bool(action_mask[KEEP]) and gain > 0 and (late or gain >= PICKY_VALUE
                                                     or feat_hope(mine + [card])):
            return KEEP
        return DOWN + _pick(empty, rng)
    if state[2] > 0.5:  # burying: tuck it away face down
        return DOWN + _pick(empty, rng)

    # Free: the best known bone that would improve the paws.
    best_slot, best_gain = -1, 0
    room = len(mine) < PAWS
    gains = _gains(mine, ace_high)
    for t in range(NUM_SLOTS):
        c = known[t]
        if c >= 0 and gains[c] > best_gain:
            best_slot, best_gain = t, gains[c]
    if room:
        if best_slot >= 0 and (best_gain >= PICKY_VALUE or time_left < 0.25):
            return DIG + best_slot
        unknown = [t for t in range(NUM_SLOTS) if occupied[t] and known[t] < 0]
        if unknown:
            return DIG + _pick(unknown, rng)
        if best_slot >= 0:
            return DIG + best_slot
        return WAIT
    if best_slot >= 0 and best_gain >= 3 and time_left > 0.1:
        # Swap: bury the bone whose loss costs least (the rest stay worth most), then dig
        # the better one.
        worst, worst_value = 0, -1
        for i in range(PAWS):
            value = paw_value([x for j, x in enumerate(paws) if j != i and x >= 0], ace_high)
            if value > worst_value:
                worst, worst_value = i, value
        return BURY + worst
    return WAIT

"""Groups (MATCHES and SAME SUIT RUNS), their points, and the exact best regrouping.

A card is ``suit * 13 + rank`` with Aces low (rank 0) and Kings high (rank 12): runs never wrap
(``Q K A`` is not a run). Points per group: 2 cards 1, 3 cards 2, four of a kind 5, a run of
``n >= 4`` cards ``5 + 3 * (n - 4)``.

:func:`best_grouping` computes, for any set of scored cards, the most points over every way of
splitting all of them into groups (every card in exactly one group), or ``-1`` if no split
exists. It is a dynamic programme over the ranks A..K whose state is, per suit, the length of
the run still open at the previous rank (0, 1, 2, 3 or "4 or more": beyond four cards every
extra card is worth exactly 3, so longer runs need not be told apart), run separately on each
stretch of consecutive ranks held (no group spans a rank nobody holds).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product

from card_envs.core.cards import RANK_OF, SUIT_OF

#: Points of a match of ``m`` cards (m = 2, 3, 4); index 0 and 1 are never a match.
MATCH_VALUE = (0, 0, 1, 2, 5)
#: Points gained by extending an open run whose length code is ``c`` (1, 2, 3, 4+) by one card:
#: 1 -> 2 cards is +1, 2 -> 3 is +1, 3 -> 4 is +3 (2 -> 5), and each card beyond four is +3.
_EXTEND_GAIN = (0, 1, 1, 3, 3)


def run_value(n: int) -> int:
    if n < 2:
        return 0
    if n < 4:
        return n - 1
    return 5 + 3 * (n - 4)


def group_value(cards: list[int] | tuple[int, ...]) -> int:
    """Points of ``cards`` as one group, or ``-1`` if they are neither a match nor a run."""
    n = len(cards)
    if n < 2:
        return -1
    rank0 = RANK_OF[cards[0]]
    if all(RANK_OF[c] == rank0 for c in cards):
        return MATCH_VALUE[n]
    suit0 = SUIT_OF[cards[0]]
    if not all(SUIT_OF[c] == suit0 for c in cards):
        return -1
    ranks = sorted(RANK_OF[c] for c in cards)
    if ranks[-1] - ranks[0] != n - 1 or len(set(ranks)) != n:
        return -1
    return run_value(n)


def is_group(cards: list[int] | tuple[int, ...]) -> bool:
    return group_value(cards) >= 0


def is_pair(a: int, b: int) -> bool:
    """:func:`is_group` for two cards: one rank, or one suit and next to each other (the
    card ids of one suit are consecutive, so no check for wrapping is needed)."""
    return RANK_OF[a] == RANK_OF[b] or (SUIT_OF[a] == SUIT_OF[b] and abs(a - b) == 1)


@lru_cache(maxsize=1 << 16)
def centre_subsets(fixed: tuple[int, ...], tops: tuple[int, ...]) -> tuple[int, ...]:
    """Every pile bitmask ``S`` such that the one or two cards ``fixed`` plus the face-up
    cards ``tops[S]`` form one match or one run of at least two cards (``S`` may be 0 when
    ``fixed`` is a group itself). ``tops`` holds each centre pile's face-up card, ``-1`` for an
    empty pile. Cached for callers that ask about the same position repeatedly (the
    heuristic); the engine indexes its tops once per change and calls :func:`scoring_piles`.
    """
    if not 1 <= len(fixed) <= 2:
        raise ValueError(f"centre_subsets takes one or two fixed cards, got {len(fixed)}")
    return tuple(scoring_piles(fixed, *index_tops(tops)))


def index_tops(tops: tuple[int, ...]) -> tuple[list[int], dict[int, int]]:
    """(bitmask of the piles showing each rank, pile of each face-up card): what
    :func:`scoring_piles` needs to know about the centre."""
    rank_piles = [0] * 13
    pile_of: dict[int, int] = {}
    for p, t in enumerate(tops):
        if t >= 0:
            rank_piles[RANK_OF[t]] |= 1 << p
            pile_of[t] = p
    return rank_piles, pile_of


#: Every submask of a 4-pile bitmask, in increasing order (the empty mask first).
_SUBMASKS = tuple(tuple(s for s in range(16) if s & m == s) for m in range(16))


def scoring_piles(fixed: tuple[int, ...], rank_piles: list[int],
                  pile_of: dict[int, int]) -> list[int]:
    """:func:`centre_subsets` over an indexed centre (:func:`index_tops`): matches are the
    piles showing the rank; runs are the same-suit chains of face-up cards reaching down and
    up from ``fixed``, plus, for two cards of one suit, the face-up cards filling the gap."""
    low_card = high_card = fixed[0]
    if len(fixed) == 1:
        out = list(_SUBMASKS[rank_piles[RANK_OF[low_card]]][1:])  # a match needs a top
        need = -1  # marks the lone card: a run needs at least one top
    else:
        second = fixed[1]
        if RANK_OF[low_card] == RANK_OF[second]:
            return list(_SUBMASKS[rank_piles[RANK_OF[second]]])
        if SUIT_OF[low_card] != SUIT_OF[second]:
            return []
        out = []
        low_card, high_card = min(low_card, second), max(low_card, second)
        need = 0
        for card in range(low_card + 1, high_card):
            pile = pile_of.get(card)
            if pile is None:
                return out
            need |= 1 << pile
    lows, mask, card = [0], 0, low_card - 1
    for _ in range(RANK_OF[low_card]):  # down to the Ace: runs never wrap
        pile = pile_of.get(card)
        if pile is None:
            break
        mask |= 1 << pile
        lows.append(mask)
        card -= 1
    highs, mask, card = [0], 0, high_card + 1
    for _ in range(12 - RANK_OF[high_card]):  # up to the King
        pile = pile_of.get(card)
        if pile is None:
            break
        mask |= 1 << pile
        highs.append(mask)
        card += 1
    if need < 0:
        out += [low | high for low in lows for high in highs if low or high]
    else:
        out += [need | low | high for low in lows for high in highs]
    return out


# -- the exact best regrouping ------------------------------------------------------------------

_TRANSITIONS: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}


def _transitions(state: int, column: int) -> tuple[tuple[int, int], ...]:
    """(next state, points gained) for every way to place the cards of one rank.

    ``state`` packs 3 bits per suit: the open run's length code (0 none, 1..3, 4 = four+).
    ``column`` has bit ``s`` set when suit ``s`` holds a card of this rank. A card extends its
    suit's open run, starts a new run, or joins this rank's match; an open run whose suit has no
    card here closes, which is only allowed at length two or more. Starting a new run next to an
    open run of two or more is left out: extending that run instead is always worth more (run
    points are superadditive), so the optimum is unchanged.
    """
    key = (state, column)
    cached = _TRANSITIONS.get(key)
    if cached is not None:
        return cached
    per_suit: list[list[tuple[int, int, int]]] = []  # (new code, gain, joins the match)
    for s in range(4):
        code = state >> (3 * s) & 7
        if not column >> s & 1:
            per_suit.append([] if code == 1 else [(0, 0, 0)])
            continue
        opts = []
        if code:
            opts.append((min(code + 1, 4), _EXTEND_GAIN[code], 0))
        if code == 0:
            opts.append((1, 0, 0))
        if code != 1:
            opts.append((0, 0, 1))
        per_suit.append(opts)
    best: dict[int, int] = {}
    for combo in product(*per_suit):
        matched = sum(o[2] for o in combo)
        if matched == 1:
            continue
        gain = MATCH_VALUE[matched] + sum(o[1] for o in combo)
        nxt = 0
        for s, o in enumerate(combo):
            nxt |= o[0] << (3 * s)
        if best.get(nxt, -1) < gain:
            best[nxt] = gain
    result = tuple(best.items())
    _TRANSITIONS[key] = result
    return result


def _open_length_one(state: int) -> bool:
    return any(state >> (3 * s) & 7 == 1 for s in range(4))


@lru_cache(maxsize=1 << 16)
def best_grouping(mask: int) -> int:
    """Most points over every split of the cards in ``mask`` (bit ``c`` = card ``c``) into
    groups, every card used once; ``-1`` when no split exists; ``0`` for no cards.

    No group spans a rank nobody holds, so each stretch of consecutive held ranks is solved
    alone, shifted down to the Ace: its value does not depend on where it lies, and the few
    distinct stretches a game produces stay cached while whole hands rarely repeat.
    """
    suits = [mask >> (13 * s) & 0x1FFF for s in range(4)]
    held = suits[0] | suits[1] | suits[2] | suits[3]
    total = 0
    while held:
        lowest = held & -held
        stretch = held & ~(held + lowest)  # the lowest run of set bits
        shift = lowest.bit_length() - 1
        value = _stretch_value(((suits[0] & stretch) | (suits[1] & stretch) << 13
                                | (suits[2] & stretch) << 26 | (suits[3] & stretch) << 39)
                               >> shift)
        if value < 0:
            return -1
        total += value
        held ^= stretch
    return total


@lru_cache(maxsize=1 << 14)
def _stretch_value(mask: int) -> int:
    """:func:`best_grouping` by dynamic programme over the ranks from the Ace up."""
    states = {0: 0}
    suits = [mask >> (13 * s) & 0x1FFF for s in range(4)]
    for rank in range(13):
        column = ((suits[0] >> rank & 1) | (suits[1] >> rank & 1) << 1
                  | (suits[2] >> rank & 1) << 2 | (suits[3] >> rank & 1) << 3)
        if not column and len(states) == 1 and 0 in states:
            break  # nothing open and nothing further: a stretch has no holes
        nxt: dict[int, int] = {}
        for state, value in states.items():
            for new_state, gain in _transitions(state, column):
                total = value + gain
                if nxt.get(new_state, -1) < total:
                    nxt[new_state] = total
        if not nxt:
            return -1
        states = nxt
    return max((v for st, v in states.items() if not _open_length_one(st)), default=-1)


def cards_mask(cards: list[int] | tuple[int, ...]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask

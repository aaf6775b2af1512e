"""Card encoding shared by every game.

A card is an ``int`` in ``0..53``: ``suit * 13 + rank_index`` for the 52 standard cards
(ranks ``A 2 ... K`` at index ``0..12``, suits ``C D H S`` at ``0..3``), then ``52`` and ``53``
for the jokers ``X1`` and ``X2``. Ints keep engines fast and arrays small; the lookup tables
below turn them into rank, suit, colour and value without branching.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

RANKS = "A23456789TJQK"
SUITS = "CDHS"
NUM_STANDARD = 52
NUM_CARDS = 54
JOKERS = (52, 53)
NO_CARD = -1

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
ACE, JACK, QUEEN, KING = 0, 10, 11, 12
BLACK, RED, NO_COLOUR = 0, 1, -1

#: Rank index 0..12 (A..K); jokers get 13.
RANK = np.array([c % 13 for c in range(52)] + [13, 13], dtype=np.int8)
#: Suit index 0..3 (C D H S); jokers get -1.
SUIT = np.array([c // 13 for c in range(52)] + [-1, -1], dtype=np.int8)
#: BLACK (clubs, spades), RED (diamonds, hearts); jokers get NO_COLOUR.
COLOUR = np.array(
    [BLACK if c // 13 in (CLUBS, SPADES) else RED for c in range(52)] + [NO_COLOUR, NO_COLOUR],
    dtype=np.int8,
)
#: Face value with A=1, 2..10 as printed, J=11, Q=12, K=13, jokers 0 (games remap as needed).
FACE_VALUE = np.array([c % 13 + 1 for c in range(52)] + [0, 0], dtype=np.int16)

# Plain-list twins of the tables: indexing a list with a Python int is several times faster
# than indexing a numpy array, and engines do it in their hot paths.
RANK_OF: list[int] = RANK.tolist()
SUIT_OF: list[int] = SUIT.tolist()
COLOUR_OF: list[int] = COLOUR.tolist()
FACE_VALUE_OF: list[int] = FACE_VALUE.tolist()

_CODES = [RANKS[c % 13] + SUITS[c // 13] for c in range(52)] + ["X1", "X2"]
_FROM_CODE = {code: i for i, code in enumerate(_CODES)}
_FROM_CODE.update({"10" + s: i for i, s in ((s_i * 13 + 9, s) for s_i, s in enumerate(SUITS))})


def card_code(card: int | np.integer[Any]) -> str:
    """``card`` as its two-character code (``"TH"``, ``"AS"``, ``"X1"``)."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card!r} is outside 0..{NUM_CARDS - 1}")
    return _CODES[card]


def card_id(code: str) -> int:
    """The card id of a code such as ``"TH"``, ``"10h"`` or ``"X2"`` (case-insensitive)."""
    if not isinstance(code, str):
        raise ValueError(f"a card code must be a string like 'TH' or 'X1', got {code!r}")
    key = code.strip().upper()
    if key not in _FROM_CODE:
        raise ValueError(
            f"unknown card code {code!r}: use rank {' '.join(RANKS)} + suit {' '.join(SUITS)}"
            " (e.g. 'TH', 'AS') or 'X1'/'X2' for jokers"
        )
    return _FROM_CODE[key]


def card_codes(cards: Iterable[int]) -> list[str]:
    return [card_code(c) for c in cards]


def make_card(rank: int, suit: int) -> int:
    return suit * 13 + rank


def standard_deck(jokers: bool = False) -> list[int]:
    return list(range(NUM_CARDS if jokers else NUM_STANDARD))


def parse_stacked_deck(deck: Sequence[str] | str, expected: Sequence[int]) -> list[int]:
    """Validate a stacked deck (top card first) against the game's card set.

    ``deck`` is a list of codes or one space/comma separated string. It must be exactly a
    permutation of ``expected``: a missing, duplicated or foreign card is an error that names it,
    because a silently "fixed" deck would make a scenario test lie.
    """
    if isinstance(deck, str):
        deck = deck.replace(",", " ").split()
    if not isinstance(deck, (Sequence, np.ndarray)):
        raise ValueError(f"malformed stacked deck: expected a list of card codes or one string, "
                         f"got {type(deck).__name__}")
    cards = []
    for i, code in enumerate(deck):
        if isinstance(code, str):
            try:
                cards.append(card_id(code))
            except ValueError as err:
                raise ValueError(f"malformed stacked deck: entry {i}: {err}") from None
        elif isinstance(code, (int, np.integer)) and not isinstance(code, bool):
            cards.append(int(code))
        else:  # a float or a bool read as a card id would deal a different deck than meant
            raise ValueError(f"malformed stacked deck: entry {i} is {code!r}; entries are card "
                             "codes like 'TH' or integer card ids")
    bad = [c for c in cards if not 0 <= c < NUM_CARDS]
    if bad:
        raise ValueError(f"malformed stacked deck: card ids {bad} are outside 0..{NUM_CARDS - 1}")
    counts = np.bincount(np.asarray(cards, dtype=np.int64), minlength=NUM_CARDS)
    want = np.bincount(np.asarray(list(expected), dtype=np.int64), minlength=NUM_CARDS)
    problems = []
    dup = [card_code(c) for c in np.flatnonzero(counts > want)]
    missing = [card_code(c) for c in np.flatnonzero(counts < want)]
    if dup:
        problems.append(f"duplicated or not in this game's deck: {', '.join(dup)}")
    if missing:
        problems.append(f"missing: {', '.join(missing)}")
    if problems:
        raise ValueError(
            f"malformed stacked deck ({len(cards)} cards, expected {len(list(expected))}): "
            + "; ".join(problems)
        )
    return cards

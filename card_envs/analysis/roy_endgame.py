"""A ROY endgame small enough to solve: a short stock and short hands, the rest of the deck on
the pile.

The real ROY engine plays it, started from a position built through ``load_state_dict`` (so
the engine's own schema and invariant checks accept it): every card outside ``pool`` and the
fixed hand cards lies buried in the discard pile (face up when played, so both seats remember
it), ``top`` is the card to match, and ``pool`` is dealt at random: each seat's open hand places
first, the rest is the stock. Nothing else of the game changes. Two things end it early: after
``horizon`` decisions an unfinished hand is a draw (0 to each seat), and so is a draw from an
empty stock (the full game would turn the pile into a new deck there, a shuffle of 40-odd cards
this setting cannot enumerate). Aces and the King of Spades are refused in play (their penalties
draw several cards at once; the chance model draws one card per draw), so every draw takes
one card: its chance node is a uniform pick among the stock's cards, the deck order of the full
game revealed one card at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import Any

import numpy as np

from card_envs.core.cards import card_code, card_id
from card_envs.games import make_engine

#: The ROY ``draw`` action (RULES.md: Actions).
DRAW = 68
ACE = 0  # rank of an Ace (card ids: suit * 13 + rank, A = 0)
KING_OF_SPADES = card_id("KS")


@dataclass(frozen=True)
class RoyEndgame:
    """One reduced ROY setting (two players, default options otherwise; see the module)."""

    #: The card on top of the discard pile.
    top: str
    #: Cards dealt at random to the seats' open hand places, the rest forming the stock.
    pool: tuple[str, ...]
    #: Cards per seat, fixed ones included.
    hand_sizes: tuple[int, int]
    #: Cards a seat is known by both to hold (part of the setting, not dealt).
    fixed: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    #: Decisions after which an unfinished hand is scored a draw.
    horizon: int = 8
    #: The seat to move first.
    first: int = 0
    #: The cards as ids (derived).
    _pool: tuple[int, ...] = field(init=False, repr=False)
    _fixed: tuple[tuple[int, ...], tuple[int, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        def ids(cards: Sequence[str], what: str) -> tuple[int, ...]:
            try:
                return tuple(card_id(c) for c in cards)
            except (ValueError, KeyError) as err:
                raise ValueError(f"{what}: not a card in {list(cards)!r} ({err})") from None

        pool = ids(self.pool, "pool")
        fixed = (ids(self.fixed[0], "fixed[0]"), ids(self.fixed[1], "fixed[1]"))
        (top,) = ids([self.top], "top")
        cards = [top, *pool, *fixed[0], *fixed[1]]
        if len(set(cards)) != len(cards):
            raise ValueError(f"top, pool and fixed hands must not share a card: {cards}")
        special = [card_code(c) for c in cards[1:] if c % 13 == ACE or c == KING_OF_SPADES]
        if special:
            raise ValueError(f"Aces and the King of Spades cannot be in play here (their "
                             f"penalties draw several cards; each draw is one chance node of "
                             f"one card): {special}")
        if len(self.hand_sizes) != 2 or any(type(h) is not int or h < 1
                                            for h in self.hand_sizes):
            raise ValueError(f"hand_sizes: expected two integers >= 1, got {self.hand_sizes}")
        open_places = [h - len(f) for h, f in zip(self.hand_sizes, fixed, strict=True)]
        if min(open_places) < 0 or sum(open_places) > len(pool):
            raise ValueError(f"hand_sizes {self.hand_sizes} do not fit the fixed cards "
                             f"{self.fixed} and a pool of {len(pool)}")
        if type(self.horizon) is not int or self.horizon < 1:
            raise ValueError(f"horizon: expected an integer >= 1, got {self.horizon!r}")
        if self.first not in (0, 1):
            raise ValueError(f"first: expected seat 0 or 1, got {self.first!r}")
        object.__setattr__(self, "_pool", pool)
        object.__setattr__(self, "_fixed", fixed)

    # -- the deal ---------------------------------------------------------------------------
    def num_deals(self) -> int:
        open0 = self.hand_sizes[0] - len(self._fixed[0])
        open1 = self.hand_sizes[1] - len(self._fixed[1])
        return comb(len(self._pool), open0) * comb(len(self._pool) - open0, open1)

    def deals(self) -> Iterator[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
        """Every deal (seat 0's hand, seat 1's hand, the stock), each equally likely."""
        open0 = self.hand_sizes[0] - len(self._fixed[0])
        open1 = self.hand_sizes[1] - len(self._fixed[1])
        for a in combinations(self._pool, open0):
            rest = [c for c in self._pool if c not in a]
            for b in combinations(rest, open1):
                stock = tuple(c for c in rest if c not in b)
                yield self._fixed[0] + a, self._fixed[1] + b, stock

    def engine(self, deal: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]) -> Any:
        """The ROY engine at the start of this setting with ``deal``."""
        hand0, hand1, stock = deal
        engine = make_engine("roy", num_players=2)
        engine.reset(seed=0)
        state = engine.state_dict()
        fields = state["fields"]
        top = card_id(self.top)
        in_play = {top, *hand0, *hand1, *stock}
        buried = [c for c in range(52) if c not in in_play]
        onehot = np.zeros((2, 52), dtype=np.float32)
        for seat, hand in enumerate((hand0, hand1)):
            onehot[seat, list(hand)] = 1.0
        known = np.full((2, 104), -1, dtype=np.int64)
        known[:, buried] = buried  # every buried card was played face up: both remember it
        fields.update(
            hands=[list(hand0), list(hand1)],
            hand_onehot={"__ndarray__": onehot.tolist(), "dtype": "float32"},
            deck=list(stock), discard=[*buried, top], current_player=self.first,
            dealer=1 - self.first, num_steps=0)
        tracker = dict(fields["tracker"]["__tracker__"])
        tracker["known"] = known.tolist()
        fields["tracker"] = {"__tracker__": tracker}
        engine.load_state_dict(state)
        return engine

    # -- chance inside the game -------------------------------------------------------------
    @staticmethod
    def draw_outcomes(engine: Any, action: int) -> list[tuple[int, float]] | None:
        """The chance outcomes (card drawn, probability) that ``action`` waits for: a draw
        takes a uniform card of the stock; other moves involve no chance (None)."""
        if action != DRAW:
            return None
        stock = list(engine.deck)
        return [(c, 1.0 / len(stock)) for c in sorted(stock)]

    @staticmethod
    def stalls(engine: Any, action: int) -> bool:
        """Whether ``action`` is a draw from an empty stock (the setting scores a draw)."""
        return action == DRAW and not len(engine.deck)

    @staticmethod
    def apply(engine: Any, action: int, outcome: int | None) -> None:
        """Play ``action``; a draw takes card ``outcome`` (put on top of the stock first:
        the stock's order is hidden from both seats, so which card is on top is the chance)."""
        if outcome is not None:
            deck = engine.deck
            i = list(deck).index(outcome)
            deck[i], deck[-1] = deck[-1], deck[i]
        engine.step(action)


#: The setting whose best-response value tests/test_exploitability.py works out by hand.
MICRO = RoyEndgame(top="5H", pool=("9H", "TH", "9D"), hand_sizes=(3, 1),
                   fixed=(("6H", "6D", "8D"), ()), horizon=3)
#: The setting docs/baselines.md reports: two cards each from a pool of seven (a Jack among
#: them: wild moves), a stock of three, five decisions (210 deals, 7,156 decision nodes).
SMALL = RoyEndgame(top="7C", pool=("8C", "9C", "7D", "TD", "JH", "4S", "6S"),
                   hand_sizes=(2, 2), horizon=5)
SETTINGS = {"micro": MICRO, "small": SMALL}

"""The ROY heuristic's decision (:class:`~card_envs.games.roy.heuristic.RoyHeuristic`) on
plain lists of ints, compiled with mypyc (``card_envs/compiled.py``).

A search's heuristic rollouts call it at every unforced step, where the numpy version (the
decoded views, a few small-array calls, then a plan over the turn's discard sequences in
plain Python) cost about 11 us a move, 70% of a rollout. Here the observation is read with
three numpy calls (the hand's indices, the top card, and the short run of scalar fields from
the Ace penalty to the opponents' hand sizes as a list), and the turn's plan walks the hand
in place, marking the cards a sequence has used instead of copying what is left. The moves
are the numpy version's, bit for bit, on any observation (``tests/test_search_reference.py``
replays the recorded ones; ``tests/test_roy_heuristic.py`` compares it with a copy of the
numpy version on random and heuristic play, and the opponents' hand-size test on every
float32 near its thresholds).
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

from card_envs.core.cards import ACE, JACK, RANK_OF, SUIT_OF
from card_envs.games.roy.engine import DRAW, END, KING_OF_SPADES, NEXT_HIGHER, WILD_BASE

#: Nodes a turn's plan visits per first card before it settles for the best found so far.
NODE_BUDGET: Final = 4000
GO_OUT_BONUS: Final = 100.0
JACK_COST: Final = 1.5  # a Jack spent as an ordinary card is a wild card lost
KING_NOW_BONUS: Final = 6.0  # the King of Spades when an opponent is about to go out
KING_EARLY_COST: Final = 1.0  # "Don't play the King of Spades too early in the game"
ACE_BONUS: Final = 1.0  # ending on an Ace: the next player must answer it or draw

#: Opponents' hand sizes are read as ``size / 52`` and multiplied back by 52 in float32 (as
#: the numpy version did): ``x * 52`` is exact in a double (24 + 6 mantissa bits), and it
#: rounds to a float32 of at most 2 (4) exactly when it is at most 2 (4) plus half a float32
#: step there (a tie rounds to the even 2.0, 4.0).
_AT_MOST_2_F32: Final = 2.0 + 2.0 ** -23
_AT_MOST_4_F32: Final = 4.0 + 2.0 ** -22
_FLOAT32: Final = np.dtype(np.float32)


class Offsets:
    """Where the fields the heuristic reads start in one observation (the layout's slices)."""

    def __init__(self, slices: dict[str, slice]) -> None:
        self.hand: int = slices["hand"].start
        self.top: int = slices["top_card"].start
        #: One read from the Ace penalty to the opponents' hand sizes (the layout keeps them
        #: in that order: penalty, King, phase, opponents' sizes).
        self.scalars: int = slices["ace_penalty"].start
        self.continuing: int = slices["phase"].start + 1 - self.scalars
        self.opponents: int = slices["opponent_hand_sizes"].start - self.scalars
        self.scalars_end: int = slices["opponent_hand_sizes"].stop
        if not (self.scalars < slices["phase"].start < slices["opponent_hand_sizes"].start):
            raise ValueError("the ROY heuristic expects the observation's Ace penalty, phase "
                             "and opponents' hand sizes in that order")


def _card_values(king_now: bool) -> list[float]:
    """What shedding each card is worth: one, less a wild card lost for a Jack; the King of
    Spades more when an opponent is about to go out, less before."""
    king = 1.0 + KING_NOW_BONUS if king_now else 1.0 - KING_EARLY_COST
    jack = 1.0 - JACK_COST
    return [jack if RANK_OF[c] == JACK else king if c == KING_OF_SPADES else 1.0
            for c in range(52)]


_VALUE_KING_NOW: Final = _card_values(True)
_VALUE_KING_LATER: Final = _card_values(False)


class _Plan:
    """The search over one turn's discard sequences (see the heuristic's module docstring):
    the hand in a fixed order, which cards the sequence so far has used, and what the
    position makes each card and each stopping point worth."""

    def __init__(self, hand: list[int], king_now: bool, ace_attack: bool) -> None:
        self.cards = hand
        self.used = [False] * len(hand)
        self.rank: list[int] = RANK_OF
        self.next_higher: list[int] = NEXT_HIGHER
        self.ace_attack = ace_attack
        self.value = _VALUE_KING_NOW if king_now else _VALUE_KING_LATER
        self.budget = 0

    def end_bonus(self, last: int, cards_left: int) -> float:
        """Worth of stopping with ``last`` on top and ``cards_left`` in hand."""
        if cards_left == 0:
            return GO_OUT_BONUS
        if self.rank[last] == ACE and self.ace_attack:
            return ACE_BONUS
        return 0.0

    def best_sequence(self, first: int) -> float:
        """Most a turn starting with ``first`` (a card of the hand) is worth: shed cards plus
        end-of-turn effects, over every stopping point of every legal continuation."""
        self.budget = NODE_BUDGET
        if first not in self.cards:  # a mask that disagrees with the observation's hand
            return self._search(first, len(self.cards), self.value[first])
        i = self.cards.index(first)
        self.used[i] = True
        value = self._search(first, len(self.cards) - 1, self.value[first])
        self.used[i] = False
        return value

    def _search(self, top: int, left: int, gained: float) -> float:
        best = gained + self.end_bonus(top, left)
        self.budget -= 1
        if self.budget <= 0:
            return best
        rank, nxt = self.rank[top], self.next_higher[top]
        cards, used, ranks = self.cards, self.used, self.rank
        for i in range(len(cards)):
            c = cards[i]
            if not used[i] and (ranks[c] == rank or c == nxt):
                used[i] = True
                value = self._search(c, left - 1, gained + self.value[c])
                used[i] = False
                if value > best:
                    best = value
        return best


def _opponents_close(observation: Any, at: Offsets, sizes: list[float]) -> tuple[bool, bool]:
    """Whether some opponent holds at most two cards, and the next one at most four, from
    their sizes / 52 as read (``sizes``), multiplied by 52 as numpy does in the array's type."""
    if observation.dtype is _FLOAT32:
        scaled = [x * 52.0 for x in sizes]  # exact; see _AT_MOST_2_F32
        # numpy's min is NaN if any size is: then no comparison holds.
        some_close = all([x == x for x in scaled]) and any([x <= _AT_MOST_2_F32
                                                             for x in scaled])
        return some_close, scaled[0] <= _AT_MOST_4_F32
    opp = observation[at.scalars + at.opponents:at.scalars_end] * 52.0
    return bool(float(opp.min()) <= 2), bool(float(opp[0]) <= 4)


def decide(observation: Any, action_mask: Any, at: Offsets) -> int:
    """The heuristic's move (see its module docstring) from one seat's observation."""
    legal: list[int] = action_mask.nonzero()[0].tolist()
    if len(legal) == 1:
        return legal[0]
    hand: list[int] = (observation[at.hand:at.hand + 52] > 0.5).nonzero()[0].tolist()
    top = int(observation[at.top:at.top + 52].argmax())
    scalars: list[float] = observation[at.scalars:at.scalars_end].tolist()
    continuing = scalars[at.continuing] > 0.5
    some_close, next_close = _opponents_close(observation, at, scalars[at.opponents:])
    aces = 0
    for c in hand:
        if RANK_OF[c] == ACE:
            aces += 1

    card_moves = [a for a in legal if a < 52]
    if scalars[0] > 0 and not continuing:  # facing an Ace penalty: answer it if we can
        return card_moves[0] if card_moves else DRAW

    plan = _Plan(hand, some_close, next_close or aces >= 2)
    best_move, best_value = -1, -math.inf
    for c in card_moves:
        value = plan.best_sequence(c)
        if value > best_value:
            best_move, best_value = c, value
    if continuing:
        stop_value = plan.end_bonus(top, len(hand))
        if best_move >= 0 and best_value > stop_value:
            return best_move
        return END
    if best_move >= 0 and best_value > 0:
        return best_move
    wild = [a for a in legal if WILD_BASE <= a < DRAW]
    if wild:
        counts = [0, 0, 0, 0]
        for c in hand:
            if RANK_OF[c] != JACK:
                counts[SUIT_OF[c]] += 1
        suit = counts.index(max(counts))
        for a in wild:
            if (a - WILD_BASE) % 4 == suit:
                return a
        return wild[0]
    if best_move >= 0:
        return best_move
    return DRAW if DRAW in legal else legal[0]

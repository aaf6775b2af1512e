"""The schema of a ROY snapshot's fields (see card_envs/core/snapshot_specs.py). Cards are
ids 0..51 (``rank + 13 * suit``); lists of cards keep their top at the END."""

from __future__ import annotations

from card_envs.core.snapshot_specs import (
    COUNT,
    Anything,
    Array,
    Bool,
    Card,
    Int,
    ListOf,
    OneOf,
    Spec,
    seat,
)
from card_envs.games.roy.engine import MAX_GAINED

#: Counters that only grow (hands dealt): any value a long run can reach.
CARDS = ListOf(Card(), distinct=True)

SCHEMA: dict[str, Spec] = {
    "hands": ListOf(CARDS, length=lambda e: e.num_players),
    "hand_onehot": Array(values=(0.0, 1.0)),
    "deck": CARDS,  # top of the deck last
    "discard": ListOf(Card(), min_length=1, distinct=True),  # top card last
    "dealer": seat(),
    "phase": Int(0, 1),  # 0: the turn's first card, 1: continuing a run
    "announced_suit": Int(-1, 3),  # -1: none
    "ace_chain": Int(0, 4),
    "aces_this_turn": Int(0, 4),
    "king_this_turn": Bool(),
    # Set at the end of a turn and spent at once by the next turn's start: never at rest.
    "king_pending": OneOf((False,)),
    "scores": ListOf(Int(0, lambda e: e.target + 51), length=lambda e: e.num_players),
    "hand_number": Int(1, COUNT),
    "stalled_turns": Int(0, lambda e: e.num_players),
    "last_hand_winner": seat(none=-1),
    "reshuffled": Bool(),
    "forced_suit": ListOf(Int(-1, 3), length=lambda e: e.num_players),
    "forced_rank": ListOf(Int(-1, 12), length=lambda e: e.num_players),
    "forced_gained": ListOf(Int(0, MAX_GAINED), length=lambda e: e.num_players),
    "tracker": Anything("checked encoded: seats x 104 slots of card ids or -1"),
}

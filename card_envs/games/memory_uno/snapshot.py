"""The schema of a Memory-Uno snapshot's fields (see card_envs/core/snapshot_specs.py).
Cards are ids 0..53 (52 and 53 the jokers); ``slots`` holds each seat's 8 positions in turn,
-1 where a position is empty; the graveyard's top card is last."""

from __future__ import annotations

from card_envs.core.snapshot_specs import (
    COUNT,
    Anything,
    Array,
    Bool,
    Card,
    Int,
    ListOf,
    Spec,
    seat,
)
from card_envs.games.memory_uno.engine import NUM_PHASES, SLOTS

#: Totals: points a seat gathered; far past any game's end either way.
TOTAL = Int(-10_000, 10_000)

SCHEMA: dict[str, Spec] = {
    "slots": ListOf(Card(none=-1), length=lambda e: e.num_players * SLOTS),
    "hand_count": ListOf(Int(0, SLOTS), length=lambda e: e.num_players),
    "deck": ListOf(Card(), distinct=True),
    "grave": ListOf(Card(), distinct=True),
    "drawn": Card(none=-1),
    "drawn_from_grave": Bool(),
    "phase": Int(0, NUM_PHASES - 1),
    "turn_player": seat(),
    "round_start": seat(),
    "round_turns": Int(0, COUNT),
    "selected": Int(-1, lambda e: e.num_players * SLOTS - 1),  # a position, or -1
    "locked": seat(none=-1),
    "queue": ListOf(seat(), max_length=lambda e: e.num_players),
    "totals": ListOf(TOTAL, length=lambda e: e.num_players),
    "last_round": ListOf(TOTAL, length=lambda e: e.num_players),
    "last_caller": seat(none=-1),
    "round_number": Int(1, COUNT),
    "reshuffled": Bool(),
    "witnessed": Array(values=(0.0, 1.0)),
    "tracker": Anything("checked encoded: seats x slots of card ids or -1"),
}

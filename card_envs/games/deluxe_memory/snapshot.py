"""The schema of a Deluxe Memory snapshot's fields (see card_envs/core/snapshot_specs.py).
The table is 7 x 8 cells, a1 to g8 row by row (``grid``: a card id 0..53, or -1 for an empty
cell); ``kept`` holds each seat's kept pairs as ``(role, card, card)``; effect state is -1 or
empty between effects."""

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
    per_seat,
    seat,
)
from card_envs.games.deluxe_memory.engine import NUM_ACTIONS, NUM_CELLS, NUM_PHASES, NUM_RANKS

SEATS = ListOf(Bool(), length=lambda e: e.num_players)

KEPT_PAIR = ListOf(Int(0, 53), length=3)  # (role 0/1, card, card): see invariants

SCHEMA: dict[str, Spec] = {
    "grid": ListOf(Card(none=-1), length=NUM_CELLS),
    "face_up": ListOf(Bool(), length=NUM_CELLS),
    "discard": ListOf(Card(), distinct=True),
    "kept": per_seat(ListOf(KEPT_PAIR)),
    "tokens": per_seat(Int(0, lambda e: e.total_tokens)),
    "bank": Int(0, lambda e: e.total_tokens),
    "active": SEATS,
    "skips": per_seat(Int(0, COUNT)),
    "extra_turns": ListOf(ListOf(Int(0, lambda e: e.num_players - 1), length=2)),
    "rotation": seat(),
    "turn_owner": seat(),
    "turn_offer": Bool(),
    "phase": Int(0, NUM_PHASES - 1),
    "effect_owner": seat(none=-1),
    "effect_rank": Int(-1, NUM_RANKS - 1),
    "amount": Int(0, 13),  # tokens at stake: a pair's rank + 1, or six
    "picks": ListOf(Int(0, NUM_CELLS - 1), max_length=2, distinct=True),
    "sel_cells": ListOf(Int(0, NUM_CELLS - 1), max_length=NUM_CELLS),
    "sel_players": ListOf(seat(), max_length=lambda e: e.num_players),
    "area": Int(-1, NUM_ACTIONS - 1),
    "counter": Int(0, lambda e: max(4, e.max_swaps)),
    "seen": Array(values=(0, 1)),
    "tracker": Anything("checked encoded: seats x 56 cells of card ids or -1"),
}

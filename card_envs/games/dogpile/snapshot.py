"""The schema of a Dogpile snapshot's fields (see card_envs/core/snapshot_specs.py). The
pile has 54 places (``pile``: a card id 0..53, or -1 once dug up); each dog has three paws
(``paws``: a card id or -1); sniffed groups are checked by ``check_invariants()``."""

from __future__ import annotations

from card_envs.core.snapshot_specs import (
    COUNT,
    Anything,
    Array,
    Card,
    Int,
    ListOf,
    Spec,
    per_seat,
    seat,
)
from card_envs.games.dogpile.engine import NUM_ROUNDS, NUM_SLOTS, PAWS, SNIFF_BONES

#: A total / a round's loot (the observation shows them / 100, up to 3 and 2).
TOTAL, LOOT = Int(0, 300), Int(0, 200)

SCHEMA: dict[str, Spec] = {
    "pile": Array(-1, 53),
    "face_up": Array(values=(0, 1)),
    "occupied": Array(values=(0, 1)),
    "empty": Array(values=(0, 1)),
    "paws": Array(-1, 53),
    "held": Array(-1, 53),
    "dog_phase": per_seat(Int(0, 2)),  # free, holding a bone, burying
    "bury_paw": per_seat(Int(-1, PAWS - 1)),
    "phase": Int(0, 3),  # play, sniff, shuffle, over
    "round_index": Int(0, NUM_ROUNDS - 1),
    "ticks_left": Int(0, lambda e: max(e.round_ticks)),
    "tick_count": Int(0, COUNT),
    "order": ListOf(seat(), length=lambda e: e.num_players, distinct=True),
    "order_pos": Int(0, lambda e: e.num_players),  # n: the tick's order is done
    "sniffers": ListOf(seat(), max_length=lambda e: e.num_players, distinct=True),
    "bag": ListOf(Card(), max_length=SNIFF_BONES, distinct=True),
    "active_group": Int(-1, lambda e: NUM_ROUNDS * e.num_players - 1),
    "groups": Anything("sniffed groups: checked by check_invariants()"),
    "group_flag": Array(values=(0.0, 1.0)),
    "looted": per_seat(ListOf(Card(), distinct=True)),
    "looted_mask": Array(values=(0.0, 1.0)),
    "totals": per_seat(TOTAL),
    "round_loot": per_seat(LOOT),
    "round_history": ListOf(per_seat(LOOT), max_length=NUM_ROUNDS),
    "bones": per_seat(Int(0, NUM_SLOTS)),
    "aces_free": per_seat(Int(0, 4)),
    "twos_free": per_seat(Int(0, 4)),
    "boneathon_by": ListOf(seat(none=-1), length=2),
    "tracker": Anything("checked encoded: seats x slots of card ids or -1"),
}

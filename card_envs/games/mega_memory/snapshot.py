"""The schema of a Mega Mem-Ory Ultima-Ory snapshot's fields (see
card_envs/core/snapshot_specs.py). Two seats; cards are ids 0..51; a centre pile's top and
the deck's and discard pile's tops are last; -1 marks an empty side slot or no card."""

from __future__ import annotations

from card_envs.core.snapshot_specs import (
    COUNT,
    Anything,
    Bool,
    Card,
    Int,
    ListOf,
    Spec,
    seat,
)
from card_envs.games.mega_memory.engine import (
    MAX_ROUND_POINTS,
    NUM_PILES,
    PHASE_NAMES,
    PILE_DEPTH,
    SIDE_SLOTS,
)

CARDS = ListOf(Card(), distinct=True)
PAIR = 2  # the game is for two

SCHEMA: dict[str, Spec] = {
    "centre": ListOf(ListOf(Card(), max_length=PILE_DEPTH, distinct=True), length=NUM_PILES),
    "sides": ListOf(ListOf(Card(none=-1), length=SIDE_SLOTS), length=PAIR),
    "deck": CARDS,
    "discard": CARDS,
    "scored": ListOf(CARDS, length=PAIR),
    "scored_mask": ListOf(Int(0, 2**52 - 1), length=PAIR),
    "round_points": ListOf(Int(0, MAX_ROUND_POINTS), length=PAIR),
    # Below the target while the game goes on; a round's winner gains at most a round's points.
    "mega_points": ListOf(Int(0, lambda e: e.target - 1 + MAX_ROUND_POINTS), length=PAIR),
    "dealer": seat(),
    "phase": Int(0, len(PHASE_NAMES) - 1),
    "first_card": Card(none=-1),
    "first_src": Int(0, 1),  # 0: from the deck, 1: from the discard pile
    "second_card": Card(none=-1),
    "second_src": Int(-1, 4),  # a side slot 0..3, 4: the discard pile, -1: none
    "dug": ListOf(Card(), distinct=True),
    "round_number": Int(1, COUNT),
    "last_round_points": ListOf(Int(0, MAX_ROUND_POINTS), length=PAIR),
    "scoreless_turns": Int(0, lambda e: e.config["stall_turns"]),  # then the round ends
    "piles_ran_out": Bool(),  # the deck and discard pile both ran out during this turn
    "tracker": Anything("checked encoded: two seats x 112 slots of card ids or -1"),
}

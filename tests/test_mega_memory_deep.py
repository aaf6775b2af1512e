"""Mega Mem-Ory's digging, checked for leaks: the ``dig`` phase (a score from the discard pile
taking its next face-down cards, top down) needs a match or run already on the pile, which
random play builds about once in a thousand decisions: the shared no-leak test reached it in
no variant. Here each variant deals decks whose undealt cards run in order (so same-suit runs
come off the deck, and are discarded, in sequence), and steered play discards them and digs;
every position of those turns is checked for leaks."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.cards import card_code
from card_envs.games import make_engine
from card_envs.games.mega_memory.engine import (
    DIG,
    DIG_MORE,
    DISCARD,
    FIRST,
    FLIP_DISCARD,
    FLIP_SIDE_BASE,
    KEEP_SECOND,
    SIDE,
    START,
    TAKE,
)
from card_envs.games.mega_memory.grouping import is_group
from tests.conftest import VARIANT_IDS, VARIANTS
from tests.leak_check import assert_no_seat_sees_resampling
from tests.steer import position_tags

MEGA = [(c, i) for (g, c), i in zip(VARIANTS, VARIANT_IDS, strict=True) if g == "mega_memory"]


def _sorted_deal(rng: np.random.Generator) -> list[str]:
    """A shuffled deal whose 24 deck cards come off the deck in card order (suit, then rank)."""
    order = rng.permutation(52).tolist()
    return [card_code(c) for c in order[:28] + sorted(order[28:])]


def _digging_move(engine, rng: np.random.Generator) -> int:
    """Turn the deck's card; take the discard pile's top if it makes a group with it, and dig
    while the dug card may join; without one, flip a side card and keep it there, so the deck's
    card goes onto the discard pile (building the run). A fifth of moves are uniform."""
    mask = engine.legal_mask()
    legal = np.flatnonzero(mask)
    phase, discard = engine.phase, engine.discard
    if rng.random() >= 0.2:
        if phase == START:
            return 0  # reveal:deck
        if phase == FIRST:
            if discard and is_group([engine.first_card, discard[-1]]):
                return FLIP_DISCARD
            sides = legal[(legal >= FLIP_SIDE_BASE) & (legal < FLIP_DISCARD)]
            if sides.size:
                return int(rng.choice(sides))
        if phase == SIDE and mask[KEEP_SECOND]:
            return KEEP_SECOND
        if phase in (DISCARD, DIG) and mask[DIG_MORE]:
            return DIG_MORE if rng.random() < 0.85 else TAKE
    return int(rng.choice(legal))


@pytest.mark.parametrize("config", [c for c, _ in MEGA], ids=[i for _, i in MEGA])
def test_digging_never_leaks(config: dict) -> None:
    """Every position from a discard-pile second card to the position after the last dig (a
    dug card that does not fit goes back on top, seen by both), and a few others."""
    engine = make_engine("mega_memory", **config)
    rng = np.random.default_rng(0)
    reached: set[str] = set()
    dig_positions = after_dig = 0
    for episode in range(12):
        engine.reset(seed=episode, deck=_sorted_deal(rng))
        dug = False
        while not engine.done:
            if engine.phase in (DISCARD, DIG) or dug or rng.random() < 0.02:
                reached |= position_tags(engine)
                dig_positions += engine.phase == DIG
                after_dig += dug
                assert_no_seat_sees_resampling(engine, rng)
            action = _digging_move(engine, rng)
            dug = action == DIG_MORE
            engine.step(action)
            engine.check_invariants()
    assert {"start", "first", "side", "discard", "dig"} <= reached, sorted(reached)
    assert dig_positions >= 3 and after_dig >= 40, (dig_positions, after_dig)

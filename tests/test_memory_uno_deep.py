"""Memory-Uno under long random play: random agents call rounds within a few turns, so the
shared property tests rarely reach peeks, blind swaps, penalties, reshuffles and locks. Here
calls are suppressed until late, and every step is checked for leaks and consistency."""

from __future__ import annotations

import json

import numpy as np
import pytest

from card_envs.games.memory_uno.engine import CALL, PHASE_NAMES, MemoryUnoEngine
from tests.leak_check import assert_no_seat_sees_resampling


def _deep_play(engine: MemoryUnoEngine, rng: np.random.Generator, steps: int,
               probe_every: int = 1) -> set[str]:
    """Random play that rarely calls and mostly passes; checks no-leak on every probe.
    Returns what the play reached: the phases decided in, and "reshuffle" (the deck grew:
    the graveyard was shuffled back), "penalty" (the cards in hands grew: a wrong throw)
    and "lock" (a stack was locked by a fired card)."""
    reached: set[str] = set()
    for t in range(steps):
        if engine.done:
            break
        mask = engine.legal_mask().copy()
        if mask.sum() > 1:
            mask[CALL] = 0
        if rng.random() < 0.7:  # pass more often than a uniform agent would
            throws = mask[engine.throw_base:]
            if throws.any() and mask[4]:
                throws[:] = 0
        reached.add(PHASE_NAMES[engine.phase])
        deck, in_hands = len(engine.deck), sum(engine.hand_count)
        engine.step(int(rng.choice(np.flatnonzero(mask))))
        engine.check_invariants()
        if len(engine.deck) > deck:
            reached.add("reshuffle")
        if sum(engine.hand_count) > in_hands:
            reached.add("penalty")
        if engine.locked >= 0:
            reached.add("lock")
        if t % probe_every == 0:
            assert_no_seat_sees_resampling(engine, rng)
    return reached


#: What every long-play configuration must reach for its leak and invariant checks to mean
#: anything beyond the first turns (the module docstring's list).
DEEP_EVENTS = {"turn", "drawn", "window", "peek_other", "swap_first", "swap_second",
               "penalty", "lock", "reshuffle"}


@pytest.mark.parametrize("config", [
    {"num_players": 3},
    {"num_players": 2, "memory": "none"},
    {"num_players": 4, "memory": 0.3},
    {"num_players": 3, "match": "points", "give_after_throw": "required",
     "call_timing": "turn"},
])
def test_long_play_never_leaks_and_stays_consistent(config: dict) -> None:
    engine = MemoryUnoEngine(**config)
    rng = np.random.default_rng(1)
    seen: set[str] = set()
    for episode in range(3):
        engine.reset(seed=episode)
        seen |= _deep_play(engine, rng, 300, probe_every=2)
    assert seen >= DEEP_EVENTS, f"long play never reached {sorted(DEEP_EVENTS - seen)}"


def test_resampling_redraws_unknown_cards_but_keeps_other_seats_memory_consistent() -> None:
    engine = MemoryUnoEngine(num_players=3, first_player=0)
    engine.reset(seed=3)
    _deep_play(engine, np.random.default_rng(5), 60, probe_every=1000)
    probe = engine.clone()
    probe.resample_hidden(0, np.random.default_rng(0))
    probe.check_invariants()  # includes: every remembered card is the card really there
    known0 = engine.tracker.known[0]
    for x, card in enumerate(engine.slots):
        if known0[x] >= 0:
            assert probe.slots[x] == card
    assert probe.slots != engine.slots or probe.deck != engine.deck


def test_snapshot_mid_round_round_trips() -> None:
    engine = MemoryUnoEngine(num_players=4, memory=0.2)
    engine.reset(seed=9)
    _deep_play(engine, np.random.default_rng(2), 80, probe_every=1000)
    snap = json.loads(json.dumps(engine.state_dict()))
    other = MemoryUnoEngine(num_players=4, memory=0.2)
    other.load_state_dict(snap)
    other.check_invariants()
    for seat in range(4):
        a, b = np.empty(engine.layout.size, np.float32), np.empty(engine.layout.size, np.float32)
        engine.write_observation(seat, a)
        other.write_observation(seat, b)
        np.testing.assert_array_equal(a, b)
    rng = np.random.default_rng(4)
    for _ in range(50):
        if engine.done:
            break
        action = int(rng.choice(np.flatnonzero(engine.legal_mask())))
        engine.step(action)
        other.step(action)
    assert other.state_dict() == engine.state_dict()


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_soak(num_players: int) -> None:
    engine = MemoryUnoEngine(num_players=num_players, episode="game", memory=0.1)
    rng = np.random.default_rng(num_players)
    for episode in range(40):
        engine.reset(seed=episode)
        _deep_play(engine, rng, 400, probe_every=3)

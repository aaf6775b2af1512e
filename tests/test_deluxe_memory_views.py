"""Deluxe Memory keeps each seat's observation current by events (card shown, turned, taken,
swapped, tokens paid); these tests check it against the encoding from scratch at every step."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from card_envs.games.deluxe_memory.engine import DeluxeMemoryEngine

CONFIGS = (
    {},
    {"num_players": 2},
    {"num_players": 6},
    {"simplicity": True, "num_players": 4},
    {"jokin_around": True, "num_players": 4},
    {"jokin_around": True, "num_players": 2, "joker_swaps": 3},
    {"underdogs": True, "num_players": 5},
    {"memory": "none", "peek_first": False},
    {"memory": "none"},
    {"memory": 0.3, "reward": "score"},
)


def assert_views_match(engine: DeluxeMemoryEngine, seats) -> None:
    got = np.empty(engine.layout.size, np.float32)
    want = np.empty(engine.layout.size, np.float32)
    for seat in seats:
        engine.write_observation(seat, got)
        engine.reference_observation(seat, want)
        bad = np.flatnonzero(got != want)
        assert not bad.size, (f"seat {seat}, step {engine.num_steps}: "
                              f"{engine.layout.describe()} {bad}")


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: json.dumps(c, sort_keys=True))
def test_incremental_views_equal_the_reference_encoding(config) -> None:
    engine = DeluxeMemoryEngine(**config)
    rng = random.Random(3)
    for episode in range(6):
        engine.reset(seed=episode)
        while True:
            # Mostly only the seat to act looks (as a training loop does), sometimes everyone.
            seats = range(engine.num_players) if rng.random() < 0.3 else [engine.current_player]
            assert_views_match(engine, seats)
            if engine.done:
                break
            if rng.random() < 0.02:
                engine = engine.clone()
            if rng.random() < 0.02:
                other = engine.clone()
                other.resample_hidden(rng.randrange(engine.num_players),
                                      np.random.default_rng(rng.randrange(1000)))
                other.check_invariants()
                assert_views_match(other, range(engine.num_players))
            if rng.random() < 0.01:
                engine.load_state_dict(json.loads(json.dumps(engine.state_dict())))
            legal = np.flatnonzero(engine.legal_mask())
            engine.step(int(legal[rng.randrange(legal.size)]))
        engine.check_invariants()

"""The no-leak probe shared by the API tests and the games' deep tests."""

from __future__ import annotations

import numpy as np


def assert_no_seat_sees_resampling(engine, rng: np.random.Generator) -> None:
    """Every seat's observation is unchanged when everything it cannot know is redrawn."""
    size = engine.layout.size
    for seat in range(engine.num_players):
        before = np.empty(size, np.float32)
        engine.write_observation(seat, before)
        probe = engine.clone()
        probe.resample_hidden(seat, np.random.default_rng(int(rng.integers(1 << 30))))
        probe.check_invariants()
        after = np.empty(size, np.float32)
        probe.write_observation(seat, after)
        np.testing.assert_array_equal(before, after, err_msg=f"seat {seat} leaks")

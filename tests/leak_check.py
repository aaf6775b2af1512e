"""The no-leak probe shared by the API tests and the games' deep tests."""

from __future__ import annotations

import numpy as np


def assert_no_seat_sees_resampling(engine, rng: np.random.Generator) -> None:
    """Every seat's observation, and its legal moves, are unchanged when everything it cannot
    know is redrawn."""
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
        # The mask is part of what a seat is shown: legality must not hang on what it cannot
        # know either. Dogpile's dogs all act at once (its Parallel env asks each for a mask).
        if hasattr(engine, "mask_for") and not engine.done:
            np.testing.assert_array_equal(
                engine.mask_for(seat, np.empty(engine.num_actions, np.int8)),
                probe.mask_for(seat, np.empty(engine.num_actions, np.int8)),
                err_msg=f"seat {seat}'s legal moves leak")
        elif seat == engine.current_player and not engine.done:
            np.testing.assert_array_equal(engine.legal_mask(), probe.legal_mask(),
                                          err_msg=f"seat {seat}'s legal moves leak")

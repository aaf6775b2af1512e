"""Long random-play soaks (``-m slow``), with a short version in the default run."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.games import make_engine
from tests.conftest import VARIANT_IDS, VARIANTS


def soak(game: str, config: dict, episodes: int, check_every: int, seed: int = 0) -> int:
    """Random legal play; invariants checked every ``check_every`` steps and at every end.
    Returns the number of decisions made."""
    engine = make_engine(game, **config)
    rng = np.random.default_rng(seed)
    decisions = 0
    for episode in range(episodes):
        engine.reset(seed=seed * 1_000_003 + episode)
        while not engine.done:
            legal = np.flatnonzero(engine.legal_mask())
            assert legal.size, f"{game}: live position without a legal action"
            engine.step(int(legal[rng.integers(legal.size)]))
            decisions += 1
            if decisions % check_every == 0:
                engine.check_invariants()
        engine.check_invariants()
        assert engine.terminated or engine.truncated
        assert not engine.truncated or engine.num_steps >= engine.step_cap
    return decisions


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_short_soak(game: str, config: dict) -> None:
    assert soak(game, config, episodes=200, check_every=7) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_long_soak(game: str, config: dict) -> None:
    soak(game, config, episodes=100_000, check_every=97, seed=1)

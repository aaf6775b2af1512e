"""Scenario-test helpers shared by every game's rule tests: actions by name."""

from __future__ import annotations

import numpy as np

from card_envs.core.engine import Engine


def legal_names(engine: Engine) -> set[str]:
    return {engine.action_names[a] for a in np.flatnonzero(engine.legal_mask())}


def play(engine: Engine, *names: str) -> None:
    """Play the named actions in turn, each of which must be legal, checking invariants."""
    for name in names:
        action = engine.action_id(name)
        assert engine.legal_mask()[action], (
            f"{name} not legal for seat {engine.current_player}; "
            f"legal: {sorted(legal_names(engine))}")
        engine.step(action)
        engine.check_invariants()

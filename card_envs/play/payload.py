"""What the page receives. For a person's seat it is built from that seat's observation and
action mask alone (the scene from the named observation fields, the legal moves from the mask),
plus the other seats' moves, which every game makes in front of everyone; so no payload can hold
a card the seat may not know (tests/test_play_leak.py checks it over random positions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.pictures.scene import Facts, scene_from_vector


def legal_names(game: Facts, mask: np.ndarray) -> list[str]:
    return [game.action_names[int(a)] for a in np.flatnonzero(mask)]


def seat_view(game: Facts, observation: np.ndarray, mask: np.ndarray,
              seat: int) -> dict[str, Any]:
    """A seat's table and its legal moves, from its observation and mask only."""
    return {"scene": scene_from_vector(game, observation, "seat", seat).to_dict(),
            "legal": legal_names(game, mask)}


def table_view(game: Facts, state: np.ndarray) -> dict[str, Any]:
    """The whole table, from ``state()`` (watch and replay modes: nobody's seat to hide)."""
    return {"scene": scene_from_vector(game, state, "table", None).to_dict(), "legal": []}

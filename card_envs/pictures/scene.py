"""A picture of a position as plain data: zones of card slots and a few lines of text.

One scene is drawn three ways (SVG in :mod:`card_envs.pictures.svg`, pixels for
``render_mode="rgb_array"`` in :mod:`card_envs.pictures.raster`, HTML in the play app), so the
three always show the same thing. A scene is built from a vector the engine hands out, never
from the engine's private state: a seat's view from ``observation(seat)`` (exactly what that
seat may know), the view from above from ``state()`` (the whole position, what the text render
prints). Only the game's fixed facts (player count, options, action names) come from the engine.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from card_envs.core.engine import Engine
from card_envs.core.obs_layout import ObsLayout

VIEWS = ("seat", "table")


@dataclass
class Slot:
    """One place a card can be. ``face``: ``"up"`` (everyone sees it), ``"known"`` (face down,
    but the viewer knows or remembers it), ``"back"`` (face down, unknown) or ``"empty"``."""

    face: str
    label: str = ""  # what is printed on a known card, e.g. "Q♥"
    colour: str = ""  # "red", "black" or "" (unknown)
    caption: str = ""  # small text under the slot (a position, a count)
    actions: list[str] = field(default_factory=list)  # action names a click here may mean
    marked: bool = False  # picked / selected in the decision under way


@dataclass
class Zone:
    title: str
    slots: list[Slot]
    columns: int = 0  # slots per row (0: as many as fit)


@dataclass
class Scene:
    title: str
    lines: list[str]
    zones: list[Zone]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Facts:
    """What a scene builder may know besides the vector: the game's fixed facts."""

    game: str
    num_players: int
    config: dict[str, Any]
    action_names: tuple[str, ...]

    def named(self, *candidates: str) -> list[str]:
        names = set(self.action_names)
        return [c for c in candidates if c in names]


def facts(engine: Engine) -> Facts:
    return Facts(engine.name, int(engine.num_players), dict(engine.config),
                 tuple(engine.action_names))


def check_view(view: Any, seat: Any, num_players: int) -> None:
    if view not in VIEWS:
        raise ValueError(f"invalid value {view!r} for 'view': allowed values are "
                         + ", ".join(repr(v) for v in VIEWS))
    if view == "seat" and (type(seat) is not int or not 0 <= seat < num_players):
        raise ValueError(f"invalid value {seat!r} for 'seat': allowed values are "
                         f"0..{num_players - 1}")


def scene_of(engine: Engine, view: str = "table", seat: int | None = None) -> Scene:
    """The scene of ``engine``'s position: from ``seat``'s point of view (``view="seat"``,
    built from ``engine.observation(seat)``) or from above (``view="table"``, from
    ``engine.state()``)."""
    check_view(view, seat, engine.num_players)
    if view == "seat":
        assert seat is not None
        return scene_from_vector(facts(engine), engine.observation(seat), "seat", seat)
    return scene_from_vector(facts(engine), engine.state_array(), "table", None)


def scene_from_vector(game: Facts, vector: np.ndarray, view: str,
                      seat: int | None) -> Scene:
    """The scene built from one observation (``view="seat"``) or state vector alone."""
    from card_envs.pictures.games import BUILDERS

    obs_layout, state_layout = _layouts(game.game, json.dumps(game.config, sort_keys=True))
    layout = obs_layout if view == "seat" else state_layout
    fields = layout.unpack(np.asarray(vector, dtype=np.float32))
    return BUILDERS[game.game](game, fields, view, seat)


@functools.lru_cache(maxsize=64)
def _layouts(game: str, config: str) -> tuple[ObsLayout, ObsLayout]:
    """The named observation and state layouts of ``game`` under ``config`` (JSON)."""
    from card_envs.games import make_engine

    engine = make_engine(game, **json.loads(config))
    return engine.layout, engine.state_layout

"""Pictures of positions: a scene (plain data) drawn as SVG, as an RGB array (Pillow, the
``render`` extra) or as HTML by the play app. ``render_mode="rgb_array"`` in every env view
draws through here."""

from __future__ import annotations

from typing import Any

from card_envs.core.engine import Engine
from card_envs.pictures.scene import Scene, scene_of

__all__ = ["Scene", "scene", "svg", "rgb_array"]


def _engine(env: Any) -> Engine:
    """The engine of an engine, or of any env view (wrappers included)."""
    if isinstance(env, Engine):
        return env
    inner = getattr(env, "unwrapped", env)
    engine = getattr(inner, "engine", None)
    if not isinstance(engine, Engine):
        raise TypeError(f"expected a card_envs engine or env, got {type(env).__name__}")
    return engine


def scene(env: Any, view: str = "table", seat: int | None = None) -> Scene:
    """The position of ``env`` (an env view or an engine) as a :class:`Scene`: from above
    (``view="table"``) or from ``seat``'s point of view (``view="seat"``: only what that
    seat's observation holds)."""
    return scene_of(_engine(env), view, seat)


def svg(env: Any, view: str = "table", seat: int | None = None) -> str:
    """An SVG document of the position (no extra needed)."""
    from card_envs.pictures.svg import to_svg

    return to_svg(scene(env, view, seat))


def rgb_array(env: Any, view: str = "table", seat: int | None = None) -> Any:
    """The position as an ``(h, w, 3)`` uint8 array (needs Pillow: ``card-envs[render]``)."""
    from card_envs.pictures.raster import to_rgb_array

    return to_rgb_array(scene(env, view, seat))

"""Rendering shared by every env view (AEC, Parallel, Gymnasium): text (``"ansi"``,
``"human"``) and pictures (``"rgb_array"``, drawn by :mod:`card_envs.pictures` with Pillow)."""

from __future__ import annotations

from typing import Any

import gymnasium

from card_envs.core.engine import Engine

RENDER_MODES = ("ansi", "human", "rgb_array")
#: Frames per second a viewer should show ``"human"`` renders at (Gymnasium's checker asks).
RENDER_FPS = 1


class RenderModeError(ValueError, TypeError):
    """An unsupported ``render_mode``. It is also a TypeError because SB3's ``make_vec_env``
    offers ``render_mode="rgb_array"`` first and retries without it only on a TypeError."""


def check_render_mode(render_mode: str | None) -> None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise RenderModeError(
            f"invalid value {render_mode!r} for 'render_mode': allowed values are None, "
            + ", ".join(repr(m) for m in RENDER_MODES)
        )
    if render_mode == "rgb_array":  # the missing extra is named when the env is made
        from card_envs.pictures.raster import require_pillow

        require_pillow()


def check_render_view(render_view: Any, num_players: int) -> None:
    """``"table"`` (from above: every card), ``"seat"`` (the seat to act, or the Gymnasium
    env's learner) or a seat number: whose point of view ``"rgb_array"`` draws."""
    if render_view in ("table", "seat"):
        return
    if type(render_view) is not int or not 0 <= render_view < num_players:
        raise ValueError(f"invalid value {render_view!r} for 'render_view': allowed values are "
                         f"'table', 'seat' or a seat 0..{num_players - 1}")


def render(engine: Engine, render_mode: str | None, render_view: Any = "table",
           seat: int | None = None) -> Any:
    """``"ansi"`` returns the position as text, ``"human"`` prints it, ``"rgb_array"`` returns
    a picture of it (an ``(h, w, 3)`` uint8 array) from ``render_view``'s point of view
    (``"seat"`` is ``seat``)."""
    if render_mode is None:
        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
        return None
    if render_mode == "rgb_array":
        from card_envs.pictures.raster import to_rgb_array
        from card_envs.pictures.scene import scene_of

        if render_view == "table":
            return to_rgb_array(scene_of(engine, "table"))
        who = seat if render_view == "seat" else render_view
        return to_rgb_array(scene_of(engine, "seat", int(who if who is not None else 0)))
    text = engine.render_text()
    if render_mode == "human":
        print(text)
        return None
    return text

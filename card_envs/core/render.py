"""Text rendering shared by every env view (AEC, Parallel, Gymnasium)."""

from __future__ import annotations

import gymnasium

from card_envs.core.engine import Engine

RENDER_MODES = ("ansi", "human")
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


def render(engine: Engine, render_mode: str | None) -> str | None:
    """``"ansi"`` returns the position as text, ``"human"`` prints it."""
    if render_mode is None:
        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
        return None
    text = engine.render_text()
    if render_mode == "human":
        print(text)
        return None
    return text

"""The conventions every env view shares: what an illegal move does, and which reset options
exist.

An illegal move (masked out, out of range, or not an integer action) ends the episode with
reward -1 for the offender and one :class:`IllegalActionWarning`, as PettingZoo's classic envs
do through ``TerminateIllegalWrapper``: samplers that ignore masks (Gymnasium's and SB3's env
checkers, a plain PPO) run. ``illegal_action="error"`` raises
:class:`~card_envs.core.engine.IllegalActionError` instead, to debug an agent.

This module is plain Python in both builds (the compiled AEC env calls it only on an illegal
move or a reset with options), so the warning's frame walk below sees only interpreted frames.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from types import FrameType
from typing import Any

from card_envs.core.config import close_match_hint

#: What the AEC and Gymnasium views do with an illegal move; the first is the default.
ILLEGAL_ACTION_MODES = ("penalty", "error")
DEFAULT_ILLEGAL_ACTION = ILLEGAL_ACTION_MODES[0]
#: The offender's reward for an illegal move (PettingZoo classic's ``illegal_reward``).
ILLEGAL_MOVE_REWARD = -1.0

#: The keys ``reset(options=...)`` takes.
RESET_OPTIONS = ("deck", "decks")
#: What PettingZoo's ``api_test`` and ``parallel_api_test`` pass to check that ``reset`` takes
#: ``options`` at all; the one unknown key accepted (and ignored), so that both still pass.
_PETTINGZOO_SIGNATURE_PROBE = {"options": 1}

_PACKAGE_DIR = os.path.dirname(os.path.dirname(__file__)) + os.sep  # .../card_envs/


class IllegalActionWarning(UserWarning):
    """An illegal move ended the episode with -1 for the offender (``illegal_action="penalty"``).

    The text is the same for every move, so Python's default filter shows it once per line of
    the caller's code; ``info["illegal_action"]`` says what was wrong with each move. Silence it
    with ``warnings.filterwarnings("ignore", category=IllegalActionWarning)``."""


def check_illegal_action_mode(value: Any,
                              allowed: tuple[str, ...] = ILLEGAL_ACTION_MODES) -> None:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"invalid value {value!r} for 'illegal_action': allowed values are "
                         + ", ".join(map(repr, allowed)))


def warn_illegal_move(mask_hint: str) -> None:
    """PettingZoo's "Illegal move made" warning, attributed to the user's line that stepped
    (the first frame outside this package, whichever build runs: compiled code has no frames,
    so a fixed ``stacklevel`` would point at a different line in each)."""
    level = 1
    frame: FrameType | None = sys._getframe()
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(
        "Illegal move made, game terminating with current player losing (reward -1). "
        f"{mask_hint} contains a mask of all legal moves that can be chosen; "
        "info['illegal_action'] says why this one was not. Pass illegal_action='error' to "
        "raise instead.",
        IllegalActionWarning,
        stacklevel=level,
    )


def reset_options(options: Any) -> Mapping[str, Any]:
    """``reset(options=...)`` checked like an env option: a key the env does not know is a
    ``ValueError`` naming it and the known ones, never a silently ignored option."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"reset() options must be a dict such as {{'deck': [...]}}, got "
                        f"{type(options).__name__}")
    unknown = [k for k in options if k not in RESET_OPTIONS]
    if unknown and options != _PETTINGZOO_SIGNATURE_PROBE:
        key = unknown[0]
        hint = close_match_hint(key, RESET_OPTIONS) if isinstance(key, str) else ""
        raise ValueError(f"unknown reset option {key!r}{hint}; allowed options: "
                         + ", ".join(map(repr, RESET_OPTIONS)))
    return options

"""``action_name`` / ``action_id`` for every env view: a plain-Python mixin (the compiled AEC
env and the Python Gymnasium and Parallel envs share it)."""

from __future__ import annotations

from typing import Any

from card_envs.core.engine import Engine


class ActionNames:
    """``action_name`` / ``action_id`` for every env view (AEC, Gymnasium, Parallel): the
    engine's names, so a log or a scripted line of play reads the same whichever view runs it."""

    engine: Engine

    def action_name(self, action: Any) -> str:
        return self.engine.action_name(action)

    def action_id(self, name: Any) -> int:
        return self.engine.action_id(name)

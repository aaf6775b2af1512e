"""The agent interface: anything that maps ``(observation, action_mask)`` to an action.

Every tool in the package (the Gymnasium env's opponents, evaluation, self-play) accepts any
of: an :class:`Agent`, a plain callable with that signature, or a spec string resolved by
:func:`card_envs.agents.make_agent`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Agent(ABC):
    """A policy for one seat. ``act`` must only read the arrays it is given, never keep them."""

    name: str = "agent"

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...

    def seed(self, seed: int | None) -> None:  # noqa: B027 - optional hook
        """Reseed any randomness the agent uses (no-op for deterministic agents)."""

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.act(observation, action_mask)


class CallableAgent(Agent):
    """Wraps a user callable ``(observation, action_mask) -> action``."""

    def __init__(self, fn, name: str | None = None) -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "callable")

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.fn(observation, action_mask))

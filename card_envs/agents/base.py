"""The agent interface: anything that maps ``(observation, action_mask)`` to an action.

The Gymnasium env's opponents, the arena (:mod:`card_envs.agents.arena`) and evaluation
(``training.evaluate``) accept any of: an :class:`Agent`, a plain callable with that
signature, or a spec string resolved by :func:`card_envs.agents.make_agent`. Self-play draws
its opponents from its own kinds (its snapshots, random, heuristic).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, cast

import numpy as np

from card_envs.core.engine import NotAnActionError, integer_action


class Agent(ABC):
    """A policy for one seat. ``act`` must only read the arrays it is given, never keep them.
    Agents that draw random numbers draw them from ``self.rng``, which :meth:`seed` replaces."""

    name: str = "agent"
    rng: np.random.Generator
    #: Whether the agent needs the position itself (a search agent): callers that hold the
    #: engine then call :meth:`act_in` instead of :meth:`act`.
    needs_engine: ClassVar[bool] = False
    #: Whether :meth:`act` may draw from ``self.rng`` (False: its moves do not depend on the
    #: seed, so a search that replays the same random choices need not reseed it).
    draws_random: ClassVar[bool] = True

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...

    def act_in(self, engine: Any) -> int:
        """The move for ``engine.current_player``: by default :meth:`act` on that seat's
        observation and legal mask. Agents that need the position (``needs_engine``) read
        ``engine`` through its search hooks only (``clone``, ``resample_hidden``), never its
        hidden cards, and leave it unchanged."""
        return self.act(engine.observation(engine.current_player), engine.legal_mask().copy())

    def seed(self, seed: int | None) -> None:
        """Reseed the agent's randomness (deterministic agents ignore ``self.rng``)."""
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.act(observation, action_mask)


class CompiledReaderAgent(Agent):
    """A heuristic whose decision reads the observation through a compiled (mypyc) object
    built from the layout (``reader_attribute`` names it; :meth:`build_reader` makes it).
    Copy and pickle cannot rebuild a compiled object, so a copy (a copied env's opponents, a
    pickled evaluator) takes everything else and builds the reader again."""

    reader_attribute: ClassVar[str] = "offsets"
    layout: Any

    def build_reader(self) -> Any:
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state[self.reader_attribute]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        setattr(self, self.reader_attribute, self.build_reader())

    def check_size(self, observation: np.ndarray) -> None:
        """The compiled reading trusts the offsets: a wrong-sized observation is refused
        first, naming the sizes."""
        if observation.shape[-1] != self.layout.size:
            self.layout.decode(observation)  # raises, naming the sizes


class CallableAgent(Agent):
    """Wraps a user callable ``(observation, action_mask) -> action``."""

    def __init__(self, fn, name: str | None = None) -> None:
        self.fn = fn
        # A callable's __name__ is a str (mypy would infer ``str | None`` from ``name``).
        self.name = name or cast(str, getattr(fn, "__name__", "callable"))

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return checked_action(self.name, self.fn(observation, action_mask))


def checked_action(agent: str, action: object) -> int:
    """``action`` as an int if it is an integer action (what ``Discrete`` accepts), else a
    :class:`NotAnActionError` naming the agent: ``int()`` would turn 1.9 into 1 and ``False``
    into 0."""
    value = integer_action(action)
    if value is None:
        raise NotAnActionError(f"agent {agent!r} returned {action!r}, not an action: actions "
                               "are integers (Python or numpy integers, or 0-d integer arrays)")
    return value

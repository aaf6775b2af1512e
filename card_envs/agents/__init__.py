"""Agents: random, per-game heuristics, saved policies, and any callable."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from card_envs.agents.base import Agent, CallableAgent
from card_envs.agents.policy import PolicyAgent  # imports torch and SB3 only when it loads one
from card_envs.agents.random_agent import RandomAgent

AgentSpec = Agent | str | Callable[..., Any]

__all__ = ["Agent", "AgentSpec", "CallableAgent", "PolicyAgent", "RandomAgent", "make_agent",
           "agent_label"]


def make_agent(spec: AgentSpec, game: str, config: dict[str, Any] | None = None,
               seed: int | None = None, allow_policy_mismatch: bool = False) -> Agent:
    """Resolve ``spec`` into an :class:`Agent` for ``game`` played with ``config``.

    ``spec`` is ``"random"``, ``"heuristic"``, ``"search"`` or ``"search:<key>=<value>,..."``
    (:class:`~card_envs.agents.search.SearchAgent` and its settings), a path to a saved
    MaskablePPO ``.zip`` or to a training run's directory (its best, else final, else latest
    policy), an :class:`Agent`, a MaskablePPO model, or a callable
    ``(observation, action_mask) -> action``. ``config`` is the game options of the env the
    agent plays in (``env.unwrapped.engine.config``; None: the defaults). A heuristic or
    policy reads observations laid out and scaled by them.

    A saved policy must have been trained on this game with these options and versions (it
    records them); ``allow_policy_mismatch`` loads one that was not (a :class:`PolicyAgent`
    given ready keeps its own ``allow_mismatch``).
    """
    if isinstance(spec, Agent):
        from card_envs.agents.policy import PolicyAgent

        if isinstance(spec, PolicyAgent):  # as its .zip path is: not at its first move in SB3
            spec.check_fits(game, config)
        if seed is not None:  # a user's agent keeps its own stream unless a seed is given
            spec.seed(seed)
        return spec
    if isinstance(spec, type) and issubclass(spec, Agent):
        # A class is callable too: it would pass for a callable and fail at its first move.
        raise ValueError(f"{spec.__name__} is an Agent class, not an agent: pass an instance "
                         f"({spec.__name__}())")
    if isinstance(spec, (str, os.PathLike)):
        text = os.fspath(spec)
        if text == "random":
            return RandomAgent(seed)
        if text == "search" or text.startswith("search:"):
            from card_envs.agents.search import make_search_agent

            return make_search_agent(text, game, config, seed=seed,
                                     allow_policy_mismatch=allow_policy_mismatch)
        if text == "heuristic":
            from card_envs.games import get_game

            heuristic = get_game(game).heuristic_class()(**(config or {}))
            heuristic.seed(seed)
            return heuristic
        if text.endswith(".zip") or os.path.exists(text):
            from card_envs.agents.policy import PolicyAgent, resolve_run_policy

            if os.path.isdir(text):
                text = resolve_run_policy(text)
            agent = PolicyAgent(text, seed=seed, allow_mismatch=allow_policy_mismatch)
            agent.check_fits(game, config)
            return agent
        raise ValueError(
            f"unknown agent {text!r}: use 'random', 'heuristic', 'search[:key=value,...]', a "
            "path to a saved policy (.zip) or a training run's directory, an Agent, a "
            "MaskablePPO model, or a callable (observation, action_mask) -> action"
        )
    from card_envs.agents.policy import is_sb3_model

    if is_sb3_model(spec):
        from card_envs.agents.policy import PolicyAgent, check_policy_fits

        agent = PolicyAgent(spec, seed=seed, name=type(spec).__name__)
        check_policy_fits(spec, game, config, agent.name)
        return agent
    if callable(spec):
        return CallableAgent(spec)
    raise ValueError(f"cannot make an agent from {spec!r}")


def agent_label(spec: object) -> str:
    """A short name for an agent spec (or anything with a ``name``), for reports."""
    if isinstance(spec, (str, os.PathLike)):
        return os.fspath(spec)
    from card_envs.agents.policy import is_sb3_model

    if is_sb3_model(spec):  # its repr holds a memory address
        return type(spec).__name__
    return getattr(spec, "name", None) or getattr(spec, "__name__", None) or repr(spec)

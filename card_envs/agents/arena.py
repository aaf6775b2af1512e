"""Play agents against each other on a bare engine (no env overhead), seats rotated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from card_envs.agents import Agent, AgentSpec, make_agent
from card_envs.core.config import int_range, plain_value
from card_envs.core.engine import IllegalActionError


def play_episode(engine: Any, agents: Sequence[AgentSpec],
                 seed: int | None = None) -> dict[str, Any]:
    """One episode with ``agents[i]`` in seat ``i``; returns ``engine.result()``. Any agent
    spec is taken, as everywhere in the package (:func:`make_agent` resolves it)."""
    if len(agents) != engine.num_players:  # too few failed at the seat, too many went unseen
        raise ValueError(f"{len(agents)} agents for the {engine.num_players} seats of "
                         f"{engine.name}: give one per seat")
    agents = [a if isinstance(a, Agent) else make_agent(a, engine.name, engine.config)
              for a in agents]
    engine.reset(seed=seed)
    obs = np.empty(engine.layout.size, dtype=np.float32)
    while not engine.done:
        seat = engine.current_player
        if agents[seat].needs_engine:
            action = agents[seat].act_in(engine)
        else:
            engine.write_observation(seat, obs)
            action = agents[seat].act(obs, engine.legal_mask())
        if not engine.is_legal(action):
            # The Gymnasium env's error for an opponent's bad answer, so one except fits both.
            raise IllegalActionError.of(action, f"agent {agents[seat].name!r} in seat {seat}: "
                                        + engine.illegal_reason(action))
        engine.step(int(action))
    return engine.result()


@dataclass
class HeadToHead:
    games: int
    wins: int  # episodes the candidate won outright (sole winner)
    shared: int  # episodes it won jointly with others
    losses: int

    @property
    def win_rate(self) -> float:
        return self.wins / self.games


def head_to_head(game: str, candidate: AgentSpec, opponent: AgentSpec = "random",
                 games: int = 1000, seed: int = 0, **config: Any) -> HeadToHead:
    """``candidate`` in one seat (rotating every episode), ``opponent`` in all others."""
    from card_envs.games import make_engine

    # Checked first: 0 games divided by zero in win_rate, -5 games reported a result of -5,
    # and a negative seed failed inside numpy's seeding.
    for key, value, check in (("games", games, int_range(1)), ("seed", seed, int_range(0))):
        problem = check(plain_value(value))
        if problem is not None:
            raise ValueError(f"invalid value {value!r} for {key!r}: expected {problem}")
    games, seed = int(games), int(seed)
    engine = make_engine(game, **config)
    n = engine.num_players
    cand = make_agent(candidate, game, engine.config, seed=seed)
    opps = [make_agent(opponent, game, engine.config, seed=seed + 1 + i) for i in range(n - 1)]
    wins = shared = losses = 0
    for g in range(games):
        seat = g % n
        agents = opps[:seat] + [cand] + opps[seat:]
        winners = play_episode(engine, agents, seed=seed * 1_000_003 + g)["winners"]
        if winners == [seat]:
            wins += 1
        elif seat in winners:
            shared += 1
        else:
            losses += 1
    return HeadToHead(games, wins, shared, losses)

"""Tianshou: every seat's rewards reach that seat's learner.

Tianshou's ``PettingZooEnv`` stores one transition per decision with the step's reward vector,
and its multi-agent dispatcher (``MARLDispatcher``) trains seat ``i`` only on the transitions
where ``i`` acted, reading column ``i``. A reward paid to a seat on another seat's move (the
loser's -1 when a winner goes out, points scored on someone else's turn) would never reach it.
:class:`SeatRewards` moves each reward onto its seat's own next transition, and when the game
ends it gives every seat a closing turn that carries what it is still owed; the episode ends on
the last closing turn. Summed over each seat's transitions, the rewards are exactly what the
env paid that seat.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv


class SeatRewards(AECEnv):
    """An AEC env that pays each seat's rewards on that seat's own steps.

    * A step by seat ``s`` reports (in ``rewards``) ``s``'s rewards since its previous step,
      this step's included, and 0 for every other seat, whose rewards wait for its own step.
    * When the game ends, every seat (the one after the last mover first) takes one closing
      turn: it observes its final observation with an all-ones mask, any action is accepted and
      ignored, and the step pays the seat what it is still owed. Terminations (or truncations)
      and the game's final ``infos`` come with the last closing turn.

    ``agent_selection``, ``observe``, ``last`` and the dead-agent steps follow PettingZoo's AEC
    API, so Tianshou's ``PettingZooEnv`` (or any AEC user) can drive it.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__()
        self.env = env
        self.possible_agents = list(env.possible_agents)
        self.agents = self.possible_agents[:]
        self.metadata = dict(env.metadata)
        self.render_mode = getattr(env, "render_mode", None)
        self._owed = dict.fromkeys(self.possible_agents, 0.0)
        self._closing: list[str] = []

    # -- spaces and views --------------------------------------------------------------------
    def observation_space(self, agent: Any) -> spaces.Space:
        return self.env.observation_space(agent)

    def action_space(self, agent: Any) -> spaces.Space:
        return self.env.action_space(agent)

    def observe(self, agent: Any) -> Any:
        obs = self.env.observe(agent)
        if self._closing and isinstance(obs, dict) and "action_mask" in obs:
            # A closing turn decides nothing: a masked policy still needs an allowed action.
            obs = {**obs, "action_mask": np.ones_like(obs["action_mask"])}
        return obs

    def state(self) -> np.ndarray:
        return self.env.state()

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def result(self) -> dict[str, Any]:
        """The wrapped env's ``result()``."""
        return self.env.result()

    # -- episode -----------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        self._owed = dict.fromkeys(self.agents, 0.0)
        self._closing = []
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: dict(self.env.infos[a]) for a in self.agents}
        self.agent_selection = self.env.agent_selection

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if self._closing:
            self._closing_turn(agent)
            return
        inner = self.env
        inner.step(action)
        for a, reward in inner.rewards.items():
            self._owed[a] += reward
        self._pay(agent)
        if all(inner.terminations[a] or inner.truncations[a] for a in inner.agents):
            # Every seat closes, starting after the last mover, which closes last.
            start = self.possible_agents.index(agent) + 1
            order = self.possible_agents[start:] + self.possible_agents[:start]
            self._closing = [a for a in order if a in self.agents]
            self.agent_selection = self._closing[0]
        else:
            self.agent_selection = inner.agent_selection
            self.infos[self.agent_selection] = dict(inner.infos[self.agent_selection])

    def _closing_turn(self, agent: str) -> None:
        """``agent``'s closing turn: it is paid what it is owed; the last one ends the episode."""
        self._closing.pop(0)
        self._pay(agent)
        if self._closing:
            self.agent_selection = self._closing[0]
            return
        inner = self.env
        for a in self.agents:
            self.terminations[a] = bool(inner.terminations[a])
            self.truncations[a] = bool(inner.truncations[a])
            self.infos[a] = dict(inner.infos[a])

    def _pay(self, agent: str) -> None:
        """This step's rewards: what ``agent`` is owed, 0 for the others (theirs wait)."""
        self._cumulative_rewards[agent] = 0.0
        for a in self.rewards:
            self.rewards[a] = 0.0
        self.rewards[agent], self._owed[agent] = self._owed[agent], 0.0
        self._accumulate_rewards()


def tianshou_env(env: AECEnv) -> Any:
    """``env`` wrapped in :class:`SeatRewards`, then in Tianshou's ``PettingZooEnv``."""
    from tianshou.env import PettingZooEnv

    return PettingZooEnv(SeatRewards(env))

"""AgileRL: PettingZoo Parallel envs with the action mask in ``info``.

AgileRL's multi-agent algorithms (IPPO, MADDPG, MATD3) step PettingZoo Parallel envs and read
each agent's mask from ``info[agent]["action_mask"]``; an observation that holds the mask is
refused. :func:`agilerl_env` makes either kind of env fit:

* a Parallel env (Dogpile's ``parallel_env()``) gets its masks moved into ``info``
  (:class:`MaskInInfo`);
* a turn-based AEC env is first played as a Parallel env (:class:`TurnsAsParallel`): every step
  each live agent submits an action, the seat to act plays its own and the others' are ignored.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv


class TurnsAsParallel(ParallelEnv):
    """A turn-based AEC env through the Parallel API, one AEC step per parallel step.

    Every live agent observes its own observation each step. The seat to act gets its legal
    mask and ``info["to_act"]`` True; the others get an all-ones mask (their action is ignored,
    so any is allowed: a masked policy needs one) and ``to_act`` False. Each step's rewards go
    to every seat they were paid to, whoever acted. The episode ends for all seats at once.
    """

    def __init__(self, env: AECEnv) -> None:
        self.env = env
        self.possible_agents = list(env.possible_agents)
        self.agents = self.possible_agents[:]
        self.metadata = {**env.metadata, "is_parallelizable": True}
        self.render_mode = getattr(env, "render_mode", None)

    def observation_space(self, agent: Any) -> spaces.Space:
        return self.env.observation_space(agent)

    def action_space(self, agent: Any) -> spaces.Space:
        return self.env.action_space(agent)

    def reset(self, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        self.env.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        return self._observe(), self._infos()

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        if not self.agents:
            raise RuntimeError("step() called with no live agents; call reset()")
        if not isinstance(actions, dict) or set(actions) != set(self.agents):
            given = sorted(actions) if isinstance(actions, dict) else type(actions).__name__
            raise ValueError(f"step() needs a dict with one action per live agent "
                             f"{self.agents}, got {given}")
        env = self.env
        actor = env.agent_selection
        env.step(actions[actor])
        rewards = {a: float(env.rewards.get(a, 0.0)) for a in self.agents}
        terminations = {a: bool(env.terminations[a]) for a in self.agents}
        truncations = {a: bool(env.truncations[a]) for a in self.agents}
        observations, infos = self._observe(), self._infos()
        if all(terminations[a] or truncations[a] for a in self.agents):
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _observe(self) -> dict[str, Any]:
        out = {}
        actor = self.env.agent_selection
        for agent in self.agents:
            obs = self.env.observe(agent)
            if agent != actor and isinstance(obs, dict) and "action_mask" in obs:
                obs = {**obs, "action_mask": np.ones_like(obs["action_mask"])}
            out[agent] = obs
        return out

    def _infos(self) -> dict[str, dict[str, Any]]:
        actor = self.env.agent_selection
        return {a: {**self.env.infos[a], "to_act": a == actor} for a in self.agents}

    def state(self) -> np.ndarray:
        return self.env.state()

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def result(self) -> dict[str, Any]:
        """The wrapped env's ``result()``."""
        return self.env.result()


class MaskInInfo(ParallelEnv):
    """A Parallel env whose ``{"observation", "action_mask"}`` observations become the bare
    observation, with the mask in ``info[agent]["action_mask"]`` as a list of ints."""

    def __init__(self, env: ParallelEnv) -> None:
        self.env = env
        self.possible_agents = list(env.possible_agents)
        self.agents = list(env.agents)
        self.metadata = dict(env.metadata)
        self.render_mode = getattr(env, "render_mode", None)

    def observation_space(self, agent: Any) -> spaces.Space:
        space = self.env.observation_space(agent)
        return space["observation"] if isinstance(space, spaces.Dict) else space

    def action_space(self, agent: Any) -> spaces.Space:
        return self.env.action_space(agent)

    def reset(self, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        return self._split(observations, infos)

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self.agents = list(self.env.agents)
        observations, infos = self._split(observations, infos)
        return observations, rewards, terminations, truncations, infos

    @staticmethod
    def _split(observations: dict[str, Any], infos: dict[str, Any]
               ) -> tuple[dict[str, Any], dict[str, Any]]:
        bare, moved = {}, {}
        for agent, obs in observations.items():
            info = dict(infos.get(agent, {}))
            if isinstance(obs, dict) and "action_mask" in obs:
                info["action_mask"] = np.asarray(obs["action_mask"]).tolist()
                obs = obs["observation"]
            bare[agent], moved[agent] = obs, info
        return bare, moved

    def state(self) -> np.ndarray:
        return self.env.state()

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def result(self) -> dict[str, Any]:
        """The wrapped env's ``result()``."""
        return self.env.result()


def agilerl_env(env: AECEnv | ParallelEnv) -> MaskInInfo:
    """``env`` as AgileRL steps it: a Parallel env with the masks in ``info``."""
    if isinstance(env, AECEnv):
        return MaskInInfo(TurnsAsParallel(env))
    if isinstance(env, ParallelEnv):
        return MaskInInfo(env)
    raise TypeError(f"agilerl_env() takes a PettingZoo AEC or Parallel env, got "
                    f"{type(env).__name__}")

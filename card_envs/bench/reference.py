"""The two reference points the throughput benchmark measures in the same run.

* RLCard's UNO on its native API: the nearest peer among card-game RL packages (needs
  ``rlcard``: ``pip install "card-envs[bench]"``).
* A trivial AEC env wrapped the way PettingZoo's classic envs are (TerminateIllegal,
  AssertOutOfBounds, OrderEnforcing): what PettingZoo's wrapper chain costs per step.
"""

from __future__ import annotations

import random
import time

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers


class CountingGame(AECEnv):
    """Two players take turns adding 1 or 2 to a counter; whoever reaches 21 wins. The least an
    AEC card env can do: a Dict observation with an action mask, rewards, termination."""

    metadata = {"name": "counting_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self) -> None:
        super().__init__()
        self.possible_agents = ["player_0", "player_1"]
        obs = spaces.Dict({"observation": spaces.Box(0, 1, (22,), np.float32),
                           "action_mask": spaces.Box(0, 1, (2,), np.int8)})
        self.observation_spaces = {a: obs for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(2) for a in self.possible_agents}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.count = 0
        self.agent_selection = self.agents[0]

    def observe(self, agent):
        obs = np.zeros(22, np.float32)
        obs[self.count] = 1.0
        mask = np.ones(2, np.int8)
        if self.count == 20:
            mask[1] = 0
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        self._cumulative_rewards[agent] = 0
        self.count = min(21, self.count + int(action) + 1)
        if self.count >= 21:
            other = self.agents[1 - self.agents.index(agent)]
            self.rewards[agent], self.rewards[other] = 1.0, -1.0
            self.terminations = {a: True for a in self.agents}
        self.agent_selection = self.agents[1 - self.agents.index(agent)]
        self._accumulate_rewards()


def wrapped_counting_env() -> AECEnv:
    env = CountingGame()
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def measure_rlcard_uno(seconds: float, seed: int = 0) -> tuple[int, int, float]:
    """(decisions, games, elapsed) for RLCard UNO with uniformly random legal actions."""
    import rlcard

    env = rlcard.make("uno", config={"seed": seed})
    rng = random.Random(seed)
    decisions = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, _ = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _ = env.step(legal[rng.randrange(len(legal))])
            decisions += 1
        games += 1
    return decisions, games, time.perf_counter() - start

from __future__ import annotations

import numpy as np

from card_envs.agents.base import Agent


class RandomAgent(Agent):
    """Uniform over legal actions."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("RandomAgent was given an all-zero action mask")
        return int(legal[self.rng.integers(legal.size)])

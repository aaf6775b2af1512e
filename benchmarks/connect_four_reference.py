"""Issue 7's speed reference, measured in the same run as the figures it is compared with.

Issue 7 set the training-speed targets against PettingZoo's SB3 tutorial pattern on connect four
(one env, MaskablePPO's defaults, the learner against a random opponent), which ran about 420
env steps/s on the machine of the time. A benchmark run on another machine, or on the same one
under other load, divides by a figure it did not measure; this module measures the pattern
itself, so that ``training_throughput.py`` can report each figure against both.

The env is written here (PettingZoo's tutorial trains one model for both seats; the reference
is stated against a random opponent): the learner takes seat 0 and seat 1 in turn, episode by
episode (seat 0 first after a seeded reset), and the other seat plays a uniformly random legal
move from a seeded stream.
PettingZoo's connect four needs pygame (``card-envs[bench]``).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


def connect_four_aec() -> Any:
    """PettingZoo's connect four AEC env (its registry from 1.27 on, the module before); a clear
    error when its extra is missing."""
    import pettingzoo

    try:
        if hasattr(pettingzoo, "aec_registry"):  # the module path is deprecated there
            return pettingzoo.make("aec", "classic/connect_four-v3")
        from pettingzoo.classic import connect_four_v3
        return connect_four_v3.env()
    except Exception as error:  # the registry wraps the ImportError in its own FailedToImport
        missing = error if isinstance(error, ImportError) else error.__cause__
        if not isinstance(missing, ImportError):
            raise
        raise ImportError(f"the connect four reference needs PettingZoo's connect four, which "
                          f"imports pygame ({missing}): pip install 'card-envs[bench]'") from error


class ConnectFourVsRandom(gym.Env):
    """One connect four seat for the learner, the other a random player; ``action_masks()``
    for MaskablePPO. Observation: PettingZoo's 6x7x2 planes as the learner sees them (its
    pieces, then the other's), flattened to 84 floats; reward: +1 / -1 / 0 at the end, as
    PettingZoo pays."""

    def __init__(self) -> None:
        self.aec = connect_four_aec()
        self.observation_space = gym.spaces.Box(0.0, 1.0, (6 * 7 * 2,), np.float32)
        self.action_space = gym.spaces.Discrete(7)
        self._opponent_rng = np.random.default_rng()
        self._episodes = 0
        self._learner_seat = 0
        self._mask = np.ones(7, dtype=bool)

    @property
    def _learner(self) -> str:
        return str(self.aec.possible_agents[self._learner_seat])

    def _over(self) -> bool:
        return any(self.aec.terminations.values()) or any(self.aec.truncations.values())

    def _observe(self) -> np.ndarray:
        seen = self.aec.observe(self._learner)
        self._mask = seen["action_mask"].astype(bool)
        return seen["observation"].reshape(-1).astype(np.float32)

    def _opponents_move(self) -> None:
        while not self._over() and self.aec.agent_selection != self._learner:
            legal = np.flatnonzero(self.aec.observe(self.aec.agent_selection)["action_mask"])
            self.aec.step(int(legal[self._opponent_rng.integers(len(legal))]))

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:  # the same seed, the same game: the seats start over too
            self._opponent_rng = np.random.default_rng(seed)
            self._episodes = 0
        self._learner_seat = self._episodes % 2
        self._episodes += 1
        self.aec.reset(seed=seed)
        self._opponents_move()
        return self._observe(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self._mask[action]:
            raise ValueError(f"column {action} is full (legal: {np.flatnonzero(self._mask)})")
        self.aec.step(int(action))
        self._opponents_move()
        reward = float(self.aec.rewards[self._learner])
        terminated = any(self.aec.terminations.values())
        truncated = not terminated and any(self.aec.truncations.values())
        return self._observe(), reward, terminated, truncated, {}

    def action_masks(self) -> np.ndarray:
        return self._mask.copy()

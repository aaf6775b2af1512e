"""Stable-Baselines3 over SuperSuit's vector envs, with the ``action_masks`` route that
sb3-contrib's MaskablePPO calls.

SuperSuit turns a PettingZoo Parallel env into an SB3 vector env with one slot per agent
(``pettingzoo_env_to_vec_env_v1`` then ``concat_vec_envs_v1``), but its wrapper answers
neither ``has_attr("action_masks")`` nor ``env_method("action_masks")``, so MaskablePPO cannot
mask. :func:`sb3_vec_env` builds that vector env with each agent's mask appended to its
observation (:class:`ObservationWithMask`, so the mask always travels with the observation it
belongs to, through SuperSuit's autoreset and its worker processes alike), and
:class:`MaskedVecEnv` splits it off again: the policy sees the bare observation, and
``action_masks()`` gives the masks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices


class ObservationWithMask(ParallelEnv):
    """A Parallel env whose ``{"observation", "action_mask"}`` observations become one float32
    vector: the observation, then the mask (0/1)."""

    def __init__(self, env: ParallelEnv) -> None:
        self.env = env
        self.possible_agents = list(env.possible_agents)
        self.agents = list(env.agents)
        self.metadata = dict(env.metadata)
        self.render_mode = getattr(env, "render_mode", None)
        space = env.observation_space(self.possible_agents[0])
        if not (isinstance(space, spaces.Dict) and set(space.spaces) == {"observation",
                                                                          "action_mask"}):
            raise TypeError(f"ObservationWithMask needs {{'observation', 'action_mask'}} "
                            f"observations, got {space}")
        obs, mask = space["observation"], space["action_mask"]
        assert isinstance(obs, spaces.Box) and isinstance(mask, spaces.Box)
        self._space = spaces.Box(
            np.concatenate([obs.low, np.zeros(mask.shape, np.float32)]).astype(np.float32),
            np.concatenate([obs.high, np.ones(mask.shape, np.float32)]).astype(np.float32),
            dtype=np.float32)
        self.num_actions = int(mask.shape[0])

    def observation_space(self, agent: Any) -> spaces.Space:
        return self._space

    def action_space(self, agent: Any) -> spaces.Space:
        return self.env.action_space(agent)

    def reset(self, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        return self._join(observations), infos

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self.agents = list(self.env.agents)
        return self._join(observations), rewards, terminations, truncations, infos

    @staticmethod
    def _join(observations: dict[str, Any]) -> dict[str, np.ndarray]:
        return {a: np.concatenate([o["observation"], o["action_mask"]]).astype(np.float32)
                for a, o in observations.items()}

    def state(self) -> np.ndarray:
        return self.env.state()

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


class MaskedVecEnv(VecEnvWrapper):
    """Splits :class:`ObservationWithMask`'s vectors: observations without the mask, and the
    masks through ``action_masks()`` (``env_method("action_masks")`` and
    ``has_attr("action_masks")``, as MaskablePPO asks for them)."""

    def __init__(self, venv: VecEnv, num_actions: int) -> None:
        space = venv.observation_space
        assert isinstance(space, spaces.Box)
        self.num_actions = num_actions
        cut = space.shape[0] - num_actions
        self._cut = cut
        super().__init__(venv, observation_space=spaces.Box(
            space.low[:cut], space.high[:cut], dtype=np.float32))
        self._masks = np.ones((venv.num_envs, num_actions), dtype=bool)
        self._next_seed: int | None = None

    def _split(self, observations: np.ndarray) -> np.ndarray:
        self._masks = observations[:, self._cut:] > 0.5
        return observations[:, :self._cut]

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seeds the next reset (SuperSuit's vector envs have no ``seed``; SB3 calls it)."""
        self._next_seed = seed
        return [seed] * self.num_envs

    def reset(self) -> np.ndarray:
        if self._next_seed is None:
            observations = self.venv.reset()
        else:
            # SuperSuit's SB3 wrapper drops reset()'s seed: its own vector env takes it.
            supersuit_venv: Any = self.venv
            observations, supersuit_venv.reset_infos = supersuit_venv.venv.reset(
                seed=self._next_seed)
            self._next_seed = None
        return self._split(np.asarray(observations))

    def step_wait(self) -> Any:
        observations, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            # SB3 bootstraps truncated episodes from this: the bare observation, as the policy's.
            if "terminal_observation" in info:
                info["terminal_observation"] = info["terminal_observation"][:self._cut]
        return self._split(np.asarray(observations)), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """One boolean mask row per vector slot (agent), for the latest observations."""
        return self._masks.copy()

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or self.venv.has_attr(attr_name)

    def env_method(self, method_name: str, *method_args: Any,
                   indices: VecEnvIndices = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks":
            return list(self._masks[self._get_indices(indices)])
        return self.venv.env_method(method_name, *method_args, indices=indices,
                                    **method_kwargs)

    def _get_indices(self, indices: VecEnvIndices) -> Any:
        if indices is None:
            return slice(None)
        if isinstance(indices, int):
            return [indices]
        return list(indices)


def sb3_vec_env(env: ParallelEnv, num_vec_envs: int = 1, num_cpus: int = 0) -> MaskedVecEnv:
    """An SB3 vector env over ``num_vec_envs`` copies of the Parallel ``env`` (one slot per
    agent per copy; ``num_cpus`` worker processes as SuperSuit's ``concat_vec_envs_v1``), with
    the masks MaskablePPO asks for."""
    import supersuit as ss

    flat = ObservationWithMask(env)
    venv = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(flat), num_vec_envs,
                                 num_cpus=num_cpus, base_class="stable_baselines3")
    return MaskedVecEnv(venv, flat.num_actions)

"""A masked torch RLModule for RLlib's PPO (new API stack) whose network IS our SB3 policy.

The module holds the very ``MaskableActorCriticPolicy`` (or, with derived features, the
``ScoredActionsPolicy``) the SB3 trainer builds, and runs its features extractor, MLP, action
and value heads. So one network definition serves both trainers, derived features included,
and :func:`export_maskable_ppo` writes an RLlib-trained module as a MaskablePPO ``.zip`` that
every agent-taking tool (``training.evaluate``, ``make_agent``, the envs' opponents) loads
without Ray. Illegal actions get logit ``FLOAT_MIN`` (RLlib's own masking constant), so they
are never sampled and carry no gradient.

``model_config``: ``{"game", "env", "features": "raw" | "derived", "policy_kwargs"}`` (the
``ppo.policy_kwargs`` of our YAML configs; default ``{"net_arch": [128, 128]}``), and
optionally ``"greedy": True``: the module then always plays its most likely legal move (a
frozen self-play opponent with ``selfplay.opponent_deterministic``).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN


def build_policy(observation_space: gym.spaces.Dict, action_space: gym.Space,
                 model_config: Mapping[str, Any]) -> Any:
    """The SB3 policy network of the SB3 trainer for ``model_config`` (its optimizer is
    unused here: RLlib's learner makes its own)."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    kwargs = {"net_arch": [128, 128], **dict(model_config.get("policy_kwargs") or {})}
    policy_cls: type = MaskableActorCriticPolicy
    features = model_config.get("features", "raw")
    if features == "derived":
        from card_envs.agents.features import DerivedFeatures, ScoredActionsPolicy

        policy_cls = ScoredActionsPolicy
        kwargs["features_extractor_class"] = DerivedFeatures
        kwargs["features_extractor_kwargs"] = {"game": model_config["game"],
                                               "env_config": dict(model_config.get("env") or {})}
    elif features != "raw":
        raise ValueError(f"features: 'raw' or 'derived', got {features!r}")
    return policy_cls(observation_space["observation"], action_space, lambda _: 0.0, **kwargs)


def _config(module: Any) -> dict[str, Any]:
    """A module's ``model_config`` (our specs always give a dict)."""
    return dict(module.model_config or {})


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """Actor-critic over ``{"observation", "action_mask"}`` observations (module docstring)."""

    def setup(self) -> None:
        if not (isinstance(self.observation_space, gym.spaces.Dict)
                and "action_mask" in self.observation_space.spaces):
            raise ValueError("MaskedPPOModule needs the card_envs observation dict "
                             "{'observation', 'action_mask'}; got "
                             f"{self.observation_space}")
        if self.action_space is None:
            raise ValueError("MaskedPPOModule needs the env's action space")
        self.policy = build_policy(self.observation_space, self.action_space, _config(self))

    def _latents(self, obs: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        policy = self.policy
        features = policy.extract_features(obs["observation"].float())
        if policy.share_features_extractor:
            latent_pi, latent_vf = policy.mlp_extractor(features)
            return latent_pi, latent_vf
        pi_features, vf_features = features
        return (policy.mlp_extractor.forward_actor(pi_features),
                policy.mlp_extractor.forward_critic(vf_features))

    def _masked_logits(self, latent_pi: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.policy.action_net(latent_pi)
        return torch.where(mask.bool(), logits, torch.full_like(logits, FLOAT_MIN))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        latent_pi, _ = self._latents(obs)
        logits = self._masked_logits(latent_pi, obs["action_mask"])
        if _config(self).get("greedy"):  # only the most likely legal move stays sampleable
            best = logits.argmax(dim=-1, keepdim=True)
            logits = torch.full_like(logits, FLOAT_MIN).scatter(-1, best, 0.0)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        latent_pi, latent_vf = self._latents(obs)
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(latent_pi, obs["action_mask"]),
                Columns.EMBEDDINGS: latent_vf}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            _, embeddings = self._latents(batch[Columns.OBS])
        values: torch.Tensor = self.policy.value_net(embeddings)
        return values.squeeze(-1)


def module_spec(game: str, env: Mapping[str, Any] | None = None, features: str = "raw",
                policy_kwargs: Mapping[str, Any] | None = None,
                greedy: bool = False) -> RLModuleSpec:
    """The :class:`MaskedPPOModule` spec for ``game`` (spaces come from the env)."""
    config: dict[str, Any] = {"game": game, "env": dict(env or {}), "features": features,
              "policy_kwargs": dict(policy_kwargs or {})}
    if greedy:
        config["greedy"] = True
    return RLModuleSpec(module_class=MaskedPPOModule, model_config=config)


def export_maskable_ppo(module: MaskedPPOModule, path: str | os.PathLike[str],
                        seed: int = 0) -> None:
    """Write ``module``'s weights as a MaskablePPO ``.zip`` (with the env identity our saved
    policies record), loadable by ``PolicyAgent`` / ``training.evaluate`` without Ray."""
    from sb3_contrib import MaskablePPO

    from card_envs.agents.provenance import env_identity, with_identity
    # By name: the trainer is installed as card_envs.training (card_envs/cli/train.py says why).
    files = importlib.import_module("card_envs.training.files")
    selfplay = importlib.import_module("card_envs.training.selfplay")

    config = _config(module)
    game, env = config["game"], dict(config.get("env") or {})
    venv = selfplay.SelfPlayVecEnv(game, env, 1, {"random": 1.0}, seed=seed)
    try:
        policy_kwargs = {"net_arch": [128, 128], **dict(config.get("policy_kwargs") or {})}
        policy: Any = "MlpPolicy"
        if config.get("features") == "derived":
            from card_envs.agents.features import DerivedFeatures, ScoredActionsPolicy

            policy = ScoredActionsPolicy
            policy_kwargs["features_extractor_class"] = DerivedFeatures
            policy_kwargs["features_extractor_kwargs"] = {"game": game, "env_config": env}
        model = MaskablePPO(policy, venv, device="cpu", verbose=0, policy_kwargs=policy_kwargs)
        model.policy.load_state_dict(module.policy.state_dict())
        files.atomic_write_bytes(
            path, with_identity(files.serialised(model.save), env_identity(game, env)))
    finally:
        venv.close()


class AgentModule(RLModule):
    """A fixed opponent as an RLModule: one of our agents (``model_config["agent"]``:
    ``"random"`` or ``"heuristic"``) acts on each row, in the EnvRunner that steps the env
    (RLlib asks modules for actions there). Not trainable."""

    def setup(self) -> None:
        from card_envs.agents import make_agent

        config = _config(self)
        self.agent = make_agent(config.get("agent", "random"), config["game"],
                                config.get("env") or None, seed=config.get("seed"))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        observations = np.asarray(obs["observation"])
        masks = np.asarray(obs["action_mask"])
        actions = [self.agent.act(o, m) for o, m in zip(observations, masks, strict=True)]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{self.agent.name} opponents are not trained")


def agent_module_spec(agent: str, game: str, env: Mapping[str, Any] | None = None,
                      seed: int | None = None) -> RLModuleSpec:
    """The :class:`AgentModule` spec of ``agent`` (``"random"`` or ``"heuristic"``)."""
    if agent not in ("random", "heuristic"):
        raise ValueError(f"agent: 'random' or 'heuristic', got {agent!r}")
    return RLModuleSpec(module_class=AgentModule, model_config={
        "agent": agent, "game": game, "env": dict(env or {}), "seed": seed})

"""Policy inputs beyond the raw observation: per-game derived features (needs torch).

Memory games hinge on relations between remembered cards (does this card pair with one I have
seen?). An MLP over a card-by-position observation has to learn every such comparison from
scratch; a game's ``features.py`` computes them directly, batched in torch, from the same
observation vector. The environment stays as it is (and as fast); a policy opts in with the
training config's ``features: derived`` and carries this extractor in its saved ``.zip``.

A game's features may also describe each action (``dig:17``: is that bone unseen, what would it
add?). :class:`ScoredActionsPolicy` then adds to each action's logit a score computed with one
set of weights for every action, from that action's features, weighted by the state: what a
dense output layer would have to learn separately for each of 54 slots, it learns once.
"""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import Any, cast

import gymnasium as gym
import torch
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, MlpExtractor
from torch import nn

from card_envs.games import get_game, make_engine


class DerivedFeatures(BaseFeaturesExtractor):
    """The raw observation followed by the game's derived features, then (if the game has
    them) every action's features, flattened: ``trunk_dim`` values, then ``action_shape``."""

    def __init__(self, observation_space: gym.spaces.Box, game: str,
                 env_config: dict[str, Any]) -> None:
        engine = make_engine(game, **env_config)
        if observation_space.shape != (engine.layout.size,):
            raise ValueError(f"{game} with {env_config} observes {engine.layout.size} values, "
                             f"the policy's space has shape {observation_space.shape}")
        derive = get_game(game).features_builder()(engine)
        with torch.no_grad():
            out = derive(torch.zeros(1, engine.layout.size))
        extra, acts = out if isinstance(out, tuple) else (out, None)
        self.trunk_dim = engine.layout.size + extra.shape[1]
        self.action_shape: tuple[int, int] | None = None
        per_action = 0
        if acts is not None:
            if acts.shape[1] != engine.num_actions:
                raise ValueError(f"{game}'s action features describe {acts.shape[1]} actions, "
                                 f"the game has {engine.num_actions}")
            self.action_shape = (acts.shape[1], acts.shape[2])
            per_action = acts.shape[1] * acts.shape[2]
        super().__init__(observation_space, features_dim=self.trunk_dim + per_action)
        self.derive = derive

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        if observations.shape[-1] == self.features_dim:
            # Derived already (DerivedRolloutBuffer): the PPO epochs read them from the buffer.
            # Unambiguous: an observation is always narrower than its features.
            return observations
        out = self.derive(observations)
        if self.action_shape is None:
            return torch.cat([observations, out], dim=1)
        extra, acts = out
        return torch.cat([observations, extra, acts.flatten(1)], dim=1)


class DerivedRolloutBuffer(MaskableRolloutBuffer):
    """MaskablePPO's rollout buffer, holding each observation's derived features (computed
    once, in one batch, when the rollout is complete) in place of the observation: every
    PPO epoch's minibatches then skip the features, which cost more than the network itself
    (:class:`DerivedFeatures` passes such rows through). The same features, computed by the
    same code: the policy learns exactly what it would from the observations."""

    def __init__(self, *args: Any, game: str, env_config: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        space = cast(gym.spaces.Box, self.observation_space)
        self.extractor = DerivedFeatures(space, game, env_config)

    def get(self, batch_size: int | None = None) -> Generator[Any, None, None]:
        if not self.generator_ready:  # the first get() after a rollout: derive, then flatten
            steps, envs, width = self.observations.shape
            with torch.no_grad():
                obs = torch.as_tensor(self.observations.reshape(steps * envs, width),
                                      device=self.device)
                self.observations = self.extractor(obs).cpu().numpy().reshape(steps, envs, -1)
        yield from super().get(batch_size)


class _PassActionFeatures(nn.Module):
    """SB3's MLP on the observation part; the action features ride along to the action head."""

    def __init__(self, trunk: MlpExtractor, trunk_dim: int, per_action: int) -> None:
        super().__init__()
        self.trunk = trunk
        self.trunk_dim = trunk_dim
        self.latent_dim_pi = trunk.latent_dim_pi + per_action
        self.latent_dim_vf = trunk.latent_dim_vf

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.trunk.forward_actor(features[:, :self.trunk_dim]),
                          features[:, self.trunk_dim:]], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.trunk.forward_critic(features[:, :self.trunk_dim])


class ScoredActionHead(nn.Module):
    """Logits = a dense layer on the state + each action's features weighted by a state-
    dependent gate (the same weights for every action)."""

    def __init__(self, hidden: int, num_actions: int, per_action: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.shape = (num_actions, per_action)
        self.dense = nn.Linear(hidden, num_actions)
        self.gate = nn.Linear(hidden, per_action)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        state = latent[:, :self.hidden]
        acts = latent[:, self.hidden:].reshape(-1, *self.shape)
        return self.dense(state) + (acts * self.gate(state).unsqueeze(1)).sum(-1)


class ScoredActionsPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's policy with :class:`ScoredActionHead` when the features extractor has
    action features; exactly ``MaskableActorCriticPolicy`` when it has none."""

    def _action_shape(self) -> tuple[int, int] | None:
        return getattr(self.features_extractor, "action_shape", None)

    def _build_mlp_extractor(self) -> None:
        shape = self._action_shape()
        if shape is None:
            super()._build_mlp_extractor()
            return
        # An extractor with action features has a trunk_dim (DerivedFeatures).
        trunk_dim = cast(int, self.features_extractor.trunk_dim)
        trunk = MlpExtractor(trunk_dim, net_arch=self.net_arch, activation_fn=self.activation_fn,
                             device=self.device)
        # SB3 declares an MlpExtractor; its custom-policy docs set any module with the same
        # latent_dim_pi / latent_dim_vf / forward_actor / forward_critic, as here.
        self.mlp_extractor = _PassActionFeatures(  # type: ignore[assignment]
            trunk, trunk_dim, shape[0] * shape[1])

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        shape = self._action_shape()
        if shape is None:
            return
        extractor = cast(_PassActionFeatures, self.mlp_extractor)  # built with the shape above
        self.action_net = ScoredActionHead(extractor.trunk.latent_dim_pi, *shape)
        if self.ortho_init:
            self.action_net.apply(partial(self.init_weights, gain=0.01))
        # The optimizer was made for the dense head super() built; remake it for this one.
        # torch types optimizer_class as the Optimizer base (no lr); SB3's own call ignores it.
        self.optimizer = self.optimizer_class(self.parameters(),  # type: ignore[call-arg]
                                              lr=lr_schedule(1), **self.optimizer_kwargs)

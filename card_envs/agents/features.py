"""Policy inputs beyond the raw observation: per-game derived features (needs torch).

Memory games hinge on relations between remembered cards (does this card pair with one I have
seen?). An MLP over a card-by-position observation has to learn every such comparison from
scratch; a game's ``features.py`` computes them directly, batched in torch, from the same
observation vector. The environment stays as it is (and as fast); a policy opts in with the
training config's ``features: derived`` and carries this extractor in its saved ``.zip``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from card_envs.games import get_game, make_engine


class DerivedFeatures(BaseFeaturesExtractor):
    """The raw observation followed by the game's derived features."""

    def __init__(self, observation_space: gym.spaces.Box, game: str,
                 env_config: dict[str, Any]) -> None:
        engine = make_engine(game, **env_config)
        if observation_space.shape != (engine.layout.size,):
            raise ValueError(f"{game} with {env_config} observes {engine.layout.size} values, "
                             f"the policy's space has shape {observation_space.shape}")
        derive = get_game(game).features_builder()(engine)
        with torch.no_grad():
            extra = derive(torch.zeros(1, engine.layout.size)).shape[1]
        super().__init__(observation_space, features_dim=engine.layout.size + extra)
        self.derive = derive

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return torch.cat([observations, self.derive(observations)], dim=1)

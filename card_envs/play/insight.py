"""A saved policy's move probabilities and value estimate at one decision (needs torch, as
the policy does)."""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents import Agent


def policy_insight(agent: Agent, observation: np.ndarray, mask: np.ndarray,
                   names: tuple[str, ...], top: int = 6) -> dict[str, Any] | None:
    """``{"probs": [[name, p], ...] (most likely first), "value": v}`` for a policy agent's
    decision on ``observation``; None for an agent that is not a policy."""
    from card_envs.agents.policy import PolicyAgent

    if not isinstance(agent, PolicyAgent):
        return None
    import torch

    policy = agent.model.policy
    with torch.no_grad():
        obs, _ = policy.obs_to_tensor(observation)
        dist = policy.get_distribution(obs, action_masks=mask.astype(bool))
        probs = dist.distribution.probs.double().numpy()[0]
        value = float(policy.predict_values(obs).double().numpy().reshape(-1)[0])
    best = np.argsort(-probs)[:top]
    return {"probs": [[names[int(a)], round(float(probs[a]), 4)] for a in best if probs[a] > 0],
            "value": round(value, 4)}

"""Batched decision makers: every agent type behind one ``act(obs[K], masks[K]) -> actions[K]``.

Self-play and evaluation step many games at once and gather every pending decision of one
agent into a single call, so a neural policy runs ONE forward pass per step however many games
are waiting on it. Agents without a batch form (heuristics, callables) are looped per decision.
"""

from __future__ import annotations

import os
from typing import Any, Protocol

import numpy as np
import torch

from card_envs.agents import Agent, AgentSpec, make_agent
from card_envs.agents.base import checked_action
from card_envs.agents.policy import resolve_run_policy, sample_rows


class BatchActor(Protocol):
    name: str

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray: ...


# What the batched tools accept for an agent: any agent spec, or a ready batched actor.
ActorSpec = AgentSpec | BatchActor


class RandomActor:
    """Uniform over legal actions, vectorised: argmax of uniform noise on the legal entries."""

    name = "random"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        noise = self.rng.random(masks.shape)
        noise[masks == 0] = -1.0
        return noise.argmax(axis=1)


class AgentActor:
    """Any per-decision :class:`Agent` (heuristic, callable, ...) looped over the batch."""

    def __init__(self, agent: Agent, name: str | None = None) -> None:
        self.agent = agent
        self.name: str = name or getattr(agent, "name", None) or "agent"

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.fromiter(
            (checked_action(self.name, self.agent.act(obs[k], masks[k]))
             for k in range(len(obs))), np.int64, len(obs)
        )


class EngineActor:
    """An agent that searches the position (``needs_engine``, such as the search agent): the
    batched tools hand it the engines themselves (:meth:`act_engines`), one decision each."""

    def __init__(self, agent: Agent, name: str | None = None) -> None:
        self.agent = agent
        self.name: str = name or getattr(agent, "name", None) or "agent"

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        raise TypeError(f"agent {self.name!r} needs the position: call act_engines(engines)")

    def act_engines(self, engines: list[Any]) -> np.ndarray:
        return np.fromiter((checked_action(self.name, self.agent.act_in(e)) for e in engines),
                           np.int64, len(engines))


class TorchPolicyActor:
    """A MaskablePPO policy network evaluated once for the whole batch.

    Sampling uses the actor's own numpy generator (not torch's), so opponents never disturb the
    learner's random stream and a resumed run replays exactly.
    """

    def __init__(self, policy: Any, deterministic: bool, rng: np.random.Generator,
                 name: str = "policy") -> None:
        self.policy = policy
        self.deterministic = deterministic
        self.rng = rng
        self.name = name

    @torch.no_grad()
    def features(self, obs: np.ndarray) -> torch.Tensor:
        """The features extractor's output, on the network's device."""
        # Box observations need no preprocessing beyond float32, which they already are.
        policy = self.policy
        return policy.pi_features_extractor(torch.as_tensor(obs, device=policy.device))

    @torch.no_grad()
    def logits(self, obs: np.ndarray, masks: np.ndarray,
               features: torch.Tensor | None = None) -> np.ndarray:
        """Masked logits; ``features``: the extractor's output for ``obs`` if already known
        (self-play computes a weightless extractor's once for every snapshot's decisions)."""
        policy = self.policy
        features = self.features(obs) if features is None else features
        latent = policy.mlp_extractor.forward_actor(features)
        # On the network's device (the learner's GPU during training), the logits on the host.
        logits = policy.action_net(latent).cpu().numpy().astype(np.float64)
        logits[masks == 0] = -np.inf
        return logits

    def act(self, obs: np.ndarray, masks: np.ndarray,
            features: torch.Tensor | None = None) -> np.ndarray:
        logits = self.logits(obs, masks, features)
        if self.deterministic:
            return logits.argmax(axis=1)
        return sample_rows(np.exp(logits - logits.max(axis=1, keepdims=True)), self.rng)


def weightless_extractor(policy: Any) -> bool:
    """Whether ``policy``'s features extractor has no weights (raw and derived features both),
    so that every snapshot of it computes the same features from the same observations."""
    return not any(True for _ in policy.pi_features_extractor.parameters())


def load_policy_net(policy: Any, device: str | torch.device | None = None) -> Any:
    """A fresh, gradient-free copy of ``policy``'s architecture (weights loaded separately), on
    ``device`` (default: ``policy``'s own, so a GPU learner's snapshots play on the GPU)."""
    net = type(policy)(**policy._get_constructor_parameters())
    net = net.to(policy.device if device is None else device)
    net.set_training_mode(False)
    for p in net.parameters():
        p.requires_grad_(False)
    return net


def make_actor(spec: ActorSpec, game: str, config: dict[str, Any], seed: int | None = None,
               deterministic: bool = True, allow_policy_mismatch: bool = False) -> BatchActor:
    """Resolve any agent spec (``"random"``, ``"heuristic"``, a ``.zip`` or run directory, an
    :class:`Agent`, a callable, or a ready :class:`BatchActor`) into a batched actor.
    ``"random"``, ``"heuristic"`` and ``"search[:...]"`` name the baselines even where a
    folder has that name (``./heuristic`` names the folder). A saved policy must record this
    game, ``config`` and this package's env and layout versions, unless
    ``allow_policy_mismatch``."""
    rng = np.random.default_rng(seed)
    if hasattr(spec, "act") and hasattr(spec, "name") and not isinstance(spec, Agent):
        return spec  # already batched
    if isinstance(spec, (str, os.PathLike)):
        text = os.fspath(spec)
        if text == "random":
            return RandomActor(rng)
        search = text == "search" or text.startswith("search:")
        if text != "heuristic" and not text.startswith("search") and os.path.isdir(text):
            text = resolve_run_policy(text)
        # (search:...,policy=<a .zip> is a search agent with that prior, not the policy)
        if text.endswith(".zip") and not search:
            from card_envs.agents.policy import check_saved_policy, load_maskable_ppo

            model = load_maskable_ppo(text)
            check_saved_policy(text, model, game, config, allow_policy_mismatch)
            model.policy.set_training_mode(False)
            return TorchPolicyActor(model.policy, deterministic, rng, name=text)
    agent = make_agent(spec, game, config, seed=seed, allow_policy_mismatch=allow_policy_mismatch)
    from card_envs.agents.policy import PolicyAgent

    if isinstance(agent, PolicyAgent):
        # A PolicyAgent built by the user keeps its own setting; a model follows this call's.
        chosen = agent.deterministic if isinstance(spec, PolicyAgent) else deterministic
        return TorchPolicyActor(agent.model.policy, chosen, rng, name=agent.name)
    return EngineActor(agent) if agent.needs_engine else AgentActor(agent)



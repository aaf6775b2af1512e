"""Saved MaskablePPO policies as agents (needs the ``train`` extra)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from card_envs.agents.base import Agent


def load_maskable_ppo(path: str | os.PathLike[str], device: str = "cpu") -> Any:
    """Load a MaskablePPO ``.zip`` with a clear error when it is missing or corrupt."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as err:  # pragma: no cover - depends on extras
        raise ImportError(
            "loading a saved policy needs the training extra: pip install 'card-envs[train]'"
        ) from err
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no saved policy at {path!r}")
    try:
        return MaskablePPO.load(path, device=device)
    except Exception as err:
        raise ValueError(f"could not load a MaskablePPO policy from {path!r}: {err}") from err


def resolve_run_policy(run_dir: str | os.PathLike[str]) -> str:
    """A training run's directory stands for its best policy (else its final, else its
    latest)."""
    for name in ("best.zip", "final.zip", "latest.zip"):
        path = os.path.join(run_dir, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"no best.zip, final.zip or latest.zip in run directory "
                            f"{os.fspath(run_dir)!r}")


def is_sb3_model(spec: object) -> bool:
    """An SB3 model object (``predict`` and ``policy``), without importing SB3."""
    return hasattr(spec, "predict") and hasattr(spec, "policy") and not isinstance(spec, type)


def sample_rows(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One column index per row of ``weights`` (non-negative, not necessarily normalised),
    drawn in proportion to the row's weights with one uniform number per row from ``rng``."""
    cdf = weights.cumsum(axis=1)
    u = rng.random(len(weights))[:, None] * cdf[:, -1:]
    # First index whose cumulative mass exceeds u; the clip guards float round-off.
    return np.minimum((cdf <= u).sum(axis=1), weights.shape[1] - 1)


def check_policy_fits(
    model: Any, game: str, config: dict[str, Any] | None, label: str
) -> None:
    """A policy trained on another game or player count fails here, naming the file and the
    game, not at its first move deep inside torch."""
    from card_envs.games import make_engine

    engine = make_engine(game, **(config or {}))
    obs_shape = tuple(model.observation_space.shape)
    n_actions = int(model.action_space.n)
    if obs_shape != (engine.layout.size,) or n_actions != engine.num_actions:
        raise ValueError(
            f"policy {label!r} expects observations {obs_shape} and {n_actions} actions; "
            f"{game} with {config or {}} has ({engine.layout.size},) and {engine.num_actions}"
        )


def check_saved_policy(path: str | os.PathLike[str], model: Any, game: str,
                       config: dict[str, Any] | None, allow_mismatch: bool = False) -> None:
    """A policy loaded from ``path`` fits ``game`` with ``config``: the env it recorded (see
    :mod:`card_envs.agents.provenance`; skipped with ``allow_mismatch``), then the shapes."""
    from card_envs.agents.provenance import check_identity, read_identity

    label = os.fspath(path)
    check_identity(read_identity(path), game, config, label, allow_mismatch)
    check_policy_fits(model, game, config, label)


class PolicyAgent(Agent):
    """Acts with a saved (or in-memory) MaskablePPO model on one observation at a time.

    A policy loaded from a file is checked against the env it plays in when it is made an
    agent for it (:func:`card_envs.agents.make_agent`, an env's opponents): the game, options
    and versions it recorded must be the env's, unless ``allow_mismatch`` (see
    :mod:`card_envs.agents.provenance`).

    A stochastic policy samples from ``self.rng`` (as every agent does), never from torch's
    global generator: seeding the agent must not reseed the user's torch."""

    def __init__(self, model: Any, deterministic: bool = True, name: str | None = None,
                 seed: int | None = None, allow_mismatch: bool = False) -> None:
        self.path: str | None = None
        self.allow_mismatch = allow_mismatch
        if isinstance(model, (str, os.PathLike)):
            name = name or os.path.basename(os.fspath(model))
            self.path = os.fspath(model)
            model = load_maskable_ppo(model)
        else:
            from sb3_contrib import MaskablePPO

            if not isinstance(model, MaskablePPO):  # it failed at its first move, deep in SB3
                raise TypeError(f"PolicyAgent takes a MaskablePPO model (sb3-contrib) or the path "
                                f"of a saved one, got {type(model).__name__}: it plays with the "
                                "legal-action mask, which other SB3 models do not take")
        self.model = model
        self.deterministic = deterministic
        self.name = name or "policy"
        self.rng = np.random.default_rng(seed)

    def check_fits(self, game: str, config: dict[str, Any] | None) -> None:
        """Refuse to play ``game`` with ``config`` if the policy does not fit it: its shapes,
        and, loaded from a file, the env it recorded (unless ``allow_mismatch``)."""
        if self.path is not None:
            check_saved_policy(self.path, self.model, game, config, self.allow_mismatch)
        else:
            check_policy_fits(self.model, game, config, self.name)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = action_mask.astype(bool)
        if self.deterministic:
            action, _ = self.model.predict(observation, action_masks=legal, deterministic=True)
            return int(action)
        import torch

        policy = self.model.policy
        with torch.no_grad():
            obs, _ = policy.obs_to_tensor(observation)
            dist = policy.get_distribution(obs, action_masks=legal)
            probs = dist.distribution.probs.double().cpu().numpy()
        return int(sample_rows(probs, self.rng)[0])  # masked actions have zero mass

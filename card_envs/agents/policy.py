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


class PolicyAgent(Agent):
    """Acts with a saved (or in-memory) MaskablePPO model on one observation at a time."""

    def __init__(self, model: Any, deterministic: bool = True, name: str | None = None,
                 seed: int | None = None) -> None:
        if isinstance(model, (str, os.PathLike)):
            name = name or os.path.basename(os.fspath(model))
            model = load_maskable_ppo(model)
        self.model = model
        self.deterministic = deterministic
        self.name = name or "policy"
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        if not self.deterministic:
            import torch

            torch.manual_seed(int(self.rng.integers(2**31)))

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        action, _ = self.model.predict(
            observation, action_masks=action_mask.astype(bool), deterministic=self.deterministic
        )
        return int(action)

"""Named segments of a flat observation vector.

Games describe their observation once as named fields (a shape and a meaning each); the same
layout writes the vector (engine), bounds the Box space (envs), reads it back (heuristic agents
decode the exact vector a learning policy sees, which keeps baselines honest about what a seat
may know), and is what every env offers users by name (``observation_layout()``,
``decode_observation()``; the same for ``state()``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from mypy_extensions import mypyc_attr

from card_envs.core.copying import attribute_state, uninitialised
from card_envs.core.obs_field import ObsField

__all__ = ["ObsField", "ObsLayout"]


# Copied with the engines. (Interpreted subclasses allowed: with serializable alone, mypyc 2.4
# skips __init__ when the class is called from Python.)
@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class ObsLayout:
    def __init__(self) -> None:
        self.slices: dict[str, slice] = {}
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.meanings: dict[str, str] = {}
        self._bounds: list[tuple[int, float, float]] = []
        self.size = 0

    def __reduce__(self) -> tuple[Any, ...]:
        return uninitialised, (type(self),), attribute_state(self)

    def add(self, name: str, shape: int | tuple[int, ...], meaning: str = "",
            low: float = 0.0, high: float = 1.0) -> slice:
        """Append field ``name`` of ``shape`` (an int for a flat field) to the vector."""
        if name in self.slices:
            raise ValueError(f"observation field {name!r} defined twice")
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        size = math.prod(dims)
        if not dims or min(dims) <= 0:
            raise ValueError(f"observation field {name!r} needs a positive size, got {shape}")
        sl = slice(self.size, self.size + size)
        self.slices[name] = sl
        self.shapes[name] = dims
        self.meanings[name] = meaning
        self._bounds.append((size, low, high))
        self.size += size
        return sl

    def fields(self) -> dict[str, ObsField]:
        """Every field in vector order: its slice, shape and meaning."""
        return {name: ObsField(sl, self.shapes[name], self.meanings[name])
                for name, sl in self.slices.items()}

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        low = np.concatenate([np.full(n, lo, np.float32) for n, lo, _ in self._bounds])
        high = np.concatenate([np.full(n, hi, np.float32) for n, _, hi in self._bounds])
        return low, high

    def _check_size(self, obs: np.ndarray) -> None:
        if obs.shape[-1] != self.size:
            raise ValueError(f"observation has {obs.shape[-1]} values, layout expects {self.size} "
                             "(an agent made for other game options? pass it the env's config)")

    def decode(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Views of ``obs`` by field name, each flat (no copies)."""
        self._check_size(obs)
        if obs.ndim == 1:  # one observation (every agent's move): plain slices are cheaper
            return {name: obs[sl] for name, sl in self.slices.items()}
        return {name: obs[..., sl] for name, sl in self.slices.items()}

    def unpack(self, obs: Any) -> dict[str, np.ndarray]:
        """``obs`` (one vector, or a batch with the fields on the last axis) by field name,
        each in its shape (batch dimensions first); views where numpy can make them."""
        arr = np.asarray(obs)
        if arr.ndim == 0:
            raise ValueError("an observation is a vector, got a scalar")
        self._check_size(arr)
        lead = arr.shape[:-1]
        return {name: arr[..., sl].reshape(lead + self.shapes[name])
                for name, sl in self.slices.items()}

    def describe(self) -> str:
        return "\n".join(f"{name}: [{sl.start}:{sl.stop}] {self.shapes[name]} "
                         f"{self.meanings[name]}".rstrip()
                         for name, sl in self.slices.items())

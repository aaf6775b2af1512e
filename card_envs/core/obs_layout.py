"""Named segments of a flat observation vector.

Games describe their observation once as named fields; the same layout writes the vector
(engine), bounds the Box space (envs), and reads it back (heuristic agents decode the exact
vector a learning policy sees, which keeps baselines honest about what a seat may know).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mypy_extensions import mypyc_attr

from card_envs.core.copying import attribute_state, uninitialised


# Copied with the engines. (Interpreted subclasses allowed: with serializable alone, mypyc 2.4
# skips __init__ when the class is called from Python.)
@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class ObsLayout:
    def __init__(self) -> None:
        self.slices: dict[str, slice] = {}
        self._bounds: list[tuple[int, float, float]] = []
        self.size = 0

    def __reduce__(self) -> tuple[Any, ...]:
        return uninitialised, (type(self),), attribute_state(self)

    def add(self, name: str, size: int, low: float = 0.0, high: float = 1.0) -> slice:
        if name in self.slices:
            raise ValueError(f"observation field {name!r} defined twice")
        if size <= 0:
            raise ValueError(f"observation field {name!r} needs a positive size, got {size}")
        sl = slice(self.size, self.size + size)
        self.slices[name] = sl
        self._bounds.append((size, low, high))
        self.size += size
        return sl

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        low = np.concatenate([np.full(n, lo, np.float32) for n, lo, _ in self._bounds])
        high = np.concatenate([np.full(n, hi, np.float32) for n, _, hi in self._bounds])
        return low, high

    def decode(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Views of ``obs`` by field name (no copies)."""
        if obs.shape[-1] != self.size:
            raise ValueError(f"observation has {obs.shape[-1]} values, layout expects {self.size} "
                             "(an agent made for other game options? pass it the env's config)")
        return {name: obs[..., sl] for name, sl in self.slices.items()}

    def describe(self) -> str:
        return "\n".join(f"{name}: [{sl.start}:{sl.stop}]" for name, sl in self.slices.items())

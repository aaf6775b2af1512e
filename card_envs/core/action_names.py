"""What every env view names: actions (``action_name`` / ``action_id``) and the fields of its
observation and ``state()`` vectors (``observation_layout`` / ``decode_observation``,
``state_layout`` / ``decode_state``). A plain-Python mixin: the compiled AEC env and the Python
Gymnasium and Parallel envs share it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.engine import Engine
from card_envs.core.obs_layout import ObsField


class ActionNames:
    """``action_name`` / ``action_id`` and the named observation layout for every env view
    (AEC, Gymnasium, Parallel): the engine's, so a log, a scripted line of play or a probe of
    one input reads the same whichever view runs it."""

    engine: Engine

    def action_name(self, action: Any) -> str:
        return self.engine.action_name(action)

    def action_id(self, name: Any) -> int:
        return self.engine.action_id(name)

    def observation_layout(self) -> dict[str, ObsField]:
        """The observation vector's fields in order: name -> (slice, shape, meaning). The
        same for every agent; RULES.md's Observation table documents each field."""
        return self.engine.layout.fields()

    def state_layout(self) -> dict[str, ObsField]:
        """The fields of ``state()`` (the seer view) in order, as :meth:`observation_layout`."""
        return self.engine.state_layout.fields()

    def decode_observation(self, obs: Any) -> dict[str, np.ndarray]:
        """An observation by field name, each in its shape (a batch keeps its leading axes).
        Takes the vector or the AEC / Parallel envs' ``{"observation": ..., "action_mask":
        ...}`` dict."""
        if isinstance(obs, Mapping):
            if "observation" not in obs:
                raise ValueError("decode_observation takes an observation vector or a dict "
                                 f"with an 'observation' key, got keys {sorted(obs)}")
            obs = obs["observation"]
        return self.engine.layout.unpack(obs)

    def decode_state(self, state: Any) -> dict[str, np.ndarray]:
        """A ``state()`` vector by field name, each in its shape."""
        return self.engine.state_layout.unpack(state)

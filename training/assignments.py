"""``KEY=VALUE`` command-line assignments (``--set``, ``--env``), values read as YAML 1.2."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .config import ConfigError, parse_yaml


def parse_assignments(items: Sequence[str], flag: str) -> dict[str, Any]:
    """``["ppo.learning_rate=3e-4", "seed=7"]`` as ``{"ppo.learning_rate": 0.0003, "seed": 7}``.

    The value is a YAML 1.2 scalar (or flow collection) as it would be in the file, so
    ``1e-4`` is a number, ``null`` is None and ``'5'`` a string. A missing ``=`` or key, a key
    given twice or a value that is not YAML is a :class:`ConfigError` naming the item."""
    values: dict[str, Any] = {}
    for item in items:
        key, eq, text = item.partition("=")
        if not eq or not key:
            raise ConfigError(f"{flag}: expected KEY=VALUE, got {item!r}")
        if key in values:
            raise ConfigError(f"{flag}: {key} given twice; keep one")
        values[key] = parse_yaml(text, f"{flag} {item}")
    return values

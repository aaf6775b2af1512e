"""Declarative, validated game configuration.

Every engine declares its options once as :class:`Option` objects; :func:`resolve_config` checks
a user's keyword arguments against them. An unknown key or a bad value is a ``ValueError`` that
names the key and what is allowed, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: A value no option's check accepts (see :meth:`Option.allowed`).
_NO_VALUE = object()


@dataclass(frozen=True)
class Option:
    """One configuration key: its default, and either a set of allowed values or a check.

    ``check`` returns ``None`` when the value is fine, else a description of what is allowed.
    ``needs`` is ``(key, value)`` when the option only matters while another one has that
    value: setting it to anything but its default otherwise would be silently ignored.
    """

    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], str | None] | None = field(default=None, compare=False)
    needs: tuple[str, Any] | None = None

    def allowed(self) -> str:
        """What the option accepts, in words: its choices, or what its check says it allows
        (every check describes the values it allows when it refuses one, so it is asked about
        a value none accepts). For documentation: the docs site's option tables."""
        if self.choices is not None:
            return ", ".join(repr(c) for c in self.choices)
        if self.check is not None:
            return self.check(_NO_VALUE) or "any value"
        return "any value"

    def validate(self, key: str, value: Any) -> Any:
        if self.choices is not None:
            # Compare types too: True == 1 must not pass for a player count.
            if not any(type(value) is type(c) and value == c for c in self.choices):
                allowed = ", ".join(repr(c) for c in self.choices)
                raise ValueError(f"invalid value {value!r} for {key!r}: allowed values are "
                                 f"{allowed}")
            return value
        if self.check is not None:
            problem = self.check(value)
            if problem is not None:
                raise ValueError(f"invalid value {value!r} for {key!r}: expected {problem}")
        return value


def int_range(lo: int, hi: int | None = None) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= lo
        ok = ok and (hi is None or value <= hi)
        return None if ok else (f"an integer in {lo}..{hi}" if hi else f"an integer >= {lo}")

    return check


def optional_int_range(lo: int) -> Callable[[Any], str | None]:
    inner = int_range(lo)

    def check(value: Any) -> str | None:
        if value is None or inner(value) is None:
            return None
        return f"None or {inner(value)}"

    return check


def float_range(lo: float, hi: float) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and lo <= value <= hi
        return None if ok else f"a number in [{lo}, {hi}]"

    return check


def seat_or_random(value: Any) -> str | None:
    """Check for options naming a seat (a dealer, a first player) or ``"random"``; the engine
    checks the upper bound once it knows the player count."""
    if value == "random" or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return None
    return "'random' or a seat number"


def _memory_check(value: Any) -> str | None:
    if value in ("perfect", "none"):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0:
        return None
    return "'perfect', 'none' or a forget probability in [0, 1]"


#: Options every game shares; engines extend this with their own.
COMMON_OPTIONS: dict[str, Option] = {
    "memory": Option(
        "perfect",
        "What a seat remembers of cards it saw that are face down now: 'perfect', 'none', or the "
        "probability of forgetting each remembered card after each of its own decisions.",
        check=_memory_check,
    ),
    "reward": Option(
        "win",
        "'win': +1 for the winner(s) (split when tied), -1 for the others, at the end of the "
        "episode; 'score': the game's own points as they are scored.",
        choices=("win", "score"),
    ),
    "max_steps": Option(
        None,
        "Truncate the episode after this many decisions, every seat's counted (None: the game's "
        "own safety cap).",
        check=optional_int_range(1),
    ),
}


def resolve_config(
    game: str, options: Mapping[str, Option], given: Mapping[str, Any]
) -> dict[str, Any]:
    """Defaults overlaid with ``given``, every key and value checked."""
    unknown = [k for k in given if k not in options]
    if unknown:
        key = unknown[0]
        raise ValueError(
            f"unknown config key {key!r} for {game}{close_match_hint(key, options)}; "
            f"allowed keys: {', '.join(sorted(options))}"
        )
    resolved = {k: opt.default for k, opt in options.items()}
    for key, value in given.items():
        resolved[key] = options[key].validate(key, plain_value(value))
    for key in given:
        needs = options[key].needs
        if needs is not None and resolved[needs[0]] != needs[1] \
                and resolved[key] != options[key].default:
            raise ValueError(f"{key}={resolved[key]!r} changes nothing in play unless "
                             f"{needs[0]}={needs[1]!r} (it is {resolved[needs[0]]!r}): set "
                             f"both, or leave {key!r} out")
    return resolved


def close_match_hint(key: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to a misspelt ``key``, or ``""``."""
    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def plain_value(value: Any) -> Any:
    """numpy scalars as the Python values they hold (``np.int64(3)`` is a player count), and
    lists as tuples (YAML, JSON and argparse give lists), so configs built from arrays or files
    validate, and compare and save, like hand-written ones."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(plain_value(v) for v in value)
    return value

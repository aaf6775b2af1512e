"""Env versions: which version of each game this package plays, and what the retired ones say.

A game's env version is the ``N`` of its entry module ``card_envs.<game>_vN``, its PettingZoo id
``card_envs/<game>-vN`` and its Gymnasium id ``card_envs/<Camel>-vN``; the three move together.
Any change to what a seeded game produces through an env (the golden playthroughs) or to its
spaces makes a new version, so a published result or a saved policy names the game it was made
on (docs/versioning.md has the rule and the procedure).

The one source of truth is ``card_envs/env_versions.json``: per game, every version it has had,
oldest first; the last is the current one. A version carries the release that first shipped it
(``null`` while unreleased), the fingerprints of its recorded playthroughs and spaces (checked by
``tests/test_versions.py``) and, once retired, ``retired``: why its successor differs and the
successor's options that play the old game, if any. Making a retired version (the module import,
``pettingzoo.make``, ``gymnasium.make``) raises :class:`RetiredEnvError` saying so.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

from gymnasium.error import DeprecatedEnv

LEDGER = Path(__file__).resolve().parent / "env_versions.json"
CHANGELOG = "CHANGELOG.md"
#: Shown for a version no release has shipped yet (the changelog section it is described in).
UNRELEASED = "Unreleased"


@dataclass(frozen=True)
class Version:
    """One version of a game's envs, as ``env_versions.json`` records it."""

    game: str
    number: int
    released: str | None  # the package release that first shipped it; None: not yet
    retired: str | None = None  # why the next version differs (set once a next one exists)
    options: dict[str, Any] = field(default_factory=dict)  # next version's options for this game
    changes: tuple[str, ...] = ()  # what this version changed from the one before, one per line

    @property
    def what_changed(self) -> str:
        """This version's changes from the one before (its changelog lines), in one text."""
        return "; ".join(self.changes)

    @property
    def module(self) -> str:
        return f"card_envs.{self.game}_v{self.number}"

    @property
    def name(self) -> str:
        """The env's ``metadata["name"]`` (PettingZoo's convention): ``roy_v0``."""
        return f"{self.game}_v{self.number}"

    @property
    def pz_id(self) -> str:
        return f"card_envs/{self.game}-v{self.number}"

    @property
    def gym_id(self) -> str:
        return f"card_envs/{camel(self.game)}-v{self.number}"

    @property
    def section(self) -> str:
        """The CHANGELOG.md section that describes this version."""
        return self.released or UNRELEASED


def camel(game: str) -> str:
    """The Gymnasium spelling of a game's name: ``memory_uno`` -> ``MemoryUno``."""
    return "".join(part.capitalize() for part in game.split("_"))


def _read(path: Path = LEDGER) -> dict[str, tuple[Version, ...]]:
    """Every game's versions from the ledger, checked to be numbered 0, 1, ... with only the
    last one current (the others retired) and at most the last one unreleased."""
    raw = json.loads(path.read_text())
    out = {}
    for game, entries in raw.items():
        versions = []
        for i, entry in enumerate(entries):
            retired = entry.get("retired")
            if entry["version"] != i:
                raise ValueError(f"{path.name}: {game}'s versions must be numbered 0, 1, ... "
                                 f"(entry {i} is {entry['version']})")
            if (retired is None) != (i == len(entries) - 1):
                raise ValueError(f"{path.name}: {game} v{i}: every version but the last must "
                                 "say why it was retired, and the last must not")
            if entry["released"] is None and i != len(entries) - 1:
                raise ValueError(f"{path.name}: {game} v{i} was retired without a release")
            versions.append(Version(game, i, entry["released"],
                                    retired["why"] if retired else None,
                                    dict(retired.get("options", {})) if retired else {},
                                    tuple(entry.get("changes", ()))))
        out[game] = tuple(versions)
    return out


#: Every game's versions, oldest first.
VERSIONS: dict[str, tuple[Version, ...]] = _read()
#: Each game's current version number.
CURRENT: dict[str, int] = {game: versions[-1].number for game, versions in VERSIONS.items()}


def current(game: str) -> Version:
    """The current version of a registered game."""
    if game not in VERSIONS:
        raise ValueError(f"{game!r} has no versions in {LEDGER.name} (every registered game "
                         "needs an entry: docs/versioning.md)")
    return VERSIONS[game][-1]


def env_name(game: str) -> str:
    """``metadata["name"]`` of a game's envs: ``<game>_v<current>``. An engine of a game this
    package does not register (a user's own) is at version 0 of its name."""
    return current(game).name if game in VERSIONS else f"{game}_v0"


class RetiredEnvError(DeprecatedEnv, ImportError):
    """A retired env version was asked for. It is Gymnasium's ``DeprecatedEnv`` (what
    ``gymnasium.make`` raises for an old version) and an ``ImportError`` (what the module
    import raises), so either ``except`` catches it."""


def retired_message(version: Version, asked: str) -> str:
    """What asking for ``asked`` (an id or module of the retired ``version``) says: the current
    id of the same kind, the changelog entry, and the options that play the old game."""
    now = current(version.game)
    successor = VERSIONS[version.game][version.number + 1]
    if asked == version.module:
        kind, replacement = "module", now.module
    elif asked == version.gym_id:
        kind, replacement = "Gymnasium id", now.gym_id
    else:
        kind, replacement = "PettingZoo id", now.pz_id
    from card_envs import __version__

    lines = [f"{asked} is retired: card-envs {__version__} plays {version.game} as "
             f"{replacement} ({kind} of v{now.number}); results and saved policies of "
             f"v{version.number} do not carry over.",
             f"What v{successor.number} changed (CHANGELOG.md, section {successor.section}, "
             f"'{successor.gym_id}'): {successor.what_changed or version.retired}"]
    if version.options:
        call = ", ".join(f"{k}={v!r}" for k, v in version.options.items())
        lines.append(f"v{version.number}'s rules are v{successor.number}'s with {call}: "
                     f"make {successor.gym_id} with those options"
                     + (" (and read the later changes in CHANGELOG.md)"
                        if successor.number != now.number else "") + ".")
    return "\n".join(lines)


def retired(game: str, number: int) -> Version | None:
    """The retired version ``number`` of ``game``, or None if it is current or never was."""
    versions = VERSIONS.get(game, ())
    return versions[number] if 0 <= number < len(versions) - 1 else None


_MODULE = re.compile(r"card_envs\.([a-z_]+)_v(\d+)")


def retired_module(name: str) -> Version | None:
    """The retired version a module name such as ``card_envs.roy_v0`` stands for, if any."""
    match = _MODULE.fullmatch(name)
    return retired(match.group(1), int(match.group(2))) if match else None


def name_change(saved: str, now: str) -> str | None:
    """Why an env named ``saved`` (a ``metadata["name"]`` a saved policy or record carries,
    ``memory_uno_v0``) is not the one named ``now``: the changelog entries of each version
    between them, or None if the names are not two versions of one game this package knows."""
    old, new = _NAME.fullmatch(saved), _NAME.fullmatch(now)
    if not (old and new) or old.group(1) != new.group(1) or old.group(1) not in VERSIONS:
        return None
    game, first, last = old.group(1), int(old.group(2)), int(new.group(2))
    versions = VERSIONS[game]
    if not (0 <= first < last < len(versions)):
        return None
    steps = [f"v{v.number + 1} ({CHANGELOG}, section {versions[v.number + 1].section}): "
             f"{versions[v.number + 1].what_changed or v.retired}" for v in versions[first:last]]
    return f"{game} changed since {saved}: " + "; ".join(steps)


_NAME = re.compile(r"([a-z_]+)_v(\d+)")


def raise_retired(version: Version, asked: str) -> NoReturn:
    raise RetiredEnvError(retired_message(version, asked))


def retired_constructor(version: Version, asked: str) -> Any:
    """A registry entry point for a retired id: making it raises, naming the current id.
    (A callable, not a module path: PettingZoo reports a failed import as a missing extra.)"""

    def make(**_: Any) -> NoReturn:
        raise_retired(version, asked)

    make.__doc__ = f"{asked} is retired; making it raises RetiredEnvError naming its successor."
    return make


class _RetiredLoader(importlib.abc.Loader):
    def __init__(self, version: Version) -> None:
        self.version = version

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        raise_retired(self.version, module.__name__)


class RetiredModuleFinder(importlib.abc.MetaPathFinder):
    """Answers imports of retired entry modules (``card_envs.roy_v0`` once ``roy_v1`` is
    current) with :class:`RetiredEnvError`, in ``import card_envs.roy_v0`` and ``from
    card_envs import roy_v0`` alike; last on ``sys.meta_path``, so it sees only names no file
    answers."""

    def find_spec(self, fullname: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        version = retired_module(fullname) if fullname.startswith("card_envs.") else None
        if version is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _RetiredLoader(version))


def install_finder() -> None:
    if not any(isinstance(finder, RetiredModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(RetiredModuleFinder())

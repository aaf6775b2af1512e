"""The game registry: one entry per game, resolved lazily so importing the package stays cheap."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from card_envs.versions import current

if TYPE_CHECKING:  # the registry imports no game (nor the agents) until one is asked for
    from card_envs.agents.base import Agent
    from card_envs.core.engine import Engine


@dataclass(frozen=True)
class GameSpec:
    name: str  # config / registry key, e.g. "roy"
    title: str  # human name
    engine: str  # "module:Class" of the rules engine
    heuristic: str  # "module:Class" of the rule-based baseline agent
    module: str  # PettingZoo-style entry module (env(), raw_env)
    gym_id: str  # Gymnasium id
    pz_id: str  # PettingZoo registry id
    parallel: bool = False  # the entry module also offers parallel_env()
    features: str | None = None  # "module:function" of derived policy features, if any

    def available(self) -> bool:
        return importlib.util.find_spec(self.module) is not None

    def engine_class(self) -> type[Engine]:
        return _load(self.engine)

    def heuristic_class(self) -> type[Agent]:
        return _load(self.heuristic)

    def features_builder(self) -> Any:
        """The game's derived-feature builder (needs torch; see card_envs/agents/features.py)."""
        if self.features is None:
            raise ValueError(f"{self.name} has no derived policy features; use features: raw")
        return _load(self.features)


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def _spec(name: str, title: str, camel: str, package: str, engine_cls: str, heur_cls: str,
          parallel: bool = False, features: bool = False) -> GameSpec:
    version = current(name)  # card_envs/env_versions.json numbers the ids
    if version.gym_id != f"card_envs/{camel}-v{version.number}":
        raise ValueError(f"{name}'s Gymnasium name {camel!r} is not {version.gym_id!r}'s")
    return GameSpec(
        name=name,
        title=title,
        engine=f"card_envs.games.{package}.engine:{engine_cls}",
        heuristic=f"card_envs.games.{package}.heuristic:{heur_cls}",
        module=version.module,
        gym_id=version.gym_id,
        pz_id=version.pz_id,
        parallel=parallel,
        features=f"card_envs.games.{package}.features:derived_features" if features else None,
    )


_ALL = [
    _spec("roy", "ROY", "Roy", "roy", "RoyEngine", "RoyHeuristic"),
    _spec("mega_memory", "Mega Mem-Ory Ultima-Ory", "MegaMemory", "mega_memory",
          "MegaMemoryEngine", "MegaMemoryHeuristic", features=True),
    _spec("memory_uno", "Memory-Uno", "MemoryUno", "memory_uno", "MemoryUnoEngine",
          "MemoryUnoHeuristic"),
    _spec("deluxe_memory", "Deluxe Memory", "DeluxeMemory", "deluxe_memory",
          "DeluxeMemoryEngine", "DeluxeMemoryHeuristic", features=True),
    _spec("dogpile", "Dogpile", "Dogpile", "dogpile", "DogpileEngine", "DogpileHeuristic",
          parallel=True, features=True),
]

#: Games that are installed in this checkout, by name.
GAMES: dict[str, GameSpec] = {g.name: g for g in _ALL if g.available()}


def get_game(name: str) -> GameSpec:
    """The registry entry of game ``name`` (engine, heuristic, entry module, Gymnasium id)."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; available games: {', '.join(GAMES)}")
    return GAMES[name]


def make_engine(name: str, **config: Any) -> Any:
    """A rules engine of game ``name`` with ``config`` (checked: unknown keys and bad values
    raise ``ValueError`` naming them). What the envs adapt; fast to step on its own."""
    return get_game(name).engine_class()(**config)

"""The configs shipped with the package: ``configs/`` in the repository, ``card_envs.configs``
installed. ``card-envs train roy`` names one by its game (or its file's stem), so a user needs
no checkout to train."""

from __future__ import annotations

from pathlib import Path

from card_envs.games import GAMES


def config_dir() -> Path:
    """The shipped configs' directory: beside this package's in the repository (``configs/``
    by ``training/``) and in an install (``card_envs/configs`` by ``card_envs/training``, as
    pyproject's ``package-dir`` maps them), whether or not an editable install's import hook
    is there to find ``card_envs.configs``. On disk in every install this package supports:
    its compiled engines load from disk, never from a zip."""
    return Path(__file__).resolve().parent.parent / "configs"


def shipped_configs() -> dict[str, Path]:
    """Every shipped config by name (its file's stem: ``roy``, ``roy_vs_heuristic``)."""
    return {path.stem: path for path in sorted(config_dir().glob("*.yaml"))}


def resolve_config(source: str) -> Path:
    """The config file ``source`` names: a YAML file, else a game or a shipped config by name.

    A file wins over a name (a user's ``roy`` in the working directory is theirs to train);
    a name neither a file nor shipped is a ``FileNotFoundError`` listing what is."""
    path = Path(source)
    if path.is_file():
        return path
    shipped = shipped_configs()
    if source in shipped:
        return shipped[source]
    if path.suffix in (".yaml", ".yml") or path.parent != Path("."):
        raise FileNotFoundError(f"no config file at {source!r}")
    games = [g for g in GAMES if g in shipped]
    others = [name for name in shipped if name not in GAMES]
    raise FileNotFoundError(
        f"{source!r} is neither a config file nor a game: the games are {', '.join(games)}"
        + (f"; the other shipped configs {', '.join(others)}" if others else ""))

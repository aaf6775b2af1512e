"""The compiled build: which modules mypyc compiles, and which build an import runs.

``pip install`` compiles :data:`MODULES` (the rules engines, the knowledge tracker and the AEC
env: the code every step runs; and the heuristic decisions of Dogpile, Memory-Uno, Mega Mem-Ory
and ROY, which a search's rollouts run at nearly every step) to C extensions with mypyc, from
the same sources (``setup.py``). The envs step 1.5 to 1.9 times as fast as with the plain-Python
modules, and play exactly the same games (the golden playthroughs are replayed by both builds).
``import card_envs`` runs the compiled modules when they are present and built from the sources
beside them, else the plain-Python sources:

* ``CARD_ENVS_PURE_PYTHON=1`` at build time installs no extension (no C compiler needed);
  at run time it makes the import ignore the extensions (to debug, or to check both builds).
* A build whose sources have changed since (a checkout edited after ``make build``) is never
  run: the import warns and runs the sources, so an edit always takes effect.

This module is plain Python in both builds: ``setup.py`` loads it by path to learn the module
list and write the build's manifest.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

#: The modules the compiled build compiles (all of them or none).
MODULES = (
    "card_envs.core.buffers",
    "card_envs.core.cards",
    "card_envs.core.knowledge",
    "card_envs.core.obs_layout",
    "card_envs.core.engine",
    "card_envs.core.aec_env",
    "card_envs.games.roy.engine",
    "card_envs.games.mega_memory.grouping",
    "card_envs.games.mega_memory.engine",
    "card_envs.games.mega_memory.heuristic_rules",
    "card_envs.games.memory_uno.engine",
    "card_envs.games.deluxe_memory.engine",
    "card_envs.games.dogpile.engine",
    "card_envs.games.dogpile.heuristic_rules",
    "card_envs.games.memory_uno.heuristic_rules",
    "card_envs.games.roy.heuristic_rules",
)
#: The compiled modules' shared library: ``card_envs_native__mypyc`` beside the package (a
#: library inside it would give some modules a wrong ``__file__``), and a shim per module.
GROUP = "card_envs_native"
#: Set to "1": build without extensions (at install), or ignore them (at import).
PURE_PYTHON_ENV = "CARD_ENVS_PURE_PYTHON"
#: Written beside the extensions by the build: the SHA-256 of each compiled module's source.
MANIFEST = "_compiled.json"

PACKAGE_DIR = Path(__file__).resolve().parent


def source_path(module: str, package_dir: Path = PACKAGE_DIR) -> Path:
    """The source file of ``module`` (a name in :data:`MODULES`) under ``package_dir``."""
    return package_dir.joinpath(*module.split(".")[1:]).with_suffix(".py")


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_digests(source_dir: Path) -> dict[str, str]:
    """The digest of each compiled module's source in ``source_dir``: what the build reads,
    taken before it reads them (a source edited during the build is then seen as stale)."""
    return {m: source_digest(source_path(m, source_dir)) for m in MODULES}


def write_manifest(out_dir: Path, digests: dict[str, str]) -> None:
    """Record ``digests`` in ``out_dir`` (the built package), whole or not at all."""
    temporary = out_dir / (MANIFEST + ".tmp")
    temporary.write_text(json.dumps({"modules": digests}, indent=1) + "\n")
    os.replace(temporary, out_dir / MANIFEST)


def stale_sources(package_dir: Path = PACKAGE_DIR) -> list[str]:
    """The compiled modules whose source beside the build differs from the one it was built
    from (none if there is no build, or no source beside it); every one if the manifest
    cannot be read."""
    manifest = package_dir / MANIFEST
    if not manifest.is_file():
        return []
    try:
        built = json.loads(manifest.read_text())["modules"]
        if not isinstance(built, dict):
            raise TypeError(f"modules is a {type(built).__name__}")
    except (OSError, ValueError, KeyError, TypeError):
        return list(MODULES)
    stale = []
    for module in MODULES:
        path = source_path(module, package_dir)
        if path.is_file() and built.get(module) != source_digest(path):
            stale.append(module)
    return stale


class _SourceOnly(importlib.abc.MetaPathFinder):
    """Imports the compiled modules from their ``.py`` sources, passing over the extensions
    that would otherwise take precedence in the same folder."""

    _LOADERS = (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in MODULES or not path:
            return None
        for entry in path:
            spec = importlib.machinery.FileFinder(entry, self._LOADERS).find_spec(fullname)
            if spec is not None:
                return spec
        return None


def library_origin() -> str | None:
    """Where an import of the shared library would load it from now (whether or not it is in
    ``sys.modules`` already): the extensions import it by its top-level name."""
    name = f"{GROUP}__mypyc"
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, None) if find is not None else None
        if spec is not None:
            return spec.origin
    return None


def extensions_present(package_dir: Path = PACKAGE_DIR) -> bool:
    """Whether every module of :data:`MODULES` has an extension beside its source, and their
    shared library is beside the package."""
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    library = package_dir.parent / f"{GROUP}__mypyc"
    paths = [source_path(m, package_dir) for m in MODULES] + [library]
    return all(any(p.with_name(p.stem + s).is_file() for s in suffixes) for p in paths)


def choose(package_dir: Path = PACKAGE_DIR, pure: bool = False) -> tuple[str, list[str]]:
    """The build a process should run from ``package_dir``: ``("compiled", [])``, or
    ``("plain Python (why)", stale modules)``. ``pure``: the environment asks for the sources."""
    if pure:
        return f"plain Python ({PURE_PYTHON_ENV}=1)", []
    if not ((package_dir / MANIFEST).is_file() and extensions_present(package_dir)):
        return "plain Python (no compiled build installed)", []
    origin = library_origin()
    if origin is None or Path(origin).resolve().parent != package_dir.resolve().parent:
        return (f"plain Python ({GROUP}__mypyc would not load from beside the package but "
                f"from {origin})"), []
    stale = stale_sources(package_dir)
    if stale:
        return f"plain Python (stale compiled build: {', '.join(stale)} changed)", stale
    return "compiled", []


def select() -> str:
    """Choose the build this process runs, once, before any compiled module is imported
    (``card_envs/__init__.py`` calls it first): warn if the build is stale, and install the
    source-only finder unless it is the compiled one. Returns :data:`BUILD`."""
    global BUILD, COMPILED
    BUILD, stale = choose(pure=os.environ.get(PURE_PYTHON_ENV) == "1")
    COMPILED = BUILD == "compiled"
    if stale:
        warnings.warn(f"card_envs: the compiled modules are older than their sources "
                      f"({', '.join(stale)}); running the sources. Rebuild with `make build` "
                      f"(or `pip install .`)", RuntimeWarning, stacklevel=3)
    if not COMPILED and not any(isinstance(f, _SourceOnly) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceOnly())
    return BUILD


#: "compiled", or "plain Python (...)" saying why: what this process runs (set by select()).
BUILD = "not selected yet"
#: Whether this process runs the compiled modules.
COMPILED = False


if __name__ == "__main__":  # `python card_envs/compiled.py`: the sources, for the Makefile
    print(" ".join(str(source_path(m, Path("card_envs"))) for m in MODULES))

"""The checkout's top-level name ``training`` as an alias of ``card_envs.training``.

In the repository the trainer's sources sit in ``training/`` at the top level, and the root on
``sys.path`` makes them importable as ``training`` too; an install has only
``card_envs.training`` (pyproject's ``package-dir``). Loaded under both names, every module
would exist twice: two ``ConfigError`` classes (an ``except`` on one misses the other), two
sets of globals (a test patching one would not reach the other), and checkpoints pickling
``training.actors.AgentActor``, a name no install can load. So ``training`` and each
``training.<module>`` are made the very module objects of ``card_envs.training``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import CodeType, ModuleType

ALIAS = "training"
REAL = "card_envs.training"


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``training.<name>`` as the module ``card_envs.training.<name>`` already is."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> ModuleSpec | None:
        if not fullname.startswith(ALIAS + "."):
            return None
        real = importlib.util.find_spec(_real_name(fullname))
        if real is None:
            return None
        return ModuleSpec(fullname, self, origin=real.origin,
                          is_package=real.submodule_search_locations is not None)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        # The import system keeps a module's own __name__, __spec__ and __file__ when they are
        # set (it fills in only what is missing): the alias is the real module, unchanged.
        return importlib.import_module(_real_name(spec.name))

    def exec_module(self, module: ModuleType) -> None:
        """Nothing: ``create_module`` returned the module, already run under its real name."""

    def get_code(self, fullname: str) -> CodeType | None:
        """``python -m training.train`` (runpy runs a module's code as ``__main__``)."""
        real = importlib.util.find_spec(_real_name(fullname))
        loader = real.loader if real is not None else None
        if not isinstance(loader, importlib.abc.InspectLoader):
            return None
        return loader.get_code(_real_name(fullname))


def _real_name(alias: str) -> str:
    return REAL + alias[len(ALIAS):]


def alias(init_file: str) -> None:
    """Make ``training`` (being imported from ``init_file``) ``card_envs.training``, loaded
    from that same directory.

    Not from wherever ``card_envs.training`` would be found: an editable install maps it to
    the checkout it was installed from, and a copy of the repository run with the same
    environment (the mutation audit's, another worktree's) would run that checkout's trainer
    beside its own ``card_envs``. If ``card_envs.training`` is already loaded from elsewhere,
    the mix is an error naming both, not a silent run of other code."""
    here = Path(init_file).resolve().parent
    real = sys.modules.get(REAL)
    if real is None:
        spec = importlib.util.spec_from_file_location(
            REAL, init_file, submodule_search_locations=[str(here)])
        assert spec is not None and spec.loader is not None
        real = importlib.util.module_from_spec(spec)
        sys.modules[REAL] = real
        try:
            spec.loader.exec_module(real)
        except BaseException:
            del sys.modules[REAL]
            raise
        vars(importlib.import_module("card_envs"))["training"] = real  # as an import would
    elif Path(real.__file__ or "").resolve().parent != here:
        raise ImportError(f"{REAL} was imported from {Path(real.__file__ or '').parent} before "
                          f"{ALIAS} from {here}: import {ALIAS} first (or run from the "
                          f"checkout {REAL} belongs to)")
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
    # `import training` returns what sys.modules holds once the package's code has run.
    sys.modules[ALIAS] = real

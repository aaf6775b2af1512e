"""Build hook: compiles the rules engines and the AEC env to C extensions with mypyc.

Everything else about the package is in ``pyproject.toml``. The compiled modules are listed in
``card_envs/compiled.py``; the wheel holds their sources too. Building them needs a C compiler
and Python's headers; ``CARD_ENVS_PURE_PYTHON=1`` builds a plain-Python package instead, which
plays the same games more slowly.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _compiled_module() -> Any:
    """``card_envs/compiled.py``, loaded by path: importing the package would need its
    run-time dependencies in the build environment."""
    spec = importlib.util.spec_from_file_location("_card_envs_compiled",
                                                  ROOT / "card_envs" / "compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compiled = _compiled_module()


PURE = os.environ.get(compiled.PURE_PYTHON_ENV) == "1"
BUILD_FAILED = ("card-envs: compiling the engines failed ({err}). It needs a C compiler and "
                "Python's headers (Debian: apt install gcc python3-dev). Without them, install "
                "the plain-Python package, which plays the same games more slowly: "
                "{env}=1 pip install card-envs (or .)")
#: The digests of the sources mypyc compiled (one build per process: a command object may be
#: made again, the distribution's extensions are not).
BUILT_FROM: dict[str, str] = {}
#: The build type-checks only what it compiles: third-party packages (numpy, PettingZoo) are
#: left out (typed Any, which mypyc treats as it treats their classes anyway), so their stubs'
#: versions in the build environment cannot fail or change a build. ``make lint`` checks them.
MYPY_OPTIONS = ["--no-site-packages", "--ignore-missing-imports", "--no-warn-unused-ignores"]


class CompiledDistribution(Distribution):  # type: ignore[misc]
    """Has extension modules (a platform wheel) unless the build is plain Python."""

    def has_ext_modules(self) -> bool:
        return not PURE


class BuildExt(build_ext):  # type: ignore[misc]
    """Runs mypyc only when the extensions are built (not for metadata), then writes the
    manifest that tells an import which sources they were built from, so that an edited
    source is never shadowed by an old extension."""

    def finalize_options(self) -> None:
        if not PURE and not self.distribution.ext_modules:
            from mypyc.build import mypycify

            # Before mypyc reads them: a source edited during the build is recorded as stale.
            BUILT_FROM.update(compiled.source_digests(ROOT / "card_envs"))
            paths = [str(compiled.source_path(m, Path("card_envs"))) for m in compiled.MODULES]
            self.distribution.ext_modules = mypycify(
                MYPY_OPTIONS + paths, opt_level="3", group_name=compiled.GROUP)
        super().finalize_options()

    def run(self) -> None:
        try:
            super().run()
        except Exception as err:  # a compiler missing or failing, whatever setuptools calls it
            raise SystemExit(BUILD_FAILED.format(err=err, env=compiled.PURE_PYTHON_ENV)) from err
        if not PURE:
            engine = Path(self.get_ext_fullpath("card_envs.core.engine"))
            compiled.write_manifest(engine.parent.parent, BUILT_FROM)


if __name__ == "__main__":  # as setuptools runs it; a test imports it to try the hooks
    setup(distclass=CompiledDistribution, cmdclass={"build_ext": BuildExt})

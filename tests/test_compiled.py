"""The two builds (card_envs/compiled.py): the compiled modules play the very games the sources
play, a process runs the build ``card_envs.BUILD`` names, and an edited source is never shadowed
by an extension built from an older one."""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import card_envs
from card_envs import compiled

ROOT = Path(__file__).resolve().parent.parent
needs_build = pytest.mark.skipif(
    not (compiled.PACKAGE_DIR / compiled.MANIFEST).is_file(),
    reason="no compiled build in this checkout (`make build`)")


def build_environment(pure: bool) -> dict[str, str]:
    """This process's environment for a subprocess that runs the sources (``pure``) or
    whatever build it finds, whichever this process was asked to run."""
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_PYTHON_ENV}
    if pure:
        env[compiled.PURE_PYTHON_ENV] = "1"
    return env


def _run(code: str, *, pure: bool, path: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = build_environment(pure)
    env["PYTHONPATH"] = str(path)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=path, env=env, timeout=300)


def _copy_of_the_build(tmp_path: Path) -> Path:
    """The checkout's built package and its shared library, copied into ``tmp_path``."""
    copy = tmp_path / "card_envs"
    shutil.copytree(compiled.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for library in compiled.PACKAGE_DIR.parent.glob(f"{compiled.GROUP}__mypyc.*"):
        shutil.copy2(library, tmp_path)
    return copy


def _loaded_as_extensions() -> dict[str, bool]:
    return {m: isinstance(importlib.import_module(m).__loader__,
                          importlib.machinery.ExtensionFileLoader) for m in compiled.MODULES}


REPORT = ("import importlib, importlib.machinery, card_envs\n"
          "from card_envs import compiled\n"
          "kinds = {isinstance(importlib.import_module(m).__loader__, "
          "importlib.machinery.ExtensionFileLoader) for m in compiled.MODULES}\n"
          "print(card_envs.BUILD, '|', sorted(kinds))\n")


def _fake_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package's sources with what a build adds beside them: its manifest, and an empty
    file for each extension and for the shared library (``choose`` only looks at them), the
    folder first on the import path, as an installed package's is."""
    monkeypatch.syspath_prepend(str(tmp_path))
    package = tmp_path / "card_envs"
    shutil.copytree(compiled.PACKAGE_DIR, package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.json"))
    compiled.write_manifest(package, compiled.source_digests(package))
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for module in compiled.MODULES:
        compiled.source_path(module, package).with_suffix(suffix).touch()
    (tmp_path / f"{compiled.GROUP}__mypyc{suffix}").touch()
    return package


def test_a_complete_build_of_the_sources_beside_it_is_chosen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = _fake_build(tmp_path, monkeypatch)
    assert compiled.choose(package) == ("compiled", [])
    assert compiled.choose(package, pure=True) == (
        f"plain Python ({compiled.PURE_PYTHON_ENV}=1)", [])


def test_a_build_is_not_chosen_once_a_source_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = _fake_build(tmp_path, monkeypatch)
    for module in ("card_envs.core.engine", "card_envs.games.dogpile.engine"):
        source = compiled.source_path(module, package)
        source.write_text(source.read_text() + "# edited\n")
    stale = ["card_envs.core.engine", "card_envs.games.dogpile.engine"]
    assert compiled.choose(package) == (
        f"plain Python (stale compiled build: {', '.join(stale)} changed)", stale)


@pytest.mark.parametrize("missing", ["manifest", "an extension", "the shared library"])
def test_an_incomplete_build_is_not_chosen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    package = _fake_build(tmp_path, monkeypatch)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    gone = {"manifest": package / compiled.MANIFEST,
            "an extension": compiled.source_path(compiled.MODULES[-1], package).with_suffix(
                suffix),
            "the shared library": tmp_path / f"{compiled.GROUP}__mypyc{suffix}"}[missing]
    gone.unlink()
    assert compiled.choose(package) == ("plain Python (no compiled build installed)", [])


def test_an_unreadable_manifest_counts_every_module_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = _fake_build(tmp_path, monkeypatch)
    for damaged in ('{"modules": {"card_envs.core', '{"modules": []}', "{}"):
        (package / compiled.MANIFEST).write_text(damaged)
        build, stale = compiled.choose(package)
        assert build.startswith("plain Python (stale") and stale == list(compiled.MODULES)


@pytest.mark.parametrize("where", ["nowhere", "elsewhere first"])
def test_a_build_whose_library_would_not_load_from_beside_it_is_not_chosen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """The extensions import their shared library by its top-level name: one that the import
    path does not reach (an editable install relinked without it), or reaches elsewhere first,
    is not the build's."""
    package = _fake_build(tmp_path / "build", monkeypatch)
    library = next((tmp_path / "build").glob(f"{compiled.GROUP}__mypyc.*"))
    if where == "nowhere":
        monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path / "build")])
        monkeypatch.setattr(compiled, "library_origin", lambda: None)
    else:
        (tmp_path / "other").mkdir()
        shutil.copy2(library, tmp_path / "other")
        monkeypatch.syspath_prepend(str(tmp_path / "other"))
    build, stale = compiled.choose(package)
    assert build.startswith(f"plain Python ({compiled.GROUP}__mypyc would not load from beside "
                            "the package") and not stale, build
    if where == "elsewhere first":
        assert str(tmp_path / "other") in build


def test_this_process_runs_the_build_it_names() -> None:
    loaded = _loaded_as_extensions()
    assert card_envs.BUILD == compiled.BUILD
    assert set(loaded.values()) == {compiled.COMPILED}, (card_envs.BUILD, loaded)
    if os.environ.get(compiled.PURE_PYTHON_ENV) != "1":
        # `make test` builds first: the suite must not fall back to the sources unnoticed.
        assert "stale" not in card_envs.BUILD, card_envs.BUILD


@needs_build
@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "sources"])
def test_each_build_replays_the_golden_playthroughs(pure: bool) -> None:
    """Both builds play every recorded game exactly as recorded (so, the same games)."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "tests/test_playthroughs.py"], capture_output=True, text=True, cwd=ROOT,
        env=build_environment(pure), timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    check = _run(REPORT, pure=pure)
    assert check.returncode == 0, check.stderr
    expected = "plain Python (CARD_ENVS_PURE_PYTHON=1) | [False]" if pure else "compiled | [True]"
    assert check.stdout.strip() == expected


@needs_build
def test_an_edited_source_runs_instead_of_its_stale_extension(tmp_path: Path) -> None:
    """A copy of the built package with one compiled module's source edited: the import warns,
    names the module, and runs every compiled module from its source (never half and half)."""
    copy = _copy_of_the_build(tmp_path)
    source = compiled.source_path("card_envs.games.memory_uno.engine", copy)
    source.write_text(source.read_text() + "\nEDITED = True\n")
    probe = REPORT + ("import warnings\n"
                      "from card_envs.games.memory_uno import engine\n"
                      "print(engine.EDITED)\n")
    run = _run(probe, pure=False, path=tmp_path)
    assert run.returncode == 0, run.stderr
    first, edited = run.stdout.strip().splitlines()
    assert first == ("plain Python (stale compiled build: card_envs.games.memory_uno.engine "
                     "changed) | [False]")
    assert edited == "True"
    assert "RuntimeWarning" in run.stderr and "make build" in run.stderr


@needs_build
@pytest.mark.parametrize("missing", ["a module's extension", "the shared library"])
def test_a_missing_extension_runs_every_module_from_its_source(
        tmp_path: Path, missing: str) -> None:
    copy = _copy_of_the_build(tmp_path)
    if missing == "the shared library":
        gone = list(tmp_path.glob(f"{compiled.GROUP}__mypyc.*"))
    else:
        gone = [compiled.source_path("card_envs.core.knowledge", copy).with_suffix(s)
                for s in importlib.machinery.EXTENSION_SUFFIXES]
    assert any(path.is_file() for path in gone)
    for path in gone:
        path.unlink(missing_ok=True)
    run = _run(REPORT, pure=False, path=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "plain Python (no compiled build installed) | [False]"


def test_the_makefile_compiles_exactly_the_listed_modules() -> None:
    """`make build` rebuilds when one of these sources changes: the list it reads is MODULES."""
    listed = subprocess.run([sys.executable, "card_envs/compiled.py"], capture_output=True,
                            text=True, cwd=ROOT, check=True, timeout=60).stdout.split()
    assert listed == [str(compiled.source_path(m, Path("card_envs"))) for m in compiled.MODULES]
    assert all((ROOT / p).is_file() for p in listed)
    assert "$(COMPILED_SOURCES)" in (ROOT / "Makefile").read_text()


def _setup_module(monkeypatch: pytest.MonkeyPatch, pure: bool) -> dict[str, object]:
    """setup.py's namespace (run by path, not as __main__: its hooks, without a build)."""
    import runpy

    if pure:
        monkeypatch.setenv(compiled.PURE_PYTHON_ENV, "1")
    else:
        monkeypatch.delenv(compiled.PURE_PYTHON_ENV, raising=False)
    return runpy.run_path(str(ROOT / "setup.py"), run_name="setup_under_test")


def test_a_failed_compile_says_how_to_install_without_a_compiler(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from setuptools import Distribution
    from setuptools.command.build_ext import build_ext
    from setuptools.errors import CompileError

    hooks = _setup_module(monkeypatch, pure=False)
    assert hooks["CompiledDistribution"]().has_ext_modules()  # type: ignore[operator]

    def no_compiler(self: build_ext) -> None:
        raise CompileError("command 'cc' failed: No such file or directory")

    monkeypatch.setattr(build_ext, "run", no_compiler)
    command = hooks["BuildExt"](Distribution())  # type: ignore[operator]
    with pytest.raises(SystemExit) as err:
        command.run()
    message = str(err.value)
    assert "'cc' failed" in message and "C compiler" in message
    assert f"{compiled.PURE_PYTHON_ENV}=1 pip install" in message


def test_a_plain_python_build_has_no_extensions(monkeypatch: pytest.MonkeyPatch) -> None:
    hooks = _setup_module(monkeypatch, pure=True)
    assert not hooks["CompiledDistribution"]().has_ext_modules()  # type: ignore[operator]

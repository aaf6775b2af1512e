"""The wheel users ``pip install``: built from a copy of the sources, then imported on its own."""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import card_envs
from card_envs import compiled
from tests.test_compiled import build_environment

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "card_envs", "training",
           "configs")
#: The repository's directories the wheel installs inside the package (pyproject's
#: package-dir), as the installed package's own: card_envs.training, card_envs.configs.
MAPPED = {"card_envs": "card_envs", "training": "card_envs/training",
          "configs": "card_envs/configs"}
#: What a build leaves in the checkout's package (an in-place compiled build): not sources.
BUILT = ("__pycache__", "*.so", "*.pyd", compiled.MANIFEST)
#: A folder of wheels built from this checkout's sdist, taken instead of building the compiled
#: wheel again (CI points it at ``make release``'s dist/: each compiled build is minutes of
#: mypyc). A wheel whose package files differ from the checkout's fails the tests that use it.
BUILT_WHEELS_ENV = "CARD_ENVS_BUILT_WHEELS"


def prebuilt_wheel(*, compiled_build: bool) -> Path | None:
    """The compiled (or plain) wheel of this version in ``$CARD_ENVS_BUILT_WHEELS``, if set."""
    folder = os.environ.get(BUILT_WHEELS_ENV)
    if not folder:
        return None
    version = card_envs.__version__
    pattern = f"card_envs-{version}-" + ("cp*.whl" if compiled_build else "py3-none-any.whl")
    found = sorted(Path(folder).glob(pattern))
    if len(found) != 1:
        pytest.fail(f"{BUILT_WHEELS_ENV}={folder} holds {len(found)} wheels named {pattern} "
                    f"({[p.name for p in found]}): one was expected (run `make release`)")
    return found[0]


def checkout_source(installed_name: str) -> Path | None:
    """The checkout's file a wheel's ``card_envs/...`` entry was built from (None for what a
    build makes: the extensions and the manifest, which an in-place build also leaves in the
    checkout, and the dist-info)."""
    # The longest installed folder first: card_envs/training/x is training/x, not card_envs/.
    for source, installed in sorted(MAPPED.items(), key=lambda item: -len(item[1])):
        if installed_name.startswith(installed + "/"):
            path = ROOT / source / installed_name[len(installed) + 1:]
            built = any(path.match(pattern) for pattern in BUILT)
            return path if path.is_file() and not built else None
    return None


def assert_package_files_are_the_checkout_s(wheel: Path) -> None:
    """Every file the wheel installs from the sources holds the checkout's bytes: a wheel
    built from other sources (a stale dist/) fails here, naming the files."""
    with zipfile.ZipFile(wheel) as archive:
        differ = [name for name in archive.namelist()
                  if (path := checkout_source(name)) is not None
                  and archive.read(name) != path.read_bytes()]
    assert not differ, f"{wheel.name} was built from other sources than the checkout: {differ}"


def _build_wheel(tmp: Path, build: str) -> Path:
    """Build in a copy: an in-tree build would rewrite the egg-info the editable install uses."""
    src = tmp / "src"
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns(*BUILT))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name)
    env = build_environment(pure=build == "sources")
    out = tmp / "dist"
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=900, env=env, cwd=tmp,
    )
    log = run.stdout + run.stderr
    assert run.returncode == 0, log
    # setuptools announces what it will stop accepting as a deprecation warning first (the
    # license table did, with a date after which builds fail): fail here while it is a warning.
    assert "deprecat" not in log.lower(), log
    (built,) = out.glob("*.whl")
    return built


@pytest.mark.parametrize("build", ["sources", pytest.param("compiled", marks=pytest.mark.skipif(
    os.environ.get(compiled.PURE_PYTHON_ENV) == "1",
    reason="the compiled wheel (a minute and a half to build) is tested by the compiled run"))])
def test_the_wheel_holds_the_package_and_plays_every_game_without_the_repository(
        build: str, tmp_path: Path) -> None:
    """The wheel holds the package, its rules and (compiled) one extension per compiled module,
    nothing else; unpacked alone on the path it must import, register and play each game (what
    a ``pip install`` gives), running the build it holds; the repository's own copy must not be
    the one that answers."""
    prebuilt = prebuilt_wheel(compiled_build=True) if build == "compiled" else None
    wheel = prebuilt or _build_wheel(tmp_path, build)
    assert_package_files_are_the_checkout_s(wheel)
    version = card_envs.__version__
    names = set(zipfile.ZipFile(wheel).namelist())
    package = {f"{installed}/{p.relative_to(ROOT / source).as_posix()}"
               for source, installed in MAPPED.items() for p in (ROOT / source).rglob("*")
               if p.is_file() and not any(p.match(pattern) for pattern in BUILT)
               and "__pycache__" not in p.parts}
    if build == "sources":
        assert wheel.name == f"card_envs-{version}-py3-none-any.whl"
        extra: set[str] = set()
    else:
        tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
        assert wheel.name.startswith(f"card_envs-{version}-{tag}-{tag}-"), wheel.name
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        extra = {f"card_envs/{compiled.MANIFEST}", f"{compiled.GROUP}__mypyc{suffix}"} | {
            compiled.source_path(m, Path("card_envs")).with_suffix(suffix).as_posix()
            for m in compiled.MODULES}
    info = f"card_envs-{version}.dist-info"
    assert {n for n in names if not n.startswith(f"{info}/")} == package | extra
    assert {f"card_envs/games/{game}/RULES.md" for game in card_envs.GAMES} <= names
    assert "card_envs/py.typed" in names
    assert {f"card_envs/configs/{game}.yaml" for game in card_envs.GAMES} <= names
    assert "card_envs/training/train.py" in names
    assert not {n for n in names if n.split("/")[0] in ("training", "configs")}  # no top level
    entry_points = zipfile.ZipFile(wheel).read(f"{info}/entry_points.txt").decode()
    assert "card-envs = card_envs.cli:main" in entry_points
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata
    assert "Requires-Dist: torch" not in metadata.split("Provides-Extra")[0]  # envs need no torch

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    expected_build = "compiled" if build == "compiled" else (
        "plain Python (no compiled build installed)")
    script = f"""
import sys
sys.path.insert(0, {str(site)!r})
from importlib import resources
import gymnasium, numpy as np
import card_envs
assert card_envs.__file__.startswith({str(site)!r}), card_envs.__file__
assert card_envs.BUILD == {expected_build!r}, card_envs.BUILD
for game, spec in card_envs.GAMES.items():
    assert (resources.files("card_envs") / "games" / game / "RULES.md").read_text().strip()
    env = gymnasium.make(spec.gym_id)
    _, info = env.reset(seed=0)
    for _ in range(20):
        action = int(np.flatnonzero(info["action_mask"])[0])
        _, _, term, trunc, info = env.step(action)
        if term or trunc:
            _, info = env.reset()
from card_envs.training.shipped import config_dir, shipped_configs
assert str(config_dir()).startswith({str(site)!r}), config_dir()
assert set(card_envs.GAMES) <= set(shipped_configs())
import importlib.util
assert importlib.util.find_spec("training") is None  # the trainer only under card_envs
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300, env=build_environment(pure=False))
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr


def test_the_envs_and_agents_import_without_torch_or_sb3() -> None:
    """Users of the envs alone install no torch: importing the package, its agents (the
    PolicyAgent class too) and every game must not pull it in; a policy file loads it."""
    code = ("import sys, card_envs, card_envs.agents\n"
            "from card_envs.agents import PolicyAgent, make_agent\n"
            "from card_envs import deluxe_memory_v1, dogpile_v1, mega_memory_v1, "
            "memory_uno_v1, roy_v1\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'stable_baselines3', 'sb3_contrib'))\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def copy_tracked(dst: Path) -> set[str]:
    """Copy the repository's tracked files (what a clone holds) into ``dst``; their names.
    Skips the calling test outside a git checkout."""
    git = shutil.which("git")
    listed = subprocess.run([git, "ls-files"], cwd=ROOT, capture_output=True, text=True,
                            timeout=60) if git else None
    if listed is None or listed.returncode != 0:
        pytest.skip("needs a git checkout")
    tracked = set(listed.stdout.split()) | {"MANIFEST.in"}
    copied = set()
    for name in tracked:
        if (ROOT / name).is_file():  # a file deleted but not yet committed is left out
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dst / name)
            copied.add(name)
    return copied


def build_sdist(src: Path, out: Path) -> Path:
    """The sdist of the source tree ``src``, built into ``out``."""
    build = subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; "
                               f"build_meta.build_sdist({str(out)!r})"],
        cwd=src, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    (sdist,) = out.glob("*.tar.gz")
    return sdist


def test_the_sdist_holds_the_whole_source_tree(tmp_path: Path) -> None:
    """The sdist is the repository's tracked files (but .gitignore): its tests need their
    conftest, helpers and golden playthroughs, and its README's commands need the Makefile,
    constraints.txt, configs/ and training/ (setuptools alone shipped the test modules only)."""
    tracked = copy_tracked(tmp_path / "src")
    sdist = build_sdist(tmp_path / "src", tmp_path / "dist")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    expected = tracked - {".gitignore"}
    assert expected <= names, sorted(expected - names)
    assert not {n for n in names if "__pycache__" in n or n.endswith(".pyc")}


def test_a_prebuilt_wheel_is_taken_only_when_it_is_one_of_this_checkout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$CARD_ENVS_BUILT_WHEELS`` (CI: make release's dist/): exactly one wheel of this version
    per build, and a wheel whose sources differ from the checkout's is refused by name."""
    version = card_envs.__version__
    monkeypatch.delenv(BUILT_WHEELS_ENV, raising=False)
    assert prebuilt_wheel(compiled_build=True) is None
    monkeypatch.setenv(BUILT_WHEELS_ENV, str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match="holds 0 wheels"):
        prebuilt_wheel(compiled_build=True)
    plain = tmp_path / f"card_envs-{version}-py3-none-any.whl"
    compiled_wheel = tmp_path / f"card_envs-{version}-cp311-cp311-linux_x86_64.whl"
    (tmp_path / "card_envs-0.0.1-cp311-cp311-linux_x86_64.whl").touch()  # another version
    for wheel in (plain, compiled_wheel):
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr("card_envs/__init__.py", (ROOT / "card_envs/__init__.py").read_bytes())
            archive.writestr("card_envs/training/train.py",
                             (ROOT / "training/train.py").read_bytes())
            archive.writestr(f"card_envs-{version}.dist-info/RECORD", "")
            # A build output, also in a checkout built in place (make build): not a source.
            for extension in ROOT.glob("card_envs/core/*.so"):
                archive.writestr(f"card_envs/core/{extension.name}", b"another build")
    assert prebuilt_wheel(compiled_build=True) == compiled_wheel
    assert prebuilt_wheel(compiled_build=False) == plain
    assert_package_files_are_the_checkout_s(compiled_wheel)

    with zipfile.ZipFile(compiled_wheel, "a") as archive:
        archive.writestr("card_envs/configs/roy.yaml", b"game: roy  # an older config\n")
    with pytest.raises(AssertionError, match=r"other sources than the checkout: "
                                             r"\['card_envs/configs/roy.yaml'\]"):
        assert_package_files_are_the_checkout_s(compiled_wheel)
    (tmp_path / f"card_envs-{version}-cp312-cp312-linux_x86_64.whl").touch()
    with pytest.raises(pytest.fail.Exception, match="holds 2 wheels"):
        prebuilt_wheel(compiled_build=True)

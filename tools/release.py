"""``make release``: build what a release publishes, check it, and install each in a fresh venv.

Into ``dist/`` (emptied first): the sdist, the compiled wheel for this platform and the
plain-Python wheel (``CARD_ENVS_PURE_PYTHON=1``), both wheels built from the sdist, as PyPI's
users' installers would build them, so a file missing from the sdist fails here. ``twine check
--strict`` checks their metadata (the README renders as the project page). Then each wheel, and
the sdist built as a plain-Python install, goes into its own new virtualenv, where a script run
outside the checkout imports the package, checks the build and version it reports, makes every
game's env through its entry module, PettingZoo's registry and ``gymnasium.make``, plays a few
steps of each, and asks for each retired id (which must raise naming the current one). Torch is
not needed. Nothing is uploaded: publishing is ``twine upload dist/*`` by hand
(docs/versioning.md).

    python tools/release.py [--keep]      # --keep leaves the virtualenvs in build/release/
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
PURE_ENV = "CARD_ENVS_PURE_PYTHON"
#: pip's flags on our machines (constraints.txt keeps any resolver from a CUDA torch).
PIP_FLAGS = ["--constraint", str(ROOT / "constraints.txt")] + (
    ["--find-links", "/opt/wheels"] if Path("/opt/wheels").is_dir() else [])

#: Run by each fresh virtualenv's Python, outside the checkout: argv[1] is the build it must
#: report ("compiled" or "plain"), argv[2] the version.
SMOKE = r'''
import sys, warnings
import gymnasium, numpy as np, pettingzoo
import card_envs
from card_envs import versions

want_build, want_version = sys.argv[1], sys.argv[2]
assert card_envs.__file__ and "site-packages" in card_envs.__file__, card_envs.__file__
assert card_envs.__version__ == want_version, card_envs.__version__
assert card_envs.BUILD.startswith(want_build), card_envs.BUILD

def play(env, steps=30):
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter(steps):
        obs, reward, term, trunc, info = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        env.step(None if term or trunc else int(rng.choice(legal)))

warnings.simplefilter("ignore")
for game, spec in card_envs.GAMES.items():
    module = __import__(spec.module, fromlist=["env"])
    now = versions.current(game)
    play(module.env())
    aec = pettingzoo.make("aec", spec.pz_id)
    assert aec.metadata["name"] == now.name, aec.metadata
    play(aec)
    gym = gymnasium.make(spec.gym_id, opponent="heuristic")
    obs, info = gym.reset(seed=0)
    for _ in range(10):
        obs, reward, term, trunc, info = gym.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            obs, info = gym.reset()
    if spec.parallel:
        par = module.parallel_env()
        observations, infos = par.reset(seed=0)
        for _ in range(10):
            if not par.agents:  # the episode ended: deal again
                observations, infos = par.reset()
            observations, rewards, terms, truncs, infos = par.step(
                {a: int(np.flatnonzero(observations[a]["action_mask"])[0]) for a in par.agents})
    for old in versions.VERSIONS[game][:-1]:
        for make in (lambda: gymnasium.make(old.gym_id),
                     lambda: pettingzoo.make("aec", old.pz_id),
                     lambda: __import__(old.module)):
            try:
                make()
            except versions.RetiredEnvError as err:
                assert now.gym_id in str(err) or now.pz_id in str(err) or now.module in str(err)
            else:
                raise AssertionError(f"{old.gym_id} did not raise")
    print(f"{spec.gym_id}: made and stepped (AEC, PettingZoo registry, Gymnasium"
          + (", Parallel" if spec.parallel else "") + f"); {now.number} retired ids checked")
print("build:", card_envs.BUILD, "version:", card_envs.__version__)
'''


def run(cmd: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    shown = ["<smoke script>" if "\n" in arg else arg for arg in cmd]
    print("+", " ".join(shown), flush=True)
    subprocess.run(cmd, cwd=cwd, env=env, check=True)


def environment(pure: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if pure:
        env[PURE_ENV] = "1"
    return env


def source_files() -> list[str]:
    """The checkout's files as git sees them (tracked, and new ones not ignored): what a clone
    with this working tree's changes holds, without .venv, build outputs or runs."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [name for name in out.splitlines() if (ROOT / name).is_file()]


def build(work: Path) -> dict[str, Path]:
    """The sdist (from a copy of the source files) and both wheels (each from its own unpacked
    copy of the sdist: the compiled build's intermediates must not reach the plain one)."""
    python = sys.executable
    src = work / "src"
    for name in source_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    run([python, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(DIST), str(src)])
    (sdist,) = DIST.glob("*.tar.gz")
    out = {"sdist": sdist}
    for kind, pure in (("compiled", False), ("plain", True)):
        unpacked = work / kind
        with tarfile.open(sdist) as archive:
            archive.extractall(unpacked, filter="data")
        (tree,) = unpacked.iterdir()
        before = set(DIST.glob("*.whl"))
        run([python, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(DIST),
             str(tree)], env=environment(pure))
        (wheel,) = set(DIST.glob("*.whl")) - before
        out[kind] = wheel
    if not out["plain"].name.endswith("-py3-none-any.whl"):
        raise SystemExit(f"the plain-Python wheel is not pure: {out['plain'].name}")
    if out["compiled"].name.endswith("-none-any.whl"):
        raise SystemExit(f"the compiled wheel holds no extension: {out['compiled'].name}")
    return out


def install_and_play(artifact: Path, build_kind: str, version: str, venv: Path) -> None:
    """A fresh virtualenv with only ``artifact`` and its dependencies, then the smoke script
    from an empty folder (the checkout's package must not be the one imported)."""
    run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         *PIP_FLAGS, str(artifact)], env=environment(pure=build_kind == "plain"))
    outside = venv / "run"
    outside.mkdir()
    env = environment(pure=False)  # the build installed must be the one that runs
    env.pop("PYTHONPATH", None)
    run([str(python), "-c", SMOKE, build_kind, version], cwd=outside, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", action="store_true",
                        help="keep the work folder (build/release/) with its virtualenvs")
    args = parser.parse_args(argv)
    start = time.monotonic()
    sys.path.insert(0, str(ROOT))
    from card_envs import __version__

    shutil.rmtree(DIST, ignore_errors=True)
    DIST.mkdir()
    if args.keep:
        work = ROOT / "build" / "release"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="card-envs-release-"))
    try:
        artifacts = build(work)
        run([sys.executable, "-m", "twine", "check", "--strict",
             *(str(p) for p in artifacts.values())])
        for kind, artifact in (("compiled", artifacts["compiled"]),
                               ("plain", artifacts["plain"]), ("plain", artifacts["sdist"])):
            install_and_play(artifact, kind, __version__, work / f"venv-{artifact.name}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"release {__version__}: {', '.join(p.name for p in artifacts.values())} in dist/, "
          f"checked and installed ({time.monotonic() - start:.0f} s); nothing uploaded")
    return 0


if __name__ == "__main__":
    sys.exit(main())

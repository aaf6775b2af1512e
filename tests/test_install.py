"""What a user gets from ``pip install "card-envs[train]"``, tried as a user would.

The sdist is built from the repository's tracked files, the wheel from the unpacked sdist (as
pip builds one from PyPI: the compiled build unless ``CARD_ENVS_PURE_PYTHON=1``), and the wheel
is installed into a fresh virtualenv: first alone, where ``card-envs games`` and ``demo`` work
and ``train`` names the extra it needs, then with its ``[train]`` extra, where ``card-envs
train roy`` trains from the shipped config, ``--resume`` continues the run and ``card-envs
evaluate`` plays its policy. Every command runs from an empty directory: nothing may come from
the checkout. Minutes (the installs), so it has its own marker and make target (``make
test-install``), run once by CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import venv
from pathlib import Path

import pytest

from card_envs import compiled
from tests.test_packaging import (
    ROOT,
    assert_package_files_are_the_checkout_s,
    build_sdist,
    copy_tracked,
    prebuilt_wheel,
)
from training import yaml12

pytestmark = pytest.mark.install

WHEELS = Path("/opt/wheels")  # our machines' local CPU torch wheel (see the Makefile)
#: A run of seconds: the shipped ROY config, shrunk.
SMALL = ["env.episode=hand", "ppo.n_steps=32", "ppo.batch_size=128", "ppo.n_epochs=1",
         "ppo.policy_kwargs={net_arch: [32, 32]}", "selfplay.n_envs=8",
         "selfplay.snapshot_every=512", "selfplay.pool_size=3", "training.total_timesteps=1024",
         "training.checkpoint_every=512", "evaluation.every=512", "evaluation.games=8",
         "evaluation.final_games=12", "evaluation.parallel=16", "pretrain.games=2",
         "pretrain.epochs=1", "pretrain.max_decisions=500"]


def _environment() -> dict[str, str]:
    """This process's environment without what would point the install at the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(argv: list[str], cwd: Path, timeout: float = 600,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env or _environment())


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip would build from our sdist (its build needs setuptools and mypy, this
    environment's: no index is asked for them), or the one ``make release`` built from it
    (``$CARD_ENVS_BUILT_WHEELS``, as CI runs this)."""
    built = prebuilt_wheel(compiled_build=os.environ.get(compiled.PURE_PYTHON_ENV) != "1")
    if built is not None:
        assert_package_files_are_the_checkout_s(built)
        return built
    tmp = tmp_path_factory.mktemp("build")
    copy_tracked(tmp / "clone")
    sdist = build_sdist(tmp / "clone", tmp / "sdist")
    with tarfile.open(sdist) as archive:
        if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12, 3.11.4
            archive.extractall(tmp / "unpacked", filter="data")
        else:
            archive.extractall(tmp / "unpacked")  # our own archive
    (source,) = (tmp / "unpacked").iterdir()
    env = _environment()
    env.pop(compiled.PURE_PYTHON_ENV, None)
    if os.environ.get(compiled.PURE_PYTHON_ENV) == "1":
        env[compiled.PURE_PYTHON_ENV] = "1"
    _ok(_run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
              "--no-index", "-w", str(tmp / "wheel"), str(source)], tmp, env=env))
    (built,) = (tmp / "wheel").glob("*.whl")
    return built


def test_a_wheel_installed_with_its_train_extra_trains_resumes_and_evaluates(
        wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "--quiet",
           "--constraint", str(ROOT / "constraints.txt")]
    if WHEELS.is_dir():
        pip += ["--find-links", str(WHEELS)]
    card_envs = str(bin_dir / "card-envs")
    work = tmp_path / "empty"
    work.mkdir()

    # The envs alone: no torch, and the commands that need none work.
    _ok(_run([*pip, str(wheel)], work))
    games = json.loads(_ok(_run([card_envs, "games", "--json"], work)))["games"]
    assert {g["name"] for g in games} == {"roy", "mega_memory", "memory_uno", "deluxe_memory",
                                          "dogpile"}
    assert "heuristic vs random over 5 games" in _ok(_run([card_envs, "demo", "--games", "5"],
                                                          work))
    done = _run([card_envs, "train", "roy"], work)
    assert done.returncode == 2 and 'pip install "card-envs[train]"' in done.stderr, done
    assert "Traceback" not in done.stderr and not (work / "runs").exists()
    python = str(bin_dir / "python")
    no_training = "import importlib.util as u; assert u.find_spec('training') is None"
    _ok(_run([python, "-c", no_training], work))

    # With the extra: train from the shipped config, resume, evaluate.
    _ok(_run([*pip, f"{wheel}[train]"], work, timeout=1200))
    sets = [arg for item in SMALL for arg in ("--set", item)]
    out = _ok(_run([card_envs, "train", "roy", *sets, "--run-name", "r", "--no-progress"], work))
    run_dir = work / "runs" / "roy" / "r"
    assert f"run directory: {Path('runs') / 'roy' / 'r'}" in out
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["num_timesteps"] == 1024 and summary["evaluation"]
    config = yaml12.load((run_dir / "config.yaml").read_text())
    assert config["training"]["total_timesteps"] == 1024
    assert config["ppo"]["policy_kwargs"]["net_arch"] == [32, 32]

    out = _ok(_run([card_envs, "train", "--resume", str(run_dir), "--total-timesteps", "2048",
                    "--no-progress"], work))
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["num_timesteps"] == 2048
    steps = [int(line.split(",")[0]) for line in
             (run_dir / "progress.csv").read_text().splitlines()[1:]]
    assert steps == sorted(set(steps)) and steps[-1] == 2048 and 1024 in steps

    out = _ok(_run([card_envs, "evaluate", "--game", "roy", "--agents", str(run_dir), "random",
                    "--games", "20", "--out", "eval/r"], work))
    report = json.loads((work / "eval" / "r.json").read_text())
    assert report["games_per_match"] == 20 and report["config"]["episode"] == "hand"
    assert (work / "eval" / "r.png").exists()
    # The installed trainer is the package's own, and a module named training exists nowhere.
    where = _ok(_run([python, "-c", f"{no_training}\nimport card_envs.training.train as t\n"
                                    "print(t.__file__)"], work))
    assert where.strip().startswith(str(env_dir))

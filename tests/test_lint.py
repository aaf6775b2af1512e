"""``ruff check`` and ``mypy`` are part of the test run, so CI holds the code to the project's
lint rules (``[tool.ruff]`` in pyproject.toml, the 100-column limit included) and card_envs,
training and benchmarks to their type annotations (``[tool.mypy]``: the package ships
``py.typed``, so its users' mypy checks their code against them)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Nothing here depends on which engine build runs: make test runs it, make test-pure not.
pytestmark = pytest.mark.same_in_either_build

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    done = subprocess.run([ruff, "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_is_clean() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    # The cache goes nowhere: no .mypy_cache in the checkout (a run takes about ten seconds).
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "pyproject.toml",
                           "--cache-dir", os.devnull],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr

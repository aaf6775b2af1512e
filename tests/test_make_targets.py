"""The Makefile's test targets select what pyproject's defaults select: ``make test-pure``
leaves out the ``same_in_either_build`` modules and nothing else (a marker added to the
defaults but not to its ``-m`` would run slow soaks or installs there)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _marker_expression(args: list[str]) -> str:
    """The marker expression of a pytest command line (``python -m pytest`` is not one)."""
    (i,) = [i for i, arg in enumerate(args) if arg == "-m" and args[i + 1] != "pytest"]
    return args[i + 1]


def test_test_pure_deselects_the_defaults_and_the_build_independent_modules() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    defaults = _marker_expression(shlex.split(pyproject["ini_options"]["addopts"]))
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    (recipe,) = re.findall(r"^test-pure:.*\n\t(.*)$", makefile, flags=re.M)
    assert _marker_expression(shlex.split(recipe)) == f"{defaults} and not same_in_either_build"
    assert any(line.startswith("same_in_either_build:")
               for line in pyproject["ini_options"]["markers"])

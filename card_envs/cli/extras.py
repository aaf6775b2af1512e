"""What a subcommand needs of an optional extra (``card-envs[train]``), checked before it
imports anything from it: a missing library is one line naming it and the install command,
not a traceback from deep inside the trainer."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import sys

DISTRIBUTION = "card-envs"
#: The import names of the [train] extra's libraries, for a checkout with no installed
#: metadata (an install reads the extra's own list from its metadata).
TRAIN_MODULES = ("torch", "stable_baselines3", "sb3_contrib")


def missing(extra: str) -> list[str]:
    """The distributions of ``extra`` that are not installed, by their names in the extra."""
    try:
        requirements = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return [m for m in TRAIN_MODULES if importlib.util.find_spec(m) is None]
    absent = []
    for requirement in requirements:
        if not _in_extra(requirement, extra):
            continue
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        assert name is not None, requirement  # metadata requirements start with their name
        try:
            importlib.metadata.distribution(name.group())
        except importlib.metadata.PackageNotFoundError:
            absent.append(name.group())
    return absent


def _in_extra(requirement: str, extra: str) -> bool:
    """Whether ``requirement`` (a Requires-Dist line) belongs to ``extra`` and applies here."""
    _, semicolon, marker = requirement.partition(";")
    if not semicolon:
        return False
    try:
        from packaging.markers import Marker
    except ImportError:  # packaging is nearly always installed; without it, the extra alone
        return re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", marker) is not None
    return Marker(marker).evaluate({"extra": extra})


def require(extra: str, prog: str) -> bool:
    """True if ``extra`` is installed; else say what is missing and how to install it."""
    absent = missing(extra)
    if absent:
        print(f"{prog}: needs the {extra} extra, and {', '.join(absent)} "
              f"{'is' if len(absent) == 1 else 'are'} not installed: "
              f'pip install "card-envs[{extra}]"', file=sys.stderr)
    return not absent

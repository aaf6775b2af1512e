"""The code blocks of docs/libraries/<library>.md, which the library tests run as they are
(the game swapped in where a test plays every game), so the pages cannot drift."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.games import GAMES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "libraries"
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def snippet(library: str, index: int = 0) -> str:
    """The ``index``-th Python block of ``docs/libraries/<library>.md``."""
    blocks = _BLOCK.findall((DOCS / f"{library}.md").read_text())
    assert len(blocks) > index, f"docs/libraries/{library}.md has {len(blocks)} python blocks"
    return str(blocks[index])


def for_game(code: str, game: str) -> str:
    """The snippet, written for ROY (``roy_v1``), for ``game``."""
    assert "roy_v1" in code
    return code.replace("roy_v1", f"{game}_v1")


def run(code: str, **names: Any) -> dict[str, Any]:
    """Run ``code`` as a script (``names`` predefined); its globals."""
    namespace: dict[str, Any] = {"__name__": "__snippet__", **names}
    exec(compile(code, "<docs snippet>", "exec"), namespace)
    return namespace


def env_module(game: str) -> Any:
    return importlib.import_module(GAMES[game].module)


def legal(mask: Any) -> np.ndarray:
    return np.flatnonzero(np.asarray(mask))

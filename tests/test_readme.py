"""The README's code examples run as written (the training one with fewer steps)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int) -> None:
    import torch

    torch.set_num_threads(1)
    code = BLOCKS[index].replace("model.learn(50_000)", "model.learn(64)")
    exec(compile(code, f"README example {index}", "exec"), {})

"""Every ```python block in README.md and docs/**/*.md runs, as written, with Sybil.

A page's blocks run in order in one namespace, as a reader would paste them. A block that
cannot run here is opted out in the Markdown itself, right above it, with a reason:
``<!-- skip: next "needs a GPU" -->`` (Sybil's skip directive). A skip without a reason fails.
"""

from __future__ import annotations

import re
from pathlib import Path
from unittest import SkipTest

import pytest

sybil = pytest.importorskip("sybil")
from sybil import Document  # noqa: E402
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md")
                                      if "_hooks" not in p.parts)])
FENCE = re.compile(r"^```python\s*$", flags=re.M)
#: Sybil's skip directive: an HTML comment at the start of a line.
SKIP = re.compile(r"^[ \t]*<!--+\s*skip:?[ \t]*(\w+)(.*?)--+>", flags=re.S | re.M)


def _page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_the_pages_have_examples() -> None:
    """The test finds the examples (a changed fence or path would make it pass vacuously)."""
    counts = {_page_id(p): len(FENCE.findall(p.read_text(encoding="utf-8"))) for p in PAGES}
    assert counts["README.md"] >= 2 and counts["docs/getting-started.md"] >= 2, counts
    assert sum(counts.values()) >= 8, counts


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_python_example_runs(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = page.read_text(encoding="utf-8")
    for action, reason in SKIP.findall(text):
        assert action == "end" or reason.strip().strip("\"'"), (
            f"{_page_id(page)}: a 'skip: {action}' with no reason; say why the block cannot run")
    if not FENCE.search(text):
        return
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)  # the examples train for a moment; other tests run beside them
    monkeypatch.chdir(ROOT)  # examples name files as a reader of a checkout would
    code_blocks = PythonCodeBlockParser()
    document = Document.parse(str(page), code_blocks, SkipParser())
    found = [e for e in document if e.region.evaluator is not None
             and e.region.parsed is not None and not isinstance(e.parsed, tuple)]
    assert len(found) == len(FENCE.findall(text)), "Sybil did not find every python block"
    for example in document:
        try:
            example.evaluate()
        except SkipTest:
            continue
        except Exception as error:
            raise AssertionError(
                f"{_page_id(page)}, line {example.line}: this example fails ({error!r}). A block "
                f"that cannot run in the tests (a library they lack, a GPU, a long run) is opted "
                f"out on the line above its fence: <!-- skip: next \"why\" -->") from error

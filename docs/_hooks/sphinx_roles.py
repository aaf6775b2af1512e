"""Griffe extension: Sphinx roles in docstrings (``:class:`Agent` ``) shown as code.

The docstrings are written for ``help()`` and IDEs, in reST's role syntax; Markdown would print
the role itself. ``mkdocs.yml`` loads this file under mkdocstrings' ``extensions``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:mod|class|func|meth|data|attr|exc|obj):`(~?)([^`]+)`")


def _as_code(match: re.Match[str]) -> str:
    """``:class:`~a.b.C` `` shows ``C``, as Sphinx does; anything else in full."""
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


class SphinxRolesAsCode(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_as_code, obj.docstring.value)

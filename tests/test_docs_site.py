"""The documentation site (mkdocs.yml, docs/): the game pages the build generates show what the
code has, and the nav lists every page. ``make docs`` builds the site itself (CI runs it)."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from card_envs.core.config import Option, int_range
from card_envs.games import GAMES, make_engine

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, DOCS / "_hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


game_pages = _load("game_pages")


def _table(page: str, heading: str) -> list[list[str]]:
    """The rows of the first table under ``heading`` (its header and rule left out)."""
    section = page.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            for line in section.splitlines() if line.startswith("|")]
    return rows[2:]


@pytest.mark.parametrize("game", list(GAMES))
def test_game_page_options_are_the_engines(game: str) -> None:
    """Every option, in the engine's order, with its default and allowed values."""
    options = GAMES[game].engine_class().options()
    rows = _table(game_pages.game_page(game), "## Options")
    assert [r[0] for r in rows] == [f"`{key}`" for key in options]
    for row, option in zip(rows, options.values(), strict=True):
        assert row[1] == f"`{option.default!r}`"
        assert row[2].replace("\\|", "|") == option.allowed()
        assert option.doc.split()[0] in row[3]


@pytest.mark.parametrize("game", list(GAMES))
def test_game_page_observation_and_actions_are_the_engines(game: str) -> None:
    page = game_pages.game_page(game)
    counts = GAMES[game].engine_class().OPTIONS["num_players"].choices or ()
    engines = {n: make_engine(game, num_players=n) for n in counts}
    default = make_engine(game)
    rows = _table(page, "## Observation fields")
    assert [r[0] for r in rows[:-1]] == [f"`{f}`" for f in default.layout.slices]
    for row, (field, sl) in zip(rows[:-1], default.layout.slices.items(), strict=True):
        sizes = [str(e.layout.slices[field].stop - e.layout.slices[field].start)
                 for e in engines.values()]
        assert row[1] == (sizes[0] if len(set(sizes)) == 1 else ", ".join(sizes)), field
        assert row[2] == str(sl.start)
        assert row[3] == " x ".join(map(str, default.layout.shapes[field]))
        assert row[4] == default.layout.meanings[field] != ""
    assert rows[-1][1] == ", ".join(str(e.layout.size) for e in engines.values())
    actions = _table(page, "## Actions")
    families = list(dict.fromkeys(a.split(":")[0] for a in default.action_names))
    assert [r[0] for r in actions] == [f"`{f}`" for f in families]
    assert actions[-1][3] == f"`{default.action_names[-1]}`"
    last = actions[-1][1].split("..")[-1]
    assert int(last) == default.num_actions - 1
    for n, engine in engines.items():
        assert f"{engine.num_actions} (n = {n})" in page


@pytest.mark.parametrize("game", list(GAMES))
def test_game_page_holds_the_card_and_the_whole_rules(game: str) -> None:
    page = game_pages.game_page(game)
    rules = (ROOT / "card_envs" / "games" / game / "RULES.md").read_text(encoding="utf-8")
    assert re.sub(r"^#", "##", rules, flags=re.M) in page  # every heading one level down
    doc = importlib.import_module(GAMES[game].module).__doc__ or ""
    assert doc.strip().split("\n", 1)[0] in page
    usage = doc.split("Usage::", 1)[1].strip().splitlines()[0].strip()
    assert f"```python\n{usage}\n" in page


def test_game_page_shows_its_picture_once_there_is_one(tmp_path: Path) -> None:
    placeholder = game_pages.game_page("roy", tmp_path)
    assert "docs/games/img/roy.svg" in placeholder and "![" not in placeholder
    (tmp_path / "games" / "img").mkdir(parents=True)
    (tmp_path / "games" / "img" / "roy.png").write_bytes(b"")
    assert "![A position of ROY](img/roy.png)" in game_pages.game_page("roy", tmp_path)


def test_option_allowed_says_what_validate_accepts() -> None:
    assert Option(2, "", choices=(2, 3)).allowed() == "2, 3"
    assert Option(1, "", check=int_range(1)).allowed() == "an integer >= 1"
    assert Option(1, "", check=int_range(0, 9)).allowed() == "an integer in 0..9"
    assert Option(None, "").allowed() == "any value"


def _nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for item in nav:
        values = item.values() if isinstance(item, dict) else [item]
        for value in values:
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_the_nav_lists_every_page_and_every_game() -> None:
    """mkdocs.yml's nav holds each page under docs/ and each generated game page, and nothing
    else (``make docs`` fails on either too; this says so without the docs tools)."""
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_pages(config["nav"])
    written = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
               if "_hooks" not in p.parts}
    generated = {f"games/{game}.md" for game in GAMES}
    assert sorted(nav) == sorted(written | generated)
    assert config["theme"]["font"] is False  # no Google Fonts: the build stays offline


def test_sphinx_roles_show_as_code() -> None:
    pytest.importorskip("griffe")
    roles = _load("sphinx_roles")
    text = "See :class:`~card_envs.agents.Agent`, :func:`make_agent` and :mod:`card_envs.compiled`."
    assert roles.ROLE.sub(roles._as_code, text) == (
        "See `Agent`, `make_agent` and `card_envs.compiled`.")

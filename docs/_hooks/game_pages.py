"""MkDocs hook: one page per game, generated from the code at build time.

Each ``games/<game>.md`` holds the game's environment card (its entry module's docstring), its
observation fields, action families and options read from the engine itself, and its whole
RULES.md, so a table can never disagree with the code. ``mkdocs.yml`` lists this file under
``hooks``; ``tests/test_docs_site.py`` checks the pages it makes.
"""

from __future__ import annotations

import importlib
import re
from itertools import groupby
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: Where a picture of a game goes (``<game>.png`` or ``.svg``); the page shows it once it exists.
PICTURES = Path("games") / "img"


def _players(name: str) -> tuple[int, ...]:
    from card_envs.games import get_game

    return tuple(get_game(name).engine_class().OPTIONS["num_players"].choices or ())


def _code(value: Any) -> str:
    return f"`{value!r}`"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _env_card(doc: str) -> str:
    """The entry module's docstring as Markdown: its ``Usage::`` block becomes a Python fence
    (the block itself is run by tests/test_readme.py)."""
    head, _, usage = doc.partition("Usage::")
    lines = [line[4:] for line in usage.splitlines() if line.strip()]
    body = head.split("\n", 1)[1].strip() if "\n" in head else ""
    if lines:
        body += "\n\nUsage:\n\n```python\n" + "\n".join(lines) + "\n```"
    return body


def _picture(name: str, title: str, docs_dir: Path) -> str:
    for suffix in (".svg", ".png"):
        if (docs_dir / PICTURES / f"{name}{suffix}").is_file():
            return f"![A position of {title}](img/{name}{suffix})"
    return (f'!!! note "Picture"\n    A picture of a {title} position goes here: save it as '
            f"`docs/{PICTURES.as_posix()}/{name}.svg` (or `.png`) and this page shows it.")


def observation_table(name: str) -> str:
    """Every observation field in vector order, with its size for each player count and its
    offset for the default one."""
    from card_envs.games import make_engine

    counts = _players(name)
    layouts = {n: make_engine(name, num_players=n).layout for n in counts}
    default = make_engine(name).num_players
    head = "n = " + ", ".join(map(str, counts)) if len(counts) > 1 else f"n = {counts[0]}"
    rows = [f"| field | size ({head}) | offset (n = {default}) | shape (n = {default}) | meaning |",
            "| --- | --- | --- | --- | --- |"]
    for field, spec in layouts[default].fields().items():
        sl = spec.slice
        sizes = [layouts[n].slices[field].stop - layouts[n].slices[field].start for n in counts]
        size = str(sizes[0]) if len(set(sizes)) == 1 else ", ".join(map(str, sizes))
        shape = " x ".join(map(str, spec.shape))
        rows.append(f"| `{field}` | {size} | {sl.start} | {shape} | {spec.meaning} |")
    totals = ", ".join(str(layouts[n].size) for n in counts)
    rows.append(f"| **total** | {totals} | | | |")
    return "\n".join(rows)


def action_table(name: str) -> str:
    """The action families (``play`` of ``play:TH``) with their ids for the default player
    count, and the number of actions for every count."""
    from card_envs.games import make_engine

    engine = make_engine(name)
    rows = [f"| family | ids (n = {engine.num_players}) | first | last |",
            "| --- | --- | --- | --- |"]
    start = 0
    for family, group in groupby(engine.action_names, key=lambda a: a.split(":")[0]):
        names = list(group)
        stop = start + len(names) - 1
        ids = str(start) if stop == start else f"{start}..{stop}"
        rows.append(f"| `{family}` | {ids} | `{names[0]}` | `{names[-1]}` |")
        start = stop + 1
    counts = ", ".join(f"{make_engine(name, num_players=n).num_actions} (n = {n})"
                       for n in _players(name))
    return "\n".join(rows) + f"\n\nNumber of actions: {counts}."


def options_table(name: str) -> str:
    """Every option the game's config accepts (the common ones first), with its default, what
    it allows and, where it only matters with another option's value, which."""
    from card_envs.core.config import COMMON_OPTIONS
    from card_envs.games import get_game

    rows = ["| option | default | allowed | what it does |", "| --- | --- | --- | --- |"]
    for key, option in get_game(name).engine_class().options().items():
        text = option.doc
        if option.needs is not None:
            text += f" Only with `{option.needs[0]}={option.needs[1]!r}`."
        if key in COMMON_OPTIONS:
            text += " (Every game.)"
        rows.append(f"| `{key}` | {_code(option.default)} | {_cell(option.allowed())} | "
                    f"{_cell(text)} |")
    return "\n".join(rows)


def rules_section(name: str) -> str:
    """The game's RULES.md, its headings one level down, under this page's title."""
    text = (ROOT / "card_envs" / "games" / name / "RULES.md").read_text(encoding="utf-8")
    return re.sub(r"^(#+) ", r"#\1 ", text, flags=re.M)


def game_page(name: str, docs_dir: Path = ROOT / "docs") -> str:
    from card_envs.games import get_game

    spec = get_game(name)
    doc = importlib.import_module(spec.module).__doc__ or ""
    summary = doc.strip().split("\n", 1)[0]
    return "\n\n".join([
        f"# {spec.title}",
        f"{summary}",
        f"PettingZoo: `{spec.module}.env()` or `pettingzoo.make(\"aec\", \"{spec.pz_id}\")`; "
        f"Gymnasium: `gymnasium.make(\"{spec.gym_id}\")`. The tables below are generated from "
        f"the engine when the site is built.",
        _picture(name, spec.title, docs_dir),
        "## Environment card",
        _env_card(doc),
        "## Observation fields",
        "The observation is one flat float32 vector, these fields in this order "
        "(`env.decode_observation(obs)` splits one by name, each field in its shape; "
        "`env.observation_layout()` gives the table below: see "
        "[Observations and snapshots](../observations.md)). The rules below say more of what "
        "each field means, under *Observation*.",
        observation_table(name),
        "## Actions",
        "Action ids and names: `env.action_name(a)` and `env.action_id(name)`.",
        action_table(name),
        "## Options",
        f"Keyword arguments of `{spec.module}.env()`, `gymnasium.make(\"{spec.gym_id}\", ...)` "
        f"and a training config's `env` section. An unknown key, a bad value, or an option set "
        f"where it changes nothing is a `ValueError` naming it.",
        options_table(name),
        rules_section(name),
    ]) + "\n"


def on_files(files: Any, config: Any) -> Any:
    """Add ``games/<game>.md`` for every game to the site's files."""
    from mkdocs.structure.files import File

    from card_envs.games import GAMES

    docs_dir = Path(config["docs_dir"])
    for name in GAMES:
        files.append(File.generated(config, f"games/{name}.md",
                                    content=game_page(name, docs_dir)))
    return files

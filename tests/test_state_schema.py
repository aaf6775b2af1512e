"""The documented state_dict schema (issue 38) is the code's: every snapshot field of every
game is documented, docs/observations.md holds the tables the code generates, and the
conventions the tables state (card ids, the top of a pile at the end, -1 for none) hold."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from card_envs.core.cards import card_code
from card_envs.core.snapshot_schema import schema_markdown, value_kind
from card_envs.games import GAMES, make_engine
from tests.engine_helpers import play

PAGE = Path(__file__).resolve().parents[1] / "docs" / "observations.md"


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_snapshot_field_is_documented_in_order(game: str) -> None:
    cls = GAMES[game].engine_class()
    assert set(cls.STATE_DOCS) == set(cls.STATE_FIELDS), game
    engine = cls()
    engine.reset(seed=0)
    schema = engine.state_schema()
    assert list(schema) == list(engine.state_dict()["fields"])
    assert all(text.strip() for text in schema.values())


def test_the_docs_page_holds_the_generated_tables() -> None:
    """Regenerate with ``python -m card_envs.core.snapshot_schema --write docs/observations.md``."""
    assert schema_markdown() in PAGE.read_text()


def test_the_docs_page_examples_run() -> None:
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)):
        exec(compile(block, f"docs/observations.md example {i}", "exec"), {})


def test_value_kinds() -> None:
    assert value_kind({"__ndarray__": [[1, 2], [3, 4], [5, 6]], "dtype": "int16"}) == (
        "ndarray int16 (3, 2)")
    assert value_kind([[1], [2, 3]]) == "list[list[int]]"
    assert value_kind([]) == "list" and value_kind(-1) == "int" and value_kind(None) == "null"


def test_the_top_of_a_deck_is_the_end_of_its_list() -> None:
    """ROY, Mega Mem-Ory and Memory-Uno: the next card drawn is ``deck[-1]``."""
    roy = make_engine("roy", draw_when_able=True)
    roy.reset(seed=0)
    top, seat = roy.deck[-1], roy.current_player
    play(roy, "draw")
    assert top in roy.hands[seat]
    mega = make_engine("mega_memory")
    mega.reset(seed=0)
    top = mega.state_dict()["fields"]["deck"][-1]
    play(mega, "flip:side1", "keep:first", "reveal:deck")
    assert mega.first_card == top
    uno = make_engine("memory_uno", num_players=2, first_player=0)
    uno.reset(seed=0)
    top = uno.state_dict()["fields"]["deck"][-1]
    play(uno, "draw_deck")
    assert uno.drawn == top


def test_minus_one_is_none_and_cards_are_ids() -> None:
    uno = make_engine("memory_uno", num_players=2)
    uno.reset(seed=0)
    fields = uno.state_dict()["fields"]
    assert fields["drawn"] == -1 and fields["selected"] == -1
    assert fields["slots"][4:8] == [-1] * 4  # positions 4..7 of seat 0 are empty at the deal
    dealt = [card_code(c) for c in fields["slots"] if c >= 0]
    assert len(dealt) == 8 and all(len(code) == 2 for code in dealt)
    dogpile = make_engine("dogpile")
    dogpile.reset(seed=0)
    held = dogpile.state_dict()["fields"]["held"]
    assert held["dtype"] == "int16" and held["__ndarray__"] == [-1, -1, -1]
    assert np.array_equal(np.sort(dogpile.pile), np.arange(54))

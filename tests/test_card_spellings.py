"""One spelling of cards everywhere (issue 38): wherever a card is named, "TH" and "10H" both
work, in any case; names that would become ambiguous stay exact."""

from __future__ import annotations

import pytest

from card_envs.core.cards import card_id, parse_stacked_deck
from card_envs.games import GAMES, make_engine


@pytest.mark.parametrize("spelling", ["play:TH", "play:10H", "play:th", "play:10h", " PLAY:Th "])
def test_roy_action_id_takes_either_spelling_of_the_ten(spelling: str) -> None:
    engine = make_engine("roy")
    assert engine.action_id(spelling) == engine.action_names.index("play:TH")


def test_every_env_view_takes_both_spellings() -> None:
    from card_envs import dogpile_v1, roy_v1
    from card_envs.core.gym_env import CardGymEnv

    aec = roy_v1.env()
    gym_env = CardGymEnv("roy")
    par = dogpile_v1.parallel_env()
    assert aec.unwrapped.action_id("play:10c") == gym_env.action_id("PLAY:TC") == 9
    assert par.action_id("dig:07") == par.action_id("DIG:07") == 7


def test_wild_jacks_and_deluxe_memory_ranks_in_any_case() -> None:
    roy = make_engine("roy")
    assert roy.action_id("wild:jc>h") == roy.action_names.index("wild:JC>H")
    deluxe = make_engine("deluxe_memory")
    ten = deluxe.action_names.index("effect:T")
    assert deluxe.action_id("effect:10") == deluxe.action_id("effect:t") == ten
    assert deluxe.action_id("cell:B3") == deluxe.action_names.index("cell:b3")


def test_a_ten_spelling_is_only_a_card_where_the_family_names_cards() -> None:
    """Dogpile's ``dig:10`` is slot 10, not a card: ``dig:t`` is no alias of it."""
    dogpile = make_engine("dogpile")
    assert dogpile.action_id("dig:10") == 10
    with pytest.raises(ValueError, match="unknown action name 'dig:t'"):
        dogpile.action_id("dig:t")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_action_name_has_its_case_free_alias(game: str) -> None:
    """Every action of every game is found by its name in upper and lower case (no two of a
    game's names differ only in case, which would make the aliases ambiguous)."""
    engine = make_engine(game)
    for i, name in enumerate(engine.action_names):
        assert engine.action_id(name) == engine.action_id(name.lower()) == i
        assert engine.action_id(name.upper()) == i


def test_unknown_names_and_non_strings_are_refused() -> None:
    engine = make_engine("roy")
    for bad in ("play:1H", "play:10", "play:XH", 3, None, ["play:TH"]):
        with pytest.raises(ValueError, match="unknown action name"):
            engine.action_id(bad)


def test_stacked_decks_and_card_ids_take_both_spellings() -> None:
    assert card_id("10h") == card_id("TH") == card_id("th")
    deck = ["10H" if c == card_id("TH") else c for c in range(52)]
    assert parse_stacked_deck(deck, range(52)) == list(range(52))

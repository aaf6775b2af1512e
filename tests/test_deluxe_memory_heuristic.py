"""The Deluxe Memory heuristic does what its module docstring says, on stacked deals: it
matches a pair it knows of, tokens go to itself, losses to the richest opponent, and it hides
an unmatched card only when that card's mate is known (a face-up mate: an easy pair for the
next player)."""

from __future__ import annotations

from card_envs.games.deluxe_memory.engine import BLACK_TARGET, RED_TARGET
from card_envs.games.deluxe_memory.heuristic import DeluxeMemoryHeuristic
from tests.engine_helpers import play
from tests.test_deluxe_memory_rules import cell, deal


def _choice(engine) -> str:
    agent = DeluxeMemoryHeuristic(**engine.config)
    seat = engine.current_player
    return engine.action_names[agent.act(engine.observation(seat), engine.legal_mask())]


def _set_tokens(engine, tokens: list[int]) -> None:
    assert sum(tokens) == sum(engine.tokens)
    engine.tokens = list(tokens)
    engine._views_ok = False
    engine.check_invariants()


def test_a_red_pair_pays_itself() -> None:
    engine = deal({"b2": "5H", "b3": "5D"})
    play(engine, "cell:b2", "cell:b3")
    assert engine.phase == RED_TARGET
    assert _choice(engine) == "target:+0"


def test_a_black_pair_charges_the_richest_opponent() -> None:
    for tokens, richest in (([20, 15, 25], "target:+2"), ([20, 25, 15], "target:+1")):
        engine = deal({"b2": "5C", "b3": "5S"})
        _set_tokens(engine, tokens)
        play(engine, "cell:b2", "cell:b3")
        assert engine.phase == BLACK_TARGET
        assert _choice(engine) == richest, tokens


def test_second_pick_takes_the_remembered_mate() -> None:
    # Seat 0 sees 5C and 9H and puts the 5C back face down (only seat 0 knows it); seats 1
    # and 2 turn other cards over.
    engine = deal({"b1": "5C", "b2": "9H", "c4": "5S", "d1": "2D", "d2": "3D", "d3": "4D",
                   "d4": "6D"})
    play(engine, "cell:b1", "cell:b2", "nomatch:hide_first")
    play(engine, "cell:d1", "cell:d2", "nomatch:show", "cell:d3", "cell:d4", "nomatch:show")
    play(engine, "cell:c4")  # seat 0 turns the 5S: the 5C it remembers lies face down at b1
    assert not engine.face_up[cell("b1")]
    assert _choice(engine) == "cell:b1"


def _after_three_turns(first: str, second: str) -> object:
    """Seat 0 showed 5S and 9H (face up for all); seats 1 and 2 showed other cards; seat 0 now
    holds ``first`` and ``second`` (no match) and decides how they go back."""
    engine = deal({"b1": "5S", "b2": "9H", "c1": "5C", "c2": "KD", "c3": "7C", "d1": "2D",
                   "d2": "3D", "d3": "4D", "d4": "6D"})
    play(engine, "cell:b1", "cell:b2", "nomatch:show")
    play(engine, "cell:d1", "cell:d2", "nomatch:show", "cell:d3", "cell:d4", "nomatch:show")
    play(engine, f"cell:{first}", f"cell:{second}")
    return engine


def test_hides_an_unmatched_card_only_when_its_mate_is_known() -> None:
    assert _choice(_after_three_turns("c1", "c2")) == "nomatch:hide_first"  # 5C: 5S is up
    assert _choice(_after_three_turns("c3", "c2")) == "nomatch:show"  # 7C, KD: no mates known

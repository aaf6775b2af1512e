"""The ROY heuristic does what its module docstring says, each on a stacked deal: the King of
Spades is held back until an opponent is close to going out, Jacks are kept as wild cards for
turns with no other play, and the announced suit is the one it holds most of."""

from __future__ import annotations

from card_envs.games.roy.heuristic import RoyHeuristic
from tests.engine_helpers import play
from tests.roy_helpers import roy


def _choice(engine) -> str:
    agent = RoyHeuristic(**engine.config)
    seat = engine.current_player
    return engine.action_names[agent.act(engine.observation(seat), engine.legal_mask())]


def test_the_king_of_spades_waits_until_an_opponent_is_close_to_going_out() -> None:
    early = roy([["KS", "9S", "2C", "3C", "4C", "7D", "8D"], []], "5S")
    assert _choice(early) == "play:9S"  # the opponent holds 7 cards: keep the King
    # ... even at the price of a wild Jack (a tie would go to the other card anyway).
    early = roy([["KS", "JD", "2C", "3C", "4C", "7D", "8D"], []], "5S")
    assert _choice(early) == "wild:JD>C"
    # The same choice after the opponent has shed a run down to one card.
    late = roy([["TD", "KS", "9S", "2C", "3C", "4C", "5C"],
                ["2D", "3D", "4D", "5D", "6D", "6S", "8H"]], "9D")
    play(late, "play:TD", "play:2D", "play:3D", "play:4D", "play:5D", "play:6D", "play:6S")
    assert late.current_player == 0 and [len(h) for h in late.hands] == [6, 1]
    assert _choice(late) == "play:KS"


def test_a_jack_is_kept_while_another_card_plays_and_then_names_the_suit_held_most() -> None:
    other_play = roy([["JH", "5H", "2C", "3C", "4C", "7D", "8C"], []], "9H")
    assert _choice(other_play) == "play:5H"
    clubs = roy([["JH", "2C", "3C", "4C", "7D", "8C", "9S"], []], "5H")
    assert _choice(clubs) == "wild:JH>C"  # not play:JH, though the Jack matches the suit
    diamonds = roy([["JH", "2D", "3D", "4C", "7D", "8C", "9S"], []], "5H")
    assert _choice(diamonds) == "wild:JH>D"

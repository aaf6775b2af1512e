"""The Memory-Uno heuristic does what its module docstring says, each on a stacked deal:
it keeps low cards (a low drawn card replaces an unknown one, a high one is discarded) and
throws only cards it remembers that match the graveyard."""

from __future__ import annotations

from card_envs.games.memory_uno.engine import DRAWN, WINDOW
from card_envs.games.memory_uno.heuristic import MemoryUnoHeuristic
from tests.engine_helpers import play
from tests.test_memory_uno_rules import mu


def _choice(engine) -> str:
    agent = MemoryUnoHeuristic(**engine.config)
    seat = engine.current_player
    return engine.action_names[agent.act(engine.observation(seat), engine.legal_mask())]


# Seat 0 knows its bottom cards (positions 2 and 3: A and 2), not its top ones.
HANDS = [["9C", "8C", "AC", "2C"], ["9D", "8D", "5D", "3D"]]


def test_a_low_drawn_card_replaces_an_unknown_one_and_a_high_one_is_discarded() -> None:
    low = mu(HANDS, draws=["AH"])
    play(low, "draw_deck")
    assert low.phase == DRAWN
    assert _choice(low) in ("own:0", "own:1")  # an unknown card (worth ~6.5 on average) goes
    high = mu(HANDS, draws=["QH"])
    play(high, "draw_deck")
    assert _choice(high) == "discard"  # a Queen is worth more than anything it holds


def test_it_throws_a_remembered_match_and_not_an_unknown_one() -> None:
    # Seat 0 discards a 5 (no effect); seat 1 remembers its 5 at position 2 and throws it.
    engine = mu(HANDS, draws=["5H"])
    play(engine, "draw_deck", "discard")
    assert engine.phase == WINDOW and engine.current_player == 1
    assert _choice(engine) == "throw:0.2"
    # The same 5, with seat 1's own 5 where it never looked (position 0): it passes.
    engine = mu([HANDS[0], ["5D", "8D", "9D", "3D"]], draws=["5H"])
    play(engine, "draw_deck", "discard")
    assert engine.current_player == 1 and "throw:0.0" in {
        engine.action_names[a] for a in engine.legal_mask().nonzero()[0]}
    assert _choice(engine) == "pass"

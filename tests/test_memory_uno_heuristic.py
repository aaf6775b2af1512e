"""The Memory-Uno heuristic does what its module docstring says, each on a stacked deal:
it keeps low cards (a low drawn card replaces an unknown one, a high one is discarded), throws
only cards it remembers that match the graveyard, and calls the round when its known hand is
low and clearly below every opponent's estimate."""

from __future__ import annotations

import pytest

from card_envs.games.memory_uno.engine import DRAWN, SLOTS, TURN, WINDOW, MemoryUnoEngine
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


def _knowing(hands: list[list[str]], seen: list[int]) -> MemoryUnoEngine:
    """A fresh deal in which seat 0 has also seen the cards at ``seen`` (slots), as a look
    would have shown them; seat 0 is to start its turn."""
    engine = mu(hands)
    for slot in seen:
        engine._see(slot, engine.slots[slot], 0)
    engine.check_invariants()
    assert engine.current_player == 0 and engine.phase == TURN
    return engine


LOW = ["AC", "2D", "AH", "2C"]  # 6 points
UNSEEN = ["9D", "8D", "5D", "3D"]


@pytest.mark.parametrize(("hands", "seen", "calls"), [
    # Its whole hand known and low, the opponent's unknown (about 23.6 expected): call.
    ([LOW, UNSEEN], [0, 1], True),
    # The same hand with one card unknown (1 + 5.9 + 1 + 2): less sure, still clearly ahead.
    ([LOW, UNSEEN], [0], True),
    # With two unknown (about 14.8 expected): over the limit of 12, it plays on.
    ([LOW, UNSEEN], [], False),
    # Known but high (9 + 8 + 1 + 2 = 20, over the limit of 12): play on.
    ([["9C", "8C", "AH", "2C"], UNSEEN], [0, 1], False),
    # Low, but it has seen an opponent hold less (A, A, two jokers: 2): play on.
    ([LOW, ["AD", "AS", "X1", "X2"]], [0, 1, SLOTS, SLOTS + 1, SLOTS + 2, SLOTS + 3], False),
    # Low and ahead of one opponent, but a third seat's known hand is as low: play on.
    ([LOW, UNSEEN, ["AS", "2H", "2S", "X1"]],
     [0, 1, 2 * SLOTS, 2 * SLOTS + 1, 2 * SLOTS + 2, 2 * SLOTS + 3], False),
], ids=["known-low", "partly-known-low", "half-known", "known-high", "opponent-lower",
        "any-opponent-close"])
def test_it_calls_the_round_when_its_hand_is_low_and_clearly_below_every_opponent(
        hands: list[list[str]], seen: list[int], calls: bool) -> None:
    choice = _choice(_knowing(hands, seen))
    assert (choice == "call") == calls, choice

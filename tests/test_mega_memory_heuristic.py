"""The Mega Mem-Ory heuristic does what its module docstring says, each on a stacked deal: it
starts from the discard pile when its remembered top card scores, and digs down the discard
pile only into cards it remembers."""

from __future__ import annotations

from card_envs.core.cards import card_code
from card_envs.games.mega_memory.engine import DISCARD, DISCARD_SLOT_BASE
from card_envs.games.mega_memory.heuristic import MegaMemoryHeuristic
from tests.engine_helpers import play
from tests.test_mega_memory_rules import arrange, new_game, stacked

TOPS = [["9D"], ["KC"], ["2H"], ["JS"]]


def _choice(engine) -> str:
    agent = MegaMemoryHeuristic(**engine.config)
    seat = engine.current_player
    return engine.action_names[agent.act(engine.observation(seat), engine.legal_mask())]


def test_starts_from_the_discard_pile_when_its_remembered_top_scores() -> None:
    scores = new_game(stacked(TOPS, deck=["4C", "9S"]))
    arrange(scores, deck=["4C"], discard=["9S"])  # 9S on top pairs with the centre's 9D
    assert _choice(scores) == "reveal:discard"
    dull = new_game(stacked(TOPS, deck=["4C", "6S"]))
    arrange(dull, deck=["4C"], discard=["6S"])  # 6S scores with nothing in the centre
    assert _choice(dull) == "reveal:deck"


def test_digs_into_a_remembered_card_only() -> None:
    remembered = new_game(stacked(TOPS, deck=["5H", "QS", "5C", "5D"]))
    arrange(remembered, deck=["5H", "QS"], discard=["5C", "5D"])
    play(remembered, "reveal:deck", "flip:discard")  # 5H and 5D; 5C below, seen going down
    assert remembered.phase == DISCARD and _choice(remembered) == "dig"
    forgotten = new_game(stacked(TOPS, deck=["5H", "QS", "5C", "5D"]))
    arrange(forgotten, deck=["5H", "QS"], discard=["5C", "5D"])
    forgotten._forget_slot(DISCARD_SLOT_BASE)  # nobody remembers the 5C under the 5D now
    forgotten.check_invariants()
    play(forgotten, "reveal:deck", "flip:discard")
    assert forgotten.phase == DISCARD and _choice(forgotten) == "take"


def _side1_known(card: str) -> object:
    """Seat 0 has put ``card`` face down in its side slot 1 (both seats saw it go there);
    seat 1 has played a turn without a score; seat 0 now holds a first card (6C) that scores
    with nothing."""
    e = new_game(stacked(TOPS, side0=["7H", "8C", "3S", "4S"], side1=["AD", "AS", "TC", "TD"],
                         deck=[card, "5D", "6C"]))
    play(e, "flip:side1", "keep:first")  # the first card goes to side slot 1, 7H discarded
    play(e, "reveal:deck", "flip:side1", "keep:second")  # seat 1: 5D discarded, AD kept
    play(e, "reveal:deck")
    assert card_code(e.first_card) == "6C" and e.current_player == 0
    return e


def test_flips_the_side_slot_holding_a_remembered_partner() -> None:
    assert _choice(_side1_known("9S")) == "flip:side1"  # 9S scores with the centre's 9D


def test_without_a_known_score_flips_an_unknown_side_slot() -> None:
    assert _choice(_side1_known("5C")) in ("flip:side2", "flip:side3", "flip:side4")

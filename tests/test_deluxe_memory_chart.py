"""Deluxe Memory: every Mixed Chart effect, each as a sequence of decisions on a stacked deck."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.cards import card_id
from card_envs.games.deluxe_memory.engine import (
    ACE_GAIN,
    ACE_LOSE,
    ACE_REVEAL,
    FIVE_CROSS,
    FOUR_LOOK,
    FOUR_SQUARE,
    JACK_PLAYER,
    KING_CHOICE,
    NOMATCH,
    PICK1,
    QUEEN_GIVER,
    QUEEN_RECEIVER,
    SEVEN_PAY,
    SHIELD,
    SIX_REVEAL,
    TEN_PAIR,
    THREE_REVEAL,
    THREE_TARGET,
    TWO_LOOK,
)
from tests.test_deluxe_memory_rules import cell, deal, legal_names, play, seen, view


def ids(*codes: str) -> list[int]:
    return [card_id(c) for c in codes]


def test_ace_gain_one_lose_one_reveal_one() -> None:
    engine = deal({"a2": "AC", "a3": "AH", "d4": "QS"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == ACE_GAIN
    assert legal_names(engine) == {"target:+0", "target:+1", "target:+2"}
    assert view(engine, 0)["phase"][ACE_GAIN] == 1.0
    play(engine, "target:+0")
    assert engine.phase == ACE_LOSE and legal_names(engine) == {"target:+1", "target:+2"}
    play(engine, "target:+1")
    assert engine.phase == ACE_REVEAL
    assert "cell:a2" not in legal_names(engine)  # only cards on the grid, face down
    play(engine, "cell:d4")
    assert engine.tokens == [21, 19, 20] and engine.bank == 30
    assert not engine.face_up[cell("d4")]  # revealed, then face down again
    assert all(seen(engine, s, "d4") == "Qb" for s in range(3))
    assert engine.current_player == 1 and engine.phase == PICK1
    assert sorted(engine.discard) == sorted(ids("AC", "AH"))


def test_two_look_at_two_cards_and_swap_them() -> None:
    engine = deal({"a2": "2C", "a3": "2D", "c3": "KS", "b1": "4C", "f6": "4H",
                   "d1": "5S", "d2": "6S", "e1": "7S", "e2": "8S"})
    play(engine, "cell:c3", "cell:b1", "nomatch:show")  # KS and 4C face up
    play(engine, "cell:d1", "cell:d2", "nomatch:show")
    play(engine, "cell:e1", "cell:e2", "nomatch:show")
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == TWO_LOOK
    play(engine, "cell:c3")
    assert view(engine, 1)["effect_cells"][cell("c3")] == 1.0
    play(engine, "cell:f6")
    assert engine.grid[cell("f6")] == card_id("KS") and engine.face_up[cell("f6")]
    assert engine.grid[cell("c3")] == card_id("4H") and not engine.face_up[cell("c3")]
    assert seen(engine, 0, "c3") == "4r"  # the one who looked knows where 4H went
    assert seen(engine, 1, "c3") is None and seen(engine, 1, "f6") == "Kb"
    assert engine.current_player == 1


def test_two_the_matcher_sees_both_face_down_cards_it_swaps() -> None:
    """RULES.md, Mixed Chart 2: "Look at two cards. Swap their positions": the matcher sees both."""
    engine = deal({"a2": "2C", "a3": "2D", "c3": "KS", "f6": "4H"})
    play(engine, "cell:a2", "cell:a3", "cell:c3", "cell:f6")
    assert engine.grid[cell("f6")] == card_id("KS") and engine.grid[cell("c3")] == card_id("4H")
    assert seen(engine, 0, "f6") == "Kb" and seen(engine, 0, "c3") == "4r"
    assert seen(engine, 1, "f6") is None and seen(engine, 1, "c3") is None
    assert not engine.face_up[cell("f6")] and engine.current_player == 1


def test_three_revealing_a_three_hits_up_to_three_players() -> None:
    engine = deal({"a2": "3C", "a3": "3H", "d1": "3S", "d2": "7C"}, num_players=4)
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == THREE_REVEAL and "stop" in legal_names(engine)
    play(engine, "cell:d2", "cell:d1")
    assert "cell:d1" not in legal_names(engine)  # a card is revealed once
    play(engine, "stop")
    assert engine.phase == THREE_TARGET
    assert legal_names(engine) == {"target:+1", "target:+2", "target:+3", "stop"}
    play(engine, "target:+1", "target:+3", "stop")
    assert engine.tokens == [20, 17, 20, 17] and engine.bank == 46
    assert all(seen(engine, s, "d1") == "3b" for s in range(4))
    assert not engine.face_up[cell("d1")]
    assert engine.current_player == 1


def test_three_of_a_kind_also_hits_and_three_targets_end_the_choice() -> None:
    engine = deal({"a2": "3C", "a3": "3H", "c1": "9C", "c2": "9D", "c3": "9H"}, num_players=5)
    play(engine, "cell:a2", "cell:a3", "cell:c1", "cell:c2", "cell:c3", "stop")
    assert engine.phase == THREE_TARGET
    play(engine, "target:+1", "target:+2", "target:+4")
    assert engine.tokens == [20, 17, 17, 20, 17]
    assert engine.current_player == 1


def test_three_each_player_is_chosen_to_lose_three_once() -> None:
    """RULES.md, Three: "up to three players" means distinct players other than the matcher."""
    engine = deal({"a2": "3C", "a3": "3H", "d1": "3S"}, num_players=4)
    play(engine, "cell:a2", "cell:a3", "cell:d1", "stop", "target:+1")
    assert legal_names(engine) == {"target:+2", "target:+3", "stop"}
    play(engine, "target:+2", "target:+3")
    assert engine.tokens == [20, 17, 17, 17] and engine.current_player == 1


def test_three_without_a_three_or_three_of_a_kind_does_nothing_after_four_reveals() -> None:
    engine = deal({"a2": "3C", "a3": "3H", "c1": "9C", "c2": "9D", "c3": "KH", "c4": "KS"})
    play(engine, "cell:a2", "cell:a3", "cell:c1", "cell:c2", "cell:c3", "cell:c4")
    assert engine.tokens == [20, 20, 20]  # the fourth reveal ends the series by itself
    assert engine.current_player == 1
    assert seen(engine, 2, "c4") == "Kb"


def test_four_square_look_at_two_privately_and_reveal_two() -> None:
    engine = deal({"a2": "4C", "a3": "4D", "c2": "KS", "c3": "QS", "d2": "JS", "d3": "TS"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == FOUR_SQUARE
    play(engine, "cell:c2")  # the square c2 c3 / d2 d3
    assert engine.phase == FOUR_LOOK
    assert legal_names(engine) == {"cell:c2", "cell:c3", "cell:d2", "cell:d3"}
    area = view(engine, 1)["effect_area"]
    assert sorted(area.nonzero()[0]) == sorted(cell(n) for n in ("c2", "c3", "d2", "d3"))
    play(engine, "cell:c2", "cell:d3")
    assert seen(engine, 0, "c2") == "Kb" and seen(engine, 0, "d3") == "Tb"
    assert seen(engine, 1, "c2") is None and seen(engine, 1, "d3") is None
    assert all(seen(engine, s, "c3") == "Qb" and seen(engine, s, "d2") == "Jb" for s in range(3))
    assert not any(engine.face_up[cell(n)] for n in ("c2", "c3", "d2", "d3"))
    assert engine.current_player == 1


def test_four_square_with_two_cards_left_looks_at_both() -> None:
    engine = deal({"a2": "4C", "a3": "4D", "b2": "8D", "b3": "8S"})
    play(engine, "cell:a2", "cell:a3", "cell:a2")  # the square a2 a3 / b2 b3: two cards left
    assert seen(engine, 0, "b2") == "8r" and seen(engine, 0, "b3") == "8b"
    assert seen(engine, 1, "b2") is None
    assert engine.current_player == 1


def test_four_square_is_offered_when_its_only_face_down_card_is_bottom_right() -> None:
    """RULES.md, Four: any 2 by 2 square holding a face-down card; holes, face-up cards ignored."""
    engine = deal({"a2": "4C", "a3": "4D", "b1": "5S", "c5": "6S", "b2": "KH", "d1": "8S",
                   "d2": "9S", "e1": "JS", "e2": "QS"})
    play(engine, "cell:b1", "cell:c5", "nomatch:show")  # b1 face up
    play(engine, "cell:d1", "cell:d2", "nomatch:show")
    play(engine, "cell:e1", "cell:e2", "nomatch:show")
    play(engine, "cell:a2", "cell:a3")  # a1 (corner) and a2 are now holes
    assert "cell:a1" in legal_names(engine)  # the square a1 a2 / b1 b2: only b2 face down
    play(engine, "cell:a1")
    assert seen(engine, 0, "b2") == "Kr" and seen(engine, 1, "b2") is None
    assert engine.current_player == 1


def test_four_taken_by_a_ten_holder_is_looked_at_by_the_holder() -> None:
    """RULES.md, Ten: the holder takes the match's whole effect "as if it had made the match"."""
    engine = deal({"a2": "TC", "a3": "TD", "b1": "4C", "b2": "4D", "c2": "KS", "c3": "QS",
                   "d2": "JS", "d3": "9S"})
    play(engine, "cell:a2", "cell:a3")  # seat 0 keeps the Tens
    play(engine, "cell:b1", "cell:b2")  # seat 1's mixed Fours: seat 0's effect
    assert engine.phase == FOUR_SQUARE and engine.current_player == 0
    play(engine, "cell:c2", "cell:c2", "cell:d3")
    assert seen(engine, 0, "c2") == "Kb" and seen(engine, 0, "d3") == "9b"
    assert seen(engine, 1, "c2") is None and seen(engine, 1, "d3") is None
    assert all(seen(engine, s, "c3") == "Qb" for s in range(3))
    assert engine.current_player == 2


def test_five_reveal_a_cross_and_take_another_turn() -> None:
    engine = deal({"a2": "5C", "a3": "5H", "c3": "KD", "b3": "KC", "d3": "2H", "c2": "2S",
                   "c4": "7D", "f1": "9C", "f2": "TC"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == FIVE_CROSS
    assert "cell:a1" not in legal_names(engine) and "cell:c3" in legal_names(engine)
    play(engine, "cell:c3")
    for name, code in (("c3", "Kr"), ("b3", "Kb"), ("d3", "2r"), ("c2", "2b"), ("c4", "7r")):
        assert all(seen(engine, s, name) == code for s in range(3))
    assert engine.current_player == 0 and engine.phase == PICK1  # another turn
    play(engine, "cell:f1", "cell:f2", "nomatch:show")
    assert engine.current_player == 1


def test_six_reveal_any_number_and_they_stay_face_up() -> None:
    engine = deal({"a2": "6C", "a3": "6D", "c3": "KD", "e5": "2H"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == SIX_REVEAL and "stop" in legal_names(engine)
    play(engine, "cell:c3", "cell:e5", "stop")
    assert engine.face_up[cell("c3")] and engine.face_up[cell("e5")]
    assert view(engine, 2)["face_up"][cell("e5")] == 1.0
    assert engine.current_player == 1


def test_six_may_reveal_nothing() -> None:
    engine = deal({"a2": "6C", "a3": "6D"})
    play(engine, "cell:a2", "cell:a3", "stop")
    assert not any(engine.face_up) and engine.current_player == 1


def test_seven_another_turn_then_pay_five_for_yet_another() -> None:
    engine = deal({"a2": "7C", "a3": "7D", "c1": "2S", "c2": "3S", "d1": "4S", "d2": "5S"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.current_player == 0 and engine.phase == PICK1
    assert view(engine, 0)["offer_pay"][0] == 1.0
    play(engine, "cell:c1", "cell:c2", "nomatch:show")
    assert engine.phase == SEVEN_PAY and legal_names(engine) == {"pay_for_turn", "stop"}
    play(engine, "pay_for_turn")
    assert engine.tokens[0] == 15 and engine.bank == 35
    assert engine.current_player == 0 and engine.phase == PICK1
    play(engine, "cell:d1", "cell:d2", "nomatch:show")
    assert engine.current_player == 1  # yet another turn only once


def test_seven_decline_to_pay_or_cannot_afford_it() -> None:
    engine = deal({"a2": "7C", "a3": "7D", "c1": "2S", "c2": "3S"})
    play(engine, "cell:a2", "cell:a3", "cell:c1", "cell:c2", "nomatch:show", "stop")
    assert engine.current_player == 1 and engine.tokens[0] == 20
    poor = deal({"a2": "7C", "a3": "7D", "c1": "2S", "c2": "3S"})
    poor.tokens[0], poor.bank = 5, poor.bank + 15
    play(poor, "cell:a2", "cell:a3", "cell:c1", "cell:c2", "nomatch:show")
    assert poor.current_player == 1  # paying 5 would put it out: no offer


def test_seven_under_underdogs_may_spend_the_last_five_tokens() -> None:
    """RULES.md, Seven: the offer needs paying 5 "without going out"; under Underdogs nobody is."""
    engine = deal({"a2": "7C", "a3": "7D", "c1": "2S", "c2": "3S"}, num_players=2,
                  underdogs=True)
    engine.tokens, engine.bank = [5, 20], 35
    play(engine, "cell:a2", "cell:a3", "cell:c1", "cell:c2", "nomatch:show")
    assert engine.phase == SEVEN_PAY
    play(engine, "pay_for_turn")
    assert engine.tokens == [0, 20] and engine.active == [True, True]
    assert engine.current_player == 0 and engine.phase == PICK1


def test_eight_skips_the_next_players_turn() -> None:
    engine = deal({"a2": "8C", "a3": "8D", "c1": "2S", "c2": "3S", "d1": "4S", "d2": "5S"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.current_player == 2 and engine.skips == [0, 0, 0]  # seat 1's turn went
    play(engine, "cell:c1", "cell:c2", "nomatch:show")
    assert engine.current_player == 0
    play(engine, "cell:d1", "cell:d2", "nomatch:show")
    assert engine.current_player == 1  # skipped once only


def test_eight_skips_the_next_player_still_in() -> None:
    """RULES.md, Eight: "The next player" is the next player still in, to the left."""
    engine = deal({"a2": "KC", "a3": "KS", "c1": "2S", "c2": "3S", "b1": "8C", "b2": "8D"})
    engine.tokens[1], engine.bank = 13, engine.bank + 7
    play(engine, "cell:a2", "cell:a3", "target:+1")  # seat 1 is out
    play(engine, "cell:c1", "cell:c2", "nomatch:show")  # seat 2
    play(engine, "cell:b1", "cell:b2")  # seat 0's Eight skips seat 2
    assert engine.current_player == 0 and engine.phase == PICK1
    assert engine.skips == [0, 0, 0]


def test_eight_with_two_players_gives_the_matcher_the_next_turn_too() -> None:
    engine = deal({"a2": "8C", "a3": "8D"}, num_players=2)
    play(engine, "cell:a2", "cell:a3")
    assert engine.current_player == 0 and engine.phase == PICK1


def test_nine_pair_is_kept_and_absorbs_the_next_loss() -> None:
    engine = deal({"a2": "9C", "a3": "9D", "b1": "KC", "b2": "KS", "c1": "QC", "c2": "QS"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.kept[0] == [[SHIELD, *ids("9C", "9D")]]
    assert engine.discard == []
    assert view(engine, 1)["shields"][2] == 0.25  # seat 0 is two to seat 1's left
    play(engine, "cell:b1", "cell:b2", "target:+2")  # seat 1 hits seat 0 for 13
    assert engine.tokens == [20, 20, 20] and engine.kept[0] == []
    assert sorted(engine.discard) == sorted(ids("9C", "9D", "KC", "KS"))
    play(engine, "cell:c1", "cell:c2", "target:+1")  # seat 2 hits seat 0 again: no shield now
    assert engine.tokens == [8, 20, 20]


def test_nine_shield_covers_the_aces_loss() -> None:
    """RULES.md, Nine: "lose tokens" includes the Ace's loss; the shield cancels it."""
    engine = deal({"a2": "9C", "a3": "9D", "b1": "AC", "b2": "AH", "d4": "QS"})
    play(engine, "cell:a2", "cell:a3")
    play(engine, "cell:b1", "cell:b2", "target:+0", "target:+2", "cell:d4")
    assert engine.tokens == [20, 21, 20] and engine.kept[0] == []
    assert engine.bank == 29


def test_nine_shield_covers_being_the_queens_giver() -> None:
    """RULES.md, Nine: being the Queen's giver is a loss; "for a transfer, nothing moves"."""
    engine = deal({"a2": "9C", "a3": "9D", "b1": "QC", "b2": "QD"})
    play(engine, "cell:a2", "cell:a3")
    play(engine, "cell:b1", "cell:b2", "target:+2", "target:+0")  # seat 0 gives to seat 1
    assert engine.tokens == [20, 20, 20] and engine.kept[0] == []
    assert {card_id("9C"), card_id("9D")} <= set(engine.discard)


@pytest.mark.parametrize("chosen", [("target:+2", "target:+1"), ("target:+1", "target:+2")],
                         ids=["richer-first", "richer-second"])
def test_nine_shield_of_the_richer_jack_player_cancels_the_jack(chosen: tuple[str, str]) -> None:
    """RULES.md, Nine: the richer of the Jack's two players loses; its shield cancels it,
    whichever of the two was chosen first."""
    engine = deal({"a2": "9C", "a3": "9D", "b1": "JC", "b2": "JD"})
    engine.tokens, engine.bank = [30, 20, 10], 30
    play(engine, "cell:a2", "cell:a3")
    play(engine, "cell:b1", "cell:b2", *chosen)  # seat 0 (richer, shielded) and seat 2
    assert engine.tokens == [30, 20, 10] and engine.kept[0] == []


def test_underdogs_at_zero_lose_nothing_and_keep_the_shield() -> None:
    """RULES.md, Nine: "A player at 0 tokens (Underdogs) loses nothing and keeps its shield"."""
    engine = deal({"a2": "9C", "a3": "9D", "b1": "KC", "b2": "KS"}, num_players=2,
                  underdogs=True)
    engine.tokens, engine.bank = [0, 20], 40
    play(engine, "cell:a2", "cell:a3")
    play(engine, "cell:b1", "cell:b2")  # seat 1's black Kings hit seat 0
    assert engine.tokens == [0, 20]
    assert engine.kept[0] == [[SHIELD, *ids("9C", "9D")]]


def test_nine_shield_does_not_cover_voluntary_payments() -> None:
    engine = deal({"a2": "9C", "a3": "9D", "b1": "2C", "b2": "3C", "c1": "4S", "c2": "5S",
                   "d1": "6S", "d2": "7H"})
    play(engine, "cell:a2", "cell:a3")
    play(engine, "cell:b1", "cell:b2", "nomatch:show")
    play(engine, "cell:c1", "cell:c2", "nomatch:show")
    play(engine, "cell:d1", "cell:d2", "nomatch:hide_both")
    assert engine.tokens[0] == 18 and len(engine.kept[0]) == 1


def test_ten_pair_takes_the_next_match_of_another_player() -> None:
    engine = deal({"a2": "TC", "a3": "TD", "b1": "QD", "b2": "QH"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.kept[0] == [[TEN_PAIR, *ids("TC", "TD")]]
    assert view(engine, 0)["ten_pairs"][0] == 0.25
    play(engine, "cell:b1", "cell:b2")  # seat 1's red Queens...
    assert engine.current_player == 0 and engine.effect_owner == 0  # ...are seat 0's effect
    assert engine.kept[0] == []
    assert card_id("TC") in engine.discard and card_id("QD") in engine.discard
    play(engine, "target:+0")
    assert engine.tokens == [32, 20, 20]
    assert engine.current_player == 2  # play goes on to the left of the matcher


def test_ten_pair_is_not_taken_by_its_owners_own_match() -> None:
    engine = deal({"a2": "TC", "a3": "TD", "b1": "QD", "b2": "QH"}, num_players=2,
                  first_player=0)
    play(engine, "cell:a2", "cell:a3")
    engine.rotation = 1  # give seat 0 the next turn too
    engine._start_turn(0, False)
    play(engine, "cell:b1", "cell:b2", "target:+0")
    assert engine.tokens == [32, 20] and len(engine.kept[0]) == 1


def test_a_stolen_eight_skips_the_player_after_the_ten_pairs_holder() -> None:
    """RULES.md, Ten: the holder takes the whole effect: "its Eight skips the player after the
    holder", here the matcher itself, not the player after the matcher."""
    engine = deal({"a2": "TC", "a3": "TD", "b1": "8C", "b2": "8D", "c1": "2S", "c2": "3S",
                   "d1": "4S", "d2": "5S", "e1": "6S", "e2": "7H"}, num_players=4)
    play(engine, "cell:a2", "cell:a3")  # seat 0 keeps the Tens
    play(engine, "cell:b1", "cell:b2")  # seat 1's mixed Eights: seat 0's effect
    assert engine.skips == [0, 1, 0, 0] and engine.current_player == 2
    play(engine, "cell:c1", "cell:c2", "nomatch:show")  # seat 2
    play(engine, "cell:d1", "cell:d2", "nomatch:show")  # seat 3
    play(engine, "cell:e1", "cell:e2", "nomatch:show")  # seat 0
    assert engine.current_player == 2 and engine.skips == [0, 0, 0, 0]  # seat 1 skipped


def test_ten_pair_holder_takes_a_stolen_five_extra_turn_and_nine_pair() -> None:
    engine = deal({"a2": "TC", "a3": "TD", "b1": "5C", "b2": "5H", "c1": "9C", "c2": "9H",
                   "d1": "2S", "d2": "3S"})
    play(engine, "cell:a2", "cell:a3")  # seat 0 keeps the Tens
    play(engine, "cell:b1", "cell:b2")  # seat 1's mixed Fives: seat 0 reveals and plays again
    assert engine.phase == FIVE_CROSS and engine.current_player == 0
    play(engine, "cell:e4")
    assert engine.current_player == 0 and engine.turn_owner == 0 and engine.phase == PICK1
    play(engine, "cell:d1", "cell:d2", "nomatch:show")
    assert engine.current_player == 2  # then on from the matcher, seat 1
    # The Nines (c1 c2, not touched above): seat 0 keeps a fresh Ten pair, seat 1's mixed
    # Nines are seat 0's effect, so seat 0 keeps them as its shield (RULES.md, Ten).
    engine = deal({"a2": "TC", "a3": "TD", "c1": "9C", "c2": "9H"})
    play(engine, "cell:a2", "cell:a3")  # seat 0 keeps the Tens
    play(engine, "cell:c1", "cell:c2")  # seat 1's mixed Nines: seat 0's effect
    assert engine.kept[0] == [[SHIELD, *ids("9C", "9H")]] and engine.kept[1] == []
    assert view(engine, 2)["shields"].tolist() == [0.0, 0.25, 0.0]  # seat 0, one to the left
    assert engine.current_player == 2


def test_ten_pair_of_a_player_who_is_out_takes_no_match() -> None:
    """RULES.md, Play: "Kept pairs of a player who is out do nothing more" (Ten: interpretation
    14). Seat 0 keeps the Tens, then gives its last six tokens away; seat 1's mixed Fives are
    seat 1's own: it reveals the cross and plays again, and seat 0 keeps its Ten pair."""
    engine = deal({"a2": "TC", "a3": "TD", "c1": "2S", "c2": "3S", "d1": "4S", "d2": "6S",
                   "b1": "QC", "b2": "QD", "b3": "5C", "b4": "5H"})
    engine.tokens[0], engine.bank = 6, engine.bank + 14
    play(engine, "cell:a2", "cell:a3")  # seat 0 keeps the Tens
    play(engine, "cell:c1", "cell:c2", "nomatch:show")  # seat 1
    play(engine, "cell:d1", "cell:d2", "nomatch:show")  # seat 2
    play(engine, "cell:b1", "cell:b2", "target:+0", "target:+1")  # seat 0 gives 6 to seat 1
    assert engine.tokens == [0, 26, 20] and engine.active == [False, True, True]
    assert engine.kept[0] == [[TEN_PAIR, *ids("TC", "TD")]] and engine.current_player == 1
    play(engine, "cell:b3", "cell:b4")  # seat 1's mixed Fives
    assert engine.phase == FIVE_CROSS and engine.current_player == engine.effect_owner == 1
    play(engine, "cell:e4")
    assert engine.current_player == engine.turn_owner == 1 and engine.phase == PICK1
    assert engine.kept[0] == [[TEN_PAIR, *ids("TC", "TD")]]
    assert view(engine, 1)["ten_pairs"].tolist() == [0.0, 0.0, 0.25]  # seat 0, still kept


def test_jack_equalises_two_players_and_the_odd_token_goes_to_the_bank() -> None:
    engine = deal({"a2": "JC", "a3": "JD"})
    engine.tokens, engine.bank = [20, 30, 9], 31
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == JACK_PLAYER
    assert legal_names(engine) == {"target:+0", "target:+1", "target:+2"}
    play(engine, "target:+1")
    assert legal_names(engine) == {"target:+0", "target:+2"}
    play(engine, "target:+2")
    assert engine.tokens == [20, 19, 19] and engine.bank == 32


def test_underdogs_jack_equalising_one_and_none_can_end_the_game() -> None:
    """Under Underdogs a Jack may equalise 1 and 0 tokens to 0 and 0 (the odd token to the
    bank): when that leaves one player with tokens, the game ends there (issue 38)."""
    engine = deal({"a2": "JC", "a3": "JD"}, underdogs=True)
    engine.tokens, engine.bank = [20, 1, 0], 69
    play(engine, "cell:a2", "cell:a3", "target:+1", "target:+2")
    assert engine.tokens == [20, 0, 0] and engine.bank == 70
    assert engine.terminated and engine.winners == [0]


def test_queen_a_player_gives_six_to_another() -> None:
    engine = deal({"a2": "QC", "a3": "QD"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == QUEEN_GIVER
    play(engine, "target:+1")
    assert engine.phase == QUEEN_RECEIVER and legal_names(engine) == {"target:+0", "target:+2"}
    play(engine, "target:+0")
    assert engine.tokens == [26, 14, 20] and engine.bank == 30


def test_queen_giver_with_less_than_six_gives_all_and_is_out() -> None:
    engine = deal({"a2": "QC", "a3": "QD"})
    engine.tokens, engine.bank = [20, 4, 20], 46
    play(engine, "cell:a2", "cell:a3", "target:+1", "target:+2")
    assert engine.tokens == [20, 0, 24] and engine.active == [True, False, True]
    assert engine.current_player == 2


@pytest.mark.parametrize(("effect", "phase"), [
    ("A", ACE_GAIN), ("2", TWO_LOOK), ("3", THREE_REVEAL), ("4", FOUR_SQUARE),
    ("5", FIVE_CROSS), ("6", SIX_REVEAL), ("J", JACK_PLAYER), ("Q", QUEEN_GIVER),
])
def test_king_takes_any_other_effect(effect: str, phase: int) -> None:
    engine = deal({"a2": "KC", "a3": "KH"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == KING_CHOICE
    assert legal_names(engine) == {f"effect:{r}" for r in "A23456789TJQ"}
    assert view(engine, 1)["effect_rank"][12] == 1.0
    play(engine, f"effect:{effect}")
    assert engine.phase == phase and engine.current_player == 0


def test_king_as_nine_or_ten_keeps_the_king_pair() -> None:
    engine = deal({"a2": "KC", "a3": "KH", "b1": "KS", "b2": "KD"})
    play(engine, "cell:a2", "cell:a3", "effect:9")
    assert engine.kept[0] == [[SHIELD, *ids("KC", "KH")]]
    play(engine, "cell:b1", "cell:b2", "effect:T")
    assert engine.kept[1] == [[TEN_PAIR, *ids("KS", "KD")]]


def test_king_as_seven_and_eight() -> None:
    engine = deal({"a2": "KC", "a3": "KH", "c1": "2S", "c2": "3S"})
    play(engine, "cell:a2", "cell:a3", "effect:7")
    assert engine.current_player == 0 and engine.turn_offer
    eight = deal({"a2": "KC", "a3": "KH"})
    play(eight, "cell:a2", "cell:a3", "effect:8")
    assert eight.current_player == 2


def test_effects_that_need_face_down_cards_are_skipped_without_them() -> None:
    engine = deal({"a2": "AC", "a3": "AH"}, num_players=2)
    for c in range(56):
        if engine.grid[c] >= 0 and c not in (cell("a2"), cell("a3")):
            engine.face_up[c] = True
            engine._show_all(c, engine.grid[c])
    engine._rebuild_caches()
    play(engine, "cell:a2", "cell:a3", "target:+0")  # gain; the loss goes to seat 1 by itself
    assert engine.tokens == [21, 19]
    assert engine.current_player == 1  # nothing to reveal: the effect ends


def test_the_aces_and_the_sixs_reveals_choose_face_down_cards_only() -> None:
    """RULES.md, Mixed Chart: "Reveal" and "look" only ever choose face-down cards (a face-up
    card is already seen by all)."""
    engine = deal({"a2": "AC", "a3": "AH", "c1": "2S", "c2": "3S", "b1": "6C", "b2": "6D",
                   "d4": "QS"})
    play(engine, "cell:c1", "cell:c2", "nomatch:show")  # seat 0: 2S and 3S stay face up
    play(engine, "cell:a2", "cell:a3", "target:+0", "target:+1")  # seat 1's mixed Aces
    assert engine.phase == ACE_REVEAL
    names = legal_names(engine)
    assert "cell:d4" in names and not {"cell:c1", "cell:c2"} & names
    play(engine, "cell:d4")
    play(engine, "cell:b1", "cell:b2")  # seat 2's mixed Sixes
    assert engine.phase == SIX_REVEAL
    names = legal_names(engine)
    assert "cell:d4" in names and not {"cell:c1", "cell:c2"} & names


def test_a_skip_waits_for_the_next_regular_turn_and_is_observed() -> None:
    engine = deal({"a2": "7C", "a3": "7D", "c1": "8S", "c2": "8H", "d1": "2S", "d2": "3S"})
    play(engine, "cell:a2", "cell:a3")  # another turn for seat 0...
    play(engine, "cell:c1", "cell:c2")  # ...in which it skips seat 1
    assert engine.phase == SEVEN_PAY and engine.skips == [0, 1, 0]
    assert view(engine, 2)["skips"][2] == 0.25  # seat 1 is two to seat 2's left
    play(engine, "stop")
    assert engine.current_player == 2


def test_a_stolen_effect_is_observed_as_the_holders_with_its_extra_turn() -> None:
    """RULES.md Observation: `turn_owner`, `effect_owner`, `extra_turns` (/ 4) and
    `effect_rank`, relative to the observer. Seat 1 matches mixed Fives on its own turn; seat
    0's Ten pair takes the effect: seat 0 decides and is owed the extra turn."""
    engine = deal({"a2": "TC", "a3": "TD", "b1": "5C", "b2": "5H"})
    play(engine, "cell:a2", "cell:a3")  # seat 0 keeps the Tens
    play(engine, "cell:b1", "cell:b2")  # seat 1's mixed Fives: seat 0's effect
    assert engine.phase == FIVE_CROSS and engine.current_player == 0
    for seat in range(3):  # offsets: seat 1 is (1 - seat) % 3 places to the left
        v = view(engine, seat)
        assert np.flatnonzero(v["turn_owner"]).tolist() == [(1 - seat) % 3]
        assert np.flatnonzero(v["effect_owner"]).tolist() == [(0 - seat) % 3]
        assert np.flatnonzero(v["actor"]).tolist() == [(0 - seat) % 3]
        assert v["extra_turns"].tolist() == [0.25 if k == (0 - seat) % 3 else 0.0
                                             for k in range(3)]
        assert np.flatnonzero(v["effect_rank"]).tolist() == [4]  # the Five
    play(engine, "cell:e4")  # the cross; seat 0's extra turn begins
    v = view(engine, 0)
    assert not v["extra_turns"].any() and np.flatnonzero(v["turn_owner"]).tolist() == [0]
    # Whose regular turn play resumes from (seat 1's: seat 2 is next) is shown to everyone;
    # nothing else in the observation tells it once the extra turn has begun.
    for seat in range(3):
        assert np.flatnonzero(view(engine, seat)["rotation"]).tolist() == [(1 - seat) % 3]
    play(engine, "cell:d1", "cell:d2", "nomatch:show")
    assert engine.current_player == 2
    for seat in range(3):
        assert np.flatnonzero(view(engine, seat)["rotation"]).tolist() == [(2 - seat) % 3]


def test_observed_second_pick_stake_chosen_players_and_reveal_count() -> None:
    """RULES.md Observation: `second_pick` (public), `amount` (tokens at stake / 13),
    `chosen_players` (players chosen so far, relative) and `counter` (reveals used / 4)."""
    engine = deal({"c1": "2S", "c2": "3S"})
    play(engine, "cell:c1", "cell:c2")  # no match: seat 0 decides how they go back
    assert engine.phase == NOMATCH
    for seat in range(3):
        v = view(engine, seat)
        assert np.flatnonzero(v["first_pick"]).tolist() == [cell("c1")]
        assert np.flatnonzero(v["second_pick"]).tolist() == [cell("c2")]
    engine = deal({"a2": "KD", "a3": "KH"})
    play(engine, "cell:a2", "cell:a3")  # red Kings: 13 tokens to a player of seat 0's choice
    assert view(engine, 0)["amount"].tolist() == [1.0]
    engine = deal({"a2": "QC", "a3": "QD"})
    play(engine, "cell:a2", "cell:a3")  # mixed Queens: six tokens change hands
    assert engine.phase == QUEEN_GIVER
    assert view(engine, 2)["amount"].tolist() == [pytest.approx(6 / 13)]
    play(engine, "target:+1")  # seat 1 gives
    assert np.flatnonzero(view(engine, 0)["chosen_players"]).tolist() == [1]
    assert np.flatnonzero(view(engine, 2)["chosen_players"]).tolist() == [2]
    engine = deal({"a2": "3C", "a3": "3H", "c1": "9C", "c2": "9D"})
    play(engine, "cell:a2", "cell:a3", "cell:c1")
    assert engine.phase == THREE_REVEAL and view(engine, 1)["counter"].tolist() == [0.25]
    play(engine, "cell:c2")
    assert view(engine, 0)["counter"].tolist() == [0.5]

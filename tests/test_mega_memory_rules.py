"""Mega Mem-Ory Ultima-Ory: every rule as a stacked-deck scenario (see RULES.md)."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.agents import RandomAgent
from card_envs.core.cards import card_code, card_id
from card_envs.games.mega_memory.engine import (
    DIG,
    DISCARD_SLOT_BASE,
    FIRST,
    START,
    MegaMemoryEngine,
)
from card_envs.games.mega_memory.grouping import best_grouping, cards_mask
from card_envs.games.mega_memory.heuristic import MegaMemoryHeuristic
from tests.engine_helpers import legal_names as legal
from tests.engine_helpers import play

ALL_CODES = [card_code(c) for c in range(52)]


def ids(codes) -> list[int]:
    return [card_id(c) for c in codes]


def codes(cards) -> list[str]:
    return [card_code(c) for c in cards]


def stacked(piles, side0=(), side1=(), deck=()) -> list[str]:
    """A full stacked deck for ``first_dealer=1`` (seat 0 is the non-dealer and moves first).

    ``piles``: four lists, TOP card first (each pile of five is filled up underneath);
    ``side0`` / ``side1``: seat 0's / seat 1's side slots 1..4; ``deck``: top first. Unnamed
    cards fill the gaps in card order.
    """
    named = [c for p in piles for c in p] + list(side0) + list(side1) + list(deck)
    assert len(set(named)) == len(named)
    fill = iter([c for c in ALL_CODES if c not in named])
    order: list[str] = [""] * 52
    for p, pile in enumerate(piles):
        full = list(pile) + [next(fill) for _ in range(5 - len(pile))]
        for depth, code in enumerate(full):  # the cascade deals the tops last
            order[p + 4 * (4 - depth)] = code
    order[20:24] = list(side0) + [next(fill) for _ in range(4 - len(side0))]
    order[24:28] = list(side1) + [next(fill) for _ in range(4 - len(side1))]
    order[28:] = list(deck) + list(fill)
    assert sorted(order) == sorted(ALL_CODES)
    return order


def new_game(deck: list[str], **config) -> MegaMemoryEngine:
    engine = MegaMemoryEngine(first_dealer=1, **config)
    engine.reset(seed=0, deck=deck)
    engine.check_invariants()
    return engine


def view(engine: MegaMemoryEngine, seat: int) -> dict[str, np.ndarray]:
    out = np.empty(engine.layout.size, np.float32)
    engine.write_observation(seat, out)
    return {k: v.copy() for k, v in engine.layout.decode(out).items()}


def side_memory(engine: MegaMemoryEngine, seat: int, owner: int) -> list[str | None]:
    """What ``seat`` remembers of ``owner``'s four side slots."""
    block = view(engine, seat)["my_side" if owner == seat else "opp_side"].reshape(4, 52)
    return [card_code(int(np.argmax(row))) if row.any() else None for row in block]


def discard_memory(engine: MegaMemoryEngine, seat: int) -> dict[str, int]:
    """Remembered discard cards of ``seat`` with their depth from the top."""
    v = view(engine, seat)
    return {card_code(int(c)): round(float(v["discard_depth"][c]) * 51)
            for c in np.flatnonzero(v["discard_known"])}


def deck_memory(engine: MegaMemoryEngine, seat: int) -> dict[str, int]:
    v = view(engine, seat)
    return {card_code(int(c)): round(float(v["deck_depth"][c]) * 51)
            for c in np.flatnonzero(v["deck_known"])}


def arrange(engine: MegaMemoryEngine, deck=(), discard=(), rest_to: str = "deck",
            scored=((), ())) -> None:
    """Set up a position mid-round: ``deck`` top first, ``discard`` bottom first (both seats
    watched those go down, so both remember them); every other card of the deck, the discard
    pile and the revealed first card goes unremembered to the bottom of ``rest_to``, unless it
    is listed in ``scored`` (seat 0's, seat 1's scored cards). The current turn restarts."""
    pool = engine.deck + engine.discard + ([engine.first_card] if engine.first_card >= 0 else [])
    named = ids(deck) + ids(discard) + ids(scored[0]) + ids(scored[1])
    assert set(named) <= set(pool) and len(set(named)) == len(named)
    rest = [c for c in pool if c not in named]
    engine.first_card = -1
    engine.tracker.known[:, DISCARD_SLOT_BASE:] = -1
    engine.deck = (ids(deck) + (rest if rest_to == "deck" else []))[::-1]
    engine.discard = list(rest) if rest_to == "discard" else []
    engine._rebuild_views()
    engine._sync_pile_memory()
    for c in ids(discard):
        engine._push_discard(c)
    for seat in (0, 1):
        engine.scored[seat] += ids(scored[seat])
        engine.scored_mask[seat] = cards_mask(engine.scored[seat])
        engine.round_points[seat] = best_grouping(engine.scored_mask[seat])
    engine._views_ok = False
    engine._begin_turn(engine.current_player)
    engine.check_invariants()


QUIET_TOPS = [["5S"], ["9D"], ["KC"], ["2H"]]


# -- the deal ------------------------------------------------------------------------------------
def test_deal_order_non_dealer_first_and_automatic_first_card() -> None:
    deck = stacked(QUIET_TOPS, side0=["AD", "3D", "7S", "JC"], side1=["6C", "8C", "TH", "QD"],
                   deck=["QS", "JH"])
    e = new_game(deck)
    assert e.dealer == 1 and e.current_player == 0
    assert [codes(p) for p in e.centre][0] == [deck[0], deck[4], deck[8], deck[12], deck[16]]
    assert [card_code(p[-1]) for p in e.centre] == ["5S", "9D", "KC", "2H"]
    assert codes(e.sides[0]) == ["AD", "3D", "7S", "JC"]
    assert codes(e.sides[1]) == ["6C", "8C", "TH", "QD"]
    # The discard pile is empty, so the deck's top card is revealed without a decision.
    assert e.phase == FIRST and card_code(e.first_card) == "QS"
    assert len(e.deck) == 23 and card_code(e.deck[-1]) == "JH"
    # Nothing scores QS: only the side flips remain (no discard pile to flip from).
    assert legal(e) == {"flip:side1", "flip:side2", "flip:side3", "flip:side4"}
    # Nobody has looked at any side card.
    assert side_memory(e, 0, 0) == [None] * 4 and side_memory(e, 1, 0) == [None] * 4


def test_other_dealer_deals_side_cards_to_the_non_dealer_first() -> None:
    deck = stacked(QUIET_TOPS, side0=["AD", "3D", "7S", "JC"], side1=["6C", "8C", "TH", "QD"])
    e = MegaMemoryEngine(first_dealer=0)
    e.reset(seed=0, deck=deck)
    assert e.current_player == 1 and codes(e.sides[1]) == ["AD", "3D", "7S", "JC"]


# -- scoring with the first card -------------------------------------------------------------------
def test_first_card_scores_a_pair_and_the_next_centre_card_turns_up() -> None:
    e = new_game(stacked([["5S", "7C"], ["9D"], ["KC"], ["2H"]], deck=["5H", "QS"]))
    assert "score:1" in legal(e)
    play(e, "score:1")
    assert sorted(codes(e.scored[0])) == ["5H", "5S"]
    assert e.round_points == [1, 0]
    assert card_code(e.centre[0][-1]) == "7C" and len(e.centre[0]) == 4
    assert e.current_player == 1 and card_code(e.first_card) == "QS"


def test_centre_multiscore_offers_every_single_group_and_scores_a_run_of_four() -> None:
    e = new_game(stacked([["4H"], ["6H"], ["7H"], ["5C"]], deck=["5H"]))
    scores = {a for a in legal(e) if a.startswith("score:")}
    # Runs 4-5, 5-6, 4-6, 5-7, 4-7 and the pair with 5C; never 5H+7H or a mixed set.
    assert scores == {"score:1", "score:2", "score:1+2", "score:2+3", "score:1+2+3", "score:4"}
    play(e, "score:1+2+3")
    assert sorted(codes(e.scored[0])) == ["4H", "5H", "6H", "7H"]
    assert e.round_points[0] == 5
    assert [len(p) for p in e.centre] == [4, 4, 4, 5]


@pytest.mark.parametrize(("tops", "action", "points"), [
    ([["5S"], ["5D"], ["9C"], ["KC"]], "score:1+2", 2),  # triple
    ([["5S"], ["5D"], ["5C"], ["KC"]], "score:1+2+3", 5),  # four of a kind
])
def test_centre_multiscore_matches(tops, action, points) -> None:
    e = new_game(stacked(tops, deck=["5H"]))
    play(e, action)
    assert e.round_points[0] == points


def test_a_score_is_one_match_or_one_run_never_both() -> None:
    e = new_game(stacked([["5S"], ["6H"], ["9C"], ["KC"]], deck=["5H"]))
    assert {"score:1", "score:2"} <= legal(e) and "score:1+2" not in legal(e)


def test_aces_are_low_only() -> None:
    e = new_game(stacked([["KH"], ["2H"], ["QH"], ["3S"]], deck=["AH"]))
    assert {a for a in legal(e) if a.startswith("score")} == {"score:2"}
    e = new_game(stacked([["QH"], ["AH"], ["2H"], ["JD"]], deck=["KH"]))
    assert {a for a in legal(e) if a.startswith("score")} == {"score:1"}


@pytest.mark.parametrize(("tops", "first"), [([["2H"], ["KD"], ["9S"], ["5C"]], "AH"),
                                            ([["QD"], ["AH"], ["9S"], ["5C"]], "KD")])
def test_runs_never_wrap_from_a_king_to_the_next_suits_ace(tops, first) -> None:
    """RULES.md 3, "ACES are always low": KD AH is no run, though their card ids are adjacent."""
    e = new_game(stacked(tops, deck=[first]))
    assert {a for a in legal(e) if a.startswith("score")} == {"score:1"}


# -- the second card from the side ---------------------------------------------------------------
def test_side_card_scores_and_the_first_card_takes_its_slot_face_down() -> None:
    e = new_game(stacked([["2D"], ["4S"], ["6H"], ["8C"]], side0=["AS", "3C", "6S", "TD"],
                         deck=["JD"]))
    play(e, "flip:side3")
    assert card_code(e.second_card) == "6S"
    assert "score:3" in legal(e)
    play(e, "score:3")
    assert sorted(codes(e.scored[0])) == ["6H", "6S"]
    assert card_code(e.sides[0][2]) == "JD"
    # Both players saw JD go face down into slot 3.
    assert side_memory(e, 0, 0)[2] == "JD" and side_memory(e, 1, 0)[2] == "JD"


def test_side_multiscore_refills_the_slot_unseen_from_the_deck() -> None:
    e = new_game(stacked([["6H"], ["2S"], ["4D"], ["KC"]], side0=["8H", "3C", "9S", "TD"],
                         deck=["7H", "QC", "JS"]))
    assert "score:1" in legal(e)  # 7H + 6H would score, but the player looks for more
    play(e, "flip:side1")
    assert "score:1" not in legal(e)  # 8H + 6H alone is no run
    assert "multiscore:1" in legal(e)
    play(e, "multiscore:1")
    assert sorted(codes(e.scored[0])) == ["6H", "7H", "8H"] and e.round_points[0] == 2
    assert card_code(e.sides[0][0]) == "QC"
    assert side_memory(e, 0, 0)[0] is None and side_memory(e, 1, 0)[0] is None
    assert card_code(e.first_card) == "JS" and e.current_player == 1


def test_important_note_a_wrong_second_card_kills_the_first_cards_score() -> None:
    e = new_game(stacked([["5S"], ["9D"], ["KC"], ["2H"]], side0=["AD", "JS", "7C", "TD"],
                         deck=["5H"]))
    assert "score:1" in legal(e)
    play(e, "flip:side2")
    # "If the second card you reveal can't be scored, neither can your first."
    assert legal(e) == {"keep:first", "keep:second"}


@pytest.mark.parametrize(("keep", "side", "discard"), [("keep:first", "5H", "JS"),
                                                      ("keep:second", "JS", "5H")])
def test_no_score_one_card_to_the_slot_the_other_on_the_discard_pile(keep, side, discard) -> None:
    e = new_game(stacked(QUIET_TOPS, side0=["AD", "JS", "7C", "TD"], deck=["5H", "QS"]))
    play(e, "flip:side2", keep)
    assert card_code(e.sides[0][1]) == side and codes(e.discard) == [discard]
    for seat in (0, 1):
        assert side_memory(e, seat, 0)[1] == side
        assert discard_memory(e, seat) == {discard: 0}
    # The next player may now start from the deck or the discard pile.
    assert e.current_player == 1 and e.phase == START
    assert legal(e) == {"reveal:deck", "reveal:discard"}


def test_side_multiscore_when_only_the_side_card_touches_the_centre() -> None:
    """RULES.md 4a, YOUR SIDE MULTISCORE: 8H (touching no centre card) 7H 6H is one run."""
    e = new_game(stacked([["6H"], ["2S"], ["4D"], ["KC"]], side0=["7H", "3C", "9S", "TD"],
                         deck=["8H", "QC"]))
    assert not {a for a in legal(e) if a.startswith("score")}
    play(e, "flip:side1")
    assert legal(e) == {"score:1", "multiscore:1", "keep:first", "keep:second"}
    play(e, "multiscore:1")
    assert sorted(codes(e.scored[0])) == ["6H", "7H", "8H"] and e.round_points[0] == 2


def test_side_multiscore_needs_a_centre_card_unless_the_option_is_on() -> None:
    """RULES.md 4a: `multiscore` is "with the CENTER": 5H 5D alone only with the option."""
    deck = stacked([["6H"], ["2S"], ["9D"], ["KC"]], side0=["5D", "3C", "JS", "TD"],
                   deck=["5H"])
    e = new_game(deck)
    assert "score:1" in legal(e)  # 5H 6H: the revealed cards touch the centre
    play(e, "flip:side1")
    assert legal(e) == {"keep:first", "keep:second"}
    e = new_game(deck, side_pair_without_centre=True)
    play(e, "flip:side1")
    assert legal(e) == {"multiscore:-", "keep:first", "keep:second"}


# -- the discard pile ------------------------------------------------------------------------------
def test_first_card_from_the_discard_pile_scores_with_the_centre_as_normal() -> None:
    e = new_game(stacked(QUIET_TOPS, side0=["AD", "JS", "7C", "TD"], deck=["5H", "QS"]))
    play(e, "flip:side2", "keep:second")  # 5H goes on the discard pile
    play(e, "reveal:discard")
    assert card_code(e.first_card) == "5H" and not e.discard
    assert "score:1" in legal(e)
    play(e, "score:1")
    assert sorted(codes(e.scored[1])) == ["5H", "5S"]


def test_discard_pile_multiscore_with_the_side() -> None:
    e = new_game(stacked(QUIET_TOPS, side0=["AD", "JS", "7C", "TD"],
                         side1=["5D", "8C", "TH", "QD"], deck=["5H", "QS", "4C"]))
    play(e, "flip:side2", "keep:second", "reveal:discard", "flip:side1")
    # "If you start with a card from the DISCARD PILE, you can use it to MULTISCORE from
    # YOUR SIDE or the CENTER as normal."
    play(e, "multiscore:1")
    assert sorted(codes(e.scored[1])) == ["5D", "5H", "5S"] and e.round_points[1] == 2
    assert card_code(e.sides[1][0]) == "QS"  # refilled from the deck's top


def test_second_card_from_the_discard_pile_never_involves_the_centre() -> None:
    e = new_game(stacked(QUIET_TOPS, side0=["AD", "JS", "7C", "TD"], deck=["5H", "5D"]))
    play(e, "flip:side2", "keep:second", "reveal:deck")
    assert card_code(e.first_card) == "5D" and "score:1" in legal(e)
    play(e, "flip:discard")
    # IMPORTANT DISCARD PILE RULE: no side, no centre; 5D + 5H is a pair from the pile.
    assert legal(e) == {"take", "keep:first", "keep:second"}
    play(e, "take")
    assert sorted(codes(e.scored[1])) == ["5D", "5H"] and e.round_points[1] == 1
    assert card_code(e.centre[0][-1]) == "5S"


def test_discard_pile_multiscore_digs_top_down_until_a_card_misses() -> None:
    e = new_game(stacked([["9D"], ["KC"], ["2H"], ["JS"]], deck=["5H", "7C", "5S", "5C", "5D"]))
    arrange(e, deck=["5H"], discard=["7C", "5S", "5C", "5D"])
    assert e.phase == START
    play(e, "reveal:deck", "flip:discard")
    assert card_code(e.second_card) == "5D"
    assert legal(e) == {"take", "dig", "keep:first", "keep:second"}
    play(e, "dig")
    assert codes(e.dug) == ["5C"] and e.phase == DIG and legal(e) == {"take", "dig"}
    play(e, "dig", "dig")  # 5S joins (four of a kind); 7C does not fit
    assert sorted(codes(e.scored[0])) == ["5C", "5D", "5H", "5S"] and e.round_points[0] == 5
    assert codes(e.discard) == ["7C"]  # the miss went back face down on top
    assert discard_memory(e, 1) == {"7C": 0}
    assert e.current_player == 1


def test_digging_the_discard_pile_empty_scores_at_once() -> None:
    e = new_game(stacked([["9D"], ["KC"], ["2H"], ["JS"]], deck=["5H", "QS", "5C", "5D"]))
    arrange(e, deck=["5H", "QS"], discard=["5C", "5D"])
    play(e, "reveal:deck", "flip:discard", "dig")
    assert sorted(codes(e.scored[0])) == ["5C", "5D", "5H"] and e.round_points[0] == 2
    assert e.current_player == 1 and card_code(e.first_card) == "QS"


def test_both_cards_from_the_discard_pile_top_down() -> None:
    e = new_game(stacked([["9D"], ["KC"], ["2H"], ["JS"]], deck=["KH", "5C", "5D"]))
    arrange(e, deck=["KH"], discard=["5C", "5D"])
    play(e, "reveal:discard")
    assert card_code(e.first_card) == "5D"
    play(e, "flip:discard")
    assert card_code(e.second_card) == "5C"
    assert legal(e) == {"take", "keep:first", "keep:second"}
    play(e, "take")
    assert sorted(codes(e.scored[0])) == ["5C", "5D"]


def test_a_gap_cannot_be_filled_from_the_discard_pile() -> None:
    e = new_game(stacked([["9D"], ["KC"], ["2S"], ["JS"]], deck=["5H", "6H", "7H"]))
    arrange(e, deck=["5H"], discard=["6H", "7H"])
    play(e, "reveal:deck", "flip:discard")
    assert legal(e) == {"keep:first", "keep:second"}


def test_a_dug_card_must_fit_with_both_revealed_cards() -> None:
    """RULES.md 5.2, dig: 5S fits 5H but not 4H 5H, so it goes back and 4H 5H is scored."""
    e = new_game(stacked([["9D"], ["KC"], ["2S"], ["JS"]], deck=["4H", "5S", "5H"]))
    arrange(e, deck=["4H"], discard=["5S", "5H"])
    play(e, "reveal:deck", "flip:discard")
    assert legal(e) == {"take", "dig", "keep:first", "keep:second"}
    play(e, "dig")
    assert sorted(codes(e.scored[0])) == ["4H", "5H"] and e.round_points[0] == 1
    assert codes(e.discard) == ["5S"] and discard_memory(e, 1) == {"5S": 0}


@pytest.mark.parametrize(("keep", "pile"), [("keep:first", ["2C", "KH", "5D"]),
                                           ("keep:second", ["2C", "5D", "KH"])])
def test_second_card_from_the_discard_pile_without_a_score_goes_back(keep, pile) -> None:
    e = new_game(stacked([["9D"], ["KC"], ["2H"], ["JS"]], deck=["KH", "2C", "5D"]))
    arrange(e, deck=["KH"], discard=["2C", "5D"])
    sides_before = [list(s) for s in e.sides]
    play(e, "reveal:deck", "flip:discard", keep)
    # The kept card returns where the second card came from; the other goes on top of it.
    assert codes(e.discard) == pile and e.sides == sides_before
    assert discard_memory(e, 1) == {pile[0]: 2, pile[1]: 1, pile[2]: 0}


# -- the deck running out --------------------------------------------------------------------------
def _slide_position() -> MegaMemoryEngine:
    e = new_game(stacked([["9D"], ["QD"], ["2H"], ["JS"]], side0=["QH", "3C", "6S", "TD"],
                         deck=["QS", "AC", "2D", "3H"]))
    arrange(e, deck=["QS"], discard=["AC", "2D", "3H"], rest_to="discard")
    return e


def test_the_discard_pile_slides_over_in_the_same_order() -> None:
    e = _slide_position()
    play(e, "reveal:deck")
    assert not e.discard and codes(e.deck[-3:]) == ["AC", "2D", "3H"]
    # Remembered positions moved with the pile: 3H is now the deck's top card.
    for seat in (0, 1):
        assert deck_memory(e, seat) == {"3H": 0, "2D": 1, "AC": 2}
        assert discard_memory(e, seat) == {}
    assert "flip:discard" not in legal(e)
    play(e, "flip:side2", "keep:second")
    assert codes(e.discard) == ["QS"]
    play(e, "reveal:deck")
    assert card_code(e.first_card) == "3H"


def test_a_refill_from_a_remembered_deck_position_stays_known() -> None:
    e = _slide_position()
    play(e, "reveal:deck", "flip:side1", "multiscore:2")  # QS + QH + QD
    assert e.round_points[0] == 2 and card_code(e.sides[0][0]) == "3H"
    assert side_memory(e, 0, 0)[0] == "3H" and side_memory(e, 1, 0)[0] == "3H"


# -- the end of the round --------------------------------------------------------------------------
def _last_card_position(**config) -> MegaMemoryEngine:
    e = new_game(stacked([["5S"], ["5D"], ["9C"], ["KC"]], deck=["5H"]), **config)
    removed = e.centre[0][:-1]
    e.centre[0] = e.centre[0][-1:]  # pile 1 is down to its face-up card
    e.deck = removed + e.deck
    e._views_ok = False
    e.check_invariants()
    return e


def test_round_ends_when_a_centre_pile_is_empty_and_the_difference_is_scored() -> None:
    e = _last_card_position()
    play(e, "score:1+2")
    assert e.done and e.winners == [0]
    assert e.result()["round_points"] == [2, 0] and e.mega_points == [2, 0]
    assert list(e.rewards) == [1.0, -1.0]


def test_the_winner_scores_the_difference_not_its_own_points() -> None:
    """The loser's points count: 2 against 1 is a difference of 1 (the test above has the loser
    at 0, where the difference and the winner's points agree)."""
    e = _last_card_position(reward="score")
    pair = ids(["4C", "4S"])  # seat 1 scored a pair earlier this round
    for card in pair:
        e.deck.remove(card)
    e.scored[1] += pair
    e.scored_mask[1] = cards_mask(e.scored[1])
    e.round_points[1] = best_grouping(e.scored_mask[1])
    e._views_ok = False
    e.check_invariants()
    play(e, "score:1+2")
    assert e.done and e.winners == [0]
    assert e.result()["round_points"] == [2, 1] and e.mega_points == [1, 0]
    assert list(e.rewards) == [1.0, -1.0]


def test_score_reward_pays_the_difference() -> None:
    e = _last_card_position(reward="score")
    play(e, "score:1+2")
    assert list(e.rewards) == [2.0, -2.0]


def test_round_ends_when_deck_and_discard_pile_are_both_empty() -> None:
    clubs = [r + "C" for r in "A23456789TJQK"]
    diamonds = [r + "D" for r in "A23456789T"]
    e = new_game(stacked([["QH"], ["9S"], ["KH"], ["2S"]], deck=["QS"] + clubs + diamonds))
    arrange(e, deck=["QS"], scored=(clubs, diamonds))
    assert e.round_points == [32, 23] and card_code(e.first_card) == "QS"
    play(e, "score:1")
    assert e.done and e.result()["round_points"] == [33, 23] and e.mega_points == [10, 0]


def test_a_tied_round_pays_nobody() -> None:
    e = new_game(stacked(QUIET_TOPS, side0=["AD", "3D", "7S", "JC"],
                         side1=["6C", "8C", "TH", "QD"], deck=["QS", "JH"]), stall_turns=2)
    play(e, "flip:side1", "keep:first")
    assert not e.done and e.scoreless_turns == 1
    play(e, "reveal:deck", "flip:side1", "keep:first")
    # Not in the text: two turns without a score end the round here (stall_turns=2).
    assert e.done and e.winners == [] and list(e.rewards) == [0.0, 0.0]


def test_any_score_restarts_the_scoreless_turn_count() -> None:
    """RULES.md 6: the round ends after `stall_turns` turns *in a row* without a score."""
    e = new_game(stacked([["5S"], ["9D"], ["KC"], ["2H"]], side0=["AD", "3D", "7S", "JC"],
                         deck=["QS", "5H", "JH"]), stall_turns=2)
    play(e, "flip:side1", "keep:first")
    # RULES.md Observation: `scoreless_turns` (/ stall_turns), here 1 of 2
    assert e.scoreless_turns == 1 and view(e, 1)["scoreless_turns"][0] == 0.5
    play(e, "reveal:deck", "score:1")  # seat 1: 5H with 5S
    assert e.scoreless_turns == 0 and view(e, 0)["scoreless_turns"][0] == 0
    play(e, "reveal:deck", "flip:side1", "keep:first")
    assert not e.done and e.scoreless_turns == 1


def test_a_score_from_the_discard_pile_restarts_the_scoreless_turn_count() -> None:
    """RULES.md 5 and 6: `take` is a score, so it ends a run of scoreless turns."""
    e = new_game(stacked([["9D"], ["KC"], ["2H"], ["JS"]], side0=["5D", "3C", "7S", "TD"],
                         deck=["5H", "5C", "QS"]))
    play(e, "flip:side1", "keep:first")  # 5H into slot 1, 5D onto the discard pile
    assert e.scoreless_turns == 1
    play(e, "reveal:deck", "flip:discard", "take")  # seat 1: 5C with 5D
    assert sorted(codes(e.scored[1])) == ["5C", "5D"] and e.scoreless_turns == 0


def test_discarding_the_first_card_is_a_scoreless_turn() -> None:
    """RULES.md 6 (option `discard_without_second`): `discard:first` counts to the stall limit."""
    e = new_game(stacked(QUIET_TOPS, deck=["8H", "QS"]), discard_without_second=True,
                 stall_turns=2)
    play(e, "discard:first")
    assert e.scoreless_turns == 1 and not e.done
    play(e, "reveal:deck", "discard:first")
    assert e.done and e.winners == []


def test_a_new_round_starts_with_no_scoreless_turns() -> None:
    """RULES.md 6: the stall count is of turns in a row within a round; a new round restarts it."""
    e = new_game(stacked(QUIET_TOPS, side0=["AD", "3D", "7S", "JC"],
                         side1=["6C", "8C", "TH", "QD"], deck=["QS", "JH"]),
                 episode="game", stall_turns=2)
    play(e, "flip:side1", "keep:first", "reveal:deck", "flip:side1", "keep:first")
    assert not e.done and e.round_number == 2 and e.mega_points == [0, 0]
    assert e.scoreless_turns == 0 and e.dealer == 0 and e.current_player == 1


def test_game_episode_alternates_dealer_and_plays_to_the_target() -> None:
    e = MegaMemoryEngine(episode="game", target_score=12, first_dealer=1)
    e.reset(seed=3)
    rng = np.random.default_rng(3)
    rounds_seen = {1}
    while not e.done:
        before = e.round_number
        e.step(int(rng.choice(np.flatnonzero(e.legal_mask()))))
        if e.round_number != before and not e.done:
            rounds_seen.add(e.round_number)
            assert e.dealer == (1 if e.round_number % 2 else 0)
            assert e.current_player == 1 - e.dealer
            assert e.round_points == [0, 0] and not any(e.scored)
    assert e.terminated and len(rounds_seen) >= 2
    (winner,) = e.winners
    assert e.mega_points[winner] >= 12 > e.mega_points[1 - winner]


def test_reaching_exactly_the_target_wins_the_game() -> None:
    """RULES.md 8: "The first player to reach 20 mega-points" wins (target reached, not passed)."""
    e = _last_card_position(episode="game", target_score=2)
    play(e, "score:1+2")
    assert e.done and e.winners == [0] and e.mega_points == [2, 0] and e.round_number == 1



@pytest.mark.parametrize(("before", "done"), [(18, True), (17, False)])
def test_the_default_game_is_to_20_mega_points(before: int, done: bool) -> None:
    """The text: "The first player to reach 20 mega-points in this manner is the victor!" By
    default a round won by 2 takes 18 mega-points to 20 and ends the game; 17 + 2 = 19 does not."""
    e = _last_card_position(episode="game")
    e.mega_points = [before, 0]
    play(e, "score:1+2")
    assert e.mega_points == [before + 2, 0] and e.done is done
    if done:
        assert e.winners == [0] and e.round_number == 1
    else:
        assert e.round_number == 2 and not e.winners


def test_observed_mega_points_are_scaled_by_the_target() -> None:
    """RULES.md Observation: "`mega_points` (/ target)", own first; `target_score` is "mega-points
    that win the game": 2 mega-points of a target of 4 show as 0.5."""
    e = _last_card_position(episode="game", target_score=4)
    play(e, "score:1+2")
    assert not e.done and e.round_number == 2 and e.mega_points == [2, 0]
    assert list(view(e, 0)["mega_points"]) == [0.5, 0.0]
    assert list(view(e, 1)["mega_points"]) == [0.0, 0.5]

def test_reset_starts_the_next_episode_at_zero_mega_points() -> None:
    """RULES.md 8: every episode (a round, or a game to the target) starts at 0 mega-points."""
    e = _last_card_position()
    play(e, "score:1+2")
    assert e.mega_points == [2, 0]
    e.reset(seed=0, deck=stacked(QUIET_TOPS))
    assert e.mega_points == [0, 0] and list(view(e, 0)["mega_points"]) == [0, 0]


# -- memory modes ---------------------------------------------------------------------------------
def _placed(memory) -> MegaMemoryEngine:
    e = new_game(stacked(QUIET_TOPS, side0=["AD", "JS", "7C", "TD"], deck=["5H", "QS", "8D"]),
                 memory=memory)
    play(e, "flip:side2", "keep:first")  # 5H into slot 2, JS onto the discard pile
    return e


@pytest.mark.parametrize("memory", ["perfect", 0.0])
def test_perfect_memory_keeps_positions(memory) -> None:
    e = _placed(memory)
    play(e, "reveal:deck", "flip:side1", "keep:first")
    for seat in (0, 1):
        assert side_memory(e, seat, 0)[1] == "5H"
        assert "JS" in discard_memory(e, seat)


@pytest.mark.parametrize("memory", ["none", 1.0])
def test_no_memory_keeps_a_sight_only_until_the_next_own_decision(memory) -> None:
    e = _placed(memory)  # seat 0 put 5H into slot 2 and JS onto the discard pile
    for seat in (0, 1):
        assert side_memory(e, seat, 0)[1] == "5H" and discard_memory(e, seat) == {"JS": 0}
    play(e, "reveal:deck")  # seat 1 decides: it forgets; seat 0 has not decided since
    assert side_memory(e, 1, 0)[1] is None and discard_memory(e, 1) == {}
    assert side_memory(e, 0, 0)[1] == "5H"
    play(e, "flip:side1", "keep:first")
    assert e.current_player == 0 and side_memory(e, 0, 0)[1] == "5H"
    play(e, "reveal:deck")
    assert side_memory(e, 0, 0)[1] is None


def test_forgetting_probability_forgets_some_but_never_invents() -> None:
    def run(memory) -> list[np.ndarray]:
        e = MegaMemoryEngine(memory=memory, first_dealer=0)
        e.reset(seed=9)
        rng = np.random.default_rng(9)
        out = []
        while not e.done:
            e.step(int(rng.choice(np.flatnonzero(e.legal_mask()))))
            out.append(e.tracker.known.copy())
        return out

    perfect, forgetful = run("perfect"), run(0.5)
    assert len(perfect) == len(forgetful)  # forgetting never changes the game itself
    fewer = False
    for p, f in zip(perfect, forgetful, strict=True):
        assert ((f == -1) | (f == p)).all()
        fewer |= bool((f >= 0).sum() < (p >= 0).sum())
    assert fewer


# -- observation and determinization ---------------------------------------------------------------
def test_resampling_keeps_remembered_positions_and_redraws_the_rest() -> None:
    e = _slide_position()
    before = view(e, 0)
    probe = e.clone()
    probe.resample_hidden(0, np.random.default_rng(1))
    probe.check_invariants()
    after = view(probe, 0)
    for k in before:
        np.testing.assert_array_equal(before[k], after[k], err_msg=k)
    assert codes(probe.discard[-3:]) == ["AC", "2D", "3H"]
    assert probe.discard[:-3] != e.discard[:-3] or probe.deck != e.deck


def test_incremental_views_equal_the_reference_encoding() -> None:
    for memory in ("perfect", 0.3, "none"):
        e = MegaMemoryEngine(memory=memory)
        rng = np.random.default_rng(5)
        for episode in range(6):
            e.reset(seed=episode)
            while not e.done:
                e.step(int(rng.choice(np.flatnonzero(e.legal_mask()))))
                if memory != "perfect":  # the per-seat memory mirror follows the tracker
                    for seat in (0, 1):
                        row = e.tracker.known[seat].tolist()
                        assert e._held[seat] == {k: c for k, c in enumerate(row) if c >= 0}
                for seat in (0, 1):
                    fresh = e.clone()
                    fresh._views_ok = False
                    np.testing.assert_array_equal(view(e, seat)["centre"],
                                                  view(fresh, seat)["centre"])
                    a = np.empty(e.layout.size, np.float32)
                    b = np.empty(e.layout.size, np.float32)
                    e.write_observation(seat, a)
                    fresh.write_observation(seat, b)
                    np.testing.assert_array_equal(a, b)


def test_observation_shows_the_pending_decision() -> None:
    e = new_game(stacked(QUIET_TOPS, side0=["AD", "JS", "7C", "TD"], deck=["5H"]))
    play(e, "flip:side2")
    v = view(e, 0)
    assert card_code(int(np.argmax(v["first_card"]))) == "5H"
    assert card_code(int(np.argmax(v["second_card"]))) == "JS"
    assert list(v["second_source"]) == [0, 1, 0, 0, 0] and list(v["first_source"]) == [1, 0]
    assert int(np.argmax(v["phase"])) == 2
    assert [round(float(x) * 5) for x in v["pile_sizes"]] == [5, 5, 5, 5]
    # The opponent sees the same revealed cards.
    assert card_code(int(np.argmax(view(e, 1)["second_card"]))) == "JS"


def test_observation_shows_pile_sizes_the_dig_and_both_seats_scores() -> None:
    """RULES.md Observation: `deck_size`, `discard_size` (/ 52), `dug` (the cards dug into a
    pending discard-pile score), `my_scored` / `opp_scored` (public) and `round_points` (best
    regrouping / 32, own first), on section 5's digging example."""
    e = new_game(stacked([["9D"], ["KC"], ["2H"], ["JS"]], deck=["5H", "7C", "5S", "5C", "5D"]))
    arrange(e, deck=["5H"], discard=["7C", "5S", "5C", "5D"])  # 20 cards left in the deck

    def sizes(seat: int) -> tuple[int, int]:
        v = view(e, seat)
        return round(float(v["deck_size"][0]) * 52), round(float(v["discard_size"][0]) * 52)

    assert sizes(0) == sizes(1) == (20, 4)
    play(e, "reveal:deck", "flip:discard")
    assert sizes(0) == (19, 3) and not view(e, 0)["dug"].any()
    play(e, "dig")  # 5C joins the pending score
    for seat in (0, 1):
        assert codes(np.flatnonzero(view(e, seat)["dug"])) == ["5C"]
    assert sizes(0) == (19, 2)
    play(e, "dig", "dig")  # 5S joins, 7C misses and goes back: 5H 5D 5C 5S scored (5 points)
    scored = ["5C", "5D", "5H", "5S"]
    v0, v1 = view(e, 0), view(e, 1)
    assert codes(np.flatnonzero(v0["my_scored"])) == scored and not v0["opp_scored"].any()
    assert codes(np.flatnonzero(v1["opp_scored"])) == scored and not v1["my_scored"].any()
    assert v0["round_points"].tolist() == [5 / 32, 0.0]
    assert v1["round_points"].tolist() == [0.0, 5 / 32]
    assert not v1["dug"].any() and sizes(1) == (19, 1)


def test_observation_tells_each_seat_whether_it_dealt() -> None:
    """RULES.md, Observation: `is_dealer` is 1 in the dealer's view only (seat 1 deals here)."""
    e = new_game(stacked(QUIET_TOPS))
    assert list(view(e, 1)["is_dealer"]) == [1] and list(view(e, 0)["is_dealer"]) == [0]


# -- options ---------------------------------------------------------------------------------------
def test_side_pair_without_centre_option() -> None:
    deck = stacked(QUIET_TOPS, side0=["8S", "JS", "7C", "TD"], deck=["8H"])
    e = new_game(deck)
    play(e, "flip:side1")
    assert legal(e) == {"keep:first", "keep:second"}
    e = new_game(deck, side_pair_without_centre=True)
    play(e, "flip:side1", "multiscore:-")
    assert sorted(codes(e.scored[0])) == ["8H", "8S"]


def test_discard_without_second_option() -> None:
    deck = stacked(QUIET_TOPS, deck=["8H", "QS"])
    assert "discard:first" not in legal(new_game(deck))
    e = new_game(deck, discard_without_second=True)
    play(e, "discard:first")
    assert codes(e.discard) == ["8H"] and e.current_player == 1 and e.phase == START


@pytest.mark.parametrize(("key", "value"), [("first_dealer", 2), ("num_players", 3),
                                            ("stall_turns", 0), ("episode", "hand"),
                                            ("side_pair_without_centre", 1)])
def test_bad_config_names_the_key(key, value) -> None:
    with pytest.raises(ValueError, match=key):
        MegaMemoryEngine(**{key: value})


def test_render_shows_the_whole_position() -> None:
    e = new_game(stacked(QUIET_TOPS, side0=["AD", "JS", "7C", "TD"], deck=["5H"]))
    text = e.render_text()
    assert "1:5S" in text and "AD JS 7C TD" in text and "first 5H" in text


# -- the heuristic --------------------------------------------------------------------------------
def test_heuristic_beats_random_clearly() -> None:
    engine = MegaMemoryEngine()
    heuristic = MegaMemoryHeuristic()
    rand = RandomAgent(0)
    obs = np.empty(engine.layout.size, np.float32)
    wins = losses = 0
    for game in range(300):
        engine.reset(seed=10_000 + game)
        seat = game % 2
        while not engine.done:
            s = engine.current_player
            engine.write_observation(s, obs)
            agent = heuristic if s == seat else rand
            engine.step(agent.act(obs.copy(), engine.legal_mask().copy()))
        wins += engine.winners == [seat]
        losses += engine.winners == [1 - seat]
    assert wins >= 250 and losses <= 20, (wins, losses)


def _one_card_left(**config) -> MegaMemoryEngine:
    """Seat 0 to move; QS is the only card left in the deck, the discard pile is empty, and
    nothing in the centre (5S 9D KC 2H) scores with QS or with seat 0's side cards."""
    e = new_game(stacked(QUIET_TOPS, deck=["QS"]), **config)
    pool = [card_code(c) for c in e.deck if card_code(c) != "QS"]
    arrange(e, deck=["QS"], scored=((), tuple(pool)))
    return e


def test_a_turn_that_turns_the_last_card_ends_the_round() -> None:
    """RULES.md 6 (issue 38): "The round is over when ... the DECK and DISCARD PILE are both
    depleted": the turn whose first card empties both ends the round when it ends, although
    its discard has slid over into the deck by then."""
    e = _one_card_left()
    # The turn's first card was turned without a choice: deck and discard pile now both empty.
    assert card_code(e.first_card) == "QS" and not e.deck and not e.discard
    view_now = view(e, 0)
    assert view_now["deck_size"][0] == 0 and view_now["discard_size"][0] == 0
    play(e, "flip:side1", "keep:first")
    assert e.done and e.scoreless_turns == 1
    assert e.result()["rounds"] == 1 and e.winners == [1]  # seat 1 holds every scored card


def test_the_old_reading_lets_the_last_card_cycle_until_the_stall_limit() -> None:
    """``round_end="empty_at_turn_end"``, the reading before issue 38: the end is checked only
    when a turn ends, and a scoreless turn puts a card back on the discard pile, which slides
    over at once, so one card cycles between deck and player until the stall limit."""
    e = _one_card_left(stall_turns=6, round_end="empty_at_turn_end")
    turns = 0
    while not e.done:
        assert len(e.deck) + len(e.discard) + (e.first_card >= 0) == 1  # one card in play
        legal = {e.action_names[a] for a in np.flatnonzero(e.legal_mask())}
        e.step(e.action_id("flip:side1" if "flip:side1" in legal else "keep:first"))
        turns += "flip:side1" not in legal
        e.check_invariants()
    assert turns == 6 and e.scoreless_turns == 6


def test_a_last_deck_card_with_a_discard_pile_under_it_does_not_end_the_round() -> None:
    """The discard pile slides over the moment the deck's last card is turned: the two are
    never both depleted, and the round goes on (under either reading)."""
    for round_end in ("ran_out_this_turn", "empty_at_turn_end"):
        e = new_game(stacked(QUIET_TOPS, deck=["QS", "JH"]), round_end=round_end)
        pool = [card_code(c) for c in e.deck if card_code(c) not in ("QS", "JH")]
        arrange(e, deck=["QS"], discard=["JH"], scored=((), tuple(pool)))
        play(e, "reveal:deck")  # QS; JH slides over and becomes the deck
        assert codes(e.deck) == ["JH"] and not e.discard
        play(e, "flip:side1", "keep:first")
        assert not e.done and not e.piles_ran_out and e.current_player == 1


def test_a_refill_that_takes_the_last_card_ends_the_round() -> None:
    """A side multiscore refills its slot from the deck: when that is the last card and the
    discard pile is empty, both are depleted and the round ends with the turn."""
    e = new_game(stacked([["QH"], ["9D"], ["KC"], ["2H"]], side0=["QD"], deck=["QS", "JH"]))
    pool = [card_code(c) for c in e.deck if card_code(c) not in ("QS", "JH")]
    arrange(e, deck=["QS", "JH"], scored=((), tuple(pool)))
    play(e, "flip:side1", "multiscore:1")  # QS + QD + QH; JH refills the slot
    assert e.done and codes(e.sides[0][:1]) == ["JH"] and e.round_points[0] == 2



"""Every ROY rule, on stacked decks. Rule references are to the text's numbered sections."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.cards import card_code, card_id
from card_envs.games.roy.engine import DRAW, END, RoyEngine
from tests.engine_helpers import legal_names, play
from tests.roy_helpers import roy, stacked_deck

# A 7-card hand holding the text's example (2S 3S 3C 4C 7H 8H) plus a card that plays nowhere.
EXAMPLE = ["2S", "3S", "3C", "4C", "7H", "8H", "9D"]
FILLER = ["3D", "5D", "6D", "8D", "TD", "QD", "KD"]  # seat 1: diamonds only
CLUBS = ["5C", "6C", "7C", "8C", "9C", "TC", "QC"]  # a third seat: clubs only
HEARTS_RUN = ["2H", "3H", "4H", "5H", "6H", "7H", "8H"]  # goes out in one turn on 9H


def hand_codes(engine: RoyEngine, seat: int) -> set[str]:
    from card_envs.core.cards import card_code

    return {card_code(c) for c in engine.hands[seat]}


# -- 1, 2: deal and first player ------------------------------------------------------------
def test_deal_seven_each_starter_and_left_of_dealer_begins() -> None:
    deck = stacked_deck([EXAMPLE, FILLER], "2H", dealer=1)
    e = RoyEngine(num_players=2, first_dealer=1)
    e.reset(deck=deck)
    assert hand_codes(e, 0) == set(EXAMPLE)
    assert hand_codes(e, 1) == set(FILLER)
    assert e.discard == [card_id("2H")]
    assert len(e.deck) == 52 - 14 - 1
    assert e.current_player == 0  # left of dealer 1
    e3 = RoyEngine(num_players=3, first_dealer=0)
    e3.reset(seed=1)
    assert e3.current_player == 1


# -- 4: the text's example -------------------------------------------------------------------
def test_text_example_first_card_matches_suit_or_value() -> None:
    e = roy([EXAMPLE, FILLER], "2H")
    assert legal_names(e) == {"play:2S", "play:7H", "play:8H"}


def test_text_example_both_plays_are_legal() -> None:
    e = roy([EXAMPLE, FILLER], "2H")
    play(e, "play:7H", "play:8H")  # 8H is the next higher heart
    # nothing continues from 8H, so the turn ended by itself
    assert e.current_player == 1
    assert hand_codes(e, 0) == {"2S", "3S", "3C", "4C", "9D"}

    e = roy([EXAMPLE, FILLER], "2H")
    play(e, "play:2S", "play:3S", "play:3C", "play:4C")
    assert hand_codes(e, 0) == {"7H", "8H", "9D"}
    assert [c for c in e.discard] == [card_id(c) for c in ["2H", "2S", "3S", "3C", "4C"]]
    assert e.current_player == 1


def test_continuation_is_same_value_or_next_higher_same_suit() -> None:
    e = roy([["5H", "5S", "6H", "4H", "7S", "6S", "9S"], FILLER], "9H")
    play(e, "play:6H")
    # after 6H: 6S (value) or 7H (not held); not 5H/4H (lower), not 7S or 9S (other suit)
    assert legal_names(e) == {"play:6S", "end"}
    play(e, "play:6S")
    assert legal_names(e) == {"play:7S", "end"}  # 7S is next; 9S is higher, not next


def test_continuation_is_only_the_next_higher_card_not_any_higher() -> None:
    """4: after the first card, same value or "the next higher card of the same suit" only."""
    e = roy([["5H", "5C", "7H", "KH", "2S", "3S", "4S"], FILLER], "9H")
    play(e, "play:5H")
    assert legal_names(e) == {"play:5C", "end"}  # 7H and KH are higher hearts, not the next


def test_play_passes_left_with_three_players() -> None:
    """2, 3, 5 and RULES.md 1-2: play goes to the left, seat s to seat s + 1 (also past a King
    of Spades: its victim is the seat on the left, the seat after it plays next)."""
    e = roy([EXAMPLE, FILLER, CLUBS], "2H", draws=["9S"])
    play(e, "play:2S", "end")
    assert e.current_player == 1
    play(e, "draw")  # diamonds only on the 2S: cannot discard
    assert e.current_player == 2
    e = roy([["KS", "2C", "3C", "4C", "AH", "2H", "3H"], FILLER, CLUBS], "9S")
    play(e, "play:KS")
    assert [len(h) for h in e.hands] == [6, 14, 7] and e.current_player == 2



def test_four_players_are_dealt_seven_each_and_play_passes_round_all_four() -> None:
    """RULES.md: "`num_players` is 2, 3 or 4 (default 2)"; 1-2: each player is dealt 7 cards
    and play passes to the left, seat s to seat s + 1, round all four seats."""
    spades = ["4S", "6S", "7S", "8S", "9S", "TS", "QS"]
    e = roy([EXAMPLE, FILLER, CLUBS, spades], "2H", draws=["9H", "JH"])
    assert len(e.hands) == 4
    assert [hand_codes(e, s) for s in range(4)] == [set(EXAMPLE), set(FILLER), set(CLUBS),
                                                     set(spades)]
    assert len(e.deck) == 52 - 4 * 7 - 1 and e.current_player == 0
    play(e, "play:2S", "end")
    play(e, "draw")  # seat 1: diamonds only on the 2S
    assert e.current_player == 2 and "9H" in hand_codes(e, 1)
    play(e, "draw")  # seat 2: clubs only
    assert e.current_player == 3 and "JH" in hand_codes(e, 2)
    play(e, "play:4S")  # seat 3: nothing continues from the 4S, so the turn ends by itself
    assert e.current_player == 0
    assert _decoded(e, 0)["opponent_hand_sizes"].tolist() == pytest.approx([8 / 52, 8 / 52,
                                                                            6 / 52])

def test_player_chooses_when_the_turn_ends() -> None:
    e = roy([EXAMPLE, FILLER], "2H")
    play(e, "play:2S")
    assert "end" in legal_names(e)
    play(e, "end")
    assert e.current_player == 1
    assert hand_codes(e, 0) == set(EXAMPLE) - {"2S"}


# -- 3: cannot discard: draw one, the turn passes ------------------------------------------------
@pytest.mark.parametrize("drawn", ["AH", "5S", "9C"])
def test_cannot_discard_draws_one_and_passes(drawn: str) -> None:
    """The turn passes whether or not the drawn card would play on the 9S: 5S (its suit) and
    9C (its value) would, AH would not."""
    e = roy([FILLER, EXAMPLE], "9S", draws=[drawn])
    e_legal = legal_names(e)
    assert e_legal == {"draw"}
    play(e, "draw")
    assert drawn in hand_codes(e, 0) and len(e.hands[0]) == 8
    assert e.current_player == 1  # even though nothing forces a pass when the card would play


def test_draw_when_able_option() -> None:
    e = roy([EXAMPLE, FILLER], "2H")
    assert "draw" not in legal_names(e)
    e = roy([EXAMPLE, FILLER], "2H", draw_when_able=True)
    assert "draw" in legal_names(e)


def test_draw_when_able_never_offers_an_empty_draw() -> None:
    """RULES.md, draw_when_able: a draw is offered only when there is a card to draw."""
    e = roy([EXAMPLE, FILLER], "2H", draw_when_able=True)
    while e.deck:  # the deck into seat 1's hand; the discard pile is only its top
        e._give(1, e.deck.pop())
    e._after_load()
    e.check_invariants()
    assert legal_names(e) and "draw" not in legal_names(e)


def test_a_playable_wild_jack_means_the_player_cannot_draw() -> None:
    """3: only a player who "cannot discard at least 1 card" draws; a wild Jack is a discard."""
    e = roy([["JC", "2S", "3S", "4S", "5S", "6S", "7S"], FILLER], "9H")
    assert legal_names(e) == {"wild:JC>C", "wild:JC>D", "wild:JC>H", "wild:JC>S"}


def _forced(e: RoyEngine, seat: int) -> list[tuple[str, str, int]]:
    """What ``seat`` observes of each opponent's last forced draw (next seat first): the suit
    and rank it could not match and the cards it has gained since, or None."""
    block = _decoded(e, seat)["forced_draws"].reshape(e.num_players - 1, 18)
    out = []
    for row in block:
        if not row.any():
            out.append(None)
            continue
        assert row[:4].sum() == 1 and row[4:17].sum() == 1, row  # one suit, one rank
        suit, rank = int(np.argmax(row[:4])), int(np.argmax(row[4:17]))
        out.append(("CDHS"[suit], "A23456789TJQK"[rank], round(float(row[17]) * 52)))
    return out


def test_a_forced_draw_shows_the_table_what_the_drawer_could_not_match() -> None:
    """3: a player draws only when it "cannot discard": no card of the top's suit or rank, no
    Jack. Everyone saw that, so every other seat observes it (and the cards gained since)."""
    e = roy([FILLER, EXAMPLE, ["4S", "5S"]], "9S", draws=["AH"])
    assert _forced(e, 1) == [None, None]
    play(e, "draw")  # seat 0 holds only diamonds: no spade, no nine, no Jack
    assert _forced(e, 1) == [None, ("S", "9", 1)]  # seat 0 is seat 1's second opponent
    assert _forced(e, 2) == [("S", "9", 1), None]  # ... and seat 2's next one
    assert _forced(e, 0) == [None, None]  # nothing about itself


def test_a_forced_draw_after_a_wild_jack_is_on_the_announced_suit() -> None:
    e = roy([["JS", "4S"], FILLER], "9H")
    play(e, "wild:JS>C")
    play(e, "draw")  # seat 1: diamonds only, no club, no Jack
    assert _forced(e, 0) == [("C", "J", 1)]


def test_a_second_forced_draw_replaces_the_first_and_penalties_count_as_gained() -> None:
    no_spade_seven_or_jack = ["2C", "4C", "6C", "8C", "9C", "TC", "QC", "4H"]
    e = roy([FILLER, ["AS", "2S", "3S", "KS", "5S", "6S", "7S"]], "9S",
            draws=no_spade_seven_or_jack)
    play(e, "draw")  # seat 0 (diamonds) cannot match the 9S
    assert _forced(e, 1) == [("S", "9", 1)]
    play(e, "play:KS", "end")  # the King of Spades: seat 0 draws seven and is skipped
    assert _forced(e, 1) == [("S", "9", 8)]
    play(e, "play:7S")  # seat 1 again; nothing follows a 7S here, so the turn ends
    play(e, "draw")  # seat 0 cannot match the 7S either
    assert _forced(e, 1) == [("S", "7", 1)]


def test_no_forced_draw_is_recorded_for_an_ace_penalty_or_with_draw_when_able() -> None:
    e = roy([["AH", "4C", "5C", "6C", "7C", "8C", "9C"], FILLER], "2H")
    play(e, "play:AH")  # no other Ace: the turn ends by itself
    play(e, "draw")  # seat 1 takes the Ace penalty: drawing is always allowed then
    assert _forced(e, 0) == [None]
    e = roy([FILLER, EXAMPLE], "9S", draw_when_able=True)
    play(e, "draw")  # seat 0 cannot match, but a draw is a choice here: it shows nothing
    assert _forced(e, 1) == [None]


def test_with_draw_when_able_a_draw_that_finds_nothing_still_shows_a_void() -> None:
    """That option never offers an empty draw to a seat that could discard instead."""
    e = roy([FILLER, EXAMPLE], "9S", draw_when_able=True)
    while e.deck:  # the deck into seat 1's hand; the discard pile is only its top
        e._give(1, e.deck.pop())
    e._after_load()
    play(e, "draw")
    assert _forced(e, 1) == [("S", "9", 0)]


def test_a_new_hand_forgets_the_forced_draws() -> None:
    e = roy([FILLER, HEARTS_RUN], "9H", episode="game")
    play(e, "draw")
    assert _forced(e, 1) == [("H", "9", 1)]
    play(e, *[f"play:{card}" for card in HEARTS_RUN])  # seat 1 goes out: a new hand
    assert e.hand_number == 2 and e.forced_suit == [-1, -1]
    assert _forced(e, 0) == [None] and _forced(e, 1) == [None]


# -- 6: Jacks --------------------------------------------------------------------------------------
def test_wild_jack_is_first_and_only_and_announces_a_suit() -> None:
    e = roy([["JC", "2D", "3D", "4D", "5D", "6D", "7D"],
             ["KS", "QH", "JD", "2C", "3C", "4C", "5S"]],
            "9H")
    names = legal_names(e)
    assert {"wild:JC>C", "wild:JC>D", "wild:JC>H", "wild:JC>S"} <= names
    assert "play:JC" not in names  # as an ordinary card it would have to match 9H
    play(e, "wild:JC>S")
    assert e.current_player == 1 and e.announced_suit == 3
    # next player: a Jack or a Spade (the KS), not the Queen of Hearts matching the old top
    assert {n for n in legal_names(e) if n.startswith("play:")} == {
        "play:KS", "play:5S", "play:JD"}


def test_jacks_inside_a_sequence_are_ordinary() -> None:
    # The text: 10H, JH, JS, QS in one turn.
    e = roy([["TH", "JH", "JS", "QS", "2C", "3C", "4C"], FILLER], "9H")
    play(e, "play:TH", "play:JH", "play:JS", "play:QS")
    assert e.announced_suit == -1
    assert hand_codes(e, 0) == {"2C", "3C", "4C"}
    assert e.current_player == 1  # nothing follows QS (KS not held, no queens)


def test_no_wild_jack_after_the_first_card() -> None:
    e = roy([["9H", "9C", "JD", "2C", "3C", "4C", "5C"], FILLER], "9S")
    play(e, "play:9H")
    assert not any(n.startswith("wild:") for n in legal_names(e))


def test_going_out_with_a_wild_jack_wins_the_hand() -> None:
    """7 and RULES.md 3-5: discarding the last card wins the hand, a wild Jack included."""
    e = roy([HEARTS_RUN[:6] + ["JC"], FILLER], "9H", draws=["2S"], reward="score")
    play(e, *(f"play:{c}" for c in HEARTS_RUN[:6]))
    play(e, "draw")  # seat 1: diamonds only on the 7H
    play(e, "wild:JC>D")
    assert e.terminated and e.winners == [0] and e.scores == [8, 0]


def test_a_wild_jack_cannot_answer_a_pending_ace() -> None:
    """6 Aces: the next player "must either play an ace or draw"; RULES.md: not a wild Jack."""
    e = roy([["AH", "2C", "3C", "4C", "5C", "6C", "7C"], ["JD", *FILLER[:6]]], "KH")
    play(e, "play:AH")
    assert legal_names(e) == {"draw"}


# -- 6: Aces ---------------------------------------------------------------------------------------
def test_ace_forces_ace_or_draw_two_and_aces_stack() -> None:
    e = roy([["AH", "AS", "2C", "3C", "4C", "5C", "6C"],
             ["AD", "AC", "2D", "3D", "4D", "5D", "6D"]],
            "KH", draws=["7S", "8S", "9S", "TS", "QC", "QD", "KC", "KD"])
    play(e, "play:AH", "end")
    assert e.ace_chain == 1
    assert legal_names(e) == {"play:AD", "play:AC", "draw"}
    play(e, "play:AD", "end")
    assert legal_names(e) == {"play:AS", "draw"}  # must play an ace or draw four
    play(e, "play:AS")
    assert e.current_player == 1  # auto-end: no other ace in hand
    assert e.ace_chain == 3
    play(e, "play:AC")
    assert e.ace_chain == 4
    before = len(e.hands[0])
    play(e, "draw")  # all four aces in succession: draw EIGHT
    assert len(e.hands[0]) == before + 8
    assert e.ace_chain == 0
    assert e.current_player == 1  # drawing the penalty ends the turn


def test_three_aces_in_succession_ask_for_six() -> None:
    """6 Aces: "If that person plays an ace, then the next player must play an ace or draw SIX
    cards": the third step of the progression two, FOUR, SIX, EIGHT (each Ace adds two; the
    penalty does not double)."""
    e = roy([["AH", "AS", "2C", "3C", "4C", "5C", "6C"], ["AD", *FILLER[:6]]], "KH")
    play(e, "play:AH", "end")  # seat 0 could add its AS; it keeps it for later
    play(e, "play:AD")  # seat 1 answers; no other Ace, so its turn ends by itself
    play(e, "play:AS")  # seat 0 answers again: three Aces in succession
    assert e.ace_chain == 3 and e.current_player == 1
    assert legal_names(e) == {"draw"}  # no Ace left to answer with
    before = len(e.hands[1])
    play(e, "draw")
    assert len(e.hands[1]) == before + 6 and e.ace_chain == 0 and e.current_player == 0


def test_two_aces_in_one_turn_count_twice() -> None:
    e = roy([["AH", "AS", "2C", "3C", "4C", "5C", "6C"], FILLER], "KH")
    play(e, "play:AH", "play:AS")
    assert e.ace_chain == 2
    before = len(e.hands[1])
    play(e, "draw")
    assert len(e.hands[1]) == before + 4


def test_aces_are_high_only() -> None:
    e = roy([["QH", "KH", "AH", "2H", "3C", "4C", "5C"], FILLER], "9H")
    play(e, "play:QH", "play:KH")
    assert "play:AH" in legal_names(e)
    play(e, "play:AH")
    assert e.current_player == 1  # nothing after an Ace: no A-2 run
    assert "2H" in hand_codes(e, 0)


def test_after_paying_an_ace_penalty_the_ace_plays_as_a_normal_card() -> None:
    e = roy([["AH", "2C", "3C", "4C", "5C", "6C", "5H"],
             ["9D", "TD", "QD", "KD", "5D", "6D", "8H"]],
            "KH", draws=["2S", "3S"])
    play(e, "play:AH")
    play(e, "draw")  # seat 1 takes two
    assert e.ace_chain == 0 and len(e.hands[1]) == 9
    # seat 0 follows the Ace normally: a heart or an ace (no Ace held: a pending penalty
    # would leave it only "draw")
    assert legal_names(e) == {"play:5H"}


# -- 6: King of Spades -----------------------------------------------------------------------------
def test_king_of_spades_draws_seven_and_forfeits() -> None:
    e = roy([["KS", "2C", "3C", "4C", "5C", "6C", "7C"], FILLER], "9S")
    play(e, "play:KS")
    assert len(e.hands[1]) == 14
    assert e.current_player == 0  # seat 1's turn was forfeited


def test_king_of_spades_then_ace_adds_the_ace_penalty() -> None:
    e = roy([["KS", "AS", "2C", "3C", "4C", "5C", "6C"], FILLER], "QS")
    play(e, "play:KS", "play:AS")
    assert len(e.hands[1]) == 7 + 7 + 2
    assert e.ace_chain == 0 and e.current_player == 0


# -- 6 NOTE: a special starter has no effect -------------------------------------------------------
@pytest.mark.parametrize("starter", ["KS", "AD", "JH"])
def test_special_starter_has_no_effect(starter: str) -> None:
    e = roy([["KC", "2S", "4D", "4H", "JC", "QH", "AC"], FILLER], starter)
    assert e.ace_chain == 0 and e.announced_suit == -1 and len(e.hands[0]) == 7
    names = {n for n in legal_names(e) if n.startswith("play:")}
    if starter == "KS":  # "must start by discarding a King, a Spade, or a Jack"
        assert names == {"play:KC", "play:2S"}
        assert any(n.startswith("wild:JC") for n in legal_names(e))
    if starter == "AD":
        assert names == {"play:4D", "play:AC"}
    if starter == "JH":
        assert names == {"play:4H", "play:QH", "play:JC"}


# -- deck runs out ---------------------------------------------------------------------------------
def test_empty_deck_reshuffles_discards_except_top() -> None:
    e = roy([EXAMPLE, FILLER], "2H")
    e.discard += e.deck[:-1]  # move all but one deck card under the top, as if played
    top = e.discard[0]
    e.discard = e.discard[1:] + [top]
    for card in e.discard[:-1]:
        e.tracker.show_all(card, card)  # played in view, so remembered
    e.deck = e.deck[-1:]
    e.check_invariants()
    e._draw(1, 3)
    assert e.discard == [top]
    assert len(e.deck) == 52 - 14 - 1 - 3
    e.check_invariants()


def test_draw_with_nothing_left_draws_what_there_is() -> None:
    e = roy([EXAMPLE, FILLER], "2H")
    e.deck = e.deck[-2:]
    gone = e.hands[0]
    e.hands[0] = gone + []
    assert e._draw(1, 7) == 2  # deck 2, discard has only its top
    assert not e.deck


# -- 7: scoring and the game -----------------------------------------------------------------------
def test_going_out_wins_the_hand_and_scores() -> None:
    e = roy([["2H", "3H", "4H", "5H", "6H", "7H", "8H"], FILLER], "9H", reward="score")
    play(e, "play:2H", "play:3H", "play:4H", "play:5H", "play:6H", "play:7H", "play:8H")
    assert e.terminated and e.winners == [0]
    assert e.scores == [7, 0]
    assert e.rewards.tolist() == [7.0, 0.0]


@pytest.mark.parametrize(("hand", "starter"), [
    (["7S", "8S", "9S", "TS", "JS", "QS", "KS"], "6S"),  # out on the King of Spades
    (["8H", "9H", "TH", "JH", "QH", "KH", "AH"], "7H"),  # out on an Ace
])
def test_going_out_on_a_special_card_imposes_nothing(hand: list[str], starter: str) -> None:
    """RULES.md's choice: the hand is scored on the cards the opponent holds, no penalty drawn."""
    e = roy([hand, FILLER], starter, reward="score")
    play(e, *(f"play:{c}" for c in hand))
    assert e.terminated and e.winners == [0] and e.scores == [7, 0]
    assert len(e.hands[1]) == 7


def test_win_rewards_default() -> None:
    e = roy([["2H", "3H", "4H", "5H", "6H", "7H", "8H"], FILLER], "9H")
    play(e, "play:2H", "play:3H", "play:4H", "play:5H", "play:6H", "play:7H", "play:8H")
    assert e.rewards.tolist() == [1.0, -1.0]


def test_winner_scores_the_cards_of_every_opponent() -> None:
    """7: the winner "is awarded 1 point for each card his opponent(s) are holding"."""
    e = roy([HEARTS_RUN, FILLER, CLUBS], "9H", reward="score")
    play(e, *(f"play:{c}" for c in HEARTS_RUN))
    assert e.scores == [14, 0, 0] and e.rewards.tolist() == [14.0, 0.0, 0.0]


def test_game_ends_when_a_score_reaches_the_target_exactly() -> None:
    """7: "The first player to 100 points wins the game": reaching the target is enough."""
    e = roy([HEARTS_RUN, FILLER], "9H", episode="game", target_score=7)
    play(e, *(f"play:{c}" for c in HEARTS_RUN))
    assert e.terminated and e.winners == [0] and e.scores == [7, 0] and e.hand_number == 1


@pytest.mark.parametrize(("before", "done"), [(93, True), (92, False)])
def test_the_default_game_is_to_100_points(before: int, done: bool) -> None:
    """7: "The first player to 100 points wins the game" (the object: "the first player to
    reach 100 points"): by default 93 + 7 = 100 ends the game, 92 + 7 = 99 does not."""
    e = roy([HEARTS_RUN, FILLER], "9H", episode="game")
    e.scores = [before, 0]
    play(e, *(f"play:{c}" for c in HEARTS_RUN))
    assert e.scores[0] == before + 7 and e.terminated is done
    if done:
        assert e.winners == [0] and e.hand_number == 1
    else:
        assert e.hand_number == 2 and not e.winners


def test_scores_add_up_over_the_hands_of_a_game() -> None:
    """7: each hand's points add to the winner's running total (the game is to 100)."""
    e = roy([HEARTS_RUN, FILLER], "9H", episode="game")
    play(e, *(f"play:{c}" for c in HEARTS_RUN))
    totals, wins = [7, 0], [1, 0]
    rng = np.random.default_rng(0)
    while max(wins) < 2 and not e.done:  # until some seat has won a second hand
        hand = e.hand_number
        mover = e.current_player
        at_stake = sum(len(h) for s, h in enumerate(e.hands) if s != mover)
        e.step(int(rng.choice(np.flatnonzero(e.legal_mask()))))
        if e.done or e.hand_number != hand:
            totals[mover] += at_stake
            wins[mover] += 1
    assert max(wins) == 2 and e.scores == totals


def test_game_mode_plays_hands_to_the_target_and_rotates_the_dealer() -> None:
    e = RoyEngine(episode="game", target_score=10, first_dealer=1)
    e.reset(deck=stacked_deck([["2H", "3H", "4H", "5H", "6H", "7H", "8H"], FILLER], "9H"))
    play(e, "play:2H", "play:3H", "play:4H", "play:5H", "play:6H", "play:7H", "play:8H")
    assert not e.terminated and e.scores == [7, 0]
    assert e.hand_number == 2 and e.dealer == 0 and e.current_player == 1
    assert all(len(h) == 7 for h in e.hands)
    rng = np.random.default_rng(0)
    while not e.done:
        e.step(int(rng.choice(np.flatnonzero(e.legal_mask()))))
    assert e.terminated and max(e.scores) >= 10
    assert e.winners == [int(np.argmax(e.scores))]


def _three_player_game_after_seat_0_wins_a_hand(**config) -> RoyEngine:
    e = roy([HEARTS_RUN, FILLER, CLUBS], "9H", episode="game", **config)
    play(e, *(f"play:{c}" for c in HEARTS_RUN))
    return e


def test_the_deal_passes_left_with_three_players() -> None:
    """RULES.md 1-2: the deal passes left each hand (dealer 2 -> 0), so seat 1 plays first."""
    e = _three_player_game_after_seat_0_wins_a_hand()
    assert e.hand_number == 2 and e.dealer == 0 and e.current_player == 1


# -- memory of buried discards ---------------------------------------------------------------------
def _decoded(e: RoyEngine, seat: int) -> dict[str, np.ndarray]:
    obs = np.empty(e.layout.size, np.float32)
    e.write_observation(seat, obs)
    return {k: v.copy() for k, v in e.layout.decode(obs).items()}


def _memory_plane(e: RoyEngine, seat: int) -> set[int]:
    return set(np.flatnonzero(_decoded(e, seat)["discard_memory"]).tolist())


def test_perfect_memory_remembers_buried_discards() -> None:
    e = roy([EXAMPLE, FILLER], "2H")
    play(e, "play:2S", "play:3S", "end")
    buried = {card_id("2H"), card_id("2S")}
    assert _memory_plane(e, 0) == buried and _memory_plane(e, 1) == buried


def test_no_memory_forgets_after_own_decision() -> None:
    e = roy([EXAMPLE, FILLER], "2H", memory="none")
    play(e, "play:2S", "play:3S", "end")
    assert _memory_plane(e, 0) == set()  # seat 0 decided since
    assert _memory_plane(e, 1) == {card_id("2H"), card_id("2S")}  # seen, not yet decided
    play(e, "play:3D")
    # the old memories went as seat 1 decided; the 3S its own discard buried stays until its
    # next decision
    assert _memory_plane(e, 1) == {card_id("3S")}


def test_forgetting_probability_is_between() -> None:
    kept = []
    for seed in range(40):
        e = RoyEngine(memory=0.5, first_dealer=1)
        e.reset(seed=seed, deck=stacked_deck([EXAMPLE, FILLER], "2H"))
        play(e, "play:2S", "play:3S", "play:3C", "end")
        kept.append(len(_memory_plane(e, 0)))  # 3 buried cards, each kept with p=0.5
    assert 0 < np.mean(kept) < 3


def _deck_plane(e: RoyEngine, seat: int) -> set[int]:
    return set(np.flatnonzero(_decoded(e, seat)["reshuffled_into_deck"]).tolist())


def test_a_reshuffle_moves_the_discard_memory_into_the_deck() -> None:
    """RULES.md, Memory: at a reshuffle "each seat's memory of the buried cards becomes its
    memory of the new deck"; the drawer alone knows which card it drew. Interpretation 7:
    "Empty deck: reshuffle all but the top discard"."""
    e = roy([EXAMPLE, FILLER], "2H")
    while e.deck:  # the deck into seat 0's hand: the next draw must reshuffle
        e._give(0, e.deck.pop())
    e._after_load()
    e.check_invariants()
    play(e, "play:2S", "play:3S", "play:3C", "play:4C", "end")
    buried = {card_id(c) for c in ["2H", "2S", "3S", "3C"]}
    assert _memory_plane(e, 0) == buried and _memory_plane(e, 1) == buried
    assert _deck_plane(e, 0) == set() and _deck_plane(e, 1) == set()
    hand_before = set(e.hands[1])
    assert legal_names(e) == {"draw"}  # seat 1 (diamonds only on the 4C) must draw: deck empty
    play(e, "draw")
    drawn = set(e.hands[1]) - hand_before
    assert e.discard == [card_id("4C")]  # the top discard stays
    assert len(drawn) == 1 and drawn < buried  # drawn from the reshuffled discards
    assert set(e.deck) == buried - drawn
    assert _memory_plane(e, 0) == set() and _memory_plane(e, 1) == set()
    assert _deck_plane(e, 0) == buried  # seat 0 did not see which card seat 1 drew
    assert _deck_plane(e, 1) == buried - drawn


CLUB_RUN = ["2C", "3C", "4C", "5C", "6C"]  # played on the 8C: every buried card is a club


def _after_club_reshuffle(players: int = 2, **config) -> tuple[RoyEngine, int]:
    """Seat 0 buries 8C and the club run, holding the rest of the deck; seat 1's draw then
    reshuffles the buried clubs into a new deck. Returns the engine and seat 1's card."""
    e = roy([CLUB_RUN, FILLER, HEARTS_RUN][:players], "8C", draw_when_able=True, **config)
    while e.deck:
        e._give(0, e.deck.pop())
    e._after_load()
    play(e, *(f"play:{c}" for c in CLUB_RUN), "end")
    before = set(e.hands[1])
    play(e, "draw")
    (drawn,) = set(e.hands[1]) - before
    return e, drawn


RESHUFFLED_CLUBS = {card_id(c) for c in ["8C", *CLUB_RUN[:-1]]}


def test_drawn_and_played_cards_leave_the_deck_memory() -> None:
    """RULES.md, Memory: a card leaves a seat's memory of the deck when that seat draws it, or
    when anyone plays it in view; the other seats cannot see which card a seat drew."""
    e, seat1_card = _after_club_reshuffle()
    assert _deck_plane(e, 0) == RESHUFFLED_CLUBS
    assert _deck_plane(e, 1) == RESHUFFLED_CLUBS - {seat1_card}
    seat0_card = e.deck[-1]
    play(e, "draw")  # seat 0 (draw_when_able) takes the deck's top card
    assert seat0_card in e.hands[0]
    assert _deck_plane(e, 0) == RESHUFFLED_CLUBS - {seat0_card}
    assert _deck_plane(e, 1) == RESHUFFLED_CLUBS - {seat1_card}
    play(e, "draw")  # seat 1 again
    assert e.current_player == 0 and e.discard[-1] == card_id("6C")
    play(e, f"play:{card_code(seat0_card)}")  # a club on the 6C: played in view
    assert seat0_card not in _deck_plane(e, 1)
    assert seat0_card == e.discard[-1]
    e.check_invariants()


def test_memory_none_keeps_the_reshuffled_cards_until_the_seats_next_decision() -> None:
    """RULES.md, Memory: the memory mode applies to the reshuffled cards as to buried ones."""
    e, _ = _after_club_reshuffle(players=3)
    assert _deck_plane(e, 2) == RESHUFFLED_CLUBS  # seat 2 cannot know seat 1's card
    e, _ = _after_club_reshuffle(players=3, memory="none")
    # Seats 0 and 1 decided after the burials (seat 1's draw reshuffled); seat 2 did not.
    assert _deck_plane(e, 0) == set() and _deck_plane(e, 1) == set()
    assert e.current_player == 2 and _deck_plane(e, 2) == RESHUFFLED_CLUBS
    play(e, "draw")
    assert _deck_plane(e, 2) == set()


def test_a_new_hand_clears_the_deck_memory() -> None:
    """RULES.md, Memory: the memory of a reshuffled deck lasts until the hand ends."""
    e, _ = _after_club_reshuffle(episode="game")
    assert _deck_plane(e, 0)
    e._win_hand(0)
    assert e.hand_number == 2 and not e.reshuffled
    assert _deck_plane(e, 0) == set() and _deck_plane(e, 1) == set()
    assert (e.tracker.known < 0).all()


def test_observation_layout_fields() -> None:
    e = roy([EXAMPLE, FILLER], "2H")
    obs = np.empty(e.layout.size, np.float32)
    e.write_observation(0, obs)
    v = e.layout.decode(obs)
    assert set(np.flatnonzero(v["hand"])) == {card_id(c) for c in EXAMPLE}
    assert np.flatnonzero(v["top_card"]).tolist() == [card_id("2H")]
    assert v["phase"].tolist() == [1.0, 0.0]
    assert v["opponent_hand_sizes"].tolist() == pytest.approx([7 / 52])


def test_observation_scores_start_with_the_seat_itself() -> None:
    """RULES.md Observation: `scores` is "/ target, own first", then the seats to the left."""
    e = _three_player_game_after_seat_0_wins_a_hand()  # scores [14, 0, 0], target 100
    assert _decoded(e, 1)["scores"].tolist() == pytest.approx([0.0, 0.0, 0.14])
    assert _decoded(e, 0)["scores"].tolist() == pytest.approx([0.14, 0.0, 0.0])
    # `target_score` ("points that win the game") scales them: 14 points of 50 are 0.28.
    e = _three_player_game_after_seat_0_wins_a_hand(target_score=50)
    assert _decoded(e, 1)["scores"].tolist() == pytest.approx([0.0, 0.0, 0.28])


def test_observation_shows_the_penalty_this_turn_has_built() -> None:
    """Mid-turn, the seat sees what ending the turn would leave the next player: the Aces it
    has just discarded count, and so does a King of Spades it discarded earlier in the turn."""
    e = roy([["AD", "AC", "2C", "3C", "4C", "5H", "7C"],
             ["AH", "7D", "8D", "9D", "TD", "QD", "KD"]],
            "5D")
    play(e, "play:5H", "play:AH")  # seat 1 leaves a penalty of two
    assert _decoded(e, 0)["ace_penalty"].tolist() == [2 / 8]
    play(e, "play:AD")  # seat 0 answers and may add its second Ace
    view = _decoded(e, 0)
    assert view["phase"].tolist() == [0.0, 1.0] and view["ace_penalty"].tolist() == [4 / 8]
    play(e, "play:AC")
    assert e.current_player == 1 and _decoded(e, 1)["ace_penalty"].tolist() == [6 / 8]

    e = roy([["QS", "KS", "KC", "2C", "3C", "4C", "5C"], FILLER], "9S")
    play(e, "play:QS")
    assert _decoded(e, 0)["king_of_spades_played"].tolist() == [0.0]
    play(e, "play:KS")  # KC may follow: the turn goes on with the King's draw still to come
    view = _decoded(e, 0)
    assert e.current_player == 0 and view["king_of_spades_played"].tolist() == [1.0]
    play(e, "play:KC")
    assert e.current_player == 0 and len(e.hands[1]) == 14  # seat 1 drew seven, skipped
    assert _decoded(e, 0)["king_of_spades_played"].tolist() == [0.0]


def test_observation_shows_the_announced_suit_and_the_deck_size() -> None:
    """RULES.md Observation: `announced_suit` (after a wild Jack: the suit the next player must
    follow, shown to every seat until a card is discarded on the Jack) and `deck_size` (/ 52)."""
    e = roy([["JC", "2D", "3D", "4D", "6D", "7D", "8D"],
             ["KS", "QH", "JD", "2C", "3C", "4C", "5S"]],
            "9H", draws=["8C"])
    for seat in (0, 1):
        view = _decoded(e, seat)
        assert not view["announced_suit"].any()
        assert view["deck_size"].tolist() == [pytest.approx(37 / 52)]  # 52 - 2 x 7 - starter
    play(e, "wild:JC>S")
    for seat in (0, 1):
        assert _decoded(e, seat)["announced_suit"].tolist() == [0.0, 0.0, 0.0, 1.0]  # C D H S
    play(e, "play:5S")  # a card on the Jack: the announced suit lapses
    assert not _decoded(e, 1)["announced_suit"].any() and e.current_player == 0
    play(e, "draw")  # seat 0 (diamonds only on the 5S) draws the 8C
    assert _decoded(e, 1)["deck_size"].tolist() == [pytest.approx(36 / 52)]


def test_action_constants() -> None:
    e = RoyEngine()
    assert e.action_name(DRAW) == "draw" and e.action_name(END) == "end"
    assert e.action_name(card_id("TH")) == "play:TH"


def test_heuristic_beats_random() -> None:
    from card_envs.agents.arena import head_to_head

    result = head_to_head("roy", "heuristic", "random", games=300, seed=0)
    assert result.win_rate > 0.65, result


@pytest.mark.parametrize("config", [{}, {"num_players": 3}, {"num_players": 4, "memory": 0.3},
                                    {"memory": "none", "episode": "game", "target_score": 30}])
def test_incremental_observation_matches_reference_encoding(config: dict) -> None:
    e = RoyEngine(**config)
    rng = np.random.default_rng(1)
    fast = np.empty(e.layout.size, np.float32)
    slow = np.empty(e.layout.size, np.float32)
    for episode in range(15):
        e.reset(seed=episode)
        while not e.done:
            for seat in range(e.num_players):
                e.write_observation(seat, fast)
                e._observation_from_scratch(seat, slow)
                np.testing.assert_array_equal(fast, slow)
            e.step(int(rng.choice(np.flatnonzero(e.legal_mask()))))

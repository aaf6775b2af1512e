"""Every Memory-Uno rule as a scenario on a stacked deck (see card_envs/games/memory_uno/RULES.md).

Seat ``s`` position ``p`` is engine slot ``8s + p``. Decks deal one card at a time to positions
0, 1, 2, 3, starting with the first player (seat 0 here); the next cards are the deck, top first.
"""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.cards import card_code, card_id
from card_envs.games.memory_uno.engine import (
    CALL,
    DRAWN,
    GIVE,
    INV_COPIES_OF,
    KIND_OF,
    PEEK_OTHER,
    PEEK_OWN,
    SLOTS,
    SWAP_FIRST,
    SWAP_SECOND,
    TURN,
    WINDOW,
    MemoryUnoEngine,
)
from tests.engine_helpers import legal_names as legal
from tests.engine_helpers import play


# -- helpers --------------------------------------------------------------------------------
def stacked(hands: list[list[str]], draws: tuple[str, ...] | list[str] = ()) -> list[str]:
    """A full 54-card deck (top first) dealing ``hands[s][p]`` to seat s position p, then
    ``draws`` in order, then every unused card in id order."""
    n = len(hands)
    order = [hands[s][p] for p in range(4) for s in range(n)] + list(draws)
    used = {card_id(c) for c in order}
    assert len(used) == len(order), "a card is used twice"
    return order + [card_code(c) for c in range(54) if c not in used]


def mu(hands: list[list[str]], draws: tuple[str, ...] | list[str] = (),
       **config) -> MemoryUnoEngine:
    engine = MemoryUnoEngine(num_players=len(hands), first_player=0, **config)
    engine.reset(seed=0, deck=stacked(hands, draws))
    engine.check_invariants()
    return engine


def hand(engine: MemoryUnoEngine, seat: int) -> list[str | None]:
    return [card_code(c) if c >= 0 else None for c in engine.slots[seat * SLOTS:(seat + 1) * SLOTS]]


def memory(engine: MemoryUnoEngine, seat: int) -> dict[int, str]:
    """Hand slots ``seat`` remembers: {slot: card code}."""
    row = engine.tracker.known[seat, :engine.num_slots]
    return {int(x): card_code(int(row[x])) for x in np.flatnonzero(row >= 0)}


def view(engine: MemoryUnoEngine, seat: int) -> dict[str, np.ndarray]:
    obs = np.empty(engine.layout.size, np.float32)
    engine.write_observation(seat, obs)
    return {k: v.copy() for k, v in engine.layout.decode(obs).items()}


def clear_positions(engine: MemoryUnoEngine, slots: range | list[int]) -> None:
    """Edge-case setup: move the cards at ``slots`` to the bottom of the deck, unseen."""
    for x in slots:
        if engine.slots[x] >= 0:
            engine.deck.insert(0, engine.slots[x])
            engine.slots[x] = -1
            engine.hand_count[x // SLOTS] -= 1
        engine.tracker.known[:, x] = -1
        engine.witnessed[:, x] = 0
    engine._after_load()
    engine.check_invariants()


def start_turn(engine: MemoryUnoEngine, seat: int) -> None:
    """Edge-case setup: make it ``seat``'s turn."""
    engine.current_player = seat
    engine._set_turn(seat)
    engine._mask_valid = False


A_HANDS = [["5C", "9D", "2H", "3S"], ["KD", "7C", "QH", "AS"]]


# -- setup: four cards, the bottom two peeked -----------------------------------------------------
def test_deal_four_cards_each_in_fixed_positions_and_peek_bottom_two() -> None:
    e = mu(A_HANDS, draws=["8H"])
    assert hand(e, 0)[:4] == ["5C", "9D", "2H", "3S"] and hand(e, 0)[4:] == [None] * 4
    assert hand(e, 1)[:4] == ["KD", "7C", "QH", "AS"]
    assert e.hand_count == [4, 4] and e.grave == [] and len(e.deck) == 54 - 8
    assert e.deck[-1] == card_id("8H")
    assert memory(e, 0) == {2: "2H", 3: "3S"}
    assert memory(e, 1) == {10: "QH", 11: "AS"}
    assert e.current_player == 0 and e.phase == TURN
    # graveyard empty: draw from the deck or call
    assert legal(e) == {"call", "draw_deck"}



@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_every_player_count_deals_four_cards_to_each_seat(n: int) -> None:
    """RULES.md options: "`num_players` | 4, 2, 3, 5, 6 | seats"; Setup: "each player has 4
    cards laying in front of them" and sees its own positions 2 and 3; play is clockwise."""
    hands = [[rank + "CDHS"[s % 4] for rank in ("2345" if s < 4 else "6789")]
             for s in range(n)]
    e = mu(hands)
    assert e.num_slots == n * SLOTS and len(e.deck) == 54 - 4 * n
    for s in range(n):
        assert hand(e, s)[:4] == hands[s] and memory(e, s) == {
            8 * s + 2: hands[s][2], 8 * s + 3: hands[s][3]}
    assert e.current_player == 0
    play(e, "draw_deck", "discard")  # no effect; every other seat may react, none does
    while e.phase == WINDOW:
        play(e, "pass")
    assert e.current_player == 1 and e.phase == TURN

def test_first_player_rotates_each_round_and_deal_starts_with_them() -> None:
    e = MemoryUnoEngine(num_players=3, first_player=1, episode="game")
    e.reset(seed=0, deck=stacked([["2C", "3C", "4C", "5C"], ["2D", "3D", "4D", "5D"],
                                  ["2H", "3H", "4H", "5H"]]))
    # dealing starts with seat 1: the first card of the deck went to seat 1's position 0
    assert hand(e, 1)[:4] == ["2C", "3C", "4C", "5C"]
    assert hand(e, 2)[:4] == ["2D", "3D", "4D", "5D"]
    assert hand(e, 0)[:4] == ["2H", "3H", "4H", "5H"]
    assert e.current_player == 1
    play(e, "call")  # seat 1: 14 vs 14 and 14: not strictly lowest
    assert e.round_number == 2 and e.current_player == 2


# -- card values ----------------------------------------------------------------------------
@pytest.mark.parametrize(("cards", "points"), [
    (["AC", "2D", "9H", "TS"], 1 + 2 + 9 + 10),
    (["JC", "QD", "KC", "KS"], 40),  # picture cards and black kings: 10
    (["KD", "KH", "X1", "X2"], -2),  # red kings -1, jokers 0
])
def test_card_points(cards: list[str], points: int) -> None:
    e = mu([cards, ["3C", "3D", "3H", "3S"]])
    assert e.hand_points(0) == points


def _text_points(code: str) -> int:
    """The text's table: "2-10 As on card / J,Q,K (black) 10 / K (red) -1"; "an Ace only counts
    as 1 point, a Joker as 0 points"."""
    if code[0] == "X":
        return 0
    if code[0] == "K":
        return -1 if code[1] in "DH" else 10
    return {"A": 1, "T": 10, "J": 10, "Q": 10}.get(code[0]) or int(code[0])


@pytest.mark.parametrize("card", [card_code(c) for c in range(54)])
def test_every_card_is_worth_what_the_texts_table_says(card: str) -> None:
    """The goal: "Each card has as many points as its numeric value" (every card of the 54, each
    dealt into seat 0's hand on a stacked deck, next to fillers of known value)."""
    fillers = [c for c in ("X1", "X2", "AC", "AD") if c != card][:3]
    e = mu([[card, *fillers], ["3C", "3D", "3H", "3S"] if card[0] != "3" else
            ["4C", "4D", "4H", "4S"]])
    assert hand(e, 0)[:4] == [card, *fillers]
    assert e.hand_points(0) == _text_points(card) + sum(map(_text_points, fillers))


# -- a turn: draw, then swap in or discard ----------------------------------------------------
def test_swap_a_drawn_card_in_keeps_positions_and_discards_face_up() -> None:
    e = mu(A_HANDS, draws=["8H"])
    play(e, "draw_deck")
    assert e.phase == DRAWN and legal(e) == {f"own:{p}" for p in range(4)} | {"discard"}
    assert view(e, 0)["drawn_kind"].argmax() == 7 and not view(e, 1)["drawn_kind"].any()
    play(e, "own:1")  # 8H replaces 9D at position 1
    assert hand(e, 0)[:4] == ["5C", "8H", "2H", "3S"]
    assert e.grave == [card_id("9D")]
    assert memory(e, 0) == {1: "8H", 2: "2H", 3: "3S"}  # the drawer saw it; nobody else
    assert memory(e, 1) == {10: "QH", 11: "AS"}
    assert view(e, 1)["top_kind"].argmax() == 8  # the 9 is face up for everyone
    # the reaction window: seat 1 first, seat 0 (who placed the card) last
    assert e.phase == WINDOW and e.current_player == 1 and e.queue == [0]


def test_graveyard_draw_must_be_kept_and_everyone_knows_where() -> None:
    e = mu(A_HANDS, draws=["8H"])
    play(e, "draw_deck", "own:1", "pass", "pass")  # 9D on the graveyard; seat 1's turn
    assert e.current_player == 1 and legal(e) == {"call", "draw_deck", "draw_grave"}
    play(e, "draw_grave")
    assert "discard" not in legal(e)  # "for a card drawn from the deck" only
    assert view(e, 0)["drawn_kind"].argmax() == 8 and view(e, 0)["drawn_from_grave"][0] == 1
    play(e, "own:0")  # 9D replaces KD
    assert hand(e, 1)[0] == "9D" and e.grave == [card_id("KD")]
    assert memory(e, 0)[8] == "9D" and memory(e, 1)[8] == "9D"


def test_stack_lock_is_cleared_by_a_draw() -> None:
    e = mu(A_HANDS, draws=["8H"])
    e.locked = 1
    e._after_load()
    play(e, "draw_deck")
    assert e.locked == -1


def test_stack_lock_is_cleared_by_a_graveyard_draw() -> None:
    """RULES.md "Quick-playing": a graveyard draw counts as "a new card has been drawn"."""
    e = mu(LOCK_HANDS, draws=["5H"])
    play(e, "draw_deck", "discard", "throw:0.2")  # seat 1 fires its own 5S: stack 1 locked
    play(e, "pass", "pass", "pass")  # window 2, 0, 1 closes; seat 1's turn
    assert e.locked == 1 and e.current_player == 1
    play(e, "draw_grave", "own:0")  # takes the 5S back; its 9C goes to the graveyard
    assert e.locked == -1 and e.current_player == 2
    assert "throw:2.1" in legal(e)  # seat 2 may fire from seat 1's stack again


# -- effects of a card discarded from the deck ------------------------------------------------
@pytest.mark.parametrize("drawn", ["7D", "8D"])
def test_seven_and_eight_look_at_one_own_card(drawn: str) -> None:
    e = mu(A_HANDS, draws=[drawn])
    play(e, "draw_deck", "discard")
    assert e.phase == PEEK_OWN and legal(e) == {f"pick:0.{p}" for p in range(4)}
    play(e, "pick:0.0")
    assert memory(e, 0) == {0: "5C", 2: "2H", 3: "3S"}
    assert memory(e, 1) == {10: "QH", 11: "AS"}
    assert view(e, 1)["seen_by"].reshape(2, 16)[1, 8] == 1  # seat 1 saw seat 0 look there
    assert e.phase == WINDOW and e.grave == [card_id(drawn)]


@pytest.mark.parametrize("drawn", ["9C", "TD"])
def test_nine_and_ten_look_at_someone_elses_card(drawn: str) -> None:
    e = mu(A_HANDS, draws=[drawn])
    play(e, "draw_deck", "discard")
    assert e.phase == PEEK_OTHER and legal(e) == {f"pick:1.{p}" for p in range(4)}
    play(e, "pick:1.1")
    assert memory(e, 0) == {2: "2H", 3: "3S", 9: "7C"}
    assert memory(e, 1) == {10: "QH", 11: "AS"}


@pytest.mark.parametrize("drawn", ["JD", "QC"])
def test_jack_and_queen_swap_any_two_cards_unseen_and_memory_follows(drawn: str) -> None:
    e = mu(A_HANDS, draws=[drawn])
    play(e, "draw_deck", "discard")
    assert e.phase == SWAP_FIRST and len(legal(e)) == 8
    play(e, "pick:0.2")  # seat 0's 2H ...
    assert e.phase == SWAP_SECOND and "pick:0.2" not in legal(e)
    play(e, "pick:1.2")  # ... with seat 1's QH
    assert hand(e, 0)[2] == "QH" and hand(e, 1)[2] == "2H"
    # nobody looked; each seat's memory moved with the cards it knew
    assert memory(e, 0) == {3: "3S", 10: "2H"}
    assert memory(e, 1) == {2: "QH", 11: "AS"}


def test_black_king_looks_at_any_card_then_swaps() -> None:
    e = mu(A_HANDS, draws=["KS"])
    play(e, "draw_deck", "discard", "pick:1.0")  # look at seat 1's KD
    assert memory(e, 0)[8] == "KD" and e.phase == SWAP_FIRST
    play(e, "pick:0.1", "pick:1.0")  # swap own unknown 9D with the red king
    assert hand(e, 0)[1] == "KD" and hand(e, 1)[0] == "9D"
    assert memory(e, 0) == {1: "KD", 2: "2H", 3: "3S"}
    assert e.phase == WINDOW


@pytest.mark.parametrize("drawn", ["KH", "AD", "6H", "X1"])
def test_other_cards_have_no_effect(drawn: str) -> None:
    e = mu(A_HANDS, draws=[drawn])
    play(e, "draw_deck", "discard")
    assert e.phase == WINDOW and e.current_player == 1 and e.grave == [card_id(drawn)]


def test_look_at_someone_else_is_skipped_when_nobody_else_has_cards() -> None:
    e = mu(A_HANDS, draws=["9H"])
    clear_positions(e, range(8, 12))
    play(e, "draw_deck", "discard")
    assert e.phase == WINDOW


def test_a_swap_with_one_card_on_the_table_is_skipped() -> None:
    """RULES.md: "An effect with no possible target is skipped (... a swap with fewer than two
    cards on the table)"."""
    e = mu(A_HANDS, draws=["JD"])
    clear_positions(e, [1, 2, 3, 8, 9, 10, 11])  # only seat 0's 5C is left
    play(e, "draw_deck", "discard")
    assert e.phase == WINDOW and hand(e, 0)[0] == "5C"
    assert e.grave == [card_id("JD")] and e.selected == -1


def test_swap_with_exactly_two_cards_on_the_table_must_swap_them() -> None:
    """RULES.md "Playing a card from the deck": effects are compulsory; only < 2 cards skip."""
    e = mu(A_HANDS, draws=["JD"])
    clear_positions(e, [1, 2, 3, 9, 10, 11])  # seat 0 keeps 5C, seat 1 keeps KD
    play(e, "draw_deck", "discard")
    assert e.phase == SWAP_FIRST and legal(e) == {"pick:0.0", "pick:1.0"}
    play(e, "pick:0.0")  # the second pick is forced
    assert hand(e, 0)[0] == "KD" and hand(e, 1)[0] == "5C" and e.phase == WINDOW


# -- quick-play -----------------------------------------------------------------------------
LOCK_HANDS = [["6C", "6D", "4H", "4S"], ["9C", "8C", "5S", "5C"], ["TC", "JC", "2D", "5D"]]


def test_quick_play_own_card_is_not_replaced() -> None:
    e = mu(LOCK_HANDS, draws=["5H"])
    play(e, "draw_deck", "discard")  # 5H on the graveyard; window: 1, 2, 0
    assert e.current_player == 1
    play(e, "throw:0.2")  # seat 1 fires its own 5S
    assert hand(e, 1)[:4] == ["9C", "8C", None, "5C"] and e.hand_count[1] == 3
    assert e.grave == [card_id("5H"), card_id("5S")] and e.locked == 1
    # a card landed: a new window, starting left of the thrower
    assert e.phase == WINDOW and e.current_player == 2 and e.queue == [0, 1]


def test_text_example_nobody_fires_twice_from_the_same_stack() -> None:
    """"if one has fired a card from player 1 no other player can fire a card from player 1
    until either a new card has been drawn or a card from another player's stack has been
    fired." """
    e = mu(LOCK_HANDS, draws=["5H", "2S"])
    play(e, "draw_deck", "discard", "throw:0.2")  # seat 1 fires from its own stack
    # seat 2 may not fire from seat 1's stack (offset 2 from seat 2)
    assert not any(a.startswith("throw:2.") for a in legal(e))
    assert {f"throw:0.{p}" for p in range(4)} <= legal(e)
    play(e, "throw:0.3")  # seat 2 fires its own 5D: another stack
    assert e.locked == 2
    assert e.current_player == 0 and "throw:1.3" in legal(e)  # seat 1's stack is open again
    assert not any(a.startswith("throw:2.") for a in legal(e))  # seat 2's is locked now
    play(e, "throw:1.3")  # seat 0 fires seat 1's 5C (seat 0 never saw it, but it matches)
    assert e.phase == GIVE and e.current_player == 0
    assert legal(e) == {f"own:{p}" for p in range(4)} | {"keep"}
    play(e, "own:2")  # seat 0 gives its 4H into seat 1's position 3
    assert hand(e, 1)[3] == "4H" and hand(e, 0)[2] is None
    assert e.hand_count == [3, 3, 3] and e.locked == 1
    assert memory(e, 0) == {11: "4H", 3: "4S"}  # seat 0 knows where its 4H went
    play(e, "pass", "pass", "pass")  # window 1, 2, 0 closes
    assert e.current_player == 1 and e.phase == TURN
    play(e, "draw_deck")  # a new card drawn: every stack is open again
    assert e.locked == -1


def test_wrong_throw_gets_a_hidden_penalty_card_and_the_card_goes_back() -> None:
    e = mu(LOCK_HANDS, draws=["5H", "QS"])
    play(e, "draw_deck", "discard")
    play(e, "throw:2.0")  # seat 1 fires seat 0's 6C on a 5: wrong
    assert hand(e, 0)[0] == "6C" and e.grave == [card_id("5H")]
    assert all(memory(e, s)[0] == "6C" for s in range(3))  # everyone saw it
    assert hand(e, 1)[4] == "QS" and e.hand_count[1] == 5  # penalty: first empty position
    assert all(12 not in memory(e, s) for s in range(3))  # nobody saw the penalty card
    assert e.locked == -1  # nothing was fired
    assert e.current_player == 2 and e.queue == [0]  # the window goes on


def test_a_wrong_throw_and_its_penalty_card_leave_the_stack_locked() -> None:
    """RULES.md: "A wrong throw fires nothing and changes no lock"; its penalty card is not "a
    new card drawn" either."""
    e = mu(LOCK_HANDS, draws=["5H", "QS"])
    play(e, "draw_deck", "discard", "throw:0.2")  # seat 1 fires its own 5S: stack 1 locked
    assert e.locked == 1 and e.current_player == 2
    play(e, "throw:1.0")  # seat 2 fires seat 0's 6C on the 5S: wrong, penalty QS
    assert hand(e, 2)[4] == "QS" and hand(e, 0)[0] == "6C"
    assert e.locked == 1 and e.current_player == 0
    assert not any(a.startswith("throw:1.") for a in legal(e))  # seat 1's stack, from seat 0


def test_a_thrower_without_cards_gives_nothing_even_when_giving_is_required() -> None:
    """RULES.md: "A thrower with no cards gives nothing": no give decision, and the landed card
    opens a window left of the thrower."""
    e = mu(LOCK_HANDS, draws=["5H"], give_after_throw="required")
    clear_positions(e, range(16, 20))  # seat 2 holds nothing
    play(e, "draw_deck", "discard", "pass")  # the window reaches seat 2
    assert e.current_player == 2 and e.hand_count[2] == 0
    play(e, "throw:2.2")  # seat 2 fires seat 1's 5S
    assert hand(e, 1)[2] is None and e.hand_count == [4, 3, 0] and e.locked == 1
    assert e.phase == WINDOW and e.current_player == 0 and e.queue == [1, 2]


def test_give_after_throw_can_be_required() -> None:
    e = mu(LOCK_HANDS, draws=["5H"], give_after_throw="required")
    play(e, "draw_deck", "discard", "pass", "pass", "throw:1.2")  # seat 0 fires seat 1's 5S
    assert e.phase == GIVE and legal(e) == {f"own:{p}" for p in range(4)}


def test_keep_leaves_the_fired_position_empty() -> None:
    e = mu(LOCK_HANDS, draws=["5H"])
    play(e, "draw_deck", "discard", "pass", "pass", "throw:1.2", "keep")
    assert hand(e, 1)[2] is None and e.hand_count == [4, 3, 4]
    assert e.phase == WINDOW and e.current_player == 1


@pytest.mark.parametrize(("match", "right"), [(None, False), ("rank_kings_by_colour", False),
                                              ("rank", False), ("points", True)])
def test_match_by_points_lets_a_ten_take_a_jack(match: str | None, right: bool) -> None:
    """Only ``match="points"`` matches 10 and J (both worth 10); the default keeps them apart,
    as the text's effect table does."""
    hands = [["6C", "6D", "4H", "4S"], ["9C", "8C", "JS", "5C"]]
    config = {} if match is None else {"match": match}
    e = mu(hands, draws=["TH"], **config)
    play(e, "draw_deck", "discard", "pick:1.0", "throw:0.2")  # 10, then J thrown on it
    assert e.hand_count[1] == (3 if right else 5)
    assert e.grave[-1] == card_id("JS" if right else "TH")


@pytest.mark.parametrize(("match", "right"), [(None, False), ("rank_kings_by_colour", False),
                                              ("rank", True), ("points", False)])
def test_a_red_king_never_matches_a_black_king_by_default(match: str | None, right: bool) -> None:
    """Issue 38: the text's points table (black K 10, red K -1) and effect table keep the two
    Kings apart, so by default a black King thrown on a red King is wrong; ``match="rank"``
    (any King matches any King) is the reading before issue 38."""
    hands = [["6C", "6D", "4H", "4S"], ["9C", "8C", "KS", "5C"]]
    config = {} if match is None else {"match": match}
    e = mu(hands, draws=["KD"], **config)
    play(e, "draw_deck", "discard", "throw:0.2")  # KS thrown on KD
    assert e.hand_count[1] == (3 if right else 5)
    assert e.grave[-1] == card_id("KS" if right else "KD")


@pytest.mark.parametrize("match", ["rank_kings_by_colour", "rank"])
def test_kings_of_one_colour_match_each_other(match: str) -> None:
    """Two red Kings match by rank under both rank readings (as two black Kings do)."""
    hands = [["6C", "6D", "4H", "4S"], ["9C", "8C", "KH", "5C"]]
    e = mu(hands, draws=["KD"], match=match)
    play(e, "draw_deck", "discard", "throw:0.2")  # KH thrown on KD
    assert e.hand_count[1] == 3 and e.grave[-1] == card_id("KH")


def test_black_kings_match_each_other_by_default() -> None:
    """Two black Kings match by default: KC discarded from the deck (its look and swap
    resolve first), then seat 1 throws KS on it."""
    hands = [["6C", "6D", "4H", "4S"], ["9C", "8C", "KS", "5C"]]
    e = mu(hands, draws=["KC"])
    play(e, "draw_deck", "discard")  # KC: look at any card, then swap any two
    play(e, "pick:1.0", "pick:0.0", "pick:0.1")  # the swap leaves seat 1's hand alone
    play(e, "throw:0.2")  # seat 1 throws its KS on KC
    assert e.hand_count[1] == 3 and e.grave[-1] == card_id("KS")


def test_a_joker_matches_only_a_joker() -> None:
    """RULES.md "Quick-playing": by rank "jokers match jokers" (and nothing else)."""
    hands = [["6C", "6D", "4H", "4S"], ["9C", "8C", "KS", "X2"]]
    e = mu(hands, draws=["X1"])
    play(e, "draw_deck", "discard", "throw:0.2")  # a black king on a joker: wrong
    assert e.hand_count[1] == 5 and e.grave == [card_id("X1")]
    e = mu(hands, draws=["X1"])
    play(e, "draw_deck", "discard", "throw:0.3")  # a joker on a joker: right
    assert e.hand_count[1] == 3 and e.grave[-1] == card_id("X2")


def _seat_1_holds_eight(**config: object) -> MemoryUnoEngine:
    """A_HANDS with seat 1's positions 4-7 filled too (8 cards: no room for a penalty)."""
    e = mu(A_HANDS, draws=["8H"], **config)
    for p in range(4, 8):
        e.slots[8 + p] = card_id(["2C", "3C", "4C", "6C"][p - 4])
        e.deck.remove(e.slots[8 + p])
    e.hand_count[1] = 8
    e._after_load()
    return e


def test_a_full_hand_may_not_throw_and_call_timing_turn_skips_pointless_windows() -> None:
    e = _seat_1_holds_eight(call_timing="turn")
    play(e, "draw_deck", "own:1")
    # seat 1 (8 cards) could only pass: skipped. Seat 0 may throw (no call in windows).
    assert e.current_player == 0 and "call" not in legal(e) and "throw:1.7" in legal(e)
    play(e, "pass")
    assert e.current_player == 1 and e.phase == TURN


def test_call_timing_any_asks_a_full_hand_which_may_call_but_not_throw() -> None:
    """RULES.md "Quick-playing": with call_timing="any" every seat can call, so is asked."""
    e = _seat_1_holds_eight()
    play(e, "draw_deck", "own:1")
    assert e.current_player == 1 and legal(e) == {"pass", "call"}


def test_call_timing_turn_skips_a_seat_that_could_only_fire_from_the_locked_stack() -> None:
    """RULES.md "Quick-playing": a window where a seat could only pass skips that seat."""
    e = mu([["5C", "9D", "2H", "3S"], ["KD", "7C", "5S", "AS"]], draws=["5H"],
           call_timing="turn")
    clear_positions(e, range(0, 4))
    start_turn(e, 1)
    play(e, "draw_deck", "discard", "pass", "throw:0.2")  # seat 1 fires its own 5S
    # seat 0 (no cards) and seat 1 could only fire from the locked stack 1: both skipped,
    # and seat 0's turn, without cards, ends the round
    assert e.terminated and e.last_caller == 0 and e.totals == [0, 7]


def test_windows_ask_every_seat_in_order_starting_left_of_the_placer() -> None:
    hands = [["6C", "6D", "4H", "4S"], ["9C", "8C", "5S", "5C"], ["TC", "JC", "2D", "5D"],
             ["TH", "JH", "2S", "3D"]]
    e = mu(hands, draws=["AH"])
    play(e, "draw_deck", "discard")
    asked = []
    while e.phase == WINDOW:
        asked.append(e.current_player)
        play(e, "pass")
    assert asked == [1, 2, 3, 0] and e.current_player == 1 and e.phase == TURN


def _queue_seen_by(e: MemoryUnoEngine, seat: int) -> set[int]:
    """The absolute seats ``seat``'s ``window_queue`` shows still to be asked."""
    flags = view(e, seat)["window_queue"]
    return {(seat + int(r)) % e.num_players for r in np.flatnonzero(flags)}


def test_every_seat_sees_who_is_still_to_be_asked_in_a_window() -> None:
    """RULES.md "Observation": the window's order is public, so the queue is observed."""
    hands = [["6C", "6D", "4H", "4S"], ["9C", "8C", "5S", "5C"], ["TC", "JC", "2D", "5D"],
             ["TH", "JH", "2S", "3D"]]
    e = mu(hands, draws=["AH"])
    assert all(_queue_seen_by(e, s) == set() for s in range(4))  # no window at a turn
    play(e, "draw_deck", "discard")
    for still in ({2, 3, 0}, {3, 0}, {0}, set()):
        assert all(_queue_seen_by(e, s) == still for s in range(4)), still
        play(e, "pass")
    assert e.phase == TURN and all(_queue_seen_by(e, s) == set() for s in range(4))


def test_next_turn_is_left_of_the_turn_player_even_after_another_seat_threw() -> None:
    """RULES.md "The player's turn": "The game is played clock-wise", whoever threw last."""
    e = mu(LOCK_HANDS, draws=["5H"])
    play(e, "draw_deck", "discard", "throw:0.2")  # seat 1 fires its own 5S: window 2, 0, 1
    play(e, "pass", "pass", "pass")
    assert e.current_player == 1 and e.turn_player == 1 and e.phase == TURN


def test_after_a_give_the_new_window_starts_left_of_the_thrower() -> None:
    """RULES.md "Quick-playing": a landed card opens a new window starting left of the thrower."""
    e = mu(LOCK_HANDS, draws=["5H"])
    play(e, "draw_deck", "discard", "throw:1.3")  # seat 1 fires 5D...
    # ...which closed the window: nobody is left to ask while seat 1 chooses its give.
    assert e.phase == GIVE and all(_queue_seen_by(e, s) == set() for s in range(3))
    play(e, "own:0")  # seat 1 gives its 9C
    assert e.phase == WINDOW and e.current_player == 2 and e.queue == [0, 1]
    # Seat 1's throw restarted the order, which the turn player alone could not tell.
    assert all(_queue_seen_by(e, s) == {0, 1} for s in range(3))


def test_giving_a_card_does_not_show_it_to_anyone() -> None:
    """RULES.md "Quick-playing": the give is watched, memory follows the card; nobody sees it."""
    e = mu(LOCK_HANDS, draws=["5H"])
    play(e, "draw_deck", "discard", "throw:1.3", "own:0")  # seat 1 gives its unseen 9C
    assert hand(e, 2)[3] == "9C"
    assert all(19 not in memory(e, s) for s in range(3))
    assert memory(e, 1) == {10: "5S", 11: "5C"}


# -- ending a round ---------------------------------------------------------------------------
def test_call_with_strictly_lowest_hand_everyone_adds_their_points() -> None:
    e = mu([["AC", "2C", "3C", "4C"], ["TC", "TD", "TH", "TS"], ["9C", "9D", "9H", "9S"]])
    play(e, "call")
    assert e.terminated and e.totals == [10, 40, 36] and e.winners == [0]
    assert e.rewards.tolist() == [1.0, -1.0, -1.0]


@pytest.mark.parametrize(("failed_call", "caller_total"), [("on_top", 10 + 30), ("instead", 30)])
def test_failed_call_scores_thirty_penalty(failed_call: str, caller_total: int) -> None:
    # a tie is not enough: "the same amount of points or more"
    e = mu([["AC", "2C", "3C", "4C"], ["AD", "2D", "3D", "4D"]], failed_call=failed_call)
    play(e, "call")
    assert e.totals == [caller_total, 10] and e.winners == [1]


def test_a_call_fails_when_any_other_seat_is_lower() -> None:
    """RULES.md "Ending a round": the caller needs points strictly lower than every other seat's."""
    e = mu([["AC", "2C", "3C", "4C"], ["AD", "2D", "X1", "2H"], ["TC", "TD", "TH", "TS"]])
    play(e, "call")  # 10 beats seat 2's 40 but not seat 1's 5
    assert e.totals == [40, 5, 40] and e.winners == [1]


def test_call_in_a_reaction_window() -> None:
    e = mu([["AC", "2C", "3C", "4C"], ["TC", "TD", "TH", "TS"]], draws=["5H"])
    play(e, "draw_deck", "discard", "pass")
    assert e.current_player == 0 and "call" in legal(e)  # right after its own turn
    play(e, "call")
    assert e.terminated and e.last_caller == 0 and e.totals == [10, 40]


def test_no_cards_ends_the_round_when_the_players_turn_comes() -> None:
    e = mu([["5C", "9D", "2H", "3S"], ["KD", "7C", "X1", "AS"]], draws=["8H"])
    clear_positions(e, range(0, 4))
    start_turn(e, 1)
    play(e, "draw_deck", "own:1")  # 8H for 7C; seat 0, without cards, may still react
    assert e.current_player == 0 and legal(e) == {"pass", "throw:1.0", "throw:1.1",
                                                  "throw:1.2", "throw:1.3", "call"}
    play(e, "pass", "pass")
    # seat 0 has no cards when its turn comes: the round ends with seat 0 as the caller,
    # 0 points against seat 1's KD 8H X1 AS = 8
    assert e.terminated and e.last_caller == 0 and e.totals == [0, 8]


def test_no_cards_still_needs_the_strictly_lowest_hand() -> None:
    e = mu([["5C", "9D", "2H", "3S"], ["KD", "AC", "X1", "X2"]], draws=["8H"])
    clear_positions(e, range(0, 4))
    start_turn(e, 1)
    play(e, "draw_deck", "own:1", "pass", "pass")  # seat 1: KD AC->8H X1 X2 = 7 points
    assert e.terminated and e.totals == [0, 7]
    e = mu([["5C", "9D", "2H", "3S"], ["KD", "AC", "X1", "X2"]], draws=["AH"])
    clear_positions(e, range(0, 4))
    start_turn(e, 1)
    play(e, "draw_deck", "own:1", "pass", "pass")  # seat 1: -1 + 1 + 0 + 0 = 0: a tie
    assert e.terminated and e.totals == [30, 0] and e.winners == [1]


def test_a_seat_with_one_card_plays_its_turn() -> None:
    """RULES.md "Ending a round": only a seat with no cards ends the round when reached."""
    e = mu(A_HANDS, draws=["8H"])
    clear_positions(e, range(9, 12))  # seat 1 keeps KD only
    play(e, "draw_deck", "own:0", "pass", "pass")
    assert not e.terminated and e.current_player == 1 and e.phase == TURN


# -- the game: totals, 50 and 100, elimination ---------------------------------------------------
def _game_call(totals: list[int], hands: list[list[str]], **config) -> MemoryUnoEngine:
    e = mu(hands, episode="game", **config)
    e.totals = list(totals)
    e._after_load()
    play(e, "call")
    return e


def test_directly_hitting_50_drops_to_0_and_100_to_50() -> None:
    hands = [["AC", "2C", "3C", "4C"], ["TC", "TD", "TH", "TS"], ["9C", "9D", "9H", "X1"]]
    e = _game_call([40, 60, 73], hands)  # 40+10=50 -> 0; 60+40=100 -> 50; 73+27=100 -> 50
    assert e.totals == [0, 50, 50] and not e.done and e.round_number == 2


def test_in_a_round_episode_a_failed_call_landing_on_50_drops_to_0_and_wins() -> None:
    e = mu([["TC", "TD", "X1", "X2"], ["AD", "2D", "3D", "4D"], ["AC", "2C", "3C", "5C"]])
    play(e, "call")  # 20 is not the lowest hand: 20 + 30 = 50, which drops to 0
    assert e.last_round == [50, 10, 11] and e.totals == [0, 10, 11] and e.winners == [0]


def test_passing_over_50_does_not_drop() -> None:
    hands = [["AC", "2C", "3C", "4C"], ["TC", "TD", "TH", "TS"]]
    e = _game_call([45, 5], hands)
    assert e.totals == [55, 45]


def test_exceeding_100_ends_the_game_lowest_total_wins() -> None:
    hands = [["AC", "2C", "3C", "4C"], ["TC", "TD", "TH", "TS"], ["9C", "9D", "9H", "X1"]]
    e = _game_call([80, 70, 10], hands)  # 90, 110, 37
    assert e.terminated and e.totals == [90, 110, 37] and e.winners == [2]
    assert e.result()["totals"] == [90, 110, 37]


def test_a_total_of_101_ends_the_game_and_tied_lowest_totals_share_the_win() -> None:
    """RULES.md "The goal": "Whoever exceeds 100 points has lost"; the lowest totals win, tied."""
    hands = [["AC", "2C", "3C", "4C"], ["TC", "TD", "TH", "TS"], ["9C", "9D", "9H", "X1"]]
    e = _game_call([91, 0, 13], hands)  # 101, 40, 40
    assert e.terminated and e.totals == [101, 40, 40] and e.winners == [1, 2]
    assert e.rewards.tolist() == [-1.0, 0.5, 0.5]


def test_score_rewards_pay_the_change_in_each_total() -> None:
    hands = [["AC", "2C", "3C", "4C"], ["TC", "TD", "TH", "TS"], ["9C", "9D", "9H", "X1"]]
    e = _game_call([40, 60, 3], hands, reward="score")
    assert e.totals == [0, 50, 30]
    assert e.rewards.tolist() == [40.0, 10.0, -27.0]


def test_every_round_starts_with_a_fresh_peek_at_the_bottom_two() -> None:
    """Setup: "Before each round, they can look at the bottom two cards and need to remember
    them. Then the cards get flipped again." In a game's second round every seat knows exactly
    its own new positions 2 and 3: nothing of the first round's cards, nothing else."""
    e = mu([["AC", "2C", "3C", "4C"], ["AD", "2D", "3D", "4D"], ["AH", "2H", "3H", "4H"]],
           draws=["7S"], episode="game")
    play(e, "draw_deck", "discard", "pick:0.0")  # seat 0 looks at its own AC too
    assert memory(e, 0) == {0: "AC", 2: "3C", 3: "4C"}
    while e.phase == WINDOW:
        play(e, "pass")
    play(e, "call")  # seat 1 ends the first round
    assert e.round_number == 2 and not e.done and e.phase == TURN
    for s in range(3):
        bottom = {8 * s + p: card_code(e.slots[8 * s + p]) for p in (2, 3)}
        assert memory(e, s) == bottom
        known = view(e, s)["known"].reshape(3, 8)
        assert np.flatnonzero(known[0]).tolist() == [2, 3] and not known[1:].any()


def test_a_game_plays_rounds_until_someone_exceeds_100() -> None:
    e = MemoryUnoEngine(num_players=3, episode="game", first_player=0)
    e.reset(seed=4)
    starts = []
    while not e.done:
        if e.phase == TURN and e.round_turns == 1:
            starts.append(e.current_player)
        e.step(CALL)  # every first player calls at once
    assert max(e.totals) > 100 and e.round_number == len(starts)
    assert starts == [r % 3 for r in range(len(starts))]


# -- memory modes ---------------------------------------------------------------------------
def test_perfect_memory_keeps_peeks() -> None:
    e = mu(A_HANDS, draws=["7D", "8D", "3H"])
    play(e, "draw_deck", "discard", "pick:0.0", "pass", "pass")
    play(e, "draw_deck", "own:0", "pass", "pass")  # seat 1 swaps 8D in
    assert view(e, 0)["known"][:4].tolist() == [1, 0, 1, 1]
    assert memory(e, 0) == {0: "5C", 2: "2H", 3: "3S"}


def test_no_memory_shows_a_peek_at_the_next_decision_only() -> None:
    e = mu(A_HANDS, draws=["7D"], memory="none")
    assert memory(e, 0) == {2: "2H", 3: "3S"}  # the deal's peek, before any decision
    play(e, "draw_deck")
    assert memory(e, 0) == {}  # forgotten after its first decision
    play(e, "discard", "pick:0.1")
    assert memory(e, 0) == {1: "9D"}  # what it just looked at is there for its next decision
    assert view(e, 0)["known"][1] == 1
    play(e, "pass")  # seat 1 passes; seat 0 decides in the window
    assert e.current_player == 0
    assert view(e, 0)["known"][1] == 1
    play(e, "pass")
    assert memory(e, 0) == {}


def test_no_memory_keeps_a_swapped_in_card_until_the_next_decision_only() -> None:
    e = mu(A_HANDS, draws=["8H"], memory="none")
    play(e, "draw_deck", "own:0")  # the card goes face down by this decision
    assert memory(e, 0) == {0: "8H"}
    play(e, "pass")  # seat 1 passes; seat 0 decides in the window
    assert e.current_player == 0 and view(e, 0)["known"][:4].tolist() == [1, 0, 0, 0]
    play(e, "pass")
    assert memory(e, 0) == {}


def test_forgetting_probability_is_between_perfect_and_none() -> None:
    kept = []
    for seed in range(40):
        e = MemoryUnoEngine(num_players=2, first_player=0, memory=0.5)
        e.reset(seed=seed, deck=stacked(A_HANDS, draws=["7D"]))
        play(e, "draw_deck", "discard", "pick:0.0", "pass", "pass")
        kept.append(len(memory(e, 0)))  # 3 cards known before the last two decisions
    assert 0.3 < np.mean(kept) < 2.5


def test_blind_swap_moves_each_seats_knowledge_with_the_card() -> None:
    hands = [["6C", "6D", "4H", "4S"], ["9C", "8C", "5S", "5C"], ["TC", "JC", "2D", "5D"]]
    e = mu(hands, draws=["9H", "JH"])
    play(e, "draw_deck", "discard", "pick:1.0")  # seat 0 looks at seat 1's 9C
    play(e, "pass", "pass", "pass")
    play(e, "draw_deck", "discard")  # seat 1 discards the jack: swap any two
    play(e, "pick:0.0", "pick:1.3")  # seat 1 swaps its own 9C with seat 2's 5D
    assert hand(e, 1)[0] == "5D" and hand(e, 2)[3] == "9C"
    assert memory(e, 0) == {2: "4H", 3: "4S", 19: "9C"}  # seat 0 follows its 9C
    assert memory(e, 1) == {10: "5S", 11: "5C"}  # seat 1 never saw either card
    assert memory(e, 2) == {18: "2D", 8: "5D"}  # seat 2 follows its 5D


def test_seen_by_is_a_public_record_in_relative_seat_order() -> None:
    hands = [["6C", "6D", "4H", "4S"], ["9C", "8C", "5S", "5C"], ["TC", "JC", "2D", "5D"]]
    e = mu(hands, draws=["9H"])
    play(e, "draw_deck", "discard", "pick:1.0")  # seat 0 looks at seat 1's position 0
    v2 = view(e, 2)  # seat 2: offset 1 is seat 0, offset 2 is seat 1
    seen = v2["seen_by"].reshape(3, 24)
    assert seen[1, 2 * SLOTS + 0] == 1  # seat 0 has seen seat 1's position 0
    assert not v2["known"][2 * SLOTS + 0]  # but seat 2 does not know the card


# -- the rest of the table ---------------------------------------------------------------------
def _one_card_left(hands: list[list[str]] = A_HANDS, **config) -> MemoryUnoEngine:
    """Edge-case setup: the deck holds only 5H (seat 0's next draw); every other undealt card
    is buried in the graveyard, where every seat saw it land."""
    e = mu(hands, draws=["5H"], **config)
    e.grave = e.deck[:-1]
    e.deck = e.deck[-1:]
    for card in e.grave[:-1]:
        e.tracker.known[:, e.grave_base + card] = card
    e._after_load()
    e.check_invariants()
    return e


def _kinds(cards: list[int]) -> np.ndarray:
    """Cards per kind / copies of the kind, as the memory fields count them."""
    counts = np.zeros(15, np.float32)
    for card in cards:
        counts[KIND_OF[card]] += INV_COPIES_OF[card]
    return counts


def test_empty_deck_reshuffles_the_graveyard_under_its_top() -> None:
    e = _one_card_left()
    buried = sorted(e.grave)
    play(e, "draw_deck", "discard", "pass", "pass", "draw_deck")
    assert e.grave == [card_id("5H")] and len(e.deck) == 54 - 8 - 2
    assert sorted(e.deck + [e.drawn]) == buried


def test_reshuffled_cards_are_remembered_in_the_deck_and_the_drawer_alone_sees_one_leave(
) -> None:
    e = _one_card_left()
    play(e, "draw_deck", "discard", "pass", "pass")
    buried = e.grave[:-1]
    assert np.allclose(view(e, 1)["grave_memory"], _kinds(buried))
    assert not view(e, 1)["deck_memory"].any()
    play(e, "draw_deck")  # seat 1 draws from the reshuffled graveyard
    drawn = e.drawn
    for seat in (0, 1):
        v = view(e, seat)
        assert not v["grave_memory"].any()  # nothing is buried under the 5H any more
        counted = [c for c in buried if seat == 0 or c != drawn]
        assert np.allclose(v["deck_memory"], _kinds(counted)), seat


def test_a_card_that_lands_face_up_leaves_everyones_deck_memory() -> None:
    e = _one_card_left()
    play(e, "draw_deck", "discard", "pass", "pass", "draw_deck")
    drawn = e.drawn
    before = view(e, 0)["deck_memory"]
    e.step(e.action_id("discard"))  # seat 1 discards it: it lands before any effect
    assert np.allclose(view(e, 0)["deck_memory"], before - _kinds([drawn]))
    assert e.tracker.known[:, e.deck_base + drawn].tolist() == [-1, -1]


def test_a_look_at_a_reshuffled_card_takes_it_out_of_the_lookers_deck_memory() -> None:
    e = _one_card_left()
    play(e, "draw_deck", "discard", "pass", "pass", "draw_deck")
    taken = e.drawn  # seat 1 swaps it in face down: seat 0 still counts it in the deck
    e.deck.remove(card_id("9C"))  # edge-case setup: seat 0's next draw is the 9C
    e.deck.append(card_id("9C"))
    play(e, "own:0", "pass", "pass")
    assert e.tracker.known[0, e.deck_base + taken] == taken
    play(e, "draw_deck", "discard", "pick:1.0")  # 9: seat 0 looks at seat 1's position 0
    assert e.tracker.known[0, e.deck_base + taken] == -1
    assert e.tracker.known[1, e.deck_base + taken] == -1  # the drawer never counted it


def test_a_wrong_throw_of_a_reshuffled_card_takes_it_out_of_every_deck_memory() -> None:
    e = _one_card_left()
    play(e, "draw_deck", "discard", "pass", "pass", "draw_deck", "own:1")
    hidden = e.slots[SLOTS + 1]  # seat 1 swapped a card of the new deck in face down
    assert e.tracker.known[:, e.deck_base + hidden].tolist() == [hidden, -1]
    assert e._match[hidden] != e._match[e.grave[-1]]  # (so seat 0's throw below is wrong)
    play(e, "throw:1.1")  # wrong: the card is shown to everyone and goes back
    assert e.tracker.known[:, e.deck_base + hidden].tolist() == [-1, -1]


def test_a_hidden_penalty_card_from_a_reshuffled_deck_stays_counted_by_everyone() -> None:
    e = _one_card_left([["5C", "9D", "2H", "3S"], ["KD", "7C", "QH", "AS"]])
    play(e, "draw_deck", "discard")  # the 5H lands
    play(e, "throw:1.3")  # seat 1 throws seat 0's 3S: wrong, a penalty card from the new deck
    penalty = e.slots[SLOTS + 4]
    assert penalty >= 0 and e.reshuffled
    assert e.tracker.known[:, e.deck_base + penalty].tolist() == [penalty, penalty]
    assert e.tracker.known[:, e.deck_base + card_id("3S")].tolist() == [-1, -1]


def test_a_new_round_forgets_the_reshuffled_deck() -> None:
    e = _one_card_left(episode="game")
    play(e, "draw_deck", "discard", "pass", "pass", "draw_deck")
    assert view(e, 0)["deck_memory"].any()
    e.step(e.action_id("own:0"))
    while e.phase != TURN or e.current_player != 0:
        play(e, "pass")
    play(e, "call")
    assert e.round_number == 2 and not e.reshuffled
    assert not view(e, 0)["deck_memory"].any() and not view(e, 1)["deck_memory"].any()


def test_resampling_keeps_counted_cards_in_the_deck_and_out_of_the_graveyard() -> None:
    e = _one_card_left()
    play(e, "draw_deck", "discard", "pass", "pass", "draw_deck", "own:1", "pass", "pass")
    rng = np.random.default_rng(0)
    for _ in range(20):
        counted = set(np.flatnonzero(e.tracker.known[0, e.deck_base:] >= 0).tolist())
        e.resample_hidden(0, rng)
        e.check_invariants()  # every seat still counts every card in the deck
        assert set(e.deck) <= counted and not counted & set(e.grave)
        assert set(np.flatnonzero(e.tracker.known[0, e.deck_base:] >= 0).tolist()) == counted


def test_resampling_shuffles_the_buried_graveyard() -> None:
    """A seat remembers which cards lie buried, not in which order (grave_memory counts them
    by kind): redraws used to keep every remembered buried card at its true depth, so a search
    knew which card a graveyard draw would turn up."""
    e = MemoryUnoEngine(num_players=2)
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    while len(e.grave) < 8:
        mask = e.legal_mask().copy()
        if mask.sum() > 1:
            mask[CALL] = 0
        e.step(int(rng.choice(np.flatnonzero(mask))))
    assert not e.reshuffled and not e.done
    seat = e.current_player
    buried = e.grave[:-1]
    assert all(e.tracker.known[seat, e.grave_base + c] >= 0 for c in buried)  # all remembered
    before = e.observation(seat)
    uncovered = set()
    for k in range(30):
        probe = e.clone()
        probe.resample_hidden(seat, np.random.default_rng(k))
        probe.check_invariants()
        np.testing.assert_array_equal(probe.observation(seat), before)
        assert sorted(probe.grave[:-1]) == sorted(buried) and probe.grave[-1] == e.grave[-1]
        uncovered.add(probe.grave[-2])
    assert len(uncovered) >= 4  # the card under the top is any of the seven


def test_resampling_shuffles_the_cards_counted_in_the_deck_into_it() -> None:
    """The cards a seat counts in a reshuffled deck are dealt to the deck first; they used to
    sit at its bottom in every redraw (drawn last), where the seat knows only that they are in
    it."""
    e = _one_card_left(memory=0.3)
    play(e, "draw_deck", "discard", "pass", "pass", "draw_deck")
    counted = set(np.flatnonzero(e.tracker.known[0, e.deck_base:] >= 0).tolist())
    assert 0 < len(counted & set(e.deck)) < len(e.deck)
    above_the_bottom = 0  # redraws with a counted card above the deck's m bottom places
    for k in range(30):
        probe = e.clone()
        probe.resample_hidden(0, np.random.default_rng(k))
        probe.check_invariants()
        places = [i for i, c in enumerate(probe.deck) if c in counted]  # 0: the bottom
        above_the_bottom += max(places) >= len(places)
    assert above_the_bottom > 20


@pytest.mark.parametrize("memory", [0.3, "none"])
def test_resampling_after_a_reshuffle_with_forgetting_keeps_every_invariant(memory) -> None:
    """Play on from a reshuffle with every seat forgetting, redealing for each seat at every
    decision: cards a seat forgot lying buried are redealt, and no other seat may then count
    a card the redeal buried."""
    e = _one_card_left(memory=memory)
    play(e, "draw_deck", "discard", "pass", "pass", "draw_deck")
    rng = np.random.default_rng(1)
    for _ in range(150):
        mask = e.legal_mask().copy()
        if mask.sum() > 1:
            mask[CALL] = 0
        e.step(int(rng.choice(np.flatnonzero(mask))))
        if e.done:
            break
        for seat in (0, 1):
            before = view(e, seat)
            e.resample_hidden(seat, rng)
            e.check_invariants()
            after = view(e, seat)
            assert all(np.array_equal(before[k], after[k]) for k in before)
    assert e.reshuffled and len(e.grave) > 5  # cards were buried after the reshuffle


def test_single_option_decisions_are_played_automatically() -> None:
    e = mu(A_HANDS, draws=["8H"])
    clear_positions(e, range(1, 4))
    e.grave = [card_id("2C")]
    e.deck.remove(card_id("2C"))
    e._after_load()
    play(e, "draw_grave")  # one own card: the swap is forced, so it happens at once
    assert hand(e, 0)[0] == "2C" and e.phase == WINDOW


def test_observation_is_relative_and_hides_what_a_seat_cannot_know() -> None:
    e = mu(A_HANDS, draws=["8H"])
    v0, v1 = view(e, 0), view(e, 1)
    assert v0["occupied"][:4].all() and v0["occupied"][8:12].all()
    assert v0["known"][2:4].all() and not v0["known"][8:].any()
    assert v1["known"][2:4].all()  # seat 1's own bottom two, in its own first block
    assert v0["known_kind"].reshape(16, 15)[2].argmax() == 1  # 2H: kind "2"
    assert v0["phase"][TURN] == 1 and v0["turn_player"].tolist() == [1, 0]
    assert v1["turn_player"].tolist() == [0, 1]


def test_observation_shows_the_table_counts_the_lock_and_the_selected_card() -> None:
    """RULES.md Observation, the fields a scenario's play does not otherwise read back:
    `grave_memory` (buried graveyard cards per kind / copies), `locked_stack`, `selected`
    (the emptied position awaiting a give), `deck_size` / `grave_size` (/ 54), `round_turns`
    (/ 100), all with seats in offset order (own first)."""
    e = mu(LOCK_HANDS, draws=["5H"])  # 54 - 3 x 4 = 42 cards in the deck
    play(e, "draw_deck", "discard")  # the 5H lands on the empty graveyard
    v = view(e, 1)
    assert round(float(v["deck_size"][0]) * 54) == 41 and round(float(v["grave_size"][0]) * 54) == 1
    assert not v["grave_memory"].any() and not v["locked_stack"].any()  # the top is not buried
    assert v["round_turns"].tolist() == [pytest.approx(0.01)]
    play(e, "throw:0.2")  # seat 1 fires its own 5S onto the 5H: stack 1 locked
    for seat in range(3):
        v = view(e, seat)
        assert v["grave_memory"][4] == 0.25 and v["grave_memory"].sum() == 0.25  # one 5 of 4
        assert round(float(v["grave_size"][0]) * 54) == 2
        assert np.flatnonzero(v["locked_stack"]).tolist() == [(1 - seat) % 3]
    play(e, "throw:0.3", "throw:1.3")  # seat 2 fires its 5D; seat 0 fires seat 1's 5C
    assert e.phase == GIVE and e.current_player == 0 and e.locked == 1
    assert view(e, 0)["grave_memory"][4] == 0.75  # 5H 5S 5D buried under the 5C
    # seat 1's position 3 awaits seat 0's give: offset 1 for seat 0, offset 2 for seat 2
    assert np.flatnonzero(view(e, 0)["selected"]).tolist() == [SLOTS + 3]
    assert np.flatnonzero(view(e, 2)["selected"]).tolist() == [2 * SLOTS + 3]


def test_observation_shows_totals_and_last_rounds_points_own_first() -> None:
    """RULES.md Observation: `totals` (/ 100) and `last_round` (points added last round / 100),
    own seat first, then the seats to its left."""
    hands = [["AC", "2C", "3C", "4C"], ["TC", "TD", "TH", "TS"], ["9C", "9D", "9H", "X1"]]
    e = _game_call([45, 5, 20], hands)  # seat 0 calls: +10, +40, +27
    assert e.totals == [55, 45, 47] and e.round_number == 2
    v = view(e, 1)
    assert v["totals"].tolist() == pytest.approx([0.45, 0.47, 0.55])
    assert v["last_round"].tolist() == pytest.approx([0.40, 0.27, 0.10])


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_action_names_and_sizes(n: int) -> None:
    """RULES.md: "Discrete(14 + 16n)" and an observation of 8n² + 149n + 73 values."""
    e = MemoryUnoEngine(num_players=n)
    assert e.num_actions == 14 + 16 * n and e.layout.size == 8 * n * n + 149 * n + 73
    names = e.action_names
    assert names[:6] == ["call", "draw_deck", "draw_grave", "discard", "pass", "keep"]
    assert names[CALL] == "call" and names[6:14] == [f"own:{p}" for p in range(SLOTS)]
    assert names[14] == "pick:0.0" and names[e.throw_base - 1] == f"pick:{n - 1}.7"
    assert names[e.throw_base] == "throw:0.0" and names[-1] == f"throw:{n - 1}.7"


def test_bad_options_name_the_key() -> None:
    with pytest.raises(ValueError, match="first_player"):
        MemoryUnoEngine(num_players=3, first_player=3)
    with pytest.raises(ValueError, match="match"):
        MemoryUnoEngine(match="suit")
    with pytest.raises(ValueError, match="failed_call"):
        MemoryUnoEngine(failed_call=30)


# -- baseline ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("config", "margin"), [({}, 0.40), ({"episode": "game"}, 0.60),
                                                 ({"num_players": 2}, 0.65)])
def test_heuristic_beats_random(config: dict, margin: float) -> None:
    from card_envs.agents.arena import head_to_head

    result = head_to_head("memory_uno", "heuristic", "random", games=300, seed=0, **config)
    assert result.win_rate > margin, result

"""Deluxe Memory: every rule of the base game and the variants on stacked decks.

The Mixed Chart effects have their own file (test_deluxe_memory_chart.py). Cells are named by
row ``a``..``g`` and column ``1``..``8``; a stacked deck is dealt row by row, left to right,
skipping the empty corners (RULES.md, "Stacked decks").
"""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.agents import RandomAgent
from card_envs.core.cards import card_code, card_id
from card_envs.games.deluxe_memory.engine import (
    BLACK_TARGET,
    CARD_FEATURES,
    JOKER_SWAP,
    NOMATCH,
    NUM_CELLS,
    PICK1,
    PICK2,
    RED_TARGET,
    ROW_NAMES,
    SIMPLE_GIVER,
    TEN_PAIR,
    DeluxeMemoryEngine,
)
from card_envs.games.deluxe_memory.heuristic import DeluxeMemoryHeuristic
from tests.engine_helpers import legal_names, play


# -- helpers (also used by the chart tests) ------------------------------------------------------
def cell(name: str) -> int:
    return ROW_NAMES.index(name[0]) * 8 + int(name[1:]) - 1


def stacked(placements: dict[str, str], jokers: bool = False) -> list[str]:
    """A full deck (deal order) putting the given cards on the given cells; the rest of the
    cards fill the other cells in id order."""
    probe = DeluxeMemoryEngine(jokin_around=jokers)
    cells = probe.used_cells
    wanted = {cell(k): card_id(v) for k, v in placements.items()}
    assert len(set(wanted.values())) == len(wanted), "a card is placed twice"
    spare = [c for c in probe.deck_cards() if c not in wanted.values()]
    order = [wanted[c] if c in wanted else spare.pop(0) for c in cells]
    return [card_code(c) for c in order]


def deal(placements: dict[str, str], num_players: int = 3, **config) -> DeluxeMemoryEngine:
    """An engine dealt with ``placements``, seat 0 to play first."""
    config.setdefault("first_player", 0)
    engine = DeluxeMemoryEngine(num_players=num_players, **config)
    engine.reset(seed=0, deck=stacked(placements, config.get("jokin_around", False)))
    engine.check_invariants()
    return engine


def leave_only(engine: DeluxeMemoryEngine, names: tuple[str, ...]) -> None:
    """Move every card but those on ``names`` to the discard (an end-game grid)."""
    keep = {cell(n) for n in names}
    for c in range(NUM_CELLS):
        if c not in keep and engine.grid[c] >= 0:
            engine.discard.append(engine.grid[c])
            engine.grid[c] = -1
    engine._rebuild_caches()


def view(engine: DeluxeMemoryEngine, seat: int) -> dict[str, np.ndarray]:
    obs = np.empty(engine.layout.size, np.float32)
    engine.write_observation(seat, obs)
    return {k: v.copy() for k, v in engine.layout.decode(obs).items()}


def seen(engine: DeluxeMemoryEngine, seat: int, name: str) -> str | None:
    """The card ``seat``'s observation shows at a cell, as rank+colour ('5b', '5r'), or None."""
    feats = view(engine, seat)["cards"].reshape(NUM_CELLS, CARD_FEATURES)[cell(name)]
    if not feats.any():
        return None
    rank = "A23456789TJQKX"[int(feats[:14].argmax())]
    colour = "" if rank == "X" else ("b" if feats[14] else "r")
    return rank + colour


# -- setting up ----------------------------------------------------------------------------------
def test_grid_is_7_by_8_without_corners_and_deals_row_by_row() -> None:
    engine = deal({"a2": "KH", "a7": "2C", "b1": "QS", "g7": "3D"})
    assert len(engine.used_cells) == 52
    for corner in ("a1", "a8", "g1", "g8"):
        assert engine.grid[cell(corner)] == -1
    assert engine.grid[cell("a2")] == card_id("KH")
    assert engine.grid[cell("g7")] == card_id("3D")
    # The deck's top card lands on a2, the next on a3, the 9th on b1.
    e2 = DeluxeMemoryEngine(first_player=0)
    deck = [card_code(c) for c in range(52)]
    e2.reset(seed=0, deck=deck)
    assert e2.grid[cell("a2")] == 0 and e2.grid[cell("a3")] == 1 and e2.grid[cell("b1")] == 6
    assert all(not f for f in e2.face_up)


def test_jokers_take_the_top_left_and_bottom_right_corners() -> None:
    engine = DeluxeMemoryEngine(jokin_around=True, first_player=0)
    engine.reset(seed=0, deck=[card_code(c) for c in range(54)])
    assert len(engine.used_cells) == 54
    assert engine.grid[cell("a1")] == 0 and engine.grid[cell("g8")] == 53
    assert engine.grid[cell("a8")] == -1 and engine.grid[cell("g1")] == -1


@pytest.mark.parametrize("n", [2, 3, 6])
def test_twenty_tokens_each_and_the_bank_holds_the_rest_of_thirty_each(n: int) -> None:
    engine = deal({}, num_players=n)
    assert engine.tokens == [20] * n
    assert engine.bank == 10 * n
    custom = DeluxeMemoryEngine(num_players=n, starting_tokens=15, tokens_per_player=40)
    custom.reset(seed=1)
    assert custom.tokens == [15] * n and custom.bank == 25 * n


def test_first_player_option_and_random_first_player() -> None:
    assert deal({}, first_player=2).current_player == 2
    starts = set()
    for seed in range(30):
        e = DeluxeMemoryEngine()
        e.reset(seed=seed)
        starts.add(e.current_player)
    assert starts == {0, 1, 2}


def test_config_errors_name_the_key() -> None:
    with pytest.raises(ValueError, match="num_players"):
        DeluxeMemoryEngine(num_players=7)
    with pytest.raises(ValueError, match="first_player"):
        DeluxeMemoryEngine(num_players=2, first_player=2)
    with pytest.raises(ValueError, match="tokens_per_player"):
        DeluxeMemoryEngine(starting_tokens=25, tokens_per_player=20)
    with pytest.raises(ValueError, match="simplicity"):
        DeluxeMemoryEngine(simplicity="yes")
    with pytest.raises(ValueError, match="joker_swaps"):
        DeluxeMemoryEngine(joker_swaps=-1)


def test_stacked_deck_must_match_the_variant() -> None:
    engine = DeluxeMemoryEngine()
    with pytest.raises(ValueError, match="malformed stacked deck"):
        engine.reset(deck=[card_code(c) for c in range(54)])
    jokers = DeluxeMemoryEngine(jokin_around=True)
    with pytest.raises(ValueError, match="missing: X1, X2"):
        jokers.reset(deck=[card_code(c) for c in range(52)])


# -- a turn: two cards ---------------------------------------------------------------------------
def test_pick_two_cards_and_look_first_card_seen_before_the_second() -> None:
    engine = deal({"a2": "5C", "c4": "9D"})
    assert engine.phase == PICK1
    assert legal_names(engine) == {f"cell:{engine.action_names[c][5:]}"
                                   for c in engine.used_cells}
    play(engine, "cell:a2")
    assert engine.phase == PICK2 and "cell:a2" not in legal_names(engine)
    assert seen(engine, 0, "a2") == "5b"  # the picker sees it
    assert seen(engine, 1, "a2") is None  # nobody else does
    assert view(engine, 1)["first_pick"][cell("a2")] == 1.0  # but they see which card it is


def test_without_peek_first_both_cards_are_seen_together() -> None:
    engine = deal({"a2": "5C", "c4": "9D"}, peek_first=False)
    play(engine, "cell:a2")
    assert seen(engine, 0, "a2") is None
    play(engine, "cell:c4")
    assert engine.phase == NOMATCH
    assert seen(engine, 0, "a2") == "5b" and seen(engine, 0, "c4") == "9r"


def test_black_pair_a_chosen_player_returns_that_many_tokens() -> None:
    engine = deal({"a2": "JC", "a3": "JS"})
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == BLACK_TARGET and engine.current_player == 0
    assert legal_names(engine) == {"target:+1", "target:+2"}  # another player
    for seat in (1, 2):  # everyone saw the pair
        assert engine.tracker.known[seat, cell("a2")] == -1  # gone from the grid...
        assert view(engine, seat)["removed"][10 * 2 + 0] == 1.0  # ...into the public discard
    play(engine, "target:+2")
    assert engine.tokens == [20, 20, 9] and engine.bank == 30 + 11
    assert sorted(engine.discard) == sorted([card_id("JC"), card_id("JS")])
    assert engine.grid[cell("a2")] == -1 and engine.grid[cell("a3")] == -1
    assert engine.current_player == 1 and engine.phase == PICK1  # play passes to the left


def test_black_pair_target_is_automatic_with_two_players() -> None:
    engine = deal({"a2": "KC", "a3": "KS"}, num_players=2)
    play(engine, "cell:a2", "cell:a3")
    assert engine.tokens == [20, 7]
    assert engine.current_player == 1


def test_red_pair_a_chosen_player_including_yourself_gains_that_many() -> None:
    engine = deal({"a2": "QD", "b5": "QH"})
    play(engine, "cell:a2", "cell:b5")
    assert engine.phase == RED_TARGET
    assert legal_names(engine) == {"target:+0", "target:+1", "target:+2"}
    play(engine, "target:+0")
    assert engine.tokens == [32, 20, 20] and engine.bank == 18


def test_aces_count_one_and_face_values_count_as_printed() -> None:
    """Pairs pay 1 (Aces), 7, 12 and 13: a Queen and a King pay their printed value, not ten."""
    engine = deal({"a2": "AD", "a3": "AH", "a4": "7C", "a5": "7S", "b2": "QD", "b3": "QH",
                   "b4": "KC", "b5": "KS"})
    play(engine, "cell:a2", "cell:a3", "target:+1")
    assert engine.tokens == [20, 21, 20]
    play(engine, "cell:a4", "cell:a5", "target:+1")  # seat 1 hits seat 2 for seven
    assert engine.tokens == [20, 21, 13]
    play(engine, "cell:b2", "cell:b3", "target:+0")  # seat 2 gains twelve
    assert engine.tokens == [20, 21, 25]
    play(engine, "cell:b4", "cell:b5", "target:+1")  # seat 0 hits seat 1 for thirteen
    assert engine.tokens == [20, 8, 25] and engine.bank == 37


def test_a_payment_from_a_short_bank_pays_what_there_is() -> None:
    engine = deal({"a2": "KD", "a3": "KH"}, num_players=2)
    assert engine.bank == 20
    engine.bank, engine.tokens = 4, [20, 36]
    play(engine, "cell:a2", "cell:a3", "target:+0")
    assert engine.tokens == [24, 36] and engine.bank == 0


def test_unmatched_cards_go_back_face_up_for_everyone() -> None:
    engine = deal({"a2": "5C", "c4": "9D"})
    play(engine, "cell:a2", "cell:c4")
    assert engine.phase == NOMATCH
    assert legal_names(engine) == {"nomatch:show", "nomatch:hide_first", "nomatch:hide_second",
                                   "nomatch:hide_both"}
    play(engine, "nomatch:show")
    assert engine.face_up[cell("a2")] and engine.face_up[cell("c4")]
    for seat in range(3):
        assert seen(engine, seat, "a2") == "5b" and seen(engine, seat, "c4") == "9r"
        assert view(engine, seat)["face_up"][cell("a2")] == 1.0
    assert engine.tokens == [20, 20, 20] and engine.current_player == 1


@pytest.mark.parametrize(("action", "down", "cost"), [
    ("nomatch:hide_first", ("a2",), 1),
    ("nomatch:hide_second", ("c4",), 1),
    ("nomatch:hide_both", ("a2", "c4"), 2),
])
def test_keeping_cards_face_down_costs_one_token_each(action: str, down: tuple, cost: int) -> None:
    engine = deal({"a2": "5C", "c4": "9D"})
    play(engine, "cell:a2", "cell:c4", action)
    assert engine.tokens[0] == 20 - cost and engine.bank == 30 + cost
    for name in ("a2", "c4"):
        assert engine.face_up[cell(name)] == (name not in down)
        if name in down:
            assert seen(engine, 1, name) is None  # the others never saw it
            assert seen(engine, 0, name) is not None  # the picker remembers it


def test_cannot_pay_to_hide_with_ones_last_tokens() -> None:
    engine = deal({"a2": "5C", "c4": "9D"})
    engine.tokens[0], engine.bank = 2, engine.bank + 18
    play(engine, "cell:a2", "cell:c4")
    assert legal_names(engine) == {"nomatch:show", "nomatch:hide_first", "nomatch:hide_second"}
    engine2 = deal({"a2": "5C", "c4": "9D"})
    engine2.tokens[0], engine2.bank = 1, engine2.bank + 19
    play(engine2, "cell:a2", "cell:c4")  # only "show" is left: resolved without a decision
    assert engine2.face_up[cell("a2")] and engine2.current_player == 1


def test_underdogs_may_pay_their_last_token_to_hide_a_card() -> None:
    """RULES.md, Play (Interpretation): "Under Underdogs ... a player may pay its last tokens"."""
    engine = deal({"a2": "5C", "c4": "9D"}, num_players=3, underdogs=True)
    engine.tokens, engine.bank = [1, 20, 20], 49
    play(engine, "cell:a2", "cell:c4")
    assert legal_names(engine) == {"nomatch:show", "nomatch:hide_first", "nomatch:hide_second"}
    play(engine, "nomatch:hide_first")
    assert engine.tokens == [0, 20, 20] and engine.active == [True, True, True]
    assert not engine.face_up[cell("a2")] and engine.face_up[cell("c4")]
    assert engine.current_player == 1 and not engine.terminated


def test_a_face_up_card_can_be_picked_and_matched_later() -> None:
    engine = deal({"a2": "5C", "c4": "9D", "d4": "5S", "e5": "2H"})
    play(engine, "cell:a2", "cell:c4", "nomatch:show")  # seat 0
    play(engine, "cell:d4", "cell:a2")  # seat 1 knows where the other black Five is
    assert engine.phase == BLACK_TARGET and engine.current_player == 1
    play(engine, "target:+2")  # seat 0
    assert engine.tokens == [15, 20, 20]


def test_hiding_a_face_up_card_turns_it_down_and_everyone_remembers_it() -> None:
    engine = deal({"a2": "5C", "c4": "9D", "d4": "2S"})
    play(engine, "cell:a2", "cell:c4", "nomatch:show")
    play(engine, "cell:a2", "cell:d4", "nomatch:hide_first")
    assert not engine.face_up[cell("a2")]
    assert all(seen(engine, s, "a2") == "5b" for s in range(3))


# -- running out and the end ---------------------------------------------------------------------
def test_a_player_without_tokens_is_out_and_skipped() -> None:
    engine = deal({"a2": "KC", "a3": "KS", "a4": "5D", "a5": "9C"})
    engine.tokens[1], engine.bank = 13, engine.bank + 7
    play(engine, "cell:a2", "cell:a3", "target:+1")
    assert engine.tokens[1] == 0 and not engine.active[1]
    assert engine.current_player == 2  # seat 1 is out: play skips it
    play(engine, "cell:a4", "cell:a5", "nomatch:show")
    assert engine.current_player == 0
    assert list(view(engine, 0)["active"]) == [1.0, 0.0, 1.0]


def test_a_player_going_out_loses_its_pending_skip() -> None:
    """RULES.md, Play: a player who is out ... "its pending skips and extra turns vanish"."""
    engine = deal({"a2": "7C", "a3": "7D", "b1": "8C", "b2": "8H", "c1": "KC", "c2": "KS"})
    engine.tokens[1], engine.bank = 13, engine.bank + 7
    play(engine, "cell:a2", "cell:a3", "cell:b1", "cell:b2")  # a Seven's turn skips seat 1
    assert engine.skips == [0, 1, 0]
    play(engine, "pay_for_turn", "cell:c1", "cell:c2", "target:+1")  # then puts it out
    assert not engine.active[1] and engine.skips == [0, 0, 0]
    assert list(view(engine, 2)["skips"]) == [0.0, 0.0, 0.0]
    assert engine.current_player == 2


def test_game_ends_when_only_one_player_has_tokens() -> None:
    engine = deal({"a2": "KC", "a3": "KS"}, num_players=2)
    engine.tokens, engine.bank = [5, 10], 45
    play(engine, "cell:a2", "cell:a3")
    assert engine.terminated and engine.winners == [0]
    assert engine.tokens == [5, 0]
    assert list(engine.rewards) == [1.0, -1.0]


def test_game_ends_when_no_match_is_left_and_most_tokens_wins() -> None:
    # Remove all but two cards: one pair left, then nothing matches.
    engine = deal({"a2": "3D", "a3": "3H", "a4": "4C", "a5": "9S"}, num_players=2)
    leave_only(engine, ("a2", "a3", "a4", "a5"))
    engine.check_invariants()
    play(engine, "cell:a2", "cell:a3", "target:+1")  # the last pair: seat 1 gets 3
    assert engine.terminated
    assert engine.tokens == [20, 23] and engine.winners == [1]
    assert list(engine.rewards) == [-1.0, 1.0]
    assert engine.result()["tokens"] == [20, 23]


def test_game_goes_on_while_one_rank_still_has_two_cards_left() -> None:
    """RULES.md, Winning: the game ends when "no two cards of the same rank" are left."""
    engine = deal({"a2": "3D", "a3": "3H", "a4": "4C", "a5": "4S", "a6": "9S"})
    leave_only(engine, ("a2", "a3", "a4", "a5", "a6"))
    play(engine, "cell:a2", "cell:a3", "target:+0")  # the Fours still make a pair
    assert not engine.terminated and engine.current_player == 1
    play(engine, "cell:a4", "cell:a5", "target:+1")  # the last pair: seat 2 pays 4
    assert engine.terminated and engine.tokens == [23, 20, 16] and engine.winners == [0]


def test_tied_winners_share_the_reward() -> None:
    engine = deal({"a2": "3D", "a3": "3H", "a4": "4C", "a5": "9S"})
    leave_only(engine, ("a2", "a3", "a4", "a5"))
    engine.tokens, engine.bank = [20, 23, 17], 30
    play(engine, "cell:a2", "cell:a3", "target:+0")
    assert engine.winners == [0, 1]
    assert list(engine.rewards) == [0.5, 0.5, -1.0]


def test_score_rewards_are_token_changes() -> None:
    engine = deal({"a2": "JC", "a3": "JS", "b1": "6D", "b2": "2C"}, reward="score")
    play(engine, "cell:a2", "cell:a3")
    assert not engine.rewards.any()
    play(engine, "target:+1")
    assert list(engine.rewards) == [0.0, -11.0, 0.0]
    play(engine, "cell:b1", "cell:b2", "nomatch:hide_both")
    assert list(engine.rewards) == [0.0, -2.0, 0.0]


# -- variants ------------------------------------------------------------------------------------
def test_underdogs_stay_in_at_zero_and_lose_nothing_more() -> None:
    engine = deal({"a2": "KC", "a3": "KS", "a4": "QC", "a5": "QS", "b1": "2H", "b2": "9C"},
                  num_players=3, underdogs=True)
    engine.tokens, engine.bank = [20, 13, 20], 37
    play(engine, "cell:a2", "cell:a3", "target:+1")  # seat 1 drops to 0 but stays in
    assert engine.tokens == [20, 0, 20] and engine.active == [True, True, True]
    assert not engine.terminated and engine.current_player == 1
    play(engine, "cell:b1", "cell:b2")  # no tokens: cannot hide, the cards go up by themselves
    assert engine.face_up[cell("b1")] and engine.current_player == 2
    play(engine, "cell:a4", "cell:a5", "target:+2")  # seat 2 makes seat 1 lose 12: nothing
    assert engine.tokens == [20, 0, 20] and not engine.terminated


def test_underdogs_game_ends_when_only_one_player_has_tokens() -> None:
    """Issue 38: Underdogs only says you are not out at 0 tokens; "the game ends when only one
    player has tokens left" still holds, at once (here in a two-player game)."""
    placements = {"a2": "KC", "a3": "KS", "a4": "QC", "a5": "QS"}
    engine = deal(placements, num_players=2, underdogs=True)
    engine.tokens, engine.bank = [20, 13], 27
    play(engine, "cell:a2", "cell:a3")  # seat 1 loses 13: 0 tokens, matches still left
    assert engine.terminated and engine.winners == [0] and engine.tokens == [20, 0]
    assert list(engine.rewards) == [1.0, -1.0]
    # The reading before issue 38 (an option): the game goes on until no match is left.
    old = deal(placements, num_players=2, underdogs=True, underdogs_end="no_match_left")
    old.tokens, old.bank = [20, 13], 27
    play(old, "cell:a2", "cell:a3")
    assert not old.terminated and old.tokens == [20, 0] and old.current_player == 1


def test_underdogs_game_ends_when_the_second_to_last_player_with_tokens_runs_out() -> None:
    """With an underdog already at 0, the game goes on while two players have tokens and ends
    when the second of them runs out, in the middle of the turn."""
    engine = deal({"a2": "5C", "a3": "5S"}, num_players=3, underdogs=True)
    engine.tokens, engine.bank = [20, 0, 5], 65
    engine._rebuild_caches()
    play(engine, "cell:a2", "cell:a3", "target:+2")  # seat 2 loses its 5 tokens
    assert engine.terminated and engine.winners == [0] and engine.tokens == [20, 0, 0]


def test_underdogs_end_needs_underdogs() -> None:
    with pytest.raises(ValueError, match="underdogs_end"):
        DeluxeMemoryEngine(underdogs_end="no_match_left")


def test_simplicity_mixed_pair_one_player_gives_its_value_to_another() -> None:
    engine = deal({"a2": "8C", "a3": "8H"}, simplicity=True)
    play(engine, "cell:a2", "cell:a3")
    assert engine.phase == SIMPLE_GIVER
    assert legal_names(engine) == {"target:+0", "target:+1", "target:+2"}
    play(engine, "target:+2")
    assert legal_names(engine) == {"target:+0", "target:+1"}  # giver and receiver differ
    play(engine, "target:+0")
    assert engine.tokens == [28, 20, 12] and engine.bank == 30


def test_simplicity_giver_may_be_yourself() -> None:
    engine = deal({"a2": "3S", "a3": "3D"}, simplicity=True)
    play(engine, "cell:a2", "cell:a3", "target:+0", "target:+1")
    assert engine.tokens == [17, 23, 20]


def test_jokers_match_and_rearrange_with_bounded_swaps() -> None:
    engine = deal({"a1": "X1", "g8": "X2", "a2": "5C", "c4": "9D", "d4": "2S"},
                  jokin_around=True, joker_swaps=2)
    play(engine, "cell:a2", "cell:c4", "nomatch:show")  # seat 0 shows 5C, 9D
    play(engine, "cell:a1", "cell:g8")  # seat 1 matches the jokers
    assert engine.phase == JOKER_SWAP and engine.current_player == 1
    assert "stop" in legal_names(engine)
    play(engine, "cell:a2", "cell:d4")  # swap a face-up card with a face-down one
    assert engine.grid[cell("d4")] == card_id("5C") and engine.face_up[cell("d4")]
    assert engine.grid[cell("a2")] == card_id("2S") and not engine.face_up[cell("a2")]
    assert seen(engine, 2, "d4") == "5b"
    play(engine, "cell:c4", "cell:b3")
    assert engine.phase == PICK1 and engine.current_player == 2  # two swaps used up
    assert engine.grid[cell("b3")] == card_id("9D")
    assert all(seen(engine, s, "b3") == "9r" for s in range(3))  # memory follows the card
    assert sorted(engine.discard) == [52, 53]


def test_joker_with_another_card_is_no_match() -> None:
    engine = deal({"a1": "X1", "a2": "5C"}, jokin_around=True)
    play(engine, "cell:a1", "cell:a2")
    assert engine.phase == NOMATCH


def test_jokers_stop_rearranging_early() -> None:
    engine = deal({"a1": "X1", "g8": "X2"}, jokin_around=True)
    play(engine, "cell:a1", "cell:g8", "stop")
    assert engine.phase == PICK1 and engine.current_player == 1


def test_joker_rearranging_swaps_cards_and_never_fills_a_hole() -> None:
    """RULES.md's choice: rearranging swaps two cards; the jokers' own places, now holes, and
    the unused corners are never offered."""
    engine = deal({"a1": "X1", "g8": "X2"}, jokin_around=True)
    play(engine, "cell:a1", "cell:g8")
    assert engine.phase == JOKER_SWAP
    legal = legal_names(engine)
    assert not {"cell:a1", "cell:g8", "cell:a8", "cell:g1"} & legal and "cell:a2" in legal


def test_zero_joker_swaps_rearrange_nothing() -> None:
    engine = deal({"a1": "X1", "g8": "X2", "a2": "5C"}, jokin_around=True, joker_swaps=0)
    before = [c for i, c in enumerate(engine.grid) if i not in (cell("a1"), cell("g8"))]
    play(engine, "cell:a1", "cell:g8")
    assert engine.phase == PICK1 and engine.current_player == 1
    assert sorted(engine.discard) == [52, 53]
    assert [c for i, c in enumerate(engine.grid) if i not in (cell("a1"), cell("g8"))] == before


def test_a_holder_of_two_ten_pairs_spends_one_per_match() -> None:
    """RULES.md's choice: the Ten pair kept first takes the next match; the other waits."""
    engine = deal({"a2": "7C", "a3": "7H", "b2": "TC", "b3": "TH", "c2": "KC", "c3": "KH",
                   "d2": "5S", "d3": "5C"})
    play(engine, "cell:a2", "cell:a3", "cell:b2", "cell:b3")  # a Seven's extra turn: a Ten pair
    play(engine, "pay_for_turn", "cell:c2", "cell:c3", "effect:T")  # the Kings kept as a Ten
    assert [role for role, _, _ in engine.kept[0]] == [TEN_PAIR, TEN_PAIR]
    play(engine, "cell:d2", "cell:d3")  # seat 1's match goes to seat 0
    assert engine.effect_owner == 0
    assert engine.kept[0] == [[TEN_PAIR, card_id("KC"), card_id("KH")]]
    assert {card_id("TC"), card_id("TH")} <= set(engine.discard)


# -- memory --------------------------------------------------------------------------------------
def _show_two(engine: DeluxeMemoryEngine) -> None:
    play(engine, "cell:a2", "cell:c4", "nomatch:hide_both")  # seat 0 sees 5C, 9D privately


def test_perfect_memory_keeps_what_was_seen() -> None:
    engine = deal({"a2": "5C", "c4": "9D", "d1": "2S", "d2": "3S", "e1": "4S", "e2": "6S"})
    _show_two(engine)
    play(engine, "cell:d1", "cell:d2", "nomatch:show")
    play(engine, "cell:e1", "cell:e2", "nomatch:show")
    assert seen(engine, 0, "a2") == "5b" and seen(engine, 0, "c4") == "9r"
    assert seen(engine, 1, "a2") is None


def test_no_memory_keeps_a_look_for_the_next_decision_only() -> None:
    engine = deal({"a2": "5C", "c4": "9D", "d1": "2S", "d2": "3S", "e1": "4S", "e2": "6S"},
                  memory="none")
    play(engine, "cell:a2")
    assert seen(engine, 0, "a2") == "5b"  # seen while picking the second card
    play(engine, "cell:c4")
    # Holding both cards: both still in view while deciding how they go back.
    assert seen(engine, 0, "a2") == "5b" and seen(engine, 0, "c4") == "9r"
    play(engine, "nomatch:hide_both")
    play(engine, "cell:d1", "cell:d2", "nomatch:show")
    play(engine, "cell:e1", "cell:e2", "nomatch:show")
    assert seen(engine, 0, "d1") == "2b"  # face up: on the table, not memory
    play(engine, "cell:f1")  # seat 0's first decision since hiding them: forgotten now
    assert seen(engine, 0, "a2") is None and seen(engine, 0, "c4") is None


def seen_by(engine: DeluxeMemoryEngine, observer: int, name: str) -> set[int]:
    """Who ``observer``'s observation says has seen the card on a cell (0: itself, 1: the
    player to its left, ...)."""
    block = view(engine, observer)["seen_by"].reshape(engine.num_players, NUM_CELLS)
    return set(np.flatnonzero(block[:, cell(name)]).tolist())


def test_who_has_seen_a_face_down_card_is_public_and_never_forgotten() -> None:
    """RULES.md, Observation: every look is chosen in view, so who has seen which card is
    public; memory settings forget the card, not the look."""
    engine = deal({"a2": "5C", "c4": "9D", "d1": "2S", "d2": "3S", "e1": "4S", "e2": "6S"},
                  memory="none")
    _show_two(engine)  # seat 0 looks at a2 and c4 and hides both
    assert seen_by(engine, 0, "a2") == {0} and seen_by(engine, 1, "a2") == {2}
    assert seen_by(engine, 2, "c4") == {1} and seen_by(engine, 1, "b5") == set()
    assert seen(engine, 1, "a2") is None  # that seat 0 looked, not what it saw
    play(engine, "cell:d1", "cell:d2", "nomatch:show")  # face up: everyone has seen them
    assert seen_by(engine, 2, "d1") == {0, 1, 2}
    play(engine, "cell:e1", "cell:e2", "nomatch:show")
    play(engine, "cell:f1")  # seat 0's next decision: it forgets a2 and c4 (memory none)...
    assert seen(engine, 0, "a2") is None
    assert seen_by(engine, 0, "a2") == {0} and seen_by(engine, 0, "f1") == {0}  # ...not that


def test_who_has_seen_a_card_follows_it_when_swapped_and_leaves_with_it() -> None:
    from card_envs.games.deluxe_memory.engine import TWO_LOOK

    engine = deal({"a2": "2C", "a3": "2D", "c3": "KS", "d1": "5S", "f6": "4H"}, num_players=2)
    play(engine, "cell:c3", "cell:d1", "nomatch:hide_both")  # seat 0 has seen KS and 5S
    play(engine, "cell:a2")
    assert seen_by(engine, 0, "a2") == {1}
    play(engine, "cell:a3")  # seat 1's mixed Twos: look at two cards and swap them
    assert engine.phase == TWO_LOOK
    assert seen_by(engine, 0, "a2") == set() and seen_by(engine, 1, "a3") == set()  # matched
    play(engine, "cell:c3", "cell:f6")
    assert engine.grid[cell("f6")] == card_id("KS") and engine.grid[cell("c3")] == card_id("4H")
    assert seen_by(engine, 0, "f6") == {0, 1}  # KS: seat 0 saw it before, seat 1 now
    assert seen_by(engine, 0, "c3") == {1} and seen_by(engine, 1, "c3") == {0}  # 4H: seat 1


def test_forgetting_probability_lies_between() -> None:
    kept = []
    for p in (0.0, 0.5, 1.0):
        remembered = 0
        for seed in range(40):
            engine = DeluxeMemoryEngine(memory=p, first_player=0)
            engine.reset(seed=seed, deck=stacked({"a2": "5C", "c4": "9D", "d1": "2S",
                                                  "d2": "3S", "e1": "4S", "e2": "6S"}))
            play(engine, "cell:a2", "cell:c4", "nomatch:hide_both")
            play(engine, "cell:d1", "cell:d2", "nomatch:show")
            play(engine, "cell:e1", "cell:e2", "nomatch:show")
            play(engine, "cell:f1")
            remembered += (seen(engine, 0, "a2") is not None) + (seen(engine, 0, "c4") is not None)
        kept.append(remembered)
    assert kept[0] == 80 and kept[2] == 0 and 15 < kept[1] < 65


def test_resampling_keeps_an_unmatched_pair_unmatched_and_hides_nothing_seen() -> None:
    engine = deal({"a2": "5C", "c4": "9D"})
    play(engine, "cell:a2", "cell:c4")
    assert engine.phase == NOMATCH
    before = view(engine, 1)
    for s in range(30):
        probe = engine.clone()
        probe.resample_hidden(1, np.random.default_rng(s))
        probe.check_invariants()
        a, b = probe.grid[cell("a2")], probe.grid[cell("c4")]
        assert a % 13 != b % 13
        after = view(probe, 1)
        for key in before:
            np.testing.assert_array_equal(before[key], after[key])
        # Seat 0 still holds exactly the cards that are there (its memory follows the cells).
        assert probe.tracker.known[0, cell("a2")] == a


def test_observation_is_relative_and_bounded() -> None:
    engine = deal({"a2": "JC", "a3": "JS"})
    play(engine, "cell:a2", "cell:a3", "target:+2")
    low, high = engine.layout.bounds()
    for seat in range(3):
        obs = np.empty(engine.layout.size, np.float32)
        engine.write_observation(seat, obs)
        assert (obs >= low).all() and (obs <= high).all()
    v1 = view(engine, 1)
    assert v1["actor"][0] == 1.0  # seat 1 decides now: "own seat first"
    assert v1["tokens"][1] * 90 == pytest.approx(9)  # seat 2 is one to its left
    v0 = view(engine, 0)
    assert v0["tokens"][2] * 90 == pytest.approx(9)
    assert v0["bank"][0] * 90 == pytest.approx(41)


def test_render_and_action_names() -> None:
    engine = deal({"a2": "5C", "c4": "9D"})
    play(engine, "cell:a2", "cell:c4", "nomatch:show")
    text = engine.render_text()
    assert " 5C^" in text and "player_0: 20 tokens" in text
    assert engine.action_name(0) == "cell:a1" and engine.action_name(78) == "stop"
    assert engine.num_actions == 80


# -- the heuristic --------------------------------------------------------------------------------
def heuristic_win_rate(games: int, **config) -> float:
    engine = DeluxeMemoryEngine(**config)
    n = engine.num_players
    heuristic = DeluxeMemoryHeuristic(**config)
    heuristic.seed(1)
    rand = RandomAgent(2)
    obs = np.empty(engine.layout.size, np.float32)
    wins = 0.0
    for g in range(games):
        seat = g % n  # rotate the heuristic's seat
        engine.reset(seed=g)
        while not engine.done:
            s = engine.current_player
            engine.write_observation(s, obs)
            agent = heuristic if s == seat else rand
            engine.step(agent.act(obs, engine.legal_mask()))
        if seat in engine.winners:
            wins += 1.0 / len(engine.winners)
    return wins / games


def test_heuristic_beats_random_clearly() -> None:
    # A random seat of three would win a third of the games.
    assert heuristic_win_rate(300, num_players=3) > 0.9


def test_heuristic_beats_random_in_the_variants() -> None:
    assert heuristic_win_rate(40, num_players=2, simplicity=True, jokin_around=True) > 0.85
    assert heuristic_win_rate(40, num_players=4, underdogs=True, memory=0.2) > 0.6

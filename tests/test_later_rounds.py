"""Later rounds can be set up (issue 38): ``reset(options={"decks": [...]})`` stacks one deck
per round, so a multi-round position is scripted by play instead of by editing a snapshot."""

from __future__ import annotations

import json

import numpy as np
import pytest

from card_envs.core.cards import card_code, card_id
from card_envs.games import make_engine
from card_envs.games.memory_uno.engine import SLOTS, MemoryUnoEngine
from tests.engine_helpers import play


def memory_uno_deck(hands: list[list[str]], first: int) -> list[str]:
    """A 54-card Memory-Uno deck dealing ``hands[s]`` (positions 0..3) to seat s, one card at
    a time starting with seat ``first``; the other cards follow in id order."""
    n = len(hands)
    order = [hands[(first + k) % n][p] for p in range(4) for k in range(n)]
    return order + [card_code(c) for c in range(54) if card_code(c) not in order]


def test_memory_uno_a_total_of_45_before_the_round_that_takes_it_to_50() -> None:
    """The issue's example. Round 1: seat 0 (15 points) calls against seat 1's 5 and fails:
    30 + 15 = 45. Round 2 (seat 1 starts): seat 1 (40) calls and fails; seat 0's 5 points take
    it from 45 to exactly 50, which drops to 0 ("Directly hitting 50 ... to 0")."""
    round_1 = memory_uno_deck([["5C", "5D", "3H", "2S"], ["AC", "AD", "AH", "2C"]], first=0)
    round_2 = memory_uno_deck([["AC", "AD", "AH", "2C"], ["TC", "TD", "TH", "TS"]], first=1)
    e = MemoryUnoEngine(num_players=2, episode="game", first_player=0)
    e.reset(seed=0, decks=[round_1, round_2])
    play(e, "call")
    assert e.totals == [45, 5] and e.round_number == 2 and not e.done
    assert [card_code(c) for c in e.slots[SLOTS:SLOTS + 4]] == ["TC", "TD", "TH", "TS"]
    assert e.current_player == 1
    play(e, "call")
    assert e.last_round == [5, 70] and e.totals == [0, 75] and e.round_number == 3
    assert not e.stacked_decks  # round 3 is shuffled from the seeded stream


def test_the_same_through_the_aec_env_and_a_snapshot_between_rounds() -> None:
    """The decks still to come are part of the position: a snapshot taken in round 1 deals the
    stacked round 2 after loading (and survives JSON)."""
    from card_envs import memory_uno_v1

    round_1 = memory_uno_deck([["5C", "5D", "3H", "2S"], ["AC", "AD", "AH", "2C"]], first=0)
    round_2 = memory_uno_deck([["AC", "AD", "AH", "2C"], ["TC", "TD", "TH", "TS"]], first=1)
    env = memory_uno_v1.env(num_players=2, episode="game", first_player=0)
    env.reset(seed=0, options={"decks": [round_1, round_2]})
    snap = json.loads(json.dumps(env.state_dict()))
    other = memory_uno_v1.env(num_players=2, episode="game", first_player=0)
    other.load_state_dict(snap)
    other.step(other.action_id("call"))
    engine = other.unwrapped.engine
    assert engine.totals == [45, 5]
    assert [card_code(c) for c in engine.slots[SLOTS:SLOTS + 4]] == ["TC", "TD", "TH", "TS"]


def test_mega_memory_second_round_deals_its_stacked_deck() -> None:
    codes = [card_code(c) for c in range(52)]
    second = codes[::-1]
    e = make_engine("mega_memory", episode="game", first_dealer=1, target_score=50)
    e.reset(seed=0, decks=[codes, second])
    e.centre = [pile[-1:] for pile in e.centre]  # one card left per pile: a score ends round 1
    e.deck = [c for c in range(52) if c not in {p[0] for p in e.centre}
              and all(c not in side for side in e.sides)][::-1]
    e.first_card = e.deck.pop()
    e._views_ok = False
    e._centre_indexed = False
    while e.round_number == 1:
        legal = np.flatnonzero(e.legal_mask())
        e.step(int(legal[-1]))
    tops = [card_code(p[-1]) for p in e.centre]
    assert e.round_number == 2 and tops == second[16:20]  # the cascade's face-up tops


def test_roy_second_hand_deals_its_stacked_deck() -> None:
    e = make_engine("roy", episode="game", first_dealer=0, target_score=500)
    first = [card_code(c) for c in range(52)]
    second = first[::-1]
    e.reset(seed=1, decks=[first, second])
    rng = np.random.default_rng(0)
    while e.hand_number == 1 and not e.done:
        e.step(int(rng.choice(np.flatnonzero(e.legal_mask()))))
    # Hand 2 (dealer seat 1): seat 0 is dealt first, cards 1, 3, 5, ... of the deck.
    assert sorted(e.hands[0]) == sorted(card_id(c) for c in second[0:14:2])


def test_bad_decks_are_refused_by_name_before_anything_changes() -> None:
    e = make_engine("memory_uno", num_players=2, episode="game")
    e.reset(seed=0)
    before = json.dumps(e.state_dict())
    good = [card_code(c) for c in range(54)]
    with pytest.raises(ValueError, match=r"decks\[1\] \(round 2\): malformed stacked deck"):
        e.reset(decks=[good, good[:-1]])
    with pytest.raises(ValueError, match="'deck' .* or 'decks' .*not both"):
        e.reset(deck=good, decks=[good])
    with pytest.raises(ValueError, match="'decks' is empty"):
        e.reset(decks=[])
    with pytest.raises(ValueError, match="list of stacked decks"):
        e.reset(decks=" ".join(good))
    assert json.dumps(e.state_dict()) == before
    one_round = make_engine("memory_uno", num_players=2)  # episode="round" deals once
    with pytest.raises(ValueError, match="deals only once per episode"):
        one_round.reset(decks=[good, good])
    one_round.reset(seed=0, decks=[good])  # one deck is the first deal, as 'deck' is
    assert json.dumps(one_round.state_dict()) != before


@pytest.mark.parametrize("game", ["deluxe_memory", "dogpile"])
def test_games_that_deal_once_take_one_deck(game: str) -> None:
    e = make_engine(game)
    deck = [card_code(c) for c in e.deck_cards()]
    e.reset(seed=0, decks=[deck])
    a = json.dumps(e.state_dict())
    e.reset(seed=0, deck=deck)
    assert json.dumps(e.state_dict()) == a
    with pytest.raises(ValueError, match="deals only once"):
        e.reset(decks=[deck, deck])


def test_gymnasium_and_parallel_envs_take_decks() -> None:
    from card_envs import dogpile_v1
    from card_envs.core.gym_env import CardGymEnv

    round_1 = memory_uno_deck([["5C", "5D", "3H", "2S"], ["AC", "AD", "AH", "2C"]], first=0)
    round_2 = memory_uno_deck([["AC", "AD", "AH", "2C"], ["TC", "TD", "TH", "TS"]], first=1)
    env = CardGymEnv("memory_uno", num_players=2, episode="game", first_player=0)
    env.reset(seed=0, options={"decks": [round_1, round_2]})
    assert env.engine.stacked_decks == [[card_id(c) for c in round_2]]
    with pytest.raises(ValueError, match="not both"):
        env.reset(options={"deck": round_1, "decks": [round_1]})
    par = dogpile_v1.parallel_env()
    deck = [card_code(c) for c in range(54)]
    par.reset(seed=0, options={"decks": [deck]})
    assert [card_code(int(c)) for c in par.engine.pile] == deck


def test_a_determinization_does_not_know_the_stacked_decks_to_come() -> None:
    good = [card_code(c) for c in range(54)]
    e = make_engine("memory_uno", num_players=2, episode="game")
    e.reset(seed=0, decks=[good, good])
    probe = e.clone()
    assert probe.stacked_decks == e.stacked_decks != []
    probe.resample_hidden(0, 1)
    assert probe.stacked_decks == [] and e.stacked_decks != []

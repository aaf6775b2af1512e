"""The Memory-Uno heuristic does what its module docstring says, each on a stacked deal:
it keeps low cards (a low drawn card replaces an unknown one, a high one is discarded), throws
only cards it remembers that match the graveyard, and calls the round when its known hand is
low and clearly below every opponent's estimate."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.games.memory_uno.engine import (
    DRAWN,
    KIND_MATCH_KEYS,
    SLOTS,
    TURN,
    WINDOW,
    MemoryUnoEngine,
)
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


# -- the compiled decision (heuristic_rules) plays the numpy version's moves -------------------

SETTINGS = [{"num_players": 2}, {"num_players": 3}, {"num_players": 6},
            *MemoryUnoEngine.TEST_VARIANTS]


def _positions(config: dict, episodes: int, seed: int = 0):
    """(observation, mask) of every decision of ``episodes`` episodes, each move the
    heuristic's or (a third of them) a random legal one, so that odd positions come too."""
    from tests.memory_uno_numpy_heuristic import NumpyMemoryUnoHeuristic

    engine = MemoryUnoEngine(**config)
    agent = NumpyMemoryUnoHeuristic(**config)
    rng = np.random.default_rng(seed)
    for episode in range(episodes):
        engine.reset(seed=seed + episode)
        while not engine.done:
            observation, mask = engine.observation(engine.current_player), engine.legal_mask()
            yield observation, mask
            move = agent.act(observation, mask)
            if rng.random() < 1 / 3:
                move = int(rng.choice(np.flatnonzero(mask)))
            engine.step(move)


def _outcome(agent, observation, mask):
    try:
        return agent.act(observation, mask)
    except Exception as error:  # the same bad input must fail the same way
        return type(error).__name__


def _name(config: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in config.items())


@pytest.mark.parametrize("config", SETTINGS, ids=_name)
def test_its_moves_are_the_numpy_versions_in_random_and_heuristic_play(config: dict) -> None:
    from tests.memory_uno_numpy_heuristic import NumpyMemoryUnoHeuristic

    ours, numpys = MemoryUnoHeuristic(**config), NumpyMemoryUnoHeuristic(**config)
    count = 0
    for observation, mask in _positions(config, episodes=12):
        assert ours.act(observation, mask) == numpys.act(observation, mask)
        count += int(mask.sum()) > 1
    assert count > 100


def test_its_moves_are_the_numpy_versions_on_perturbed_observations() -> None:
    """Any value in the fields it reads (fractions, several ones in a one-hot, a zero top or
    drawn card, NaN, none selected) and any mask: the same move, or the same error."""
    from tests.memory_uno_numpy_heuristic import NumpyMemoryUnoHeuristic

    rng = np.random.default_rng(7)
    values = np.array([0.0, 1.0, 1.0, 0.5, 0.3, 0.7, -1.0, 2.0, np.nan], dtype=np.float32)
    outcomes: set = set()
    for config in ({"num_players": 2}, {"num_players": 4, "match": "rank"}):
        ours, numpys = MemoryUnoHeuristic(**config), NumpyMemoryUnoHeuristic(**config)
        size = ours.layout.size
        for observation, mask in _positions(config, episodes=6, seed=3):
            for _ in range(3):
                odd, odd_mask = observation.copy(), mask.copy()
                where = rng.integers(0, size, size=int(rng.integers(1, 12)))
                odd[where] = rng.choice(values, size=where.size)
                if rng.random() < 0.3:
                    odd_mask = (rng.random(mask.size) < 0.3).astype(mask.dtype)
                expected = _outcome(numpys, odd, odd_mask)
                assert _outcome(ours, odd, odd_mask) == expected
                outcomes.add(expected if isinstance(expected, str) else "move")
    assert "move" in outcomes and "IndexError" in outcomes


def test_a_seats_sum_is_numpys_to_the_last_bit() -> None:
    """Its estimates add a seat's eight float values as numpy's ``sum`` does (pairwise): if a
    numpy release changed that order, this fails before the recorded moves do."""
    from card_envs.games.memory_uno.heuristic_rules import UNKNOWN_VALUE, seat_sum

    rng = np.random.default_rng(1)
    choices = np.array([0.0, 1.0, 2.0, 10.0, -1.0, UNKNOWN_VALUE, 1e16, 0.1])
    for _ in range(3000):
        value = rng.choice(choices, size=16) * rng.choice([1.0, rng.random()], size=16)
        for start in (0, 8):
            assert seat_sum(value.tolist(), start) == float(value[start:start + 8].sum())


def test_a_copied_or_pickled_heuristic_plays_on_as_the_original() -> None:
    """Its reading is a compiled class that copy and pickle cannot rebuild (in the compiled
    build); a copy derives it again and makes the same moves."""
    import copy
    import pickle

    config = {"num_players": 3, "match": "points"}
    heuristic = MemoryUnoHeuristic(**config)
    positions = list(_positions(config, episodes=2))
    expected = [heuristic.act(o, m) for o, m in positions]
    for copied in (copy.deepcopy(heuristic), pickle.loads(pickle.dumps(heuristic))):
        assert type(copied.reading) is type(heuristic.reading)
        assert copied.reading.match_key == list(KIND_MATCH_KEYS["points"])
        assert [copied.act(o, m) for o, m in positions] == expected


def test_a_wrong_sized_observation_is_refused_naming_the_sizes() -> None:
    heuristic = MemoryUnoHeuristic(num_players=2)
    engine = MemoryUnoEngine(num_players=3)
    engine.reset(seed=0)
    with pytest.raises(ValueError, match=str(heuristic.layout.size)):
        heuristic.act(engine.observation(0), engine.legal_mask())

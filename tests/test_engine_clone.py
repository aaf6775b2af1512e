"""Engine.clone (clone_sharing / copy_state): what ``copy.deepcopy`` made, faster. A clone is
the same position, plays on exactly as a deep copy does, is independent of its original, and
keeps the copy's identities (an object reached twice is copied once)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from card_envs.core.engine import copy_state
from card_envs.core.knowledge import KnowledgeTracker
from tests.test_search_agent import SETTINGS, random_position


@pytest.mark.parametrize("game,players", SETTINGS)
def test_a_clone_plays_on_exactly_as_a_deep_copy_and_alone(game: str, players: int) -> None:
    for seed in range(4):
        engine = random_position(game, players, seed)
        before = engine.state_dict()
        clone, deep = engine.clone(), copy.deepcopy(engine)
        assert clone.state_dict() == before
        rng = np.random.default_rng(seed)
        for _ in range(60):  # the same moves and the same chance (the copied streams)
            if clone.done:
                break
            legal = np.flatnonzero(clone.legal_mask())
            np.testing.assert_array_equal(legal, np.flatnonzero(deep.legal_mask()))
            move = int(legal[rng.integers(legal.size)])
            clone.step(move)
            deep.step(move)
            for seat in range(players):
                np.testing.assert_array_equal(clone.observation(seat), deep.observation(seat))
            np.testing.assert_array_equal(clone.rewards, deep.rewards)
        assert clone.state_dict() == deep.state_dict()
        assert engine.state_dict() == before  # the original never moved


def test_copy_state_keeps_identities_and_shares_only_the_memo() -> None:
    inner = [1, 2]
    array = np.arange(4)
    table = (3, 4)  # shared: a tuple of numbers cannot change
    fixed = {"never": "changes"}
    rng = np.random.default_rng(5)
    value = {"a": inner, "b": [inner, array], "c": array, "t": table, "f": fixed, "r": rng,
             "n": np.int64(7), "bytes": bytearray(b"xy")}
    memo = {id(fixed): fixed}
    new = copy_state(value, memo)
    assert new["a"] == inner and new["a"] is not inner
    assert new["b"][0] is new["a"]  # reached twice, copied once
    assert new["c"] is new["b"][1] and new["c"] is not array
    np.testing.assert_array_equal(new["c"], array)
    assert new["t"] is table and new["f"] is fixed and new["n"] == 7
    assert new["bytes"] == value["bytes"] and new["bytes"] is not value["bytes"]
    assert new["r"] is not rng and new["r"].integers(1 << 30) == rng.integers(1 << 30)
    new["a"].append(3)
    new["c"][0] = 9
    assert inner == [1, 2] and array[0] == 0


def test_copy_state_copies_a_tracker_deeply() -> None:
    tracker = KnowledgeTracker(2, 5)
    tracker.reset(3)
    tracker.show(1, 10, [0])
    new = copy_state(tracker, {})
    np.testing.assert_array_equal(new.known, tracker.known)
    new.show(2, 11, [1])
    assert tracker.known[1, 2] != 11 and new.known[1, 2] == 11


@pytest.mark.parametrize("config", [{"num_players": 3, "episode": "game"},
                                    {"num_players": 2, "match": "points", "memory": 0.3}])
def test_memory_uno_clones_share_only_tables_that_play_never_writes(config: dict) -> None:
    """Memory-Uno's clones share its fixed tables (``CLONE_SHARED``) with the original: whole
    games played on clones (resampled, dealt again, reset) leave every one as it was."""
    from card_envs.games.memory_uno.engine import MemoryUnoEngine

    engine = MemoryUnoEngine(**config)
    engine.reset(seed=1)
    tables = {name: copy.deepcopy(getattr(engine, name)) for name in engine.CLONE_SHARED}
    rng = np.random.default_rng(0)
    for seed in range(4):
        clone = engine.clone()
        assert all(getattr(clone, name) is getattr(engine, name) for name in tables)
        clone.resample_hidden(clone.current_player, rng)
        for episode in range(2):
            while not clone.done:
                clone.step(int(rng.choice(np.flatnonzero(clone.legal_mask()))))
            clone.reset(seed=seed * 2 + episode)
    for name, table in tables.items():
        np.testing.assert_equal(getattr(engine, name), table, err_msg=name)


@pytest.mark.parametrize("bits", [np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937,
                                  np.random.Philox, np.random.SFC64])
def test_a_copied_generator_draws_on_as_the_original_and_pickles(bits) -> None:
    """``copy_generator`` makes the copy's bit generator from a stand-in seed and then sets
    its state: the copy draws what the original draws, for every numpy bit generator, and a
    copy (so a cloned engine) still pickles."""
    import pickle

    from card_envs.core.copying import copy_generator

    rng = np.random.Generator(bits(11))
    rng.integers(100, size=7)
    new = copy_generator(rng)
    assert type(new.bit_generator) is bits and new is not rng
    again = pickle.loads(pickle.dumps(new))
    expected = rng.integers(2**62, size=20).tolist()
    assert new.integers(2**62, size=20).tolist() == expected
    assert again.integers(2**62, size=20).tolist() == expected

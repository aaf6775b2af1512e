"""The Mega Mem-Ory heuristic does what its module docstring says, each on a stacked deal: it
starts from the discard pile when its remembered top card scores, and digs down the discard
pile only into cards it remembers."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.cards import card_code
from card_envs.games.mega_memory.engine import DISCARD, DISCARD_SLOT_BASE, MegaMemoryEngine
from card_envs.games.mega_memory.heuristic import MegaMemoryHeuristic
from tests import mega_memory_heuristic_numpy as numpy_heuristic
from tests.engine_helpers import play
from tests.mega_memory_heuristic_numpy import NumpyMegaMemoryHeuristic
from tests.test_mega_memory_rules import arrange, new_game, stacked

ENGINE = MegaMemoryEngine()
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


# -- the compiled decision (heuristic_rules) plays the numpy version's moves ----------------------
def _played_positions(games: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every decision with more than one legal move (either seat's observation) of ``games``
    rounds where each move is the heuristic's or random, half and half, some of them whole
    games (episode='game') and some with the rule variants on."""
    configs = [{}, {"episode": "game", "target_score": 3},
               {"side_pair_without_centre": True, "discard_without_second": True,
                "round_end": "empty_at_turn_end", "stall_turns": 6}]
    rng = np.random.default_rng(seed)
    out = []
    for game in range(games):
        engine = MegaMemoryEngine(**configs[game % len(configs)])
        heuristic = NumpyMegaMemoryHeuristic(**engine.config)
        engine.reset(seed=seed * 1000 + game)
        while not engine.done:
            mask = engine.legal_mask().copy()
            obs = engine.observation(engine.current_player).copy()
            legal = np.flatnonzero(mask)
            if legal.size > 1:
                out.append((obs, mask))
            move = heuristic.act(obs, mask) if rng.random() < 0.5 else int(rng.choice(legal))
            engine.step(move)
    return out


def _outcome(agent, obs: np.ndarray, mask: np.ndarray) -> object:
    """The agent's move, or the type of what it raised (odd observations may raise)."""
    try:
        return agent.act(obs, mask)
    except Exception as error:  # noqa: BLE001 (the two versions must fail alike)
        return type(error)


def _odd(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``obs`` with a few entries of the fields the heuristic reads set to odd values: beliefs,
    values either side of 0.5, negatives, two cards in one row, a row of negatives only."""
    odd = obs.copy()
    at = ENGINE.layout.slices
    fields = ["centre", "my_scored", "opp_scored", "my_side", "discard_known", "discard_depth",
              "first_card", "second_card", "dug", "phase", "pile_sizes", "round_points"]
    values = np.array([1.0, 0.5, np.nextafter(np.float32(0.5), np.float32(1)), 0.25, 1 / 3,
                       -1.0, -0.25, 2.0, 0.0], dtype=np.float32)
    for _ in range(rng.integers(1, 6)):
        sl = at[fields[rng.integers(len(fields))]]
        if rng.random() < 0.15:  # a whole 52-card row (or the field) of negatives
            start = sl.start + 52 * rng.integers(max(1, (sl.stop - sl.start) // 52))
            stop = min(sl.stop, start + 52)
            odd[start:stop] = -rng.random(stop - start).astype(np.float32)
            if rng.random() < 0.5:
                odd[start + rng.integers(stop - start)] = 0.0
        else:
            odd[rng.integers(sl.start, sl.stop)] = values[rng.integers(len(values))]
    return odd


def test_the_view_is_read_as_numpy_reads_it() -> None:
    """The compiled reading (one pass over the nonzero entries) gives every field the numpy
    version's ``_View`` gives, on played observations and on odd ones (beliefs, negatives,
    values by 0.5, two cards a row, rows of negatives with or without a zero)."""
    from card_envs.games.mega_memory.heuristic_rules import Offsets, View

    at = Offsets(ENGINE.layout.slices)
    rng = np.random.default_rng(7)
    positions = _played_positions(6, seed=3)
    observations = [obs for obs, _ in positions]
    observations += [_odd(obs, rng) for obs, _ in positions]
    both = np.zeros(ENGINE.layout.size, np.float32)
    # 0.25 + 0.25000003 is above 0.5 in double precision, but 0.5 in float32 (numpy's sum).
    both[ENGINE.layout.slices["my_scored"].start + 5] = 0.25
    both[ENGINE.layout.slices["opp_scored"].start + 5] = np.nextafter(np.float32(0.25),
                                                                       np.float32(1))
    observations.append(both)
    fields = ("tops", "pile_sizes", "mine", "my_points", "opp_points", "side", "first",
              "second", "dug", "phase", "discard_at")
    for obs in observations:
        ours, theirs = View(obs, at), numpy_heuristic._View(ENGINE.layout, obs)
        for field in fields:
            assert getattr(ours, field) == getattr(theirs, field), field
        assert ours.gone == theirs.gone.tolist()
    assert not View(both, at).gone[5]


def test_plays_the_numpy_versions_moves() -> None:
    """Move for move the numpy version's, at every decision of played rounds (whole games
    and rule variants too) and at odd observations made from them (the same error where the
    numpy version raises)."""
    rng = np.random.default_rng(11)
    ours, theirs = MegaMemoryHeuristic(), NumpyMegaMemoryHeuristic()
    positions = _played_positions(60, seed=5)
    differ = [i for i, (obs, mask) in enumerate(positions)
              if ours.act(obs, mask) != theirs.act(obs, mask)]
    assert not differ and len(positions) > 4000
    odd = [(_odd(obs, rng), mask) for obs, mask in positions[::3]]
    differ = [i for i, (obs, mask) in enumerate(odd)
              if _outcome(ours, obs, mask) != _outcome(theirs, obs, mask)]
    assert not differ


def test_a_wrong_sized_observation_is_named() -> None:
    with pytest.raises(ValueError, match="1115 values, layout expects 1116"):
        MegaMemoryHeuristic().act(np.zeros(ENGINE.layout.size - 1, np.float32),
                                  np.ones(ENGINE.num_actions, np.int8))


def test_a_copied_or_pickled_heuristic_plays_on_as_the_original() -> None:
    """Its offsets are a compiled class that copy and pickle cannot rebuild (in the compiled
    build); a copy derives them again and makes the same moves."""
    import copy
    import pickle

    engine = MegaMemoryEngine()
    engine.reset(seed=5)
    heuristic = MegaMemoryHeuristic()

    def moves(agent: MegaMemoryHeuristic, steps: int) -> list[int]:
        world, out = engine.clone(), []
        for _ in range(steps):
            if world.done:
                break
            out.append(agent.act(world.observation(world.current_player), world.legal_mask()))
            world.step(out[-1])
        return out

    moves(heuristic, 7)
    for copied in (copy.deepcopy(heuristic), pickle.loads(pickle.dumps(heuristic))):
        assert type(copied.offsets) is type(heuristic.offsets)
        assert moves(copied, 80) == moves(heuristic, 80)

"""The Dogpile heuristic does what its module docstring says, on hand-made observations (its
only input): it digs the best bone it knows when that improves its paws, else turns over an
unknown bone; a dug bone is kept late but not early unless it is worth much; sniffs go to
unknown bones and shuffled-back bones to the first free spots. (Its swap of the weakest bone
is pinned in tests/test_dogpile_rules.py.)"""

from __future__ import annotations

import numpy as np

from card_envs.core.cards import card_id
from card_envs.games.dogpile.engine import (
    DIG,
    DOWN,
    ENC,
    ENC_OCC,
    FREE,
    HOLDING,
    KEEP,
    PLAY,
    SHUFFLE,
    SLOT_FEATURES,
    SNIFF,
    WAIT,
    DogpileEngine,
)
from card_envs.games.dogpile.heuristic import DogpileHeuristic

ENGINE = DogpileEngine(num_players=2)


def _position(phase: int, known: dict[int, str], face_down: set[int], empty_from: int = 40,
              state: int = FREE, time_left: float = 0.5, held: str | None = None):
    """An observation and a mask: ``known`` slots hold remembered bones, ``face_down`` slots
    unknown ones, the slots from ``empty_from`` on are empty; every dig and put-down is legal."""
    obs = np.zeros(ENGINE.layout.size, np.float32)
    v = ENGINE.layout.decode(obs)
    pile = v["pile"].reshape(-1, SLOT_FEATURES)
    for t, code in known.items():
        pile[t, 0] = 1.0
        pile[t, 2:] = ENC[card_id(code)]
    for t in face_down:
        pile[t, 0] = 1.0
    v["phase"][phase] = 1.0
    v["own_state"][state] = 1.0
    v["time_left"][0] = time_left
    if held is not None:
        v["held"][:len(ENC_OCC[0])] = ENC_OCC[card_id(held)]
    mask = np.zeros(ENGINE.num_actions, np.int8)
    occupied = set(known) | face_down
    if state == FREE:
        mask[[DIG + t for t in occupied]] = 1
        mask[WAIT] = 1
    else:
        mask[[DOWN + t for t in range(empty_from, 54)]] = 1
        if state == HOLDING:
            mask[KEEP] = 1
    return obs, mask


def _act(obs, mask, seed: int = 0) -> int:
    agent = DogpileHeuristic(num_players=2)
    agent.rng = np.random.default_rng(seed)
    return agent.act(obs, mask)


def test_digs_the_best_known_bone_else_an_unknown_one() -> None:
    obs, mask = _position(PLAY, {3: "2H", 9: "KS"}, face_down={5, 6, 7})
    assert _act(obs, mask) == DIG + 9  # the King: worth the dig at once
    obs, mask = _position(PLAY, {3: "2H"}, face_down={5, 6, 7})
    assert _act(obs, mask) in {DIG + 5, DIG + 6, DIG + 7}  # a Two is not: learn the pile


def test_keeps_a_small_bone_late_but_not_early() -> None:
    early = _position(PLAY, {}, face_down={5}, state=HOLDING, time_left=0.9, held="4D")
    assert _act(*early) != KEEP and _act(*early) >= DOWN + 40
    late = _position(PLAY, {}, face_down={5}, state=HOLDING, time_left=0.1, held="4D")
    assert _act(*late) == KEEP
    worth_much = _position(PLAY, {}, face_down={5}, state=HOLDING, time_left=0.9, held="QD")
    assert _act(*worth_much) == KEEP


def test_sniffs_unknown_bones_and_shuffles_into_the_first_free_spots() -> None:
    obs, mask = _position(SNIFF, {3: "2H", 9: "KS"}, face_down={5, 6})
    mask[[DIG + t for t in (3, 5, 6, 9)]] = 1
    assert {_act(obs, mask, seed) for seed in range(10)} == {DIG + 5, DIG + 6}
    obs, mask = _position(SHUFFLE, {3: "2H"}, face_down=set(range(0, 30)) - {3, 4, 17},
                          state=FREE)
    mask[[DOWN + t for t in (4, 17, *range(30, 54))]] = 1
    assert _act(obs, mask) == DOWN + 4


def _card_of_row(enc: np.ndarray) -> int:
    """One row the obvious way (the reference for the heuristic's all-rows reading)."""
    ranks = np.flatnonzero(enc[:14] == 1.0)
    if ranks.size != 1:
        return -1
    if ranks[0] == 13:
        return 52
    suits = np.flatnonzero(enc[14:] == 1.0)
    return int(suits[0]) * 13 + int(ranks[0]) if suits.size == 1 else -1


def test_the_heuristic_reads_every_bone_as_one_row_at_a_time_would() -> None:
    """The heuristic reads the 54 pile slots in one pass over the observation's exact 1.0
    values. On every pile of random play (beliefs of sniffed groups and forgetting included)
    and on odd rows (two ranks, a rank without a suit, a joker, nothing, two suits, a rank
    beside a belief's share) it reads what a row-by-row reading does."""
    from card_envs.games.dogpile.heuristic_rules import exact_cards

    odd = np.zeros((7, 18), dtype=np.float32)
    odd[0, [3, 5, 14]] = 1.0  # two ranks
    odd[1, 3] = 1.0  # a rank, no suit
    odd[2, 13] = 1.0  # a joker
    odd[3, [4, 15]] = 1.0  # the 5 of suit 1
    odd[4, [4, 15]] = 1.0 / 3  # a belief
    odd[5, [6, 14, 17]] = 1.0  # two suits
    odd[6, [2, 16]], odd[6, 7] = 1.0, 0.5  # the 3 of suit 2, and half of another rank
    rows = [odd]
    rng = np.random.default_rng(0)
    for config in ({"memory": 0.3}, {"num_players": 4, "sniff": "required"}):
        engine = DogpileEngine(**config)
        for seed in range(3):
            engine.reset(seed=seed)
            while not engine.done:
                for seat in range(engine.num_players):
                    pile = engine.layout.decode(engine.observation(seat))["pile"]
                    rows.append(pile.reshape(-1, SLOT_FEATURES)[:, 2:])
                engine.step(int(rng.choice(np.flatnonzero(engine.legal_mask()))))
    encodings = np.concatenate(rows)
    present = rng.random(len(encodings)) < 0.9
    present[:len(odd)] = True
    expected = [_card_of_row(enc) if here else -1
                for enc, here in zip(encodings, present, strict=True)]
    # As the heuristic reads them: rows of 20 (occupied, face up, the bone), then the present.
    rows20 = np.zeros((len(encodings), 20), dtype=np.float32)
    rows20[:, 0], rows20[:, 2:] = 1.0, encodings
    read = exact_cards(np.flatnonzero(rows20.ravel() == 1.0).tolist(), 0, len(rows20), 20, 2)
    assert [c if here else -1 for c, here in zip(read, present, strict=True)] == expected
    assert expected[:7] == [-1, -1, 52, 17, -1, -1, 28] and max(expected) >= 0


def test_its_random_pick_is_numpys_choice() -> None:
    """The heuristic draws a random slot as ``options[rng.integers(0, len)]``, the draw numpy's
    ``Generator.choice(options)`` makes (and with it, the recorded moves): if a numpy release
    changed that, this fails before the moves do."""
    from card_envs.games.dogpile.heuristic_rules import _pick

    ours, numpys = np.random.default_rng(3), np.random.default_rng(3)
    for n in [1, 2, 3, 7, 54, 100] * 300:
        options = list(range(5, 5 + n))
        assert _pick(options, ours) == int(numpys.choice(options))
    assert ours.integers(2**62) == numpys.integers(2**62)


def test_a_copied_or_pickled_heuristic_plays_on_as_the_original() -> None:
    """Its offsets are a compiled class that copy and pickle cannot rebuild (in the compiled
    build); a copy derives them again and, with its random stream, makes the same moves."""
    import copy
    import pickle

    from card_envs.games.dogpile.engine import DogpileEngine

    engine = DogpileEngine(num_players=2)
    engine.reset(seed=5)
    heuristic = DogpileHeuristic(num_players=2)
    heuristic.seed(11)

    def moves(agent: DogpileHeuristic, steps: int) -> list[int]:
        world, out = engine.clone(), []
        for _ in range(steps):
            if world.done:
                break
            seat = world.current_player
            out.append(agent.act(world.observation(seat), world.legal_mask()))
            world.step(out[-1])
        return out

    moves(heuristic, 7)  # its stream moved on, its caches filled
    for copied in (copy.deepcopy(heuristic), pickle.loads(pickle.dumps(heuristic))):
        assert type(copied.offsets) is type(heuristic.offsets)
        assert moves(copied, 60) == moves(copy.deepcopy(heuristic), 60)

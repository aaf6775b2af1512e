"""The ROY heuristic does what its module docstring says, each on a stacked deal: the King of
Spades is held back until an opponent is close to going out, Jacks are kept as wild cards for
turns with no other play, and the announced suit is the one it holds most of."""

from __future__ import annotations

from card_envs.games.roy.heuristic import RoyHeuristic
from tests.engine_helpers import play
from tests.roy_helpers import roy


def _choice(engine) -> str:
    agent = RoyHeuristic(**engine.config)
    seat = engine.current_player
    return engine.action_names[agent.act(engine.observation(seat), engine.legal_mask())]


def test_the_king_of_spades_waits_until_an_opponent_is_close_to_going_out() -> None:
    early = roy([["KS", "9S", "2C", "3C", "4C", "7D", "8D"], []], "5S")
    assert _choice(early) == "play:9S"  # the opponent holds 7 cards: keep the King
    # ... even at the price of a wild Jack (a tie would go to the other card anyway).
    early = roy([["KS", "JD", "2C", "3C", "4C", "7D", "8D"], []], "5S")
    assert _choice(early) == "wild:JD>C"
    # The same choice after the opponent has shed a run down to one card.
    late = roy([["TD", "KS", "9S", "2C", "3C", "4C", "5C"],
                ["2D", "3D", "4D", "5D", "6D", "6S", "8H"]], "9D")
    play(late, "play:TD", "play:2D", "play:3D", "play:4D", "play:5D", "play:6D", "play:6S")
    assert late.current_player == 0 and [len(h) for h in late.hands] == [6, 1]
    assert _choice(late) == "play:KS"


def test_a_jack_is_kept_while_another_card_plays_and_then_names_the_suit_held_most() -> None:
    other_play = roy([["JH", "5H", "2C", "3C", "4C", "7D", "8C"], []], "9H")
    assert _choice(other_play) == "play:5H"
    clubs = roy([["JH", "2C", "3C", "4C", "7D", "8C", "9S"], []], "5H")
    assert _choice(clubs) == "wild:JH>C"  # not play:JH, though the Jack matches the suit
    diamonds = roy([["JH", "2D", "3D", "4C", "7D", "8C", "9S"], []], "5H")
    assert _choice(diamonds) == "wild:JH>D"


# The decision compiled with the engines (card_envs/games/roy/heuristic_rules.py) must play the
# numpy version's moves (tests/roy_numpy_heuristic.py, a copy of it) on every observation.
EQUAL_PLAY_CONFIGS = (
    {"num_players": 2},
    {"num_players": 3, "memory": 0.3},
    {"num_players": 4, "draw_when_able": True},
    {"num_players": 2, "episode": "game", "target_score": 40},
)


def _compare_on_play(config: dict, episodes: int, seed: int) -> int:
    """Plays ``episodes`` of ``config``, each move the heuristic's or random (half and half),
    and checks both versions' move at every decision of every seat; returns the count."""
    import numpy as np

    from card_envs.games.roy.engine import RoyEngine
    from tests.roy_numpy_heuristic import NumpyRoyHeuristic

    engine = RoyEngine(**config)
    new, old = RoyHeuristic(**config), NumpyRoyHeuristic(**config)
    rng = np.random.default_rng(seed)
    compared = 0
    for episode in range(episodes):
        engine.reset(seed=seed * 1000 + episode)
        while not engine.done:
            mask = engine.legal_mask().copy()
            obs = engine.observation(engine.current_player)
            move = new.act(obs, mask)
            assert move == old.act(obs, mask), (config, episode, engine.render_text())
            compared += 1
            if rng.random() < 0.5:
                legal = np.flatnonzero(mask)
                move = int(legal[rng.integers(legal.size)])
            engine.step(move)
    return compared


def test_the_compiled_decision_plays_the_numpy_ones_in_random_and_heuristic_play() -> None:
    compared = sum(_compare_on_play(config, 12, seed)
                   for seed, config in enumerate(EQUAL_PLAY_CONFIGS))
    assert compared > 1000


def test_the_compiled_decision_plays_the_numpy_ones_on_odd_observations() -> None:
    """Observations no game reaches (a hand of any size, several phase or top-card entries,
    opponents' sizes anywhere, a mask that disagrees with the hand, float64): the same move."""
    import numpy as np

    from card_envs.games.roy.engine import NUM_ACTIONS, RoyEngine
    from tests.roy_numpy_heuristic import NumpyRoyHeuristic

    rng = np.random.default_rng(7)
    for players in (2, 3, 4):
        layout = RoyEngine(num_players=players).layout
        new, old = RoyHeuristic(num_players=players), NumpyRoyHeuristic(num_players=players)
        for trial in range(300):
            obs = np.zeros(layout.size, np.float32)
            view = layout.decode(obs)
            size = int(rng.integers(0, 12))
            view["hand"][rng.choice(52, size, replace=False)] = rng.choice([1.0, 0.6, 0.4],
                                                                           size)
            view["top_card"][rng.choice(52, int(rng.integers(0, 3)))] = rng.random()
            view["phase"][:] = rng.choice([0.0, 0.4, 1.0], 2)
            view["ace_penalty"][0] = rng.choice([0.0, 0.25, 1e-9])
            view["opponent_hand_sizes"][:] = rng.choice(
                [0.0, 1 / 52, 2 / 52, 3 / 52, 4 / 52, 5 / 52, rng.random()], players - 1)
            mask = (rng.random(NUM_ACTIONS) < rng.choice([0.05, 0.2, 0.6])).astype(np.int8)
            if not mask.any():
                mask[int(rng.integers(NUM_ACTIONS))] = 1
            for o in (obs, obs.astype(np.float64)):
                assert new.act(o, mask) == old.act(o, mask), (players, trial)


def test_the_opponents_sizes_compare_as_numpys_float32_product_does() -> None:
    """The heuristic compares an opponent's hand size / 52 (float32), times 52, with 2 and 4
    without numpy, at the float32 product's rounding: the same answer for every float32 near
    those thresholds, NaN and infinities included, with one to three opponents."""
    import numpy as np

    from card_envs.games.roy.engine import RoyEngine
    from card_envs.games.roy.heuristic_rules import Offsets, _opponents_close

    near = []
    for k in (0, 1, 2, 3, 4, 5, 52):
        x = np.float32(k / 52)
        for _ in range(40):
            near.append(x)
            x = np.nextafter(x, np.float32(np.inf))
        x = np.float32(k / 52)
        for _ in range(40):
            x = np.nextafter(x, np.float32(-np.inf))
            near.append(x)
    near += [np.float32(v) for v in (np.nan, np.inf, -np.inf, -0.0, 1e-45, 3e38)]
    values = np.array(near, dtype=np.float32)
    rng = np.random.default_rng(3)
    for players in (2, 3, 4):
        engine = RoyEngine(num_players=players)
        at = Offsets(engine.layout.slices)
        sl = engine.layout.slices["opponent_hand_sizes"]
        obs = np.zeros(engine.layout.size, np.float32)
        cases = [[v] * (players - 1) for v in values]
        cases += [list(rng.choice(values, players - 1)) for _ in range(3000)]
        for sizes in cases:
            obs[sl] = sizes
            with np.errstate(over="ignore"):
                scaled = obs[sl] * 52.0
            expected = (float(scaled.min()) <= 2, float(scaled[0]) <= 4)
            assert scaled.dtype == np.float32
            read = obs[at.scalars:at.scalars_end].tolist()[at.opponents:]
            assert _opponents_close(obs, at, read) == expected, sizes


def test_a_copied_or_pickled_heuristic_plays_on_as_the_original() -> None:
    """Its offsets are a compiled class that copy and pickle cannot rebuild (in the compiled
    build); a copy derives them again and makes the same moves."""
    import copy
    import pickle

    from card_envs.games.roy.engine import RoyEngine

    engine = RoyEngine(num_players=3)
    engine.reset(seed=5)
    heuristic = RoyHeuristic(num_players=3)

    def moves(agent: RoyHeuristic) -> list[int]:
        world, out = engine.clone(), []
        while not world.done:
            seat = world.current_player
            out.append(agent.act(world.observation(seat), world.legal_mask()))
            world.step(out[-1])
        return out

    for copied in (copy.deepcopy(heuristic), pickle.loads(pickle.dumps(heuristic))):
        assert type(copied.offsets) is type(heuristic.offsets)
        assert moves(copied) == moves(heuristic)

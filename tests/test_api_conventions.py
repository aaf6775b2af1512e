"""What users of PettingZoo, Gymnasium and SB3 bring with them: the action types their tools
produce, their helpers, and the order of calls they expect (with clear errors outside it)."""

from __future__ import annotations

import importlib
import json
import warnings

import numpy as np
import pytest
import torch
from pettingzoo.utils.env_logger import EnvLogger

from card_envs.agents import Agent, RandomAgent, make_agent
from card_envs.core.conventions import IllegalActionWarning
from card_envs.core.engine import (
    CorruptSnapshotError,
    IllegalActionError,
    NotAnActionError,
    SnapshotError,
)
from card_envs.core.gym_env import CardGymEnv
from card_envs.games import GAMES, make_engine

GAME_NAMES = list(GAMES)


def _env_module(game: str):
    return importlib.import_module(GAMES[game].module)


def _first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


# -- action types ------------------------------------------------------------------------------
@pytest.mark.parametrize("game", GAME_NAMES)
def test_zero_d_integer_arrays_are_actions(game: str) -> None:
    """SB3's ``predict`` returns ``array(18)``; ``Discrete.contains`` accepts it, so do we."""
    reference, env = _env_module(game).env(), _env_module(game).env()
    reference.reset(seed=3)
    env.reset(seed=3)
    for _ in range(20):
        if not env.agents:
            break
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else _first_legal(obs["action_mask"])
        reference.step(action)
        env.step(None if action is None else np.array(action))
        np.testing.assert_array_equal(reference.state(), env.state())
    genv = CardGymEnv(game)
    _, info = genv.reset(seed=0)
    genv.step(np.array(_first_legal(info["action_mask"]), dtype=np.int32))


def test_int_enum_members_are_actions() -> None:
    """``Discrete.contains`` accepts an ``IntEnum`` member (an int subclass), so every view
    takes one as the action of its value; a bool, also an int subclass, stays refused."""
    import enum

    env = _env_module("memory_uno").env(num_players=2)
    env.reset(seed=0)
    Named = enum.IntEnum("Named", {"DRAW_DECK": env.action_id("draw_deck")})
    assert env.action_space(env.agent_selection).contains(Named.DRAW_DECK)
    env.step(Named.DRAW_DECK)
    assert env.engine.phase == 1  # DRAWN: the draw was played
    genv = CardGymEnv("memory_uno", num_players=2)
    genv.reset(seed=0)
    _, _, _, _, info = genv.step(Named.DRAW_DECK)
    assert info["action_mask"][genv.action_id("discard")]  # a card was drawn from the deck
    engine = make_engine("memory_uno", num_players=2)
    engine.reset(seed=0)
    assert engine.is_legal(Named.DRAW_DECK) and not engine.is_legal(True)


@pytest.mark.parametrize("bad", [True, np.bool_(True), np.array(True), 1.0, np.float64(1.0),
                                 np.array([1]), "1"])
def test_non_integer_actions_are_refused_by_name(bad: object) -> None:
    """Bools (a 0-d bool array too), floats and other shapes are not actions: ``True`` silently
    meaning 1 would hide a bug in the caller."""
    env = _env_module("memory_uno").env(num_players=2, illegal_action="error")
    env.reset(seed=0)
    assert env.observe(env.agent_selection)["action_mask"][1]  # 1 is legal: not the complaint
    with pytest.raises(NotAnActionError, match="not an integer action"):
        env.step(bad)
    genv = CardGymEnv("memory_uno", num_players=2, illegal_action="error")
    genv.reset(seed=0)
    with pytest.raises(NotAnActionError, match="not an integer action"):
        genv.step(bad)
    # By default it is an illegal move like any other: the episode ends, the reason is named.
    env = _env_module("memory_uno").env(num_players=2)
    env.reset(seed=0)
    with pytest.warns(IllegalActionWarning):
        env.step(bad)
    assert "not an integer action" in env.infos["player_0"]["illegal_action"]
    genv = CardGymEnv("memory_uno", num_players=2)
    genv.reset(seed=0)
    with pytest.warns(IllegalActionWarning):
        *_, info = genv.step(bad)
    assert "not an integer action" in info["illegal_action"]
    # Still an illegal action (the old type), and a TypeError, like an agent's wrong answer.
    assert issubclass(NotAnActionError, IllegalActionError)
    assert issubclass(NotAnActionError, TypeError)


@pytest.mark.parametrize("bad", [1.9, False, None, np.array([1])])
def test_an_opponent_returning_a_non_action_is_named(bad: object) -> None:
    """The opponent's answer is held to the learner's rule: no ``int()`` truncating 1.9 or
    turning ``False`` into 0, and the error names the agent that answered. A callable and an
    :class:`Agent` subclass raise the same error (they raised TypeError and
    IllegalActionError)."""
    from training.actors import make_actor

    def shaky_opponent(observation, action_mask):
        return bad

    class ShakyAgent(Agent):
        name = "shaky_agent"

        def act(self, observation, action_mask):
            return bad

    for opponent, message in [(shaky_opponent, r"agent 'shaky_opponent' returned .*not an action"),
                              (ShakyAgent(), r"opponent 'shaky_agent' in seat 1: .*not an integer "
                                             r"action")]:
        genv = CardGymEnv("roy", opponent=opponent, learner_seat=0)
        with pytest.raises(NotAnActionError, match=message):
            _, info = genv.reset(seed=0)
            for _ in range(100):  # until the opponent's first turn
                _, _, _, _, info = genv.step(_first_legal(info["action_mask"]))
    actor = make_actor(shaky_opponent, "roy", {})
    engine = make_engine("roy")
    engine.reset(seed=0)
    obs, mask = engine.observation(0)[None], engine.legal_mask()[None]
    with pytest.raises(NotAnActionError, match="'shaky_opponent' returned"):
        actor.act(obs, mask)


def test_sb3_make_vec_env_and_predict_work_as_is() -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    import card_envs  # noqa: F401  (registers the ids)

    venv = make_vec_env("card_envs/Roy-v1", n_envs=2, seed=0)  # offers render_mode="rgb_array"
    assert venv.num_envs == 2
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=16, seed=0)
    env = _env_module("roy").env()
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    action, _ = model.predict(obs["observation"], action_masks=obs["action_mask"].astype(bool))
    assert isinstance(action, np.ndarray) and action.shape == ()
    env.step(action)


# -- the Dogpile parallel env --------------------------------------------------------------------
def test_parallel_env_refuses_misspelt_or_missing_agents() -> None:
    par = _env_module("dogpile").parallel_env(num_players=2)
    obs, _ = par.reset(seed=0)
    # Different legal actions for the two dogs, so that neither can void the other's.
    actions = {a: int(np.flatnonzero(obs[a]["action_mask"])[i]) for i, a in enumerate(par.agents)}
    with pytest.raises(ValueError, match=r"missing \['player_0'\], unknown \['Player_0'\]"):
        par.step({"Player_0": actions["player_0"], "player_1": actions["player_1"]})
    with pytest.raises(ValueError, match="missing"):
        par.step({})
    _, _, _, _, infos = par.step({a: np.array(v) for a, v in actions.items()})
    assert not any(info["voided"] for info in infos.values())


# -- stacked decks -------------------------------------------------------------------------------
@pytest.mark.parametrize("entry", [0.9, 1.0, False, None])
def test_stacked_deck_refuses_entries_that_are_not_codes_or_ids(entry: object) -> None:
    env = _env_module("roy").env()
    with pytest.raises(ValueError, match="entry 0"):
        env.reset(seed=0, options={"deck": [entry] + list(range(1, 52))})


def test_stacked_deck_takes_numpy_ids() -> None:
    env = _env_module("roy").env()
    env.reset(seed=0, options={"deck": list(range(52))})
    expected = env.state().copy()
    env.reset(seed=0, options={"deck": np.arange(52)})
    np.testing.assert_array_equal(env.state(), expected)


# -- snapshots -----------------------------------------------------------------------------------
@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_refused_deck_leaves_the_game_in_progress_untouched(game: str) -> None:
    """``reset(options={"deck": <bad>})`` raises before anything changes (RNG streams, memory,
    the position): a harness that catches the error and plays on gets the same game."""
    import copy

    long_episodes = {"episode": "game"} if game in ("memory_uno", "mega_memory") else {}
    env = _env_module(game).env(**long_episodes)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(5):
        env.step(int(rng.choice(np.flatnonzero(env.last()[0]["action_mask"]))))
    assert not env.terminations[env.agent_selection]
    before = copy.deepcopy(env)
    with pytest.raises(ValueError, match="deck"):
        env.reset(seed=1, options={"deck": ["AC"]})
    for _ in range(30):
        obs, ref = env.last()[0], before.last()[0]
        assert all(np.array_equal(obs[k], ref[k]) for k in obs)
        if env.terminations[env.agent_selection]:
            break
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        before.step(action)
    env.engine.check_invariants()

    genv = CardGymEnv(game, opponent="random", **long_episodes)
    _, info = genv.reset(seed=3)
    gref = copy.deepcopy(genv)
    with pytest.raises(ValueError, match="deck"):
        genv.reset(seed=1, options={"deck": ["AC"]})
    for _ in range(30):  # the opponents' streams were not reseeded either
        action = _first_legal(info["action_mask"])
        obs, _, term, trunc, info = genv.step(action)
        ref_obs, *_ = gref.step(action)
        assert np.array_equal(obs, ref_obs)
        if term or trunc:
            break


def test_reset_options_that_are_not_a_dict_are_named() -> None:
    """``reset(options=deck)`` (the deck itself, not ``{"deck": deck}``) failed with an
    AttributeError from ``options.get`` in every env view, after warning about each card."""
    deck = " ".join(f"{r}{s}" for s in "CDHS" for r in "A23456789TJQK")
    views = [_env_module("roy").env(), CardGymEnv("roy"), _env_module("dogpile").parallel_env()]
    for env in views:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning about options it refuses anyway
            for bad in (deck, deck.split()):
                with pytest.raises(TypeError, match=r"must be a dict .*\{'deck': \[\.\.\.\]\}"):
                    env.reset(seed=0, options=bad)
    env = views[0]
    env.reset(seed=0, options={"deck": deck})
    assert env.engine.state_dict()["fields"]["num_steps"] == 0


def test_a_misspelt_reset_option_is_an_error_like_a_misspelt_env_option() -> None:
    """``reset(options={"dek": ...})`` was a warning and a normal deal: the stacked deck the
    caller meant was silently not used. Every view now refuses it, naming the key, the look-
    alike and the allowed keys, before anything is dealt or reseeded."""
    deck = " ".join(f"{r}{s}" for s in "CDHS" for r in "A23456789TJQK")
    aec, gym = _env_module("roy").env(), CardGymEnv("roy")
    views = [aec, gym, _env_module("dogpile").parallel_env()]
    for env in views:
        env.reset(seed=0)
        before = json.dumps(env.engine.state_dict())
        for bad, hint in (({"dek": deck}, r" \(did you mean 'deck'\?\)"), ({"seed": 1}, ""),
                          ({"deck": deck, 3: 1}, ""), ({"options": {"deck": deck}}, "")):
            key = repr(next(k for k in bad if k != "deck"))
            with pytest.raises(ValueError, match=rf"^unknown reset option {key}{hint}; "
                                                 r"allowed options: 'deck', 'decks'$"):
                env.reset(seed=1, options=bad)
            assert json.dumps(env.engine.state_dict()) == before
    # PettingZoo's api_test checks the signature with options={"options": 1}: still accepted.
    for env in (aec, views[2]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            env.reset(seed=0, options={"options": 1})
    gym.reset(seed=0, options={})


@pytest.mark.parametrize("bad, error", [(True, TypeError), (1.5, TypeError), ("7", TypeError),
                                        (-1, ValueError), (np.int64(-2), ValueError)])
def test_a_seed_that_is_not_a_non_negative_integer_is_named(bad: object, error: type) -> None:
    """numpy took ``seed=True`` as 1 and blamed "SeedSequence" for a float; Gymnasium refused
    numpy integers that the AEC view took. Every view now says what a seed must be."""
    views = [_env_module("roy").env(), CardGymEnv("roy"), _env_module("dogpile").parallel_env(),
             make_engine("roy")]
    for view in views:
        with pytest.raises(error, match=r"reset\(seed=\.\.\.\) takes a non-negative integer"):
            view.reset(seed=bad)


def test_numpy_integer_seeds_play_the_python_integer_s_game() -> None:
    for make in (_env_module("roy").env, lambda: CardGymEnv("roy")):
        a, b = make(), make()
        a.reset(seed=5)
        b.reset(seed=np.int64(5))
        assert a.engine.state_dict() == b.engine.state_dict()


def test_an_unknown_agent_s_spaces_name_the_agents() -> None:
    views = [_env_module("roy").env(num_players=3), _env_module("dogpile").parallel_env()]
    for env in views:
        for space in (env.observation_space, env.action_space):
            with pytest.raises(KeyError, match=r"unknown agent 'player_9'; agents are "
                                               r"\['player_0', 'player_1'"):
                space("player_9")


@pytest.mark.parametrize("game", GAME_NAMES)
def test_partial_or_damaged_snapshots_are_refused_by_name(game: str) -> None:
    engine = make_engine(game)
    engine.reset(seed=0)
    snap = engine.state_dict()
    fields = dict(snap["fields"])
    del fields["current_player"]
    fields["curent_player"] = 0
    with pytest.raises(ValueError, match=r"missing fields \['current_player'\], unknown fields "
                                         r"\['curent_player'\]"):
        engine.load_state_dict({**snap, "fields": fields})
    with pytest.raises(ValueError, match="not an engine snapshot"):
        engine.load_state_dict({"game": game, "fields": snap["fields"]})
    for bad in (engine.num_players, "x"):
        broken = {**snap, "fields": {**snap["fields"], "current_player": bad}}
        with pytest.raises(ValueError, match="corrupt .* snapshot: .*current_player"):
            make_engine(game).load_state_dict(broken)
    engine.reset(seed=0)
    engine.load_state_dict(snap)  # the intact snapshot still loads
    assert engine.state_dict() == snap


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_damaged_field_is_refused_at_load_not_at_a_later_step(game: str) -> None:
    """Fields of the wrong kind or length were loaded and crashed a later step or render (a
    walkthrough damaged every field in turn: ROY accepted 9 of 62, Dogpile about 46 of 124)."""
    engine = make_engine(game, num_players=3) if game != "mega_memory" else make_engine(game)
    engine.reset(seed=4)
    snap = json.loads(json.dumps(engine.state_dict()))
    lists = [k for k, v in snap["fields"].items()
             if isinstance(v, list) and len(v) == engine.num_players]
    damages = [("rng", None), ("winners", "x"), ("num_steps", 1.5), ("terminated", 1),
               (lists[0], [])]
    for name, value in damages:
        broken = {**snap, "fields": {**snap["fields"], name: value}}
        with pytest.raises(SnapshotError, match=rf"snapshot: field '{name}' (holds|is)"):
            make_engine(game, **engine.config).load_state_dict(broken)
    array = next((k for k, v in snap["fields"].items()
                  if isinstance(v, dict) and "int" in v.get("dtype", "") and v["__ndarray__"]),
                 None)
    if array is None:
        return  # (ROY, Mega Mem-Ory and Memory-Uno snapshot no integer arrays)
    value = snap["fields"][array]
    flat = np.asarray(value["__ndarray__"], dtype=float)
    flat.flat[0] = 0.5  # an int array silently took it as 0
    broken = {**snap, "fields": {**snap["fields"], array: {**value, "__ndarray__": flat.tolist()}}}
    with pytest.raises(SnapshotError, match="cannot hold"):
        make_engine(game, **engine.config).load_state_dict(broken)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_finished_game_s_snapshot_loads_as_a_finished_episode(game: str) -> None:
    """Its infos held no ``"winners"``, which every finished episode's do."""
    env = _env_module(game).env()
    env.reset(seed=1)
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        env.step(_first_legal(env.observe(env.agent_selection)["action_mask"]))
    loaded = _env_module(game).env()
    loaded.load_state_dict(env.state_dict())
    assert loaded.infos.keys() == env.infos.keys()
    for agent, info in env.infos.items():
        assert info.keys() == loaded.infos[agent].keys() == {"winners"}
        np.testing.assert_array_equal(loaded.infos[agent]["winners"], info["winners"])
    assert loaded.result() == env.result()
    assert loaded.terminations == env.terminations and loaded.truncations == env.truncations
    # ... and every agent's last() still pays the final outcome (it said 0.0 for everyone).
    assert loaded.rewards == env.rewards
    assert loaded._cumulative_rewards == env._cumulative_rewards
    assert loaded.last()[1] == env.last()[1]


def test_a_corrupt_snapshot_leaves_the_aec_env_asking_for_reset() -> None:
    """The engine says a snapshot refused part-way is left unusable until reset(), but the env
    kept stepping it: the next step() failed with an IndexError from inside the rules. A
    snapshot refused before anything changed (another config, a field its schema refuses)
    leaves the game going."""
    env = _env_module("roy").env()
    env.reset(seed=0)
    snap = env.state_dict()
    refused_first = [{**snap, "config": {**snap["config"], "num_players": 3}},
                     {**snap, "fields": {**snap["fields"], "current_player": 7}},
                     {**snap, "fields": {**snap["fields"],
                                         "rewards": {"__ndarray__": [0.0], "dtype": "float64"}}}]
    for bad in refused_first:
        with pytest.raises(SnapshotError) as info:
            env.load_state_dict(bad)
        assert not isinstance(info.value, CorruptSnapshotError)
        env.step(_first_legal(env.observe(env.agent_selection)["action_mask"]))  # still in play
    env.reset(seed=0)
    # Values each allowed, impossible together (winners of a game still in play): refused
    # after loading began.
    corrupt = [{**snap, "fields": {**snap["fields"], "winners": [1]}}]
    for bad in corrupt:
        with pytest.raises(ValueError, match="corrupt roy snapshot: .*unusable until reset"):
            env.load_state_dict(bad)
        for call in (lambda: env.step(0), env.state, env.state_dict, env.agent_iter,
                     lambda: env.observe("player_0")):
            with pytest.raises(RuntimeError, match="reset"):
                call()
        env.reset(seed=0)
        assert env.state_dict() == snap


def test_snapshot_keeps_the_step_count_towards_max_steps() -> None:
    """A restored position has made as many decisions as the saved one: the cap still applies."""
    engine = make_engine("roy", max_steps=10)
    engine.reset(seed=0)
    for _ in range(6):
        engine.step(_first_legal(engine.legal_mask()))
    other = make_engine("roy", max_steps=10)
    other.load_state_dict(engine.state_dict())
    assert other.num_steps == 6
    for _ in range(4):
        other.step(_first_legal(other.legal_mask()))
    assert other.truncated and other.result()["steps"] == 10


def test_restored_truncated_episode_stays_truncated_in_the_aec_env() -> None:
    """load_state_dict rebuilds the env's flags from the engine: truncated is not terminated."""
    env = _env_module("roy").env(max_steps=3)
    env.reset(seed=0)
    for _ in range(3):
        env.step(_first_legal(env.observe(env.agent_selection)["action_mask"]))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    other = _env_module("roy").env(max_steps=3)
    other.load_state_dict(env.state_dict())
    assert all(other.truncations.values()) and not any(other.terminations.values())
    assert other.last()[2:4] == (False, True)


# -- call order ----------------------------------------------------------------------------------
@pytest.mark.parametrize("game", GAME_NAMES)
def test_calls_before_reset_say_so(game: str) -> None:
    env = _env_module(game).env(render_mode="ansi")
    for call in (env.last, env.state, env.render, env.agent_iter,
                 lambda: env.observe("player_0")):
        with pytest.raises(RuntimeError, match="reset"):
            call()
    genv = CardGymEnv(game, render_mode="ansi")
    for call in (genv.render, genv.action_masks, lambda: genv.step(0)):
        with pytest.raises(RuntimeError, match="reset"):
            call()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_agents_exist_before_reset_and_env_help_lists_every_option(game: str) -> None:
    """As in PettingZoo's classic envs, ``agents`` / ``num_agents`` are there before
    ``reset()``; ``help(env)`` names each of the game's options with its default."""
    module = _env_module(game)
    env = module.env()
    assert env.agents == env.possible_agents and env.num_agents == len(env.possible_agents)
    if GAMES[game].parallel:
        penv = module.parallel_env()
        assert penv.agents == penv.possible_agents
    for name, option in GAMES[game].engine_class().options().items():
        assert f"{name} (default {option.default!r})" in module.env.__doc__


@pytest.mark.parametrize("game", GAME_NAMES)
def test_resample_hidden_takes_a_generator_or_a_seed(game: str) -> None:
    env = _env_module(game).env()
    env.reset(seed=0)
    seeded = env.clone()
    env.resample_hidden("player_0", 3)
    seeded.resample_hidden("player_0", np.random.default_rng(3))
    assert env.state_dict() == seeded.state_dict()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_snapshot_and_determinization_before_reset_say_so(game: str) -> None:
    """Before a deal there is no position: ROY's ``state_dict()`` failed with an
    AttributeError from the engine, and ``resample_hidden`` returned having redrawn nothing."""
    env = _env_module(game).env()
    for call in (env.state_dict, lambda: env.resample_hidden("player_0", 0)):
        with pytest.raises(RuntimeError, match="reset"):
            call()
    other = _env_module(game).env()
    other.reset(seed=0)
    env.load_state_dict(other.state_dict())  # a restored position needs no reset
    env.resample_hidden("player_0", 0)


@pytest.mark.parametrize("seat", [-1, 3, True, 1.0, None])
def test_resample_hidden_refuses_a_seat_that_is_not_one(seat: object) -> None:
    """Seat -1 silently redrew the last seat's hidden cards (numpy's negative indexing), 3 in a
    three-seat game and ``True`` were accepted too, and a numpy integer raised a bare KeyError."""
    env = _env_module("memory_uno").env(num_players=3)
    env.reset(seed=0)
    before = env.state_dict()
    with pytest.raises(ValueError, match=r"invalid seat .* 'player_0' to 'player_2' or 0\.\.2"):
        env.resample_hidden(seat, 0)
    assert env.state_dict() == before
    with pytest.raises(KeyError, match="unknown agent 'player_3'"):
        env.resample_hidden("player_3", 0)
    reference = env.clone()
    env.resample_hidden(np.int64(2), 5)
    reference.resample_hidden("player_2", 5)
    assert env.state_dict() == reference.state_dict()


@pytest.mark.parametrize("game", ["roy", "mega_memory", "memory_uno", "deluxe_memory", "dogpile"])
@pytest.mark.parametrize("seat", [-1, 2, True, 1.0, None])
def test_a_bare_engine_s_resample_hidden_refuses_a_seat_that_is_not_one(game: str,
                                                                       seat: object) -> None:
    """The engine API searches call directly: ROY took seat 2 of two (and any seat past the
    table) and every game took -1 as the last seat, redrawing the wrong seat's unknowns."""
    from card_envs.games import make_engine

    engine = make_engine(game, num_players=2)
    engine.reset(seed=0)
    before = engine.state_dict()
    with pytest.raises(ValueError, match=r"invalid seat .* expected 0\.\.1"):
        engine.resample_hidden(seat, np.random.default_rng(0))
    assert engine.state_dict() == before
    engine.resample_hidden(np.int64(1), np.random.default_rng(0))


def test_parallel_env_before_reset_says_so() -> None:
    par = _env_module("dogpile").parallel_env(render_mode="ansi")
    for call in (par.state, par.render, lambda: par.step({})):
        with pytest.raises(RuntimeError, match="reset"):
            call()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_after_every_agent_is_done_step_warns_and_last_says_so(game: str) -> None:
    env = _env_module(game).env()
    env.reset(seed=0)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else _first_legal(obs["action_mask"]))
    EnvLogger.flush()
    env.step(None)  # PettingZoo's behaviour: a logged warning, nothing else
    assert any("after all agents are terminated" in str(m) for m in EnvLogger.mqueue)
    with pytest.raises(RuntimeError, match="every agent has stepped None"):
        env.last()
    with pytest.raises(KeyError, match="unknown agent 'player_9'"):
        env.observe("player_9")


def test_gym_episode_ended_by_penalty_stays_ended() -> None:
    env = CardGymEnv("roy", illegal_action="penalty")
    _, info = env.reset(seed=0)
    with pytest.warns(IllegalActionWarning):
        _, reward, term, _, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert (reward, term) == (-1.0, True)
    assert info["action_mask"].all()  # nothing to choose, and no NaN logits for masked policies
    with pytest.raises(RuntimeError, match="finished episode"):
        env.step(_first_legal(env.action_masks()))
    env.reset(seed=1)
    env.step(_first_legal(env.action_masks()))


@pytest.mark.parametrize("when", ["step", "reset"])
def test_gym_env_refuses_to_go_on_after_an_opponent_raised(when: str) -> None:
    """An opponent that raises leaves the game at its own turn: the next step() must not play
    the learner's action for that seat (nor action_masks() show that seat's mask); reset()
    starts over. Raised in reset() too, where the episode before had left the env ready."""
    armed = {"raise": False}

    def flaky(observation, action_mask):
        if armed["raise"]:
            raise RuntimeError("the opponent broke")
        return _first_legal(action_mask)

    env = CardGymEnv("roy", opponent=flaky, learner_seat=1)
    _, info = env.reset(seed=0)
    env.step(_first_legal(info["action_mask"]))
    armed["raise"] = True
    with pytest.raises(RuntimeError, match="the opponent broke"):
        if when == "step":
            for _ in range(100):  # until the opponent's turn comes
                _, _, _, _, info = env.step(_first_legal(env.action_masks()))
        else:
            for seed in range(100):  # until a deal has the opponent move first
                env.reset(seed=seed)
    assert env.engine.current_player != env.learner and not env.engine.done
    for method in (lambda: env.step(0), env.action_masks):
        with pytest.raises(RuntimeError, match="opponent's error interrupted the episode"):
            method()
    armed["raise"] = False
    _, info = env.reset(seed=0)
    env.step(_first_legal(info["action_mask"]))


def test_gym_env_names_max_steps_when_no_deal_reaches_the_learner() -> None:
    # Under the rotating order every first tick starts with seat 0: one step ends every deal.
    env = CardGymEnv("dogpile", num_players=2, learner_seat=1, max_steps=1, tick_order="rotate")
    with pytest.raises(RuntimeError, match="max_steps=1"):
        env.reset(seed=0)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_env_view_names_actions_as_the_engine_does(game: str) -> None:
    """README: ``action_name`` / ``action_id`` on the AEC, Gymnasium and Parallel views."""
    import gymnasium

    from card_envs import dogpile_v1

    aec = _env_module(game).env()
    gym_env = gymnasium.make(GAMES[game].gym_id).unwrapped
    views = [aec, gym_env] + ([dogpile_v1.parallel_env()] if game == "dogpile" else [])
    names = make_engine(game).action_names
    for view in views:
        assert [view.action_name(a) for a in range(len(names))] == names
        assert [view.action_id(name) for name in names] == list(range(len(names)))
        with pytest.raises(ValueError, match="unknown action name 'no-such-move'"):
            view.action_id("no-such-move")
        with pytest.raises(NotAnActionError, match="not an integer action"):
            view.action_name("draw")


def test_gymnasium_id_fixes_the_game() -> None:
    """gymnasium.make merges keyword arguments over the registered ones: a ``game`` argument
    used to turn card_envs/Roy-v1 into Dogpile without a word."""
    import gymnasium

    with pytest.raises(ValueError, match="'game' is not one of its options.*Dogpile-v1"):
        gymnasium.make("card_envs/Roy-v1", game="dogpile")
    env = gymnasium.make("card_envs/Roy-v1", num_players=3, opponent="heuristic")
    assert env.unwrapped.engine.name == "roy" and env.unwrapped.engine.num_players == 3
    assert gymnasium.spec("card_envs/Roy-v1").kwargs == {}


def test_human_render_shows_the_deal_in_every_view(capsys: pytest.CaptureFixture[str]) -> None:
    """``render_mode="human"`` prints at reset() and at every step (Gymnasium's convention,
    which the AEC and Gymnasium envs follow); the parallel env printed nothing at reset(), so
    the deal was never shown."""
    views = [_env_module("dogpile").env(render_mode="human", num_players=2),
             CardGymEnv("dogpile", render_mode="human", num_players=2),
             _env_module("dogpile").parallel_env(render_mode="human", num_players=2)]
    for env in views:
        env.reset(seed=0)
        assert capsys.readouterr().out.startswith("Dogpile round 1/3"), type(env).__name__


@pytest.mark.parametrize("game", GAME_NAMES)
def test_checked_step_refuses_what_step_would_trust(game: str) -> None:
    """A search on a bare engine: step() trusts its caller (an illegal Dogpile dig was taken
    and broke the invariants); checked_step() says why instead and leaves the game as it was."""
    engine = make_engine(game)
    engine.reset(seed=2)
    illegal = int(np.flatnonzero(engine.legal_mask() == 0)[0])
    before = engine.state_dict()
    with pytest.raises(IllegalActionError, match="is not legal for player_"):
        engine.checked_step(illegal)
    with pytest.raises(NotAnActionError):
        engine.checked_step(1.0)
    assert engine.state_dict() == before
    while not engine.done:
        engine.checked_step(np.int64(np.flatnonzero(engine.legal_mask())[-1]))
    with pytest.raises(IllegalActionError, match="the episode is over"):
        engine.checked_step(0)


def test_the_aec_env_and_an_engine_can_be_subclassed_in_python() -> None:
    """A wrapper by subclass (reward shaping, logging) and a rule variant by subclass work in
    both builds: the compiled classes allow Python subclasses."""
    from card_envs.core.aec_env import CardAECEnv
    from card_envs.games.roy.engine import RoyEngine

    class CountingEngine(RoyEngine):
        def _apply(self, action: int) -> None:
            self.applied = getattr(self, "applied", 0) + 1
            super()._apply(action)

    class ShapedEnv(CardAECEnv):
        def step(self, action) -> None:
            self.steps_seen = getattr(self, "steps_seen", 0) + (action is not None)
            super().step(action)

    env = ShapedEnv(CountingEngine())
    env.reset(seed=1)
    for _agent in env.agent_iter():
        observation, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else _first_legal(observation["action_mask"]))
    assert env.steps_seen == env.engine.applied == env.engine.num_steps > 0
    assert env.clone().steps_seen == env.steps_seen


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_bare_engine_takes_the_numpy_integers_a_search_has_in_hand(game: str) -> None:
    """``np.flatnonzero(mask)[0]`` is a numpy integer: step(), the observations and
    illegal_reason() take it as the Python integer (in the compiled build too, whose int
    parameters alone would refuse it), and refuse what is not an integer by name."""
    python, numpy = make_engine(game), make_engine(game)
    python.reset(seed=4)
    numpy.reset(seed=4)
    out = np.empty(numpy.layout.size, np.float32)
    for _ in range(30):
        if python.done:
            break
        seat = python.current_player
        assert np.array_equal(numpy.observation(np.int64(seat)), python.observation(seat))
        numpy.write_observation(np.int32(seat), out)
        assert np.array_equal(out, python.observation(seat))
        assert numpy.illegal_reason(0, seat=np.int64(seat)) == python.illegal_reason(0, seat)
        action = np.flatnonzero(python.legal_mask())[-1]
        python.step(int(action))
        numpy.step(action)
        assert numpy.state_dict() == python.state_dict()
    numpy.reset(seed=4)
    for bad in (1.0, True, np.array([0]), None):
        with pytest.raises(TypeError, match="action must be a Python or numpy integer"):
            numpy.step(bad)
        with pytest.raises(TypeError, match="seat must be a Python or numpy integer"):
            numpy.observation(bad)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_render_tells_a_step_cap_from_a_tie(game: str) -> None:
    """A truncated episode has no result; its picture said "winners []", as a full tie's."""
    engine = make_engine(game, max_steps=5)
    engine.reset(seed=0)
    while not engine.done:  # the last legal action: the first is Memory-Uno's call
        engine.step(int(np.flatnonzero(engine.legal_mask())[-1]))
    assert engine.truncated
    assert "episode truncated after 5 steps: no result" in engine.render_text()


def test_render_metadata_has_fps() -> None:
    assert CardGymEnv.metadata["render_fps"] > 0
    assert _env_module("roy").env().metadata["render_fps"] > 0
    assert _env_module("dogpile").parallel_env().metadata["render_fps"] > 0


# -- configs -------------------------------------------------------------------------------------
def test_numpy_scalars_are_config_values_and_bools_are_not_seats() -> None:
    env = _env_module("roy").env(num_players=np.int64(3), target_score=np.int64(50),
                                 episode="game", memory=np.float64(0.3))
    assert env.engine.config["num_players"] == 3
    assert type(env.engine.config["num_players"]) is int
    assert CardGymEnv("roy", learner_seat=np.int64(1)).learner == 1
    with pytest.raises(ValueError, match="learner_seat"):
        CardGymEnv("roy", learner_seat=True)
    with pytest.raises(ValueError, match="num_players"):
        _env_module("roy").env(num_players=np.bool_(True))


# -- agents --------------------------------------------------------------------------------------
def test_user_agents_keep_their_stream_unless_seeded() -> None:
    agent = RandomAgent(5)
    state = agent.rng.bit_generator.state
    assert make_agent(agent, "roy") is agent
    assert agent.rng.bit_generator.state == state
    make_agent(agent, "roy", seed=6)
    assert agent.rng.bit_generator.state != state


def test_saved_policy_for_another_game_is_refused_when_loaded(tmp_path) -> None:
    from sb3_contrib import MaskablePPO

    from card_envs.agents.provenance import record_identity

    path = tmp_path / "dogpile_policy.zip"
    MaskablePPO("MlpPolicy", CardGymEnv("dogpile", num_players=2), n_steps=16, seed=0).save(path)
    record_identity(path, "dogpile", {"num_players": 2})  # what SB3's own save leaves out
    with pytest.raises(ValueError, match="dogpile_policy.zip.*roy"):
        make_agent(str(path), "roy")
    with pytest.raises(ValueError, match="dogpile_policy.zip"):
        CardGymEnv("roy", opponent=str(path))
    assert make_agent(str(path), "dogpile", {"num_players": 2}).name == path.name


def test_a_policy_agent_for_another_game_is_refused_like_its_file(tmp_path) -> None:
    """A ``PolicyAgent`` built by hand is held to the check its ``.zip`` path gets: it failed
    at its first move, deep inside SB3, without naming the policy or the game."""
    from sb3_contrib import MaskablePPO

    from card_envs.agents.policy import PolicyAgent

    model = MaskablePPO("MlpPolicy", CardGymEnv("roy"), n_steps=16, seed=0)
    agent = PolicyAgent(model, name="roy_2p")
    with pytest.raises(ValueError, match="policy 'roy_2p' .* roy with .*'num_players': 3"):
        CardGymEnv("roy", opponent=agent, num_players=3)
    with pytest.raises(ValueError, match="policy 'roy_2p' .* mega_memory"):
        make_agent(agent, "mega_memory")
    assert make_agent(agent, "roy") is agent


def test_a_policy_agent_needs_a_maskable_ppo_model() -> None:
    """``PolicyAgent(5)`` failed at its first move with an AttributeError, and a plain PPO
    model with "unexpected keyword argument 'action_masks'"."""
    from stable_baselines3 import PPO

    from card_envs.agents.policy import PolicyAgent

    ppo = PPO("MlpPolicy", CardGymEnv("roy"), n_steps=16, batch_size=16)
    for model, kind in [(5, "int"), (ppo, "PPO")]:
        with pytest.raises(TypeError, match=rf"takes a MaskablePPO model .* got {kind}:"):
            PolicyAgent(model)


def test_an_agent_class_instead_of_an_instance_is_named() -> None:
    """An Agent class is callable, so it passed for a ``(observation, action_mask)`` callable
    and failed at the opponent's first move with a TypeError from its ``__init__``."""
    with pytest.raises(ValueError, match=r"RandomAgent is an Agent class.*RandomAgent\(\)"):
        CardGymEnv("roy", opponent=RandomAgent)
    with pytest.raises(ValueError, match="an Agent class"):
        make_agent(RandomAgent, "roy")


def test_stochastic_policy_agent_samples_from_its_own_stream(tmp_path) -> None:
    from sb3_contrib import MaskablePPO

    from card_envs.agents.policy import PolicyAgent

    model = MaskablePPO("MlpPolicy", CardGymEnv("roy"), n_steps=16, seed=0)
    obs, _ = CardGymEnv("roy").reset(seed=0)
    mask = np.ones(model.action_space.n, dtype=np.int8)  # many choices, so sampling shows

    def draws(seed: int) -> list[int]:
        agent = PolicyAgent(model, deterministic=False)
        agent.seed(seed)
        return [agent.act(obs, mask) for _ in range(40)]

    torch.manual_seed(123)
    untouched = torch.rand(3)
    torch.manual_seed(123)
    first = draws(1)
    assert torch.equal(torch.rand(3), untouched)  # the user's torch stream is not touched ...
    torch.manual_seed(7)
    assert draws(1) == first  # ... and the draws follow the agent's seed alone
    assert all(mask[a] for a in first)
    assert len(set(first)) > 1  # it samples: an untrained policy is close to uniform
    assert isinstance(PolicyAgent(model), Agent)


def test_sample_rows_draws_in_proportion_to_weights_that_do_not_sum_to_one() -> None:
    """Self-play's snapshot opponents sample from exp(logits - max), which is not normalised."""
    from card_envs.agents.policy import sample_rows

    counts = np.bincount(sample_rows(np.tile([1.0, 0.0, 3.0], (4000, 1)),
                                     np.random.default_rng(0)), minlength=3)
    assert counts[1] == 0
    assert counts[2] / 4000 == pytest.approx(0.75, abs=0.03)


@pytest.mark.parametrize("kwargs, message", [({"games": 0}, "'games'"), ({"games": -5}, "'games'"),
                                             ({"games": 2.0}, "'games'"),
                                             ({"seed": -1}, "'seed'"), ({"seed": 1.5}, "'seed'")])
def test_head_to_head_refuses_a_game_count_or_seed_it_cannot_play(kwargs: dict,
                                                                   message: str) -> None:
    """``games=0`` returned a result whose ``win_rate`` divided by zero, ``games=-5`` a
    result of -5 games, and ``seed=-1`` failed inside numpy's seeding."""
    from card_envs.agents.arena import head_to_head

    with pytest.raises(ValueError, match=f"invalid value .* for {message}"):
        head_to_head("roy", "heuristic", **kwargs)


@pytest.mark.parametrize("argv", [["--games", "0"], ["--games", "-3"], ["--seed", "-1"]])
def test_demo_refuses_a_game_count_or_seed_it_cannot_play(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from card_envs import demo

    with pytest.raises(SystemExit):
        demo.main(argv)
    assert "invalid" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [1.0, np.array([1]), None])
def test_head_to_head_names_an_agent_that_answers_with_a_non_action(bad: object) -> None:
    """The arena holds an :class:`Agent` subclass to the envs' rule: a non-integer answer is a
    NotAnActionError (a TypeError too), as from the Gymnasium env's opponents; the arena raised
    a plain ValueError."""
    from card_envs.agents.arena import head_to_head

    class Shaky(Agent):
        name = "shaky"

        def act(self, observation: np.ndarray, action_mask: np.ndarray) -> object:
            return bad

    with pytest.raises(NotAnActionError, match="agent 'shaky' in seat 0: .*not an integer"):
        head_to_head("roy", Shaky(), games=1)

    class Masked(Agent):
        name = "masked"

        def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
            return int(np.flatnonzero(action_mask == 0)[0])

    with pytest.raises(IllegalActionError, match="agent 'masked' in seat 0: .*not legal"):
        head_to_head("roy", Masked(), games=1)


def test_play_episode_takes_any_agent_spec_and_one_per_seat() -> None:
    """The agents module says every tool takes an Agent, a callable or a spec string;
    ``play_episode`` took only Agents (a callable failed with AttributeError: no ``act``), one
    agent too few was an IndexError and one too many was silently ignored."""
    from card_envs.agents.arena import play_episode

    engine = make_engine("roy")
    first = play_episode(engine, [RandomAgent(0), RandomAgent(1)], seed=0)
    assert play_episode(engine, ["random", lambda obs, mask: _first_legal(mask)],
                        seed=0)["steps"] > 0
    assert play_episode(engine, [RandomAgent(0), RandomAgent(1)], seed=0) == first
    for agents in ([RandomAgent(0)], [RandomAgent(0)] * 3):
        with pytest.raises(ValueError, match=f"{len(agents)} agents for the 2 seats of roy"):
            play_episode(engine, agents, seed=0)


def test_head_to_head_rotates_the_candidates_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seat 0 always wins here: rotated through three seats, the candidate wins a third."""
    import card_envs.agents.arena as arena

    class Candidate(Agent):
        def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
            return _first_legal(action_mask)

    candidate, seats = Candidate(), []

    def seat_zero_wins(engine, agents: list[Agent], seed: int | None = None) -> dict:
        seats.append([a is candidate for a in agents].index(True))
        return {"winners": [0]}

    monkeypatch.setattr(arena, "play_episode", seat_zero_wins)
    result = arena.head_to_head("roy", candidate, "random", games=9, num_players=3)
    assert seats == [0, 1, 2] * 3
    assert (result.wins, result.shared, result.losses) == (3, 0, 6)

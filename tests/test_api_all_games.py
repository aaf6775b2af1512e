"""Properties every game must keep, run for every game, player count and listed variant."""

from __future__ import annotations

import importlib
import json
import warnings

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import card_envs
from card_envs.agents import RandomAgent
from card_envs.core.aec_env import IllegalActionError
from card_envs.core.conventions import IllegalActionWarning
from card_envs.games import GAMES, make_engine
from card_envs.versions import VERSIONS
from tests.conftest import VARIANT_IDS, VARIANTS
from tests.leak_check import assert_no_seat_sees_resampling
from tests.steer import STEERED_GAMES, play_move, position_tags, step_tagged

GAME_NAMES = list(GAMES)

#: Decisions a steered game's episode (tests/steer.py) keeps playing before a seat may end it:
#: enough for peeks, blind swaps, locks and penalty cards in every Memory-Uno variant.
KEEP_PLAYING = 80
#: ... and enough for the deck to run out and the graveyard to be reshuffled (at 80 to 370).
DEEP_PLAY = 400
#: What the shared checks must see in each game (``position_tags`` / ``step_tagged``), all of
#: them and at least one of the second set: the phases where hidden cards are seen, moved or
#: drawn. Measured with the tests' own seeds; a change that makes play shallow fails here.
MUST_REACH: dict[str, tuple[set[str], set[str]]] = {
    "roy": ({"first", "continue", "wild"}, {"ace_chain", "king7", "reshuffle"}),
    "mega_memory": ({"first", "side", "discard"}, {"side", "discard"}),
    "memory_uno": ({"turn", "drawn", "window", "penalty", "lock"},
                   {"peek_own", "peek_other", "look_any", "swap_first", "swap_second"}),
    "deluxe_memory": ({"pick first card", "pick second card", "unmatched pair: show or hide"},
                      {"black pair: who returns tokens", "red pair: who gains tokens",
                       "2: look at two cards to swap", "4: choose two cards to look at",
                       "Jokers: rearrange cards", "Ace: reveal a card"}),
    "dogpile": ({"play", "shuffle", "round3"}, {"sniff", "shuffle"}),
}


def _assert_reached(game: str, reached: set[str], deepest: int, depth: int) -> None:
    every, some = MUST_REACH[game]
    assert every <= reached and some & reached, (
        f"the checks never saw {sorted(every - reached)} / any of {sorted(some)}")
    assert deepest >= depth, f"the checks saw no position deeper than {deepest} decisions"


def _env_module(game: str):
    return importlib.import_module(GAMES[game].module)


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_pettingzoo_api(game: str, config: dict) -> None:
    api_test(_env_module(game).env(**config), num_cycles=300)


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_pettingzoo_seed(game: str, config: dict) -> None:
    seed_test(lambda: _env_module(game).env(**config), num_cycles=300)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_registries(game: str) -> None:
    """Gymnasium's registry always; PettingZoo's where it has one (1.27 on: 1.24 to 1.26, which
    AgileRL pins, have none, and ``import card_envs`` must not fail there)."""
    import pettingzoo

    from card_envs.core.registration import pettingzoo_has_registry

    spec = GAMES[game]
    has_registry = pettingzoo_has_registry()
    old = tuple(int(x) for x in pettingzoo.__version__.split(".")[:2]) < (1, 27)
    assert has_registry != old, pettingzoo.__version__
    if has_registry:
        env = pettingzoo.make("aec", spec.pz_id)
        env.reset(seed=0)
        assert env.agent_selection in env.agents
    genv = gymnasium.make(spec.gym_id)
    obs, info = genv.reset(seed=0)
    assert genv.observation_space.contains(obs)
    assert info["action_mask"].any()
    genv2 = gymnasium.make(f"card_envs:{spec.gym_id}")
    assert genv2.observation_space == genv.observation_space
    assert card_envs.get_game(game) is spec
    if spec.parallel and has_registry:
        penv = pettingzoo.make("parallel", spec.pz_id)
        observations, infos = penv.reset(seed=0)
        assert set(observations) == set(penv.agents)


#: Every Gymnasium id this package registers that makes an env (a new or versioned id is
#: checked too); a retired version's id only raises RetiredEnvError (tests/test_versions.py).
RETIRED_GYM_IDS = {v.gym_id for versions in VERSIONS.values() for v in versions[:-1]}
GYM_IDS = sorted(i for i in gymnasium.registry
                 if i.startswith("card_envs/") and i not in RETIRED_GYM_IDS)


def test_every_game_is_registered_with_gymnasium() -> None:
    assert {GAMES[g].gym_id for g in GAME_NAMES} <= set(GYM_IDS)


@pytest.mark.parametrize("gym_id", GYM_IDS)
def test_gymnasium_and_sb3_env_checkers(gym_id: str) -> None:
    """The two checks every Gymnasium user runs first, exactly as they run them: the
    registered id with no arguments. Both step uniformly sampled (mostly illegal) actions,
    which the default ends as illegal moves; that warning is the only one allowed."""
    from gymnasium.utils.env_checker import check_env as gym_check
    from stable_baselines3.common.env_checker import check_env as sb3_check

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gym_check(gymnasium.make(gym_id).unwrapped)
        sb3_check(gymnasium.make(gym_id))
    others = [f"{w.category.__name__}: {w.message}" for w in caught
              if not issubclass(w.category, IllegalActionWarning)]
    assert others == []
    assert any(issubclass(w.category, IllegalActionWarning) for w in caught)


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_random_play_conserves_cards_and_ends(game: str, config: dict) -> None:
    """Every sampled legal action is accepted, invariants hold after every step, episodes end."""
    engine = make_engine(game, **config)
    rng = np.random.default_rng(7)
    reached: set[str] = set()
    for episode in range(30):
        engine.reset(seed=episode)
        engine.check_invariants()
        steps = 0
        # The first episode of a steered game keeps playing long enough to run the deck out.
        deep = DEEP_PLAY if episode == 0 else 0
        while not engine.done:
            legal = np.flatnonzero(engine.legal_mask())
            assert legal.size > 0, "no legal action in a live position"
            reached |= step_tagged(engine, play_move(engine, rng, deep))
            engine.check_invariants()
            steps += 1
        assert engine.terminated or engine.truncated
        assert steps <= engine.step_cap
        assert not engine.legal_mask().any(), "a finished episode still offers actions"
    if game in STEERED_GAMES:  # cards moved by every route, the reshuffled graveyard too
        assert {"penalty", "reshuffle"} <= reached, sorted(reached)
    snapshot = engine.state_dict()
    engine.reset(seed=0)
    assert engine.legal_mask().any()
    engine.load_state_dict(snapshot)
    assert not engine.legal_mask().any(), "a restored finished episode offers actions"


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_observation_matches_write_observation_and_is_owned(game: str, config: dict) -> None:
    """The two observation paths (a new array for the envs, a caller's buffer for batched
    training) agree everywhere, and the new array shares no memory with the engine: writing
    to it changes nothing, and the engine's later moves do not change it (a replay buffer
    keeps it)."""
    engine = make_engine(game, **config)
    rng = np.random.default_rng(11)
    buffer = np.empty(engine.layout.size, dtype=np.float32)
    reached, deepest = set(), 0
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    for episode in range(4):
        engine.reset(seed=episode)
        while True:
            held, kept = kept, []
            for seat in range(engine.num_players):
                fresh = engine.observation(seat)
                engine.write_observation(seat, buffer)
                np.testing.assert_array_equal(fresh, buffer)
                fresh.fill(-7.0)
                again = engine.observation(seat)
                np.testing.assert_array_equal(again, buffer)
                kept.append((again, buffer.copy()))
            for array, copy in held:  # the last position's, after this one's were handed out
                np.testing.assert_array_equal(array, copy, "a handed-out observation changed")
            reached |= position_tags(engine)
            deepest = max(deepest, engine.num_steps)
            if engine.done:
                break
            reached |= step_tagged(engine, play_move(engine, rng, KEEP_PLAYING))
    _assert_reached(game, reached, deepest, 40)


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_no_leak_under_resampling(game: str, config: dict) -> None:
    """A seat's observation is unchanged when everything it cannot know is redrawn: a random
    quarter of the positions of 8 episodes, every seat, at most 400 positions, plus the first
    few positions of every rarer kind (:data:`RARE_PROBES`)."""
    assert_no_leak(game, config, episodes=8, probe_p=0.25, max_probes=400)


@pytest.mark.slow
@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_no_leak_every_position(game: str, config: dict) -> None:
    assert_no_leak(game, config, episodes=50, probe_p=1.0, max_probes=10**9)


#: Beyond the sampled probes, a position is also probed while one of its tags has been probed
#: fewer than this many times: rare phases (a Dogpile sniff in 6-player play, where the
#: sampled probes run out in the first episodes) are checked whenever play reaches them.
RARE_PROBES = 4
#: What the no-leak checks must probe in every variant of a game, beyond :data:`MUST_REACH`:
#: every phase or event where a hidden card is seen, moved or drawn, that the test's play
#: reaches in every variant (measured with the test's seeds); Deluxe Memory: see
#: :func:`_must_probe`.
MUST_PROBE: dict[str, set[str]] = {
    "memory_uno": {"turn", "drawn", "window", "peek_own", "peek_other", "swap_first",
                   "swap_second", "give", "penalty", "lock", "reshuffle"},
    "dogpile": {"play", "sniff", "shuffle", "round2", "round3"},
}
#: Deluxe Memory decisions that never reach an agent with two players (one possible target).
DELUXE_NOT_WITH_TWO = {"black pair: who returns tokens", "Ace: who loses 1",
                       "Queen: who receives six"}


def _must_probe(game: str, config: dict) -> set[str]:
    """Deluxe Memory: every decision its variant has (the Mixed Chart's, or Simplicity's; the
    jokers' with Jokin' Around), each a position where the grid's hidden cards are in play."""
    if game != "deluxe_memory":
        return MUST_PROBE.get(game, set())
    every = set(importlib.import_module("card_envs.games.deluxe_memory.engine").PHASE_NAMES)
    simplicity = {p for p in every if p.startswith("Simplicity")}
    chart = every - simplicity - {"pick first card", "pick second card",
                                  "unmatched pair: show or hide", "red pair: who gains tokens",
                                  "black pair: who returns tokens", "Jokers: rearrange cards"}
    out = every - (chart if config.get("simplicity") else simplicity)
    if not config.get("jokin_around"):
        out.discard("Jokers: rearrange cards")
    if config.get("num_players", 3) == 2:
        out -= DELUXE_NOT_WITH_TWO
    return out


def assert_no_leak(game: str, config: dict, episodes: int, probe_p: float,
                   max_probes: int) -> None:
    engine = make_engine(game, **config)
    rng = np.random.default_rng(3)
    # The rare-tag probes draw from their own stream: play and sampled probes keep their draws.
    rare_rng = np.random.default_rng(4)
    probes, deepest, reached = 0, 0, set()
    probed: dict[str, int] = {}
    for episode in range(episodes):
        engine.reset(seed=100 + episode)
        events: set[str] = set()  # what this episode did so far that no position shows
        # The first episode of a steered game plays on until the deck runs out (reshuffles).
        keep_playing = DEEP_PLAY if episode == 0 and game in STEERED_GAMES else KEEP_PLAYING
        while not engine.done:
            tags = position_tags(engine) | events
            if probes < max_probes and rng.random() < probe_p:
                probes += 1
                probe_rng = rng
            elif min(probed.get(t, 0) for t in tags) < RARE_PROBES:
                probe_rng = rare_rng
            else:
                probe_rng = None
            if probe_rng is not None:
                reached |= tags
                for t in tags:
                    probed[t] = probed.get(t, 0) + 1
                deepest = max(deepest, engine.num_steps)
                assert_no_seat_sees_resampling(engine, probe_rng)
            events |= step_tagged(engine, play_move(engine, rng, keep_playing))
    assert probes > 0
    _assert_reached(game, reached, deepest, 40)
    missed = _must_probe(game, config) - reached
    assert not missed, f"the no-leak checks never probed {sorted(missed)}"


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_resampling_changes_hidden_cards(game: str, config: dict) -> None:
    """The determinization is not a no-op: the full state changes for some seed."""
    engine = make_engine(game, **config)
    engine.reset(seed=5)
    base = np.empty(engine.state_layout.size, np.float32)
    engine.write_state(base)
    changed = False
    for s in range(20):
        probe = engine.clone()
        probe.resample_hidden(0, np.random.default_rng(s))
        out = np.empty_like(base)
        probe.write_state(out)
        changed |= not np.array_equal(base, out)
    assert changed


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_resampling_redraws_future_chance_too(game: str, config: dict) -> None:
    """Later shuffles and deals are hidden from every seat: a determinization reseeds the
    game's random streams from its own rng, so its worlds do not share the real game's future
    (they did: every world reshuffled ROY's deck into the real order). The same seed gives the
    same world; a seed may stand for a Generator."""
    engine = make_engine(game, **config)
    engine.reset(seed=5)

    def streams(e) -> tuple:
        return (e.rng.bit_generator.state["state"]["state"],
                e.tracker.rng.bit_generator.state["state"]["state"] if e.tracker else None)

    worlds = []
    for s in (1, 2, 1):
        world = engine.clone()
        world.resample_hidden(0, s)
        worlds.append(streams(world))
    assert worlds[0] == worlds[2] and worlds[0] != worlds[1]
    real = streams(engine)
    assert worlds[0][0] != real[0] and (real[1] is None or worlds[0][1] != real[1])


def _move_that_keeps_playing(engine, rng: np.random.Generator) -> int:
    """A random legal action, one that does not end the episode if there is one (random
    Memory-Uno seats call in their first turn: the episode would be over before any check)."""
    legal = rng.permutation(np.flatnonzero(engine.legal_mask()))
    for a in legal[:-1]:
        probe = engine.clone()
        probe.step(int(a))
        if not probe.done:
            return int(a)
    return int(legal[-1])


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_snapshot_round_trip_and_clone(game: str, config: dict) -> None:
    engine = make_engine(game, **config)
    engine.reset(seed=11)
    rng = np.random.default_rng(11)
    for _ in range(20):
        if engine.done:
            break
        engine.step(_move_that_keeps_playing(engine, rng))
    assert not engine.done, "the snapshot must be of a position still in play"
    snap = json.loads(json.dumps(engine.state_dict()))
    other = make_engine(game, **config)
    other.load_state_dict(snap)
    assert other.state_dict() == engine.state_dict()
    # The two now play identically, and a clone is independent of its original.
    clone = engine.clone()
    played = 0
    for _ in range(40):
        if engine.done:
            break
        a = _move_that_keeps_playing(engine, rng)
        engine.step(a)
        other.step(a)
        played += 1
    assert played > 0
    assert other.state_dict() == engine.state_dict()
    assert clone.state_dict() != engine.state_dict()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_snapshot_rejects_mismatch(game: str) -> None:
    engine = make_engine(game)
    engine.reset(seed=0)
    snap = engine.state_dict()
    with pytest.raises(ValueError, match="not an engine snapshot"):
        engine.load_state_dict({"bogus": 1})
    other_game = next((g for g in GAMES if g != game), None)
    if other_game:
        with pytest.raises(ValueError, match="game"):
            make_engine(other_game).load_state_dict(snap)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_bad_config_and_actions_raise_clearly(game: str) -> None:
    env_fn = _env_module(game).env
    with pytest.raises(ValueError, match="unknown config key 'num_playrs'"):
        env_fn(num_playrs=2)
    with pytest.raises(ValueError, match="num_players"):
        env_fn(num_players=99)
    with pytest.raises(ValueError, match="memory"):
        env_fn(memory="sometimes")
    env = env_fn(illegal_action="error")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(env.engine.num_actions)
    if not mask.all():
        with pytest.raises(IllegalActionError, match="not legal"):
            env.step(int(np.flatnonzero(mask == 0)[0]))
    with pytest.raises(ValueError, match="malformed stacked deck"):
        env.reset(seed=0, options={"deck": ["AS", "AS"]})


@pytest.mark.parametrize("game", GAME_NAMES)
def test_an_illegal_move_ends_the_episode_by_default(game: str) -> None:
    """PettingZoo classic's convention is the default: -1 to the offender, 0 to the others,
    every seat terminated (not truncated), one warning, the reason in every seat's info."""
    env = _env_module(game).env()
    env.reset(seed=0)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0]) if not mask.all() else env.engine.num_actions
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.step(bad)
        for _ in env.agent_iter():
            env.step(None)
    assert [w.category for w in caught] == [IllegalActionWarning]
    assert "Illegal move made" in str(caught[0].message)
    assert caught[0].filename == __file__  # attributed to the line that stepped


@pytest.mark.parametrize("game", GAME_NAMES)
def test_illegal_action_penalty_mode(game: str) -> None:
    env = _env_module(game).env(illegal_action="penalty")
    env.reset(seed=0)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0]) if not mask.all() else env.engine.num_actions
    with pytest.warns(IllegalActionWarning):
        env.step(bad)
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env._cumulative_rewards[agent] == -1.0
    assert all(v == 0.0 for a, v in env._cumulative_rewards.items() if a != agent)
    assert all(info["illegal_action"] == env.engine.illegal_reason(bad)
               for info in env.infos.values())


@pytest.mark.parametrize("game", GAME_NAMES)
def test_after_a_penalty_no_seat_may_act(game: str) -> None:
    """A penalty ends the episode, so every mask is the ended episode's all ones (nothing is
    legal; a masked policy gets no empty row), the offender's included."""
    env = _env_module(game).env(illegal_action="penalty")
    env.reset(seed=0)
    with pytest.warns(IllegalActionWarning):
        env.step(env.engine.num_actions)
    for agent in env.agents:
        assert env.observe(agent)["action_mask"].all(), agent
    assert env.last()[0]["action_mask"].all(), env.agent_selection  # the engine is live


@pytest.mark.parametrize("game", GAME_NAMES)
def test_agents_that_stepped_none_after_a_penalty_can_still_be_observed(game: str) -> None:
    """After a normal end, an agent that has stepped None can still be observed (a final
    look, as in PettingZoo's classic envs); after a penalty it raised a bare KeyError."""
    env = _env_module(game).env(illegal_action="penalty")
    env.reset(seed=0)
    with pytest.warns(IllegalActionWarning):
        env.step(env.engine.num_actions)
    for _ in env.agent_iter():
        env.step(None)
    for agent in env.possible_agents:
        obs = env.observe(agent)
        assert obs["action_mask"].all(), agent
        np.testing.assert_array_equal(obs["observation"],
                                      env.engine.observation(env.agent_name_mapping[agent]))


def test_penalty_replaces_what_the_offender_earned_since_its_last_step() -> None:
    """TerminateIllegal: the offender's cumulative reward is reset to 0 before the -1."""
    env = _env_module("memory_uno").env(num_players=3, reward="score", episode="game",
                                        illegal_action="penalty")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while True:
        obs, reward, *_ = env.last()
        if reward != 0.0:  # points paid to this seat on the other seats' moves
            break
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    agent = env.agent_selection
    with pytest.warns(IllegalActionWarning):
        env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert env._cumulative_rewards[agent] == -1.0
    finals = {}
    for seat in env.agent_iter():
        finals[seat] = env.last()[1]
        env.step(None)
    assert finals[agent] == -1.0


@pytest.mark.parametrize("game", GAME_NAMES)
def test_only_the_seat_to_act_gets_a_mask(game: str) -> None:
    """The AEC env's promise: a seat that is not to act observes an all-zero action mask."""
    env = _env_module(game).env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    checked, out_of_turn = 0, 0
    for _ in range(30):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        np.testing.assert_array_equal(obs["action_mask"], env.engine.legal_mask())
        for agent in env.agents:
            if agent != env.agent_selection:
                assert not env.observe(agent)["action_mask"].any(), agent
        checked += 1
        if game == "memory_uno":  # a reaction window: a seat acts in another seat's turn
            out_of_turn += env.engine.current_player != env.engine.turn_player
        env.step(play_move(env.engine, rng, KEEP_PLAYING))
    if game == "memory_uno":  # steered: 30 positions, not the 7 before its first seat called
        assert checked == 30 and out_of_turn, (checked, out_of_turn)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_action_names_round_trip(game: str) -> None:
    engine = make_engine(game)
    for a in range(engine.num_actions):
        assert engine.action_id(engine.action_name(a)) == a
    with pytest.raises(ValueError, match="unknown action name"):
        engine.action_id("no-such-action")
    assert engine.action_name(np.int64(1)) == engine.action_name(np.array(1)) == \
        engine.action_names[1]


@pytest.mark.parametrize("bad", [1.7, True, "3", None, np.array([1]), -1, 10_000])
def test_action_name_refuses_what_is_not_an_action(bad: object) -> None:
    """``action_name`` took ``int()`` of its argument: 1.7 and True named action 1, "3" action
    3, and None failed with int()'s TypeError. It follows step()'s rule for what an action is."""
    env = importlib.import_module(GAMES["roy"].module).env()
    with pytest.raises(ValueError, match="action .* (not an integer action|outside 0..69)"):
        env.action_name(bad)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_gym_env_delivers_terminal_reward_and_masks(game: str) -> None:
    from card_envs.core.gym_env import CardGymEnv

    env = CardGymEnv(game, opponent="random", learner_seat="random")
    agent = RandomAgent(0)
    total_rewards = []
    for ep in range(10):
        obs, info = env.reset(seed=ep)
        assert info["action_mask"].any()
        done, ret = False, 0.0
        while not done:
            assert env.action_masks().any()
            obs, r, term, trunc, info = env.step(agent.act(obs, info["action_mask"]))
            ret += r
            done = term or trunc
        result = env.result()
        assert info["winners"].shape == (env.engine.num_players,)
        assert np.flatnonzero(info["winners"]).tolist() == result["winners"]
        if env.engine.reward_mode == "win" and env.engine.terminated:
            expected = env.engine.win_rewards(result["winners"])[env.learner]
            assert ret == pytest.approx(expected)
        total_rewards.append(ret)
    assert any(r != 0 for r in total_rewards)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_same_seed_same_game_in_another_process(game: str) -> None:
    import subprocess
    import sys
    from pathlib import Path

    # Steered play (tests/steer.py): a random Memory-Uno seat called in its first turn, so the
    # two processes compared a deal and nothing that the game's own stream drew later.
    code = (
        "import numpy as np, json\n"
        "from card_envs.games import make_engine\n"
        "from tests.steer import play_move\n"
        f"e = make_engine({game!r}); e.reset(seed=1234); r = np.random.default_rng(1)\n"
        "for _ in range(60):\n"
        "    if e.done: break\n"
        f"    e.step(play_move(e, r, {KEEP_PLAYING}))\n"
        "print(json.dumps(e.state_dict(), sort_keys=True))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    e = make_engine(game)
    e.reset(seed=1234)
    r = np.random.default_rng(1)
    for _ in range(60):
        if e.done:
            break
        e.step(play_move(e, r, KEEP_PLAYING))
    assert json.loads(out.stdout) == json.loads(json.dumps(e.state_dict(), sort_keys=True))
    assert e.num_steps >= 40, f"the episode ended after {e.num_steps} decisions"

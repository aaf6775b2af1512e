"""What researchers plug the envs into, used the way those tools' own docs use them:
Stable-Baselines3's vector envs, wrappers and saved models; Gymnasium's vector API and
wrappers; PettingZoo's wrappers, conversions and tests; copies and pickles of live envs.

Workers that start a fresh interpreter (SB3's default ``forkserver``, ``spawn``) know the ids
only if the main module imports ``card_envs``: pytest's does not, so those tests name the
``card_envs:`` form the README gives for that case."""

from __future__ import annotations

import copy
import importlib
import pickle
import warnings

import numpy as np
import pytest
from pettingzoo import AECEnv

from card_envs.games import GAMES

GAME_NAMES = list(GAMES)
#: Memory-Uno's rounds often end within a few random decisions; whole games play on.
LONG = {"memory_uno": {"episode": "game"}}
#: Episodes of a few hundred random decisions at most: traces see them end and the next dealt.
SHORT = {**LONG, "deluxe_memory": {"num_players": 2},
         "dogpile": {"ticks_per_second": 1, "round_seconds": (4, 3, 2)}}


def _env_module(game: str):
    return importlib.import_module(GAMES[game].module)


def _masked_choice(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


# -- Stable-Baselines3 / sb3-contrib -----------------------------------------------------------
def _learn_with_masks(venv, steps: int):
    """MaskablePPO learns on ``venv``; every action it took was allowed by the mask it got
    through the wrappers (``env_method("action_masks")``), and those masks were real ones."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0,
                        device="cpu")
    model.learn(steps)
    buffer = model.rollout_buffer
    actions = buffer.actions.reshape(-1).astype(int)
    masks = buffer.action_masks.reshape(len(actions), -1).astype(bool)
    assert masks[np.arange(len(actions)), actions].all()
    assert not masks.all(1).any()
    return model


def _subproc_params() -> list:
    """ROY runs by default; the other games (a few seconds each: every worker imports torch)
    under ``-m slow``."""
    fast = {("roy", None), ("roy", "spawn")}
    return [pytest.param(game, method, id=f"{game}-{method or 'default'}",
                         marks=() if (game, method) in fast else pytest.mark.slow)
            for game in GAME_NAMES for method in (None, "spawn")]


@pytest.mark.parametrize(("game", "start_method"), _subproc_params())
def test_maskable_ppo_trains_and_evaluates_on_sb3_subproc_vec_env(game: str,
                                                                   start_method: str | None
                                                                   ) -> None:
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = make_vec_env(f"card_envs:{GAMES[game].gym_id}", n_envs=2, seed=0,
                        vec_env_cls=SubprocVecEnv,
                        vec_env_kwargs={"start_method": start_method})
    try:
        venv.reset()
        masks = get_action_masks(venv)
        assert masks.shape == (2, venv.action_space.n) and masks.any(1).all()
        model = _learn_with_masks(venv, 128)
        mean, _ = evaluate_policy(model, venv, n_eval_episodes=2, use_masking=True,
                                  warn=False)
        assert -1.0 <= mean <= 1.0
    finally:
        venv.close()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_sb3_vec_wrappers_keep_masks_and_a_saved_model_predicts(game: str, tmp_path) -> None:
    """VecMonitor, VecNormalize and VecFrameStack pass ``env_method("action_masks")`` through:
    MaskablePPO trains and evaluates on the stack, and a saved model, loaded with the env,
    predicts the same legal actions."""
    import gymnasium
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import (
        DummyVecEnv,
        VecFrameStack,
        VecMonitor,
        VecNormalize,
    )

    import card_envs  # noqa: F401  (registers the ids)

    gym_id = GAMES[game].gym_id
    inner = DummyVecEnv([lambda: gymnasium.make(gym_id, opponent="heuristic")] * 2)
    venv = VecFrameStack(VecNormalize(VecMonitor(inner)), n_stack=2)
    venv.seed(0)
    obs = venv.reset()
    assert obs.shape == (2, 2 * inner.observation_space.shape[0])
    expected = np.stack([env.unwrapped.action_masks() for env in inner.envs])
    np.testing.assert_array_equal(get_action_masks(venv), expected)
    model = _learn_with_masks(venv, 128)
    mean, _ = evaluate_policy(model, venv, n_eval_episodes=2, use_masking=True, warn=False)
    assert -1.0 <= mean <= 1.0

    model.save(tmp_path / "model.zip")
    loaded = MaskablePPO.load(tmp_path / "model.zip", env=venv, device="cpu")
    obs, masks = venv.reset(), get_action_masks(venv)
    actions, _ = loaded.predict(obs, action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(
        actions, model.predict(obs, action_masks=masks, deterministic=True)[0])
    assert masks[np.arange(2), actions].all()


# -- Gymnasium's vector API and wrappers -------------------------------------------------------
def _vector_trace(venv, steps: int) -> list:
    """Steps with actions drawn from the batched ``infos["action_mask"]``, checking
    Gymnasium 1.x's next-step autoreset: the step after an episode ends deals the next one
    (reset's info, ``redeals``) and pays nothing, whatever action it was given."""
    rng = np.random.default_rng(0)
    n = venv.num_envs
    obs, infos = venv.reset(seed=[11, 12])
    out = [obs.tobytes()]
    ended = np.zeros(n, bool)
    episodes = 0
    for _ in range(steps):
        masks = infos["action_mask"]
        assert masks.shape == (n, venv.single_action_space.n)
        actions = np.array([_masked_choice(rng, m) for m in masks])
        obs, rewards, terms, truncs, infos = venv.step(actions)
        redealt = infos.get("_redeals", np.zeros(n, bool))
        np.testing.assert_array_equal(redealt, ended)
        assert not rewards[ended].any() and not terms[ended].any()
        ended = terms | truncs
        episodes += int(ended.sum())
        out.append((obs.tobytes(), rewards.tolist(), terms.tolist(), truncs.tolist()))
    assert episodes >= 2, "no episode ended: autoreset went unchecked"
    return out


@pytest.mark.parametrize("game", GAME_NAMES)
def test_gymnasium_vector_envs_batch_masks_and_autoreset(game: str) -> None:
    """``make_vec`` (sync and async) and Sync/AsyncVectorEnv over ``gymnasium.make`` thunks
    play the same games from the same seeds, in this process or in workers."""
    import gymnasium
    from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

    import card_envs  # noqa: F401  (registers the ids)

    gym_id = GAMES[game].gym_id
    config = {"opponent": "heuristic", **SHORT.get(game, {})}
    steps = 150 if game in ("deluxe_memory", "dogpile", "mega_memory") else 60
    venvs = [
        gymnasium.make_vec(gym_id, num_envs=2, vectorization_mode="sync", **config),
        gymnasium.make_vec(gym_id, num_envs=2, vectorization_mode="async", **config),
        SyncVectorEnv([lambda: gymnasium.make(gym_id, **config)] * 2),
        AsyncVectorEnv([lambda: gymnasium.make(f"card_envs:{gym_id}", **config)] * 2),
    ]
    try:
        traces = [_vector_trace(venv, steps) for venv in venvs]
    finally:
        for venv in venvs:
            venv.close()
    assert all(trace == traces[0] for trace in traces[1:])


def test_gymnasium_same_step_autoreset_and_episode_statistics() -> None:
    """With ``AutoresetMode.SAME_STEP`` the ended episode's last observation and info (its
    result) are in ``final_obs`` / ``final_info``, and the mask given is the new deal's."""
    import gymnasium
    from gymnasium.vector import AutoresetMode
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    import card_envs  # noqa: F401  (registers the ids)

    venv = RecordEpisodeStatistics(gymnasium.make_vec(
        "card_envs/Roy-v1", num_envs=2, vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}))
    rng = np.random.default_rng(0)
    _, infos = venv.reset(seed=0)
    returns, ended = np.zeros(2), 0
    for _ in range(100):
        actions = np.array([_masked_choice(rng, m) for m in infos["action_mask"]])
        _, rewards, terms, truncs, infos = venv.step(actions)
        returns += rewards
        for i in np.flatnonzero(terms | truncs):
            ended += 1
            assert infos["final_info"]["_winners"][i] and infos["final_obs"][i] is not None
            assert infos["final_info"]["winners"][i].shape == (2,)
            assert infos["_redeals"][i] and not infos["action_mask"][i].all()
            assert infos["episode"]["r"][i] == pytest.approx(returns[i])
            returns[i] = 0
    assert ended >= 2


def test_gymnasium_make_vec_s_fresh_workers_need_no_import() -> None:
    """``make_vec`` hands its workers the registered entry point, not the id: spawned workers
    build the env without importing ``card_envs`` first (the README says so)."""
    import gymnasium

    import card_envs  # noqa: F401  (registers the ids)

    venv = gymnasium.make_vec("card_envs/Roy-v1", num_envs=2, vectorization_mode="async",
                              vector_kwargs={"context": "spawn"})
    try:
        _, infos = venv.reset(seed=0)
        assert infos["action_mask"].any(1).all()
    finally:
        venv.close()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_gymnasium_wrappers(game: str) -> None:
    """TimeLimit (``max_episode_steps``), RecordEpisodeStatistics, FlattenObservation and
    NormalizeObservation over the made env; ``get_wrapper_attr`` reaches ``action_masks``."""
    import gymnasium
    from gymnasium.wrappers import (
        FlattenObservation,
        NormalizeObservation,
        RecordEpisodeStatistics,
    )

    import card_envs  # noqa: F401  (registers the ids)

    made = gymnasium.make(GAMES[game].gym_id, max_episode_steps=5)
    env = RecordEpisodeStatistics(NormalizeObservation(FlattenObservation(made)))
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    truncated = 0
    for _ in range(60):
        mask = env.get_wrapper_attr("action_masks")()
        np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
        obs, _, term, trunc, info = env.step(_masked_choice(rng, mask))
        assert obs.shape == env.observation_space.shape
        if term or trunc:
            assert info["episode"]["l"] <= 5
            truncated += trunc and info["episode"]["l"] == 5
            obs, info = env.reset()
    assert truncated


# -- PettingZoo: wrappers, conversions, its own tests ------------------------------------------
@pytest.mark.parametrize("game", GAME_NAMES)
def test_pettingzoo_s_classic_wrapper_chain_passes_its_api_test(game: str) -> None:
    """PettingZoo's classic envs wrap their raw env in TerminateIllegal, AssertOutOfBounds and
    OrderEnforcing: the same chain over ours passes PettingZoo's api_test."""
    from pettingzoo.test import api_test
    from pettingzoo.utils import wrappers

    raw = _env_module(game).raw_env(**LONG.get(game, {}))
    env = wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(
        wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)))
    api_test(env, num_cycles=100)


def test_terminate_illegal_wrapper_s_penalty_is_paid_once() -> None:
    """PettingZoo's TerminateIllegalWrapper ends the episode by setting ``rewards`` itself.
    The dead-agent steps that follow clear ``rewards`` as PettingZoo's base class does, so a
    loop that sums ``env.rewards`` after every step counts the -1 once."""
    from pettingzoo.utils.wrappers import TerminateIllegalWrapper

    raw = _env_module("dogpile").raw_env(num_players=4)
    env = TerminateIllegalWrapper(raw, illegal_reward=-1)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while env.agent_selection != "player_2":  # an offender the dead steps do not remove first
        env.step(_masked_choice(rng, env.last()[0]["action_mask"]))
    illegal = int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's "illegal move made"
        env.step(illegal)
    summed = dict(raw.rewards)
    ref = copy.deepcopy(raw)
    while raw.agents:
        env.step(None)
        AECEnv._was_dead_step(ref, None)
        assert raw.rewards == ref.rewards
        assert raw.agent_selection == ref.agent_selection
        for agent, reward in raw.rewards.items():
            summed[agent] += reward
    assert summed == {"player_0": 0, "player_1": 0, "player_2": -1, "player_3": 0}


def _illegal_move_trace(env) -> tuple[list, list, list]:
    """Seeded legal moves until a seat other than the first is to act, an illegal move by it,
    then the dead-agent steps: what each agent's ``last()`` said, the step rewards, and the
    warnings (Python's, and PettingZoo's EnvLogger queue)."""
    from pettingzoo.utils.env_logger import EnvLogger

    env.reset(seed=3)
    rng = np.random.default_rng(3)
    while env.agent_selection == env.possible_agents[0]:
        env.step(_masked_choice(rng, env.last()[0]["action_mask"]))
    mask = env.last()[0]["action_mask"]
    EnvLogger.flush()
    trace: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.step(int(np.flatnonzero(mask == 0)[0]))
        for agent in env.agent_iter():
            _, reward, terminated, truncated, _ = env.last()
            trace.append((agent, reward, terminated, truncated, dict(env.unwrapped.rewards)))
            env.step(None)
    trace.append(env.agent_selection)
    return trace, [w.category for w in caught], list(EnvLogger.mqueue)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_default_illegal_move_is_terminate_illegal_wrapper_s(game: str) -> None:
    """env()'s built-in convention plays out as PettingZoo classic's TerminateIllegalWrapper
    over the raw env, move for move: the agent order of the dead steps (the first agent first,
    the offender last to be selected), each agent's final reward, the step rewards. Where it
    differs, on purpose: truncations stay False (an illegal move loses the game; it is not a
    time limit), and the warning is one Python IllegalActionWarning, not an EnvLogger line."""
    from pettingzoo.utils.wrappers import TerminateIllegalWrapper

    from card_envs.core.conventions import IllegalActionWarning

    config = LONG.get(game, {})
    ours, our_warnings, our_log = _illegal_move_trace(_env_module(game).env(**config))
    raw = _env_module(game).raw_env(illegal_action="error", **config)
    theirs, their_warnings, their_log = _illegal_move_trace(
        TerminateIllegalWrapper(raw, illegal_reward=-1))
    assert [step[:3] + step[4:] for step in ours[:-1]] == \
        [step[:3] + step[4:] for step in theirs[:-1]]
    assert ours[-1] == theirs[-1]
    assert sorted(step[1] for step in ours[:-1]) == [-1.0] + [0.0] * (len(ours) - 2)
    assert not any(step[3] for step in ours[:-1]) and all(step[3] for step in theirs[:-1])
    assert our_warnings == [IllegalActionWarning] and our_log == []
    assert their_warnings == [] and any("Illegal move made" in m for m in their_log)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_aec_to_parallel_refuses_the_turn_based_envs_by_their_metadata(game: str) -> None:
    """PettingZoo's aec_to_parallel needs every agent to act once per cycle; these games (the
    AEC view of Dogpile too, whose tick order rotates) do not, and say so in their metadata,
    so PettingZoo refuses them with its own message instead of failing mid-episode."""
    from pettingzoo.utils.conversions import aec_to_parallel

    env = _env_module(game).env()
    assert env.metadata["is_parallelizable"] is False
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(env)


def test_dogpile_parallel_env_through_parallel_to_aec_passes_pettingzoo_s_tests() -> None:
    from pettingzoo.test import api_test, seed_test
    from pettingzoo.utils.conversions import parallel_to_aec

    from card_envs import dogpile_v1

    short = SHORT["dogpile"]
    api_test(parallel_to_aec(dogpile_v1.parallel_env(**short)), num_cycles=200)
    seed_test(lambda: parallel_to_aec(dogpile_v1.parallel_env(**short)), num_cycles=100)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_pettingzoo_render_test(game: str, capsys: pytest.CaptureFixture[str]) -> None:
    from pettingzoo.test import render_test

    def env_fn(render_mode=None):
        return _env_module(game).env(render_mode=render_mode)

    render_test(env_fn)
    assert capsys.readouterr().out  # "human" printed the table


@pytest.mark.parametrize("game", GAME_NAMES)
def test_state_stays_in_state_space(game: str) -> None:
    """``env.state()`` (the seer view for a centralised critic) lies in ``state_space`` at
    every step: PettingZoo's state_test checks only the start of a masked game."""
    from pettingzoo.test.state_test import test_parallel_env, test_state_space

    env = _env_module(game).env(**LONG.get(game, {}))
    test_state_space(env)
    rng = np.random.default_rng(0)
    checked, seed = 0, 0
    while checked < 400:
        env.reset(seed=seed)
        seed += 1
        for _ in env.agent_iter(400):
            assert env.state_space.contains(env.state()), f"state out of bounds at {checked}"
            checked += 1
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else _masked_choice(rng, obs["action_mask"]))
    if GAMES[game].parallel:
        test_parallel_env(_env_module(game).parallel_env())


# -- copies and pickles of live envs -----------------------------------------------------------
def _copy(env, how: str):
    return copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))


def _aec_trace(env, rng: np.random.Generator, steps: int) -> list:
    """What ``steps`` masked random decisions show, resetting (unseeded) at each end."""
    out: list = []
    for _ in range(steps):
        if not env.agents:
            env.reset()
            out.append("reset")
        obs, reward, term, trunc, info = env.last()
        out.append((env.agent_selection, obs["observation"].tobytes(),
                    obs["action_mask"].tobytes(), reward, term, trunc, repr(info)))
        env.step(None if term or trunc else _masked_choice(rng, obs["action_mask"]))
    return out


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("game", GAME_NAMES)
def test_aec_copies_continue_identically(game: str, how: str) -> None:
    """A copy made before reset, or mid-episode, plays on exactly as the original, through
    unseeded resets (the engine's own random stream travels with it)."""
    module = _env_module(game)
    fresh = _copy(module.env(**SHORT.get(game, {})), how)
    fresh.reset(seed=1)
    env = module.env(**SHORT.get(game, {}))
    env.reset(seed=1)
    _aec_trace(env, np.random.default_rng(5), 3)
    _aec_trace(fresh, np.random.default_rng(5), 3)
    assert not env.terminations[env.agent_selection]
    copied = _copy(env, how)
    expected = _aec_trace(env, np.random.default_rng(9), 600)
    assert "reset" in expected
    assert _aec_trace(copied, np.random.default_rng(9), 600) == expected
    assert _aec_trace(fresh, np.random.default_rng(9), 600) == expected


def _gym_trace(env, info: dict, rng: np.random.Generator, steps: int) -> tuple[list, dict]:
    out: list = []
    for _ in range(steps):
        obs, reward, term, trunc, info = env.step(_masked_choice(rng, info["action_mask"]))
        out.append((obs.tobytes(), reward, term, trunc, repr(info)))
        if term or trunc:
            obs, info = env.reset()
            out.append((obs.tobytes(), repr(info)))
    return out, info


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("game", GAME_NAMES)
def test_gym_copies_continue_identically(game: str, how: str) -> None:
    """The made env (Gymnasium's wrappers included), its heuristic opponents and the learner
    seat's stream copy along: a mid-episode copy plays on exactly as the original."""
    import gymnasium

    import card_envs  # noqa: F401  (registers the ids)

    env = gymnasium.make(GAMES[game].gym_id, opponent="heuristic", learner_seat="random",
                         **SHORT.get(game, {}))
    _, info = env.reset(seed=3)
    _, info = _gym_trace(env, info, np.random.default_rng(2), 5)
    copied = _copy(env, how)
    expected, _ = _gym_trace(env, info, np.random.default_rng(4), 300)
    assert len(expected) >= 303  # episodes ended and the next were dealt (learner seats drawn)
    assert _gym_trace(copied, info, np.random.default_rng(4), 300)[0] == expected


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_dogpile_parallel_copies_continue_identically(how: str) -> None:
    from card_envs import dogpile_v1

    def trace(env, obs: dict, rng: np.random.Generator, steps: int) -> tuple[list, dict]:
        out: list = []
        for _ in range(steps):
            if not env.agents:
                obs, _ = env.reset()
                out.append("reset")
            actions = {a: _masked_choice(rng, obs[a]["action_mask"]) for a in env.agents}
            obs, rewards, terms, truncs, infos = env.step(actions)
            out.append(({a: o["observation"].tobytes() for a, o in obs.items()}, rewards,
                        terms, truncs, repr(infos)))
        return out, obs

    env = dogpile_v1.parallel_env(**SHORT["dogpile"])
    obs, _ = env.reset(seed=2)
    _, obs = trace(env, obs, np.random.default_rng(1), 3)
    copied = _copy(env, how)
    expected, _ = trace(env, obs, np.random.default_rng(3), 40)
    assert "reset" in expected
    assert trace(copied, obs, np.random.default_rng(3), 40)[0] == expected

"""The library adapters' own logic (card_envs.adapters), in the default run: none of these
needs the library it adapts to (tests/libraries/ runs each library for real). Also the
contracts every library relies on: fixed-shape end-of-game infos and no empty mask after the
end."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test

from card_envs.adapters.agilerl import MaskInInfo, TurnsAsParallel, agilerl_env
from card_envs.adapters.tianshou import SeatRewards
from card_envs.games import GAMES

GAME_NAMES = list(GAMES)
#: Short games, and score rewards where a game has them: points paid on others' moves.
CONFIG: dict[str, dict[str, Any]] = {
    "roy": {},
    "memory_uno": {"reward": "score", "episode": "game", "num_players": 3},
    "mega_memory": {},
    "deluxe_memory": {"num_players": 2},
    "dogpile": {"reward": "score", "ticks_per_second": 1, "round_seconds": (4, 3, 2)},
}


def _env(game: str, **extra: Any) -> Any:
    return importlib.import_module(GAMES[game].module).env(**CONFIG[game], **extra)


def _choice(rng: np.random.Generator, mask: Any) -> int:
    return int(rng.choice(np.flatnonzero(np.asarray(mask))))


# -- the envs' own contracts -------------------------------------------------------------------
@pytest.mark.parametrize("game", GAME_NAMES)
def test_after_the_end_every_mask_is_all_ones_and_infos_hold_winners(game: str) -> None:
    """TorchRL runs a masked policy on the seat that moved last, on the final observation: an
    all-zero mask there sampled NaN. Infos at the end hold only the fixed-shape ``winners``
    vector (a buffer stacking them broke on lists whose lengths changed between episodes)."""
    env = _env(game)
    rng = np.random.default_rng(0)
    for seed in range(3):
        env.reset(seed=seed)
        while True:
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                break
            assert info == {}
            env.step(_choice(rng, obs["action_mask"]))
        n = len(env.possible_agents)
        for agent in env.possible_agents:
            assert env.observe(agent)["action_mask"].all(), agent
            winners = env.infos[agent]["winners"]
            assert env.infos[agent].keys() == {"winners"}
            assert winners.dtype == np.bool_ and winners.shape == (n,)
            assert np.flatnonzero(winners).tolist() == env.result()["winners"]


# -- Tianshou: SeatRewards ---------------------------------------------------------------------
def _transitions(env: SeatRewards, rng: np.random.Generator) -> list[tuple[str, list, bool]]:
    """One episode as Tianshou's PettingZooEnv records it: (seat that acted, the step's reward
    vector, done) per step, the mask it was given respected."""
    out = []
    while True:
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        assert obs["action_mask"].any()
        env.step(_choice(rng, obs["action_mask"]))
        rewards = [env.rewards[a] for a in env.possible_agents]
        _, _, term, trunc, _ = env.last()
        out.append((agent, rewards, term or trunc))
        if term or trunc:
            return out


@pytest.mark.parametrize("game", GAME_NAMES)
def test_seat_rewards_pays_each_seat_what_the_env_paid_on_its_own_transitions(game: str
                                                                              ) -> None:
    """Tianshou's dispatcher trains seat i on the transitions where i acted, column i: summed
    that way, each seat receives exactly what the env paid it; other columns stay 0; every
    seat takes one closing turn, and only the last step ends the episode."""
    inner = _env(game)
    env = SeatRewards(inner)
    rng = np.random.default_rng(1)
    nonzero = 0
    for seed in range(4):
        env.reset(seed=seed)
        paid = dict.fromkeys(env.possible_agents, 0.0)
        steps = []
        original = inner.step

        def step(action: Any, paid: dict = paid, original: Any = original) -> None:
            original(action)
            for a, r in inner.rewards.items():
                paid[a] += r

        inner.step = step
        try:
            steps = _transitions(env, rng)
        finally:
            del inner.step
        received = dict.fromkeys(env.possible_agents, 0.0)
        for agent, rewards, _ in steps:
            for other, value in zip(env.possible_agents, rewards, strict=True):
                assert other == agent or value == 0.0
            received[agent] += rewards[env.possible_agents.index(agent)]
        assert received == pytest.approx(paid)
        assert [done for *_, done in steps].count(True) == 1
        closing = [agent for agent, *_ in steps[-len(env.possible_agents):]]
        assert sorted(closing) == sorted(env.possible_agents)
        nonzero += any(paid.values())
    assert nonzero


def test_seat_rewards_closing_turns_ignore_the_action_and_show_all_ones() -> None:
    env = SeatRewards(_env("roy"))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not env.env.terminations[env.env.agent_selection]:
        env.step(_choice(rng, env.last()[0]["action_mask"]))
    last_mover = env.env.agent_selection
    assert env.agent_selection != last_mover  # the next seat closes first
    for _ in env.possible_agents:
        obs, _, term, trunc, info = env.last()
        assert obs["action_mask"].all() and not (term or trunc) and info == {}
        env.step(0)
    assert env.agent_selection == last_mover
    assert all(env.terminations.values())
    assert env.infos[last_mover]["winners"].shape == (2,)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_seat_rewards_passes_pettingzoo_s_api_test(game: str) -> None:
    api_test(SeatRewards(_env(game)), num_cycles=200)


# -- AgileRL: TurnsAsParallel and MaskInInfo ---------------------------------------------------
@pytest.mark.parametrize("game", GAME_NAMES)
def test_turns_as_parallel_passes_pettingzoo_s_parallel_api_test(game: str) -> None:
    parallel_api_test(TurnsAsParallel(_env(game)), num_cycles=200)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_turns_as_parallel_pays_every_seat_what_the_aec_env_paid(game: str) -> None:
    """Every step, every seat's reward of that AEC step, whoever acted; only the seat to act
    plays, the others' actions (anything their all-ones mask allows) are ignored."""
    env = TurnsAsParallel(_env(game))
    reference = _env(game)
    rng = np.random.default_rng(2)
    obs, infos = env.reset(seed=5)
    reference.reset(seed=5)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    paid = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        actor = reference.agent_selection
        assert [a for a in env.agents if infos[a]["to_act"]] == [actor]
        for a in env.agents:
            if a != actor:
                assert obs[a]["action_mask"].all()
        actions = {a: _choice(rng, obs[a]["action_mask"]) for a in env.agents}
        reference.step(actions[actor])
        for a, r in reference.rewards.items():
            paid[a] += r
        obs, rewards, *_, infos = env.step(actions)
        for a, r in rewards.items():
            totals[a] += r
    assert totals == pytest.approx(paid) and any(paid.values())


def test_mask_in_info_moves_the_mask_as_a_list() -> None:
    env = agilerl_env(_env("roy"))
    assert isinstance(env, MaskInInfo)
    assert env.observation_space("player_0").shape == (238,)
    obs, infos = env.reset(seed=0)
    for agent, o in obs.items():
        assert isinstance(o, np.ndarray) and o.shape == (238,)
        mask = infos[agent]["action_mask"]
        assert isinstance(mask, list) and all(type(x) is int for x in mask) and len(mask) == 70
    with pytest.raises(TypeError, match="AEC or Parallel env"):
        agilerl_env(object())  # type: ignore[arg-type]


def test_turns_as_parallel_refuses_a_wrong_actions_dict() -> None:
    env = TurnsAsParallel(_env("roy"))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="one action per live agent"):
        env.step({"player_0": 0})


# -- SB3 over SuperSuit: ObservationWithMask ---------------------------------------------------
def test_observation_with_mask_appends_the_mask() -> None:
    pytest.importorskip("stable_baselines3")
    from card_envs import dogpile_v1
    from card_envs.adapters.supersuit import ObservationWithMask

    env = ObservationWithMask(dogpile_v1.parallel_env())
    obs, _ = env.reset(seed=0)
    assert env.observation_space("player_0").shape == (1518 + 167,)
    for agent, o in obs.items():
        assert env.observation_space(agent).contains(o)
        mask = env.env._masks[env.env.agent_name_mapping[agent]]
        np.testing.assert_array_equal(o[1518:], mask)
    with pytest.raises(TypeError, match="observation"):
        ObservationWithMask(agilerl_env(dogpile_v1.parallel_env()))

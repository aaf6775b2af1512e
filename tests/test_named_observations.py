"""Named observations (issue 38): every env view offers its observation and ``state()`` layout
by name (slice, shape, meaning, in vector order) and decodes a vector into named arrays."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from card_envs.core.gym_env import CardGymEnv
from card_envs.core.obs_layout import ObsField
from card_envs.games import GAMES
from tests.conftest import VARIANT_IDS, VARIANTS


def _check_layout(layout: dict[str, ObsField], size: int) -> None:
    """Fields tile ``0..size`` in order; each shape holds exactly its slice; each is explained."""
    at = 0
    for name, field in layout.items():
        assert isinstance(field, ObsField)
        assert field.slice.start == at and field.slice.step is None, name
        assert int(np.prod(field.shape)) == field.slice.stop - field.slice.start > 0, name
        assert field.meaning.strip(), f"{name} has no meaning"
        at = field.slice.stop
    assert at == size


def _check_decoded(decoded: dict[str, np.ndarray], layout: dict[str, ObsField],
                   vector: np.ndarray) -> None:
    assert list(decoded) == list(layout)
    for name, field in layout.items():
        assert decoded[name].shape == field.shape, name
        np.testing.assert_array_equal(decoded[name].reshape(-1), vector[field.slice])


@pytest.mark.parametrize(("game", "config"), VARIANTS, ids=VARIANT_IDS)
def test_aec_env_names_its_observation_and_state(game: str, config: dict) -> None:
    env = importlib.import_module(GAMES[game].module).env(**config)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    layout = env.observation_layout()
    _check_layout(layout, obs["observation"].size)
    _check_decoded(env.decode_observation(obs), layout, obs["observation"])
    _check_decoded(env.decode_observation(obs["observation"]), layout, obs["observation"])
    state = env.state()
    _check_layout(env.state_layout(), state.size)
    _check_decoded(env.decode_state(state), env.state_layout(), state)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_gymnasium_env_names_its_observation(game: str) -> None:
    import gymnasium

    env = gymnasium.make(GAMES[game].gym_id).unwrapped
    obs, _ = env.reset(seed=0)
    assert isinstance(env, CardGymEnv)
    _check_layout(env.observation_layout(), obs.size)
    _check_decoded(env.decode_observation(obs), env.observation_layout(), obs)
    assert env.state_layout() == GAMES[game].engine_class()().state_layout.fields()


def test_dogpile_parallel_env_names_its_observation_and_state() -> None:
    from card_envs import dogpile_v1

    par = dogpile_v1.parallel_env(num_players=4)
    observations, _ = par.reset(seed=0)
    for obs in observations.values():
        _check_decoded(par.decode_observation(obs), par.observation_layout(),
                       obs["observation"])
    state = par.state()
    _check_decoded(par.decode_state(state), par.state_layout(), state)
    assert par.observation_layout()["opponent_paws"].shape == (3, 3, 19)


def test_a_batch_keeps_its_leading_axes() -> None:
    env = importlib.import_module("card_envs.mega_memory_v1").env()
    env.reset(seed=0)
    batch = np.stack([env.observe(a)["observation"] for a in env.agents])
    decoded = env.decode_observation(batch)
    assert decoded["centre"].shape == (2, 4, 52)
    np.testing.assert_array_equal(decoded["centre"][1].reshape(-1),
                                  batch[1, env.observation_layout()["centre"].slice])


def test_a_wrong_vector_is_refused_by_name() -> None:
    env = importlib.import_module("card_envs.roy_v1").env()
    with pytest.raises(ValueError, match="observation has 10 values, layout expects 238"):
        env.decode_observation(np.zeros(10, np.float32))
    with pytest.raises(ValueError, match="'observation' key"):
        env.decode_observation({"action_mask": np.zeros(70)})


def test_fields_read_what_the_rules_say() -> None:
    """A decoded field is the quantity its meaning names: ROY's own hand is the dealt cards."""
    from card_envs.core.cards import card_id

    env = importlib.import_module("card_envs.roy_v1").env()
    deck = [f"{r}{s}" for s in "CDHS" for r in "A23456789TJQK"]
    env.reset(seed=0, options={"deck": deck})
    hand = env.decode_observation(env.observe("player_0"))["hand"]
    state_hands = env.decode_state(env.state())["hands"]
    assert hand.shape == (52,) and state_hands.shape == (2, 52)
    np.testing.assert_array_equal(hand, state_hands[0])
    assert hand.sum() == state_hands[1].sum() > 0
    assert hand[card_id("AC")] + state_hands[1][card_id("AC")] == 1

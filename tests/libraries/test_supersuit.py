"""SuperSuit + MaskablePPO, for real (``make test-marl`` runs this in a virtualenv with
SuperSuit and sb3-contrib; the default test run skips it without SuperSuit): the page's short
``learn()`` on Dogpile's Parallel env, every action MaskablePPO took allowed by the mask that
came with its observation."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("supersuit")
pytest.importorskip("sb3_contrib")

from tests.libraries.snippets import env_module, run, snippet  # noqa: E402


def test_the_page_s_maskable_ppo_learns_on_dogpile() -> None:
    ns = run(snippet("supersuit"))
    model, venv = ns["model"], ns["venv"]
    assert model.num_timesteps >= 384
    buffer = model.rollout_buffer
    actions = buffer.actions.reshape(-1).astype(int)
    masks = buffer.action_masks.reshape(len(actions), -1).astype(bool)
    assert masks[np.arange(len(actions)), actions].all()
    assert masks.any(1).all() and not masks.all(1).all()
    assert venv.observation_space.shape[0] + venv.num_actions == (
        venv.venv.observation_space.shape[0])


def test_masks_belong_to_their_observations_across_autoreset() -> None:
    """The masks ``action_masks()`` gives are the env's own for the observation returned,
    including the first one of a new game after SuperSuit's autoreset; a masked random agent
    never has an action voided as masked out."""
    from card_envs.adapters.supersuit import sb3_vec_env

    par = env_module("dogpile").parallel_env(ticks_per_second=1, round_seconds=(4, 3, 2))
    venv = sb3_vec_env(par)
    rng = np.random.default_rng(0)
    obs = venv.reset()
    ended = 0
    for _ in range(150):
        masks = venv.action_masks()
        assert masks.shape == (3, 167) and masks.any(1).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, _, dones, infos = venv.step(actions)
        assert obs.shape == (3, 1518)
        assert all(info.get("void_reason") != "mask" for info in infos)
        if dones.all():
            ended += 1
            assert all(info["terminal_observation"].shape == (1518,) for info in infos)
    assert ended >= 1

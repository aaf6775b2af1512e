"""Derived features computed once (issue 37): every path gives the policy the features its own
extractor computes from the observation, as before.

* Dogpile's loot per bone (``_paw_loot``) and Deluxe Memory's features against the code they
  replaced, on random play;
* the rollout buffer's stored features against the extractor's, for every game that has them,
  and a PPO update from them against one that derives them in every minibatch;
* self-play's one features pass for every snapshot's decisions against one pass per snapshot.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from card_envs.agents.features import DerivedFeatures, DerivedRolloutBuffer, ScoredActionsPolicy
from card_envs.games import GAMES, get_game, make_engine
from card_envs.games.deluxe_memory.engine import NUM_CELLS
from card_envs.games.deluxe_memory.features import PER_CELL
from tests import (
    deluxe_features_before_bmm,
    dogpile_features_before37,
    mega_memory_features_before_bmm,
)
from training.config import load_config
from training.selfplay import SelfPlayVecEnv

FEATURE_GAMES = [name for name, spec in GAMES.items() if spec.features]
CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def shipped_env(game: str) -> dict[str, Any]:
    return dict(load_config(CONFIGS / f"{game}.yaml").env)


def random_play(game: str, config: dict[str, Any], games: int) -> np.ndarray:
    """Every seat's observation at every decision of ``games`` random games."""
    engine = make_engine(game, **config)
    rng = np.random.default_rng(0)
    rows = []
    for g in range(games):
        engine.reset(seed=g)
        while not engine.done:
            rows.extend(engine.observation(seat) for seat in range(engine.num_players))
            engine.step(int(rng.choice(np.flatnonzero(engine.legal_mask()))))
    return np.stack(rows)


def extractor(game: str, config: dict[str, Any]) -> DerivedFeatures:
    size = make_engine(game, **config).layout.size
    box = gym.spaces.Box(-np.inf, np.inf, (size,), np.float32)
    return DerivedFeatures(box, game=game, env_config=config)


def test_dogpile_features_are_the_ones_computed_before() -> None:
    """The loot of the best three per bone, now from four triples built without
    (batch, n, 4, 14) tensors, on 20 random games' observations (every seat, every decision):
    every feature as before, to float32 rounding (the loot sums are the same; a belief's
    value, a dot product, may round in another order)."""
    config = shipped_env("dogpile")
    engine = make_engine("dogpile", **config)
    obs = torch.as_tensor(random_play("dogpile", config, 20))
    new = get_game("dogpile").features_builder()(engine)
    old = dogpile_features_before37.derived_features(engine)
    with torch.no_grad():
        (new_global, new_acts), (old_global, old_acts) = new(obs), old(obs)
    assert new_global.shape == old_global.shape and new_acts.shape == old_acts.shape
    torch.testing.assert_close(new_global, old_global, rtol=0, atol=1e-6)
    torch.testing.assert_close(new_acts, old_acts, rtol=0, atol=1e-6)
    # Not vacuous: the loot features vary in play (slot gains, paw losses, the paws' loot).
    assert len(torch.unique(new_global[:, 108:163])) > 20


def features_as_before(game: str, options: dict[str, Any], before: ModuleType) -> torch.Tensor:
    """The game's derived features on 10 random games' observations (every seat, every
    decision) under the shipped config with ``options``, asserted exactly equal to those of
    ``before``'s ``derived_features`` (the code they replaced), and an empty batch's too."""
    config = {**shipped_env(game), **options}
    engine = make_engine(game, **config)
    obs = torch.as_tensor(random_play(game, config, 10))
    derive = get_game(game).features_builder()(engine)
    derived_before = before.derived_features(engine)
    with torch.no_grad():
        now = derive(obs)
        assert torch.equal(now, derived_before(obs))
        assert torch.equal(derive(obs[:0]), derived_before(obs[:0]))
    return now


@pytest.mark.parametrize("options", [{}, {"num_players": 3, "memory": 0.3},
                                     {"num_players": 4, "jokin_around": True}])
def test_deluxe_features_are_the_ones_computed_before(options: dict[str, Any]) -> None:
    """Batched matrix products in place of ``einsum`` and broadcast sums, on 10 random games'
    observations (every seat, every decision): every feature exactly as before (each sum has
    whole numbers for terms), with one to three other players' sightings."""
    now = features_as_before("deluxe_memory", options, deluxe_features_before_bmm)
    # Not vacuous: every kind of feature fires somewhere (known, mates, exposed, ...).
    assert (now.reshape(len(now), PER_CELL, NUM_CELLS) != 0).any(2).any(0).all()


@pytest.mark.parametrize("options", [{}, {"memory": "none"}, {"memory": 0.3}])
def test_mega_memory_features_are_the_ones_computed_before(options: dict[str, Any]) -> None:
    """The three relations in two batched products in place of a loop over them, on 10 random
    games' observations (every seat, every decision): every feature exactly as before (each
    sum has whole numbers for terms), in each memory mode."""
    now = features_as_before("mega_memory", options, mega_memory_features_before_bmm)
    # Not vacuous: nine in ten features fire somewhere, and some pair counts reach 2.
    assert (now != 0).any(0).float().mean() > 0.9 and now.amax() >= 2


def _filled_buffer(game: str, config: dict[str, Any], obs: np.ndarray,
                   n_envs: int) -> DerivedRolloutBuffer:
    engine = make_engine(game, **config)
    box = gym.spaces.Box(-np.inf, np.inf, (engine.layout.size,), np.float32)
    steps = len(obs) // n_envs
    buffer = DerivedRolloutBuffer(steps, box, gym.spaces.Discrete(engine.num_actions),
                                  device="cpu", n_envs=n_envs, game=game, env_config=config)
    masks = np.ones((n_envs, engine.num_actions), dtype=bool)
    for t in range(steps):
        buffer.add(obs[t * n_envs:(t + 1) * n_envs], np.zeros((n_envs, 1)), np.zeros(n_envs),
                   np.zeros(n_envs), torch.zeros(n_envs), torch.zeros(n_envs),
                   action_masks=masks)
    buffer.compute_returns_and_advantage(torch.zeros(n_envs), np.zeros(n_envs))
    return buffer


@pytest.mark.parametrize("game", FEATURE_GAMES)
def test_the_rollout_buffer_holds_the_extractor_s_features(game: str) -> None:
    """What the PPO epochs read for each sample is what the extractor gives for its
    observation (then passed through as it is), in the order of the samples."""
    config = shipped_env(game)
    obs = random_play(game, config, 2)[:256]
    buffer = _filled_buffer(game, config, obs, n_envs=4)
    net = extractor(game, config)
    # The buffer's order: env-major (SB3's swap_and_flatten), steps within.
    order = obs.reshape(-1, 4, obs.shape[1]).transpose(1, 0, 2).reshape(obs.shape)
    with torch.no_grad():
        expected = torch.cat([net(torch.as_tensor(order[i:i + 32]))
                              for i in range(0, len(order), 32)])
        got = next(buffer.get(batch_size=None))
        # SB3's get() draws a permutation; the samples are the buffer's rows in that order.
        stored = torch.as_tensor(buffer.observations)
        assert stored.shape == (len(obs), net.features_dim)
        torch.testing.assert_close(stored, expected, rtol=0, atol=1e-6)
        torch.testing.assert_close(stored[:, :obs.shape[1]], torch.as_tensor(order),
                                   rtol=0, atol=0)
        assert got.observations.shape == (len(obs), net.features_dim)
        # A derived row goes through the extractor unchanged (the PPO epochs' path).
        assert torch.equal(net(got.observations), got.observations)


def _ppo(game: str, buffer: bool) -> Any:
    from sb3_contrib import MaskablePPO

    config = shipped_env(game)
    venv = SelfPlayVecEnv(game, config, 4, {"random": 1.0}, seed=3)
    features = {"game": game, "env_config": config}
    more: dict[str, Any] = ({"rollout_buffer_class": DerivedRolloutBuffer,
                             "rollout_buffer_kwargs": features} if buffer else {})
    return MaskablePPO(ScoredActionsPolicy, venv, n_steps=16, batch_size=32, n_epochs=2,
                       seed=5, device="cpu", **more,
                       policy_kwargs={"net_arch": [32], "features_extractor_kwargs": features,
                                      "features_extractor_class": DerivedFeatures})


@pytest.mark.parametrize("game", ["dogpile", "deluxe_memory"])
def test_ppo_learns_the_same_from_the_buffer_s_features(game: str) -> None:
    """Two updates from the same seed, one deriving the features in every minibatch (the
    plain buffer), one reading them from :class:`DerivedRolloutBuffer`: the same weights."""
    # One after the other: the seed restarts the global streams (sampling, minibatch order)
    # when a model is made, and learn() draws from them.
    plain = _ppo(game, buffer=False)
    before = {k: v.clone() for k, v in plain.policy.state_dict().items()}
    plain.learn(128)
    buffered = _ppo(game, buffer=True)
    assert type(buffered.rollout_buffer) is DerivedRolloutBuffer
    buffered.learn(128)
    after = plain.policy.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in after), "nothing was learned"
    for key, value in buffered.policy.state_dict().items():
        torch.testing.assert_close(value, after[key], rtol=1e-4, atol=1e-6, msg=key)


def _snapshot_play(monkeypatch: pytest.MonkeyPatch, batched: bool) -> tuple[list, list]:
    from sb3_contrib import MaskablePPO

    config = shipped_env("dogpile")
    # Random opponents too: their rows sit beside the snapshots' in the scratch array.
    venv = SelfPlayVecEnv("dogpile", config, 8, {"self": 3.0, "random": 1.0}, pool_size=3,
                          latest_prob=0.0, seed=11)
    model = MaskablePPO(ScoredActionsPolicy, venv, n_steps=8, batch_size=16, seed=0,
                        device="cpu", policy_kwargs={
                            "net_arch": [16], "features_extractor_class": DerivedFeatures,
                            "features_extractor_kwargs": {"game": "dogpile",
                                                          "env_config": config}})
    for k in range(3):  # three snapshots that play differently
        with torch.no_grad():
            for p in model.policy.parameters():
                p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(k)))
        venv.pool.add(model.policy, k)
    passes: list[int] = []
    if not batched:
        monkeypatch.setattr(SelfPlayVecEnv, "_snapshot_features", lambda self, counts: None)
    shared = venv._snapshot_features

    def counted(counts: list[int]) -> Any:
        out = shared(counts)
        passes.append(0 if out is None else len(counts))
        return out

    monkeypatch.setattr(venv, "_snapshot_features", counted)
    rng = np.random.default_rng(0)
    obs = [venv.reset()]
    for _ in range(40):
        legal = venv.action_masks()
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in legal]))
        obs.append(venv._obs.copy())
    return obs, passes


def test_snapshots_share_one_features_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Self-play against three snapshots and the random agent: one features pass for all the
    snapshots' pending decisions plays the same games as one pass per snapshot."""
    batched, passes = _snapshot_play(monkeypatch, batched=True)
    monkeypatch.undo()
    apart, apart_passes = _snapshot_play(monkeypatch, batched=False)
    assert max(passes) >= 2, "no step had two snapshots waiting: the test shows nothing"
    assert max(apart_passes) == 0
    for a, b in zip(batched, apart, strict=True):
        np.testing.assert_array_equal(a, b)

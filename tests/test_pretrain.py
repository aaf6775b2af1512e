"""Behaviour cloning from the heuristic (the training warm start)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from card_envs.core.gym_env import CardGymEnv
from training.config import ConfigError, from_dict
from training.pretrain import behaviour_clone, collect


def test_demonstrations_are_the_heuristics_legal_moves_with_outcomes() -> None:
    """Row by row, the heuristic's move and the deciding seat's outcome: the same games
    replayed here (one at a time, dealt from collect's seeds) give the same rows."""
    from card_envs.agents import make_agent
    from card_envs.games import make_engine

    data = collect("roy", {"num_players": 2}, games=20, max_decisions=10_000, seed=0,
                   parallel=1)
    assert len(data) > 100
    assert data.masks[np.arange(len(data)), data.actions].all()  # every action was legal
    engine = make_engine("roy", num_players=2)
    heuristic = make_agent("heuristic", "roy", engine.config)  # ROY's draws no random numbers
    actions, returns = [], []
    for game in range(20):
        engine.reset(seed=game)  # collect deals game g from seed * 1_000_003 + g
        seats = []
        while not engine.done:
            seat = engine.current_player
            seats.append(seat)
            actions.append(int(heuristic.act(engine.observation(seat), engine.legal_mask())))
            engine.step(actions[-1])
        # one-hand episodes with +1/-1 rewards: each decision carries its seat's outcome
        returns += [1.0 if seat in engine.winners else -1.0 for seat in seats]
    assert data.actions.tolist() == actions
    assert data.returns.tolist() == returns
    capped = collect("roy", {"num_players": 2}, games=20, max_decisions=50, seed=0)
    assert len(capped) == 50
    assert len(collect("roy", {"num_players": 2}, games=0, max_decisions=50, seed=0)) == 0


def _fresh_roy_model() -> MaskablePPO:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = CardGymEnv("roy", opponent="random")
    return MaskablePPO("MlpPolicy", env, seed=0, device="cpu", n_steps=64, batch_size=64)


def test_cloning_learns_the_heuristic() -> None:
    model = _fresh_roy_model()
    data = collect("roy", {"num_players": 2}, games=60, max_decisions=20_000, seed=1)
    before = behaviour_clone(model, data, epochs=0, batch_size=512, learning_rate=1e-3, seed=0)
    after = behaviour_clone(model, data, epochs=3, batch_size=512, learning_rate=1e-3, seed=0)
    assert np.isnan(before["bc_accuracy"]) and np.isnan(before["bc_val_accuracy"])
    assert after["bc_accuracy"] > 0.7  # random over legal moves would be far lower
    assert after["bc_val_accuracy"] > 0.7  # on games it never trained on
    assert 1 <= after["bc_best_epoch"] <= 3


def test_cloning_keeps_the_epoch_best_on_held_out_games() -> None:
    """The kept weights are the best epoch's, not the last: re-measuring the held-out
    accuracy after training reproduces the reported figure."""
    from training.pretrain import _greedy_hits

    model = _fresh_roy_model()
    data = collect("roy", {"num_players": 2}, games=30, max_decisions=8_000, seed=2)
    stats = behaviour_clone(model, data, epochs=6, batch_size=256, learning_rate=3e-3, seed=0)
    n_fit = len(data) - int(len(data) * 0.1)
    hits = _greedy_hits(model.policy, torch.as_tensor(data.observations[n_fit:]),
                        torch.as_tensor(data.masks[n_fit:]), torch.as_tensor(data.actions[n_fit:]))
    assert hits / (len(data) - n_fit) == pytest.approx(stats["bc_val_accuracy"])


def test_each_collection_is_held_out_by_its_own_newest_games() -> None:
    """The clone's games and each DAgger round's are split apart: a round smaller than the
    held-out share is still mostly trained on (one tail of everything held out all of it)."""
    from training.pretrain import Demonstrations, _joined

    def rows(n: int) -> Demonstrations:
        return Demonstrations(np.zeros((n, 3), np.float32), np.ones((n, 2), bool),
                              np.zeros(n, np.int64), np.zeros(n, np.float32))

    fit, held = rows(100).held_out(0.1)
    assert (fit == np.arange(90)).all() and (held == np.arange(90, 100)).all()
    joined = _joined(_joined(rows(100), rows(9)), rows(20))
    assert joined.collections == (100, 9, 20)
    fit, held = joined.held_out(0.1)
    assert held.tolist() == list(range(90, 100)) + [127, 128]
    assert set(range(100, 109)) <= set(fit.tolist())  # the 9-row round: trained on, all of it
    assert sorted(fit.tolist() + held.tolist()) == list(range(129))


def test_cloning_trains_on_a_small_dagger_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """A DAgger round a twentieth the size of the clone's games is trained on, but for its own
    newest games, and no held-out row is ever trained on. Every row is marked with its index
    (column 0) and the rows each minibatch brings are recorded."""
    import training.pretrain as pt

    clone = collect("roy", {"num_players": 2}, games=40, max_decisions=20_000, seed=1)
    small = collect("roy", {"num_players": 2}, games=2, max_decisions=20_000, seed=99)
    data = pt._joined(clone, small)
    assert len(small) < 0.1 * len(data)
    data.observations[:, 0] = np.arange(len(data))
    seen: set[int] = set()
    real = pt._evaluate

    def spy(policy, x, masks, from_features):
        seen.update(int(v) for v in x[:, 0])
        return real(policy, x, masks, from_features)

    monkeypatch.setattr(pt, "_evaluate", spy)
    pt.behaviour_clone(_fresh_roy_model(), data, epochs=2, batch_size=256,
                       learning_rate=1e-3, seed=0)
    fit, held = data.held_out(0.1)
    assert seen == set(fit.tolist()) and not seen & set(held.tolist())
    round_rows = set(range(len(clone), len(data)))
    assert len(seen & round_rows) == len(small) - int(len(small) * 0.1)


def test_pretrain_config_is_validated() -> None:
    with pytest.raises(ConfigError, match=r"pretrain\.gmes: unknown key \(did you mean 'games'"):
        from_dict({"game": "roy", "pretrain": {"gmes": 3}})
    with pytest.raises(ConfigError, match=r"pretrain\.epochs: expected an integer >= 0"):
        from_dict({"game": "roy", "pretrain": {"epochs": -1}})
    assert from_dict({"game": "roy"}).pretrain.games == 0  # off unless asked for
    with pytest.raises(ConfigError, match=r"pretrain\.dagger_rounds: needs .*dagger_games"):
        from_dict({"game": "roy", "pretrain": {"games": 5, "dagger_rounds": 1}})


def test_dagger_plays_the_drivers_moves_and_labels_them_with_the_heuristics() -> None:
    """Mega Mem-Ory's heuristic is deterministic: every label must be its move in the
    position reached, while the game follows the driver (here: always the last legal move)."""
    from card_envs.agents import make_agent

    def last_legal(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(np.flatnonzero(mask)[-1])

    def driver(obs: np.ndarray, masks: np.ndarray) -> list[int]:
        return [last_legal(o, m) for o, m in zip(obs, masks, strict=True)]

    teacher = collect("mega_memory", {}, games=3, max_decisions=10_000, seed=4)
    driven = collect("mega_memory", {}, games=3, max_decisions=10_000, seed=4, driver=driver)
    heuristic = make_agent("heuristic", "mega_memory", {})
    labels = [heuristic.act(o, m.astype(np.int8)) for o, m in
              zip(driven.observations, driven.masks, strict=True)]
    assert driven.actions.tolist() == labels
    assert any(last_legal(o, m) != a for o, m, a in
               zip(driven.observations, driven.masks, driven.actions, strict=True))
    assert len(driven) != len(teacher) or not np.array_equal(driven.observations,
                                                              teacher.observations)


def test_pretrain_with_dagger_rounds_adds_the_policys_games() -> None:
    from training.pretrain import pretrain

    model = _fresh_roy_model()
    base = pretrain(model, "roy", {"num_players": 2}, games=10, epochs=1, batch_size=256,
                    learning_rate=1e-3, max_decisions=5_000, seed=0)
    model = _fresh_roy_model()
    more = pretrain(model, "roy", {"num_players": 2}, games=10, epochs=1, batch_size=256,
                    learning_rate=1e-3, max_decisions=5_000, seed=0, dagger_rounds=2,
                    dagger_games=5, dagger_epochs=1)
    assert more["decisions"] > base["decisions"]
    assert 0.0 <= more["bc_val_accuracy"] <= 1.0


@pytest.mark.parametrize("kwargs, error, message", [
    ({"env_config": {"num_players": 3}}, ValueError,
     r"policy 'model' expects observations \(238,\) and 70 actions; roy with "
     r"\{'num_players': 3\} has \(258,\)"),
    ({"game": "dogpile", "env_config": {}}, ValueError, r"policy 'model' expects observations"),
    ({"games": 0}, ValueError, r"games: expected an integer >= 1, got 0"),
    ({"max_decisions": 0}, ValueError, r"max_decisions: expected an integer >= 1, got 0"),
    ({"batch_size": 0}, ValueError, r"batch_size: expected an integer >= 1, got 0"),
    ({"reward": "zero-sum"}, ValueError, r"selfplay.reward: expected one of learner, zero_sum"),
    ({"dagger_rounds": 1}, ValueError, r"dagger_games: expected an integer >= 1, got 0"),
])
def test_pretrain_arguments_that_do_not_fit_are_errors_naming_them(kwargs: dict, error: type,
                                                                   message: str) -> None:
    """Called directly: a model of another player count or game used to fail in torch's
    matrix product, no games or a batch size of 0 in torch.cat or range(), and an unknown
    reward mode was paid as "learner"."""
    from training.pretrain import pretrain

    args = {"game": "roy", "env_config": {"num_players": 2}, "games": 1, "epochs": 1,
            "batch_size": 64, "learning_rate": 1e-3, "max_decisions": 500, "seed": 0, **kwargs}
    with pytest.raises(error, match=message):
        pretrain(_fresh_roy_model(), **args)


def test_collect_deals_the_same_games_however_many_run_at_once() -> None:
    """Game g is dealt from the same seed in lockstep batches of any size; with Mega
    Mem-Ory's deterministic heuristic the games themselves are then identical."""
    def positions(data: object) -> list[bytes]:
        return sorted(o.tobytes() + bytes([a]) for o, a in zip(data.observations, data.actions,
                                                                 strict=True))

    one = collect("mega_memory", {}, games=6, max_decisions=100_000, seed=3, parallel=1)
    four = collect("mega_memory", {}, games=6, max_decisions=100_000, seed=3, parallel=4)
    assert len(one) == len(four)
    assert positions(one) == positions(four)


@pytest.mark.parametrize("features", ["raw", "derived"])
def test_cloning_from_precomputed_features_equals_evaluate_actions(features: str) -> None:
    """Cloning computes weight-free features once; the loss it trains on must be exactly
    what ``evaluate_actions`` gives from the observations."""
    from training.config import from_dict
    from training.pretrain import _evaluate, frozen_features
    from training.train import policy_class, ppo_arguments

    cfg = from_dict({"game": "dogpile", "features": features, "env": {"num_players": 2},
                     "ppo": {"n_steps": 64, "batch_size": 64}})
    torch.manual_seed(0)
    env = CardGymEnv("dogpile", opponent="random", num_players=2)
    model = MaskablePPO(policy_class(cfg), env, seed=0, device="cpu", **ppo_arguments(cfg))
    data = collect("dogpile", {"num_players": 2}, games=1, max_decisions=200, seed=0)
    obs, masks = torch.as_tensor(data.observations), torch.as_tensor(data.masks)
    actions = torch.as_tensor(data.actions)
    feats = frozen_features(model.policy, obs, chunk=64)
    assert feats is not None
    with torch.no_grad():
        want_v, want_lp, _ = model.policy.evaluate_actions(obs, actions, action_masks=masks)
        for x, pre in ((feats, True), (obs, False)):  # from features, and from observations
            got_v, dist = _evaluate(model.policy, x, masks, from_features=pre)
            torch.testing.assert_close(got_v, want_v)
            torch.testing.assert_close(dist.log_prob(actions), want_lp)


def test_held_out_games_never_reach_the_training_batches() -> None:
    """Held-out rows get NaN value targets: training on any of them would make the weights NaN."""
    model = _fresh_roy_model()
    data = collect("roy", {"num_players": 2}, games=10, max_decisions=5_000, seed=5)
    n_val = int(len(data) * 0.1)
    data.returns[len(data) - n_val:] = np.nan
    stats = behaviour_clone(model, data, epochs=2, batch_size=256, learning_rate=1e-3, seed=0)
    assert n_val > 0 and 0.0 <= stats["bc_val_accuracy"] <= 1.0
    assert all(bool(torch.isfinite(p).all()) for p in model.policy.parameters())


def test_dagger_appends_the_policys_games_so_they_are_held_out(monkeypatch) -> None:
    """Every round clones teacher games first, then each round's policy games in order."""
    import training.pretrain as pretrain_module

    collected, cloned = [], []
    real_collect = pretrain_module.collect

    def recording_collect(*args, **kwargs):
        collected.append(real_collect(*args, **kwargs))
        return collected[-1]

    def recording_clone(model, data, *args, **kwargs) -> dict:
        cloned.append(data)
        return {}

    monkeypatch.setattr(pretrain_module, "collect", recording_collect)
    monkeypatch.setattr(pretrain_module, "behaviour_clone", recording_clone)
    pretrain_module.pretrain(_fresh_roy_model(), "roy", {"num_players": 2}, games=4, epochs=1,
                             batch_size=256, learning_rate=1e-3, max_decisions=5_000, seed=0,
                             dagger_rounds=2, dagger_games=2, dagger_epochs=1)
    assert len(collected) == len(cloned) == 3
    for r, data in enumerate(cloned):
        for name in ("observations", "actions", "returns"):
            want = np.concatenate([getattr(d, name) for d in collected[:r + 1]])
            assert np.array_equal(getattr(data, name), want), (r, name)

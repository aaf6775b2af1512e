"""Learning from search (issue 40 item 3): the search agent's move distributions as cloning
targets, its games as self-play opponents, and the policy as the search's prior (expert
iteration)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from card_envs.agents import make_agent
from card_envs.agents.search import SearchAgent
from card_envs.core.gym_env import CardGymEnv
from card_envs.games import make_engine
from tests.test_search_agent import Sticks
from tests.test_training import game_config
from training.config import ConfigError, from_dict
from training.pretrain import _evaluate, behaviour_clone, collect, pretrain, soft_cross_entropy
from training.selfplay import SEARCH, SelfPlayVecEnv
from training.train import train


# -- the search's move distribution --------------------------------------------------------------
@pytest.mark.parametrize("sims", [2, 10, 37])
def test_visit_distribution_where_the_search_is_known(sims: int) -> None:
    """Two sticks: taking both (action 1) wins at once, taking one (action 0) hands the win
    over. With c=0 each move is tried once, then only the winning one: visits (1, sims - 1)."""
    agent = SearchAgent(None, simulations=sims, c=0.0, seed=3)
    action, dist = agent.distribution_in(Sticks(2))
    assert action == 1
    assert dist.dtype == np.float32 and dist.shape == (3,)
    assert dist.tolist() == pytest.approx([1 / sims, (sims - 1) / sims, 0.0])


def test_visit_distribution_on_a_stacked_deal_is_the_heuristics_move() -> None:
    """A stacked Deluxe Memory deal: with prior=heuristic and 3 simulations the search stays on
    the heuristic's move (untried moves start at 0), so the distribution is all on it; and the
    move is act_in's for the same seed."""
    engine = make_engine("deluxe_memory", num_players=2)
    engine.reset(deck=list(range(52))[::-1])
    heuristic = make_agent("heuristic", "deluxe_memory", engine.config)
    heuristic.seed(3 + 1 + engine.current_player)  # as SearchAgent(seed=3) seeds it
    favoured = int(heuristic.act(engine.observation(engine.current_player),
                                 engine.legal_mask()))
    settings = {"simulations": 3, "prior": "heuristic"}
    action, dist = SearchAgent("deluxe_memory", engine.config, seed=3,
                               **settings).distribution_in(engine)
    expected = np.zeros(engine.num_actions, np.float32)
    expected[favoured] = 1.0
    assert action == favoured
    assert np.array_equal(dist, expected)
    assert SearchAgent("deluxe_memory", engine.config, seed=3, **settings).act_in(engine) \
        == action


def test_one_legal_move_is_a_one_hot_distribution() -> None:
    action, dist = SearchAgent(None, simulations=5, seed=0).distribution_in(Sticks(1))
    assert action == 0 and dist.tolist() == [1.0, 0.0, 0.0]


# -- the soft cross-entropy ----------------------------------------------------------------------
def _fresh_roy_model() -> MaskablePPO:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    return MaskablePPO("MlpPolicy", CardGymEnv("roy", opponent="random"), seed=0,
                       device="cpu", n_steps=64, batch_size=64)


def test_soft_target_loss_is_cross_entropy_for_one_hot_targets() -> None:
    model = _fresh_roy_model()
    data = collect("roy", {"num_players": 2}, games=3, max_decisions=500, seed=0)
    obs, masks = torch.as_tensor(data.observations), torch.as_tensor(data.masks)
    actions = torch.as_tensor(data.actions)
    _, dist = _evaluate(model.policy, obs, masks, from_features=False)
    one_hot = torch.nn.functional.one_hot(actions, masks.shape[1]).float()
    assert torch.allclose(soft_cross_entropy(dist, one_hot), -dist.log_prob(actions))
    # A soft target is the expectation of the one-hot losses over its actions.
    legal = masks[0].nonzero().flatten()[:2]
    soft = torch.zeros(masks.shape[1])
    soft[legal] = torch.tensor([0.25, 0.75])
    expected = -(0.25 * dist.log_prob(legal[:1].expand(len(obs)))
                 + 0.75 * dist.log_prob(legal[1:].expand(len(obs))))
    assert torch.allclose(soft_cross_entropy(dist, soft.expand(len(obs), -1))[0], expected[0])


# -- collecting the search's games ---------------------------------------------------------------
TEACHER = "search:simulations=6,rollout_depth=20"


def test_search_teacher_games_are_its_distributions_and_deterministic() -> None:
    first = collect("roy", {"num_players": 2}, games=3, max_decisions=2_000, seed=5,
                    teacher=TEACHER)
    again = collect("roy", {"num_players": 2}, games=3, max_decisions=2_000, seed=5,
                    teacher=TEACHER)
    assert first.targets is not None and len(first) > 20
    for a, b in zip((first.observations, first.actions, first.targets, first.returns),
                    (again.observations, again.actions, again.targets, again.returns),
                    strict=True):
        assert np.array_equal(a, b)
    assert np.allclose(first.targets.sum(1), 1.0)
    assert not first.targets[~first.masks].any()  # nothing on an illegal move
    # the label (and the move played) is the most visited move
    assert (first.targets[np.arange(len(first)), first.actions] == first.targets.max(1)).all()
    other = collect("roy", {"num_players": 2}, games=3, max_decisions=2_000, seed=6,
                    teacher=TEACHER)
    assert len(other) != len(first) or not np.array_equal(other.targets, first.targets)


def test_cloning_the_search_fits_its_distributions() -> None:
    model = _fresh_roy_model()
    data = collect("roy", {"num_players": 2}, games=8, max_decisions=2_000, seed=1,
                   teacher=TEACHER)
    assert data.targets is not None
    targets = torch.as_tensor(data.targets)
    entropy = float(-(targets * torch.log(targets.clamp_min(1e-12))).sum(1).mean())

    def kl() -> float:  # the loss above the targets' own entropy: 0 for a perfect fit
        with torch.no_grad():
            _, dist = _evaluate(model.policy, torch.as_tensor(data.observations),
                                torch.as_tensor(data.masks), from_features=False)
            return float(soft_cross_entropy(dist, targets).mean()) - entropy

    before = kl()
    behaviour_clone(model, data, epochs=10, batch_size=128, learning_rate=3e-3, seed=0,
                    validation=0.0)
    assert kl() < 0.5 * before, (before, kl())


def test_expert_iteration_rounds_use_the_policy_as_the_search_prior(monkeypatch) -> None:
    """With policy_prior each DAgger round's teacher is the search with the policy so far as
    its prior (a saved .zip it loads), not the configured prior."""
    import training.pretrain as pt

    seen = []
    real = pt.collect

    def spy(*args, **kwargs):
        seen.append(kwargs["teacher"])
        if kwargs["teacher"].policy is not None:  # saved before the round's search loads it
            assert Path(kwargs["teacher"].policy).is_file()
        return real(*args, **kwargs)

    monkeypatch.setattr(pt, "collect", spy)
    model = _fresh_roy_model()
    stats = pretrain(model, "roy", {"num_players": 2}, games=2, epochs=1, batch_size=64,
                     learning_rate=1e-3, max_decisions=2_000, seed=0, dagger_rounds=1,
                     dagger_games=1, dagger_epochs=1,
                     teacher="search:simulations=4,rollout_depth=10,prior=heuristic",
                     policy_prior=True)
    assert seen[0].policy is None and seen[0].prior == "heuristic"
    assert seen[1].policy is not None
    assert seen[1].prior == "none" and seen[1].simulations == 4
    assert stats["teacher_seconds"] > 0 and stats["clone_seconds"] >= 0
    assert stats["teacher_seconds"] + stats["clone_seconds"] <= stats["seconds"] + 0.2


def test_a_search_spec_ending_in_a_policy_zip_is_the_search(tmp_path: Path) -> None:
    """``search:...,policy=<run>/final.zip`` (the search with that policy as its prior) used to
    be loaded by training.evaluate as the policy itself, its whole text taken for a path."""
    from card_envs.agents.provenance import record_identity
    from training.actors import make_actor

    path = tmp_path / "p.zip"
    _fresh_roy_model().save(path)
    record_identity(path, "roy", {"num_players": 2})
    actor = make_actor(f"search:simulations=2,policy={path}", "roy", {"num_players": 2}, seed=0)
    assert isinstance(getattr(actor, "agent", None), SearchAgent)
    assert actor.agent.settings.policy == str(path)


# -- the heuristic's clone, then the search's corrections ------------------------------------------
ROUNDS = {"games": 2, "dagger_rounds": 1, "dagger_games": 1}
FLAT = "search:method=flat,rollout=heuristic,simulations=12"


def test_a_flat_search_teaches_its_move_alone() -> None:
    """Flat search's rollout counts are sequential halving's schedule (the heuristic's move is
    always kept in), not a preference: its target is its move, one-hot."""
    engine = make_engine("roy", num_players=2)
    engine.reset(seed=11)
    agent = SearchAgent("roy", engine.config, seed=2, method="flat", rollout="heuristic",
                        simulations=40)
    for _ in range(12):
        if int(engine.legal_mask().sum()) > 2:
            break
        engine.step(int(np.flatnonzero(engine.legal_mask())[0]))
    action, dist = agent.distribution_in(engine)
    assert len(agent.last_visits) > 1  # several moves were rolled out ...
    expected = np.zeros(engine.num_actions, np.float32)
    expected[action] = 1.0
    assert np.array_equal(dist, expected)  # ... yet only the move is taught


def test_the_dagger_rounds_have_their_own_labeller(monkeypatch) -> None:
    """``dagger_teacher``: the heuristic's games are cloned, the policy's DAgger games are
    labelled by the search, and the two collections train together (the clone's labels as
    one-hot targets)."""
    import training.pretrain as pt

    seen: list = []
    joined: list = []
    real_collect, real_clone = pt.collect, pt.behaviour_clone

    def spy(*args, **kwargs):
        seen.append(kwargs["teacher"])
        return real_collect(*args, **kwargs)

    def clone_spy(model, data, *args, **kwargs):
        joined.append(data)
        return real_clone(model, data, *args, **kwargs)

    monkeypatch.setattr(pt, "collect", spy)
    monkeypatch.setattr(pt, "behaviour_clone", clone_spy)
    pretrain(_fresh_roy_model(), "roy", {"num_players": 2}, games=2, epochs=1, batch_size=64,
             learning_rate=1e-3, max_decisions=2_000, seed=0, dagger_rounds=1, dagger_games=1,
             dagger_epochs=1, dagger_teacher=FLAT)
    assert seen[0] == "heuristic"
    assert seen[1].method == "flat" and seen[1].simulations == 12
    clone, both = joined
    assert clone.targets is None and both.targets is not None
    n = len(clone)
    assert len(both) > n
    one_hot = np.zeros(clone.masks.shape, np.float32)
    one_hot[np.arange(n), clone.actions] = 1.0
    assert np.array_equal(both.targets[:n], one_hot)  # the heuristic's labels, one-hot
    assert np.array_equal(both.observations[:n], clone.observations)
    assert np.allclose(both.targets[n:].sum(1), 1.0)
    assert np.array_equal(both.targets[n:].argmax(1), both.actions[n:])


@pytest.mark.parametrize("kwargs, message", [
    ({"dagger_teacher": FLAT}, r"dagger_teacher: .*needs dagger_rounds >= 1"),
    ({"dagger_rounds": 1, "dagger_teacher": "random"},
     r"dagger_teacher: expected 'heuristic' or 'search"),
    ({"dagger_rounds": 1, "dagger_teacher": "search:c=-1"},
     r"dagger_teacher: invalid search settings: c=-1"),
    ({"dagger_rounds": 1, "dagger_teacher": FLAT, "policy_prior": True},
     r"policy_prior: a method=flat labeller takes no prior"),
    ({"dagger_rounds": 1, "teacher": "search:simulations=3", "dagger_teacher": "heuristic",
      "policy_prior": True}, r"policy_prior: .*needs a search labelling them"),
])
def test_pretrain_refuses_a_labeller_it_cannot_use(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pretrain(_fresh_roy_model(), "roy", {"num_players": 2}, games=2, epochs=1,
                 batch_size=64, learning_rate=1e-3, max_decisions=500, seed=0,
                 dagger_games=1, **kwargs)


def test_a_flat_search_takes_a_policy_for_its_rollouts_or_as_its_prior(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"method=flat reads policy=\.\.\. as its rollout "
                                         r"agent \(rollout=policy\) or as its prior"):
        SearchAgent(None, method="flat", policy=str(tmp_path / "p.zip"))


# -- config and self-play opponents --------------------------------------------------------------
@pytest.mark.parametrize("section, message", [
    ({"pretrain": {"teacher": "random"}},
     r"pretrain\.teacher: expected 'heuristic' or a search agent spec"),
    ({"pretrain": {"teacher": "search:simulation=5"}},
     r"pretrain\.teacher: unknown search setting 'simulation'"),
    ({"pretrain": {"teacher": "search:rollout=nobody"}},
     r"pretrain\.teacher: invalid search settings: rollout='nobody'"),
    ({"pretrain": {"games": 2, "policy_prior": True}},
     r"pretrain\.policy_prior: .*needs a search labelling them"),
    ({"pretrain": {"games": 2, "teacher": "search", "policy_prior": True}},
     r"pretrain\.policy_prior: .*dagger_rounds >= 1"),
    ({"pretrain": {**ROUNDS, "teacher": "search", "dagger_teacher": "heuristic",
                   "policy_prior": True}},
     r"pretrain\.policy_prior: .*needs a search labelling them"),
    ({"pretrain": {**ROUNDS, "dagger_teacher": "search:method=flat,rollout=heuristic",
                   "policy_prior": True}},
     r"pretrain\.policy_prior: a method=flat labeller takes no prior"),
    ({"pretrain": {"games": 2, "dagger_teacher": "search"}},
     r"pretrain\.dagger_teacher: .*needs pretrain\.dagger_rounds >= 1"),
    ({"pretrain": {**ROUNDS, "dagger_teacher": "random"}},
     r"pretrain\.dagger_teacher: expected 'heuristic' or a search agent spec"),
    ({"pretrain": {**ROUNDS, "dagger_teacher": "search:z=-1"}},
     r"pretrain\.dagger_teacher: invalid search settings: z=-1"),
    ({"selfplay": {"opponents": {"search": 1.0}, "search": "heuristic"}},
     r"selfplay\.search: expected a search agent spec"),
    ({"selfplay": {"opponents": {"search": 1.0}, "search": "search:c=-1"}},
     r"selfplay\.search: invalid search settings: c=-1.0"),
    ({"selfplay": {"opponents": {"serch": 1.0}}}, r"selfplay\.opponents"),
])
def test_search_settings_in_a_config_are_checked(section: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_dict({"game": "roy", **section})


def test_search_opponents_play_in_the_selfplay_env_reproducibly() -> None:
    def play(seed: int) -> tuple[list, list]:
        env = SelfPlayVecEnv("roy", {"num_players": 2}, 3, {"search": 1.0}, seed=seed,
                             search="search:simulations=4,rollout_depth=10")
        obs = env.reset()
        assert (env.seat_actor[np.arange(3), 1 - env.learner] == SEARCH).all()
        rng = np.random.default_rng(0)
        seen, infos_seen = [obs.tobytes()], []
        for _ in range(40):
            masks = env.action_masks()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, dones, infos = env.step(actions)
            seen.append(obs.tobytes() + rewards.tobytes())
            infos_seen += [i["opponent"] for i in infos if i]
        assert env.search_agent.searched > 0
        return seen, infos_seen

    first, opponents = play(4)
    assert opponents and set(opponents) == {"search"}
    assert play(4)[0] == first
    assert play(5)[0] != first


def test_a_short_training_run_with_the_search_teacher_and_opponents(tmp_path: Path) -> None:
    cfg = from_dict(game_config(
        "roy", seed=2,
        pretrain={"games": 2, "epochs": 1, "max_decisions": 500, "dagger_rounds": 1,
                  "dagger_games": 1, "dagger_epochs": 1, "policy_prior": True,
                  "teacher": "search:simulations=4,rollout_depth=10",
                  "dagger_teacher": None},  # the teacher labels the rounds too
        selfplay={"n_envs": 4, "workers": 1, "snapshot_every": 512, "pool_size": 2,
                  "opponents": {"self": 0.5, "search": 0.5},
                  "search": "search:simulations=3,rollout_depth=10"},
        training={"total_timesteps": 256, "checkpoint_every": 256},
        evaluation={"every": 256, "games": 4, "final_games": 4, "parallel": 4}))
    summary = train(cfg, tmp_path / "run", progress=False)
    assert summary["num_timesteps"] >= 256
    assert summary["pretrain"]["decisions"] > 0
    assert summary["pretrain"]["teacher_seconds"] > 0
    assert (tmp_path / "run" / "final.zip").is_file()

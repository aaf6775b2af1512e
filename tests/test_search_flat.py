"""The search agent's flat method (card_envs.agents.search_flat): rollout policy improvement
over the root moves, with the heuristic's move as the baseline."""

from __future__ import annotations

import time

import numpy as np
import pytest

from card_envs.agents import make_agent
from card_envs.agents.search import SearchAgent
from card_envs.agents.search_flat import _clearly_better
from card_envs.games import get_game
from tests.test_search_agent import SETTINGS, Sticks, random_position


def choice_positions(game: str, players: int, count: int) -> list:
    """Live positions with at least three legal moves."""
    found = []
    for seed in range(200):
        engine = random_position(game, players, seed)
        if np.count_nonzero(engine.legal_mask()) >= 3:
            found.append(engine)
            if len(found) == count:
                break
    return found


def heuristic_move(game: str, players: int, engine) -> int:
    heuristic = get_game(game).heuristic_class()(num_players=players)
    seat = engine.current_player
    return int(heuristic.act(engine.observation(seat), engine.legal_mask()))


@pytest.mark.parametrize("game,players", SETTINGS)
def test_flat_moves_are_legal_budgeted_and_leave_the_position_alone(game: str,
                                                                     players: int) -> None:
    agent = SearchAgent(game, {"num_players": players}, method="flat", rollout="heuristic",
                        simulations=60, rollout_depth=40, seed=1)
    for engine in choice_positions(game, players, 3):
        before = engine.state_array().copy()
        move = agent.act_in(engine)
        assert engine.legal_mask()[move]
        np.testing.assert_array_equal(engine.state_array(), before)
        assert 0 < agent.last_simulations <= 60
        assert sum(agent.last_visits.values()) == agent.last_simulations
        assert set(agent.last_visits) <= set(np.flatnonzero(engine.legal_mask()).tolist())


def test_flat_rounds_score_every_move_still_in_on_the_same_worlds() -> None:
    # Sequential halving: the first phase scores every legal move equally often, later phases
    # only the better half (and the heuristic's move), so visits never rise with the rank.
    engine = choice_positions("roy", 2, 1)[0]
    moves = int(np.count_nonzero(engine.legal_mask()))
    agent = SearchAgent("roy", method="flat", rollout="heuristic", simulations=20 * moves,
                        seed=0)
    agent.act_in(engine)
    counts = sorted(agent.last_visits.values())
    assert len(agent.last_visits) == moves  # every move was scored in the first phase
    assert counts[-1] > counts[0]  # and the budget went on to the better ones


def test_flat_is_deterministic_for_a_seed() -> None:
    def moves(seed: int) -> list[int]:
        agent = SearchAgent("memory_uno", {"num_players": 2}, method="flat",
                            rollout="heuristic", simulations=30, z=0.0, seed=seed)
        return [agent.act_in(e) for e in choice_positions("memory_uno", 2, 6)]
    assert moves(3) == moves(3)


@pytest.mark.parametrize("game,players", [("roy", 2), ("memory_uno", 2), ("mega_memory", 2)])
def test_flat_keeps_the_heuristics_move_unless_clearly_beaten(game: str, players: int) -> None:
    """(Games whose heuristic is deterministic.) With a z no advantage can reach, flat plays
    the heuristic's move everywhere; with z=0 (the best mean wins) it leaves it somewhere:
    the baseline test is what keeps it."""
    config = {"num_players": players}
    strict = SearchAgent(game, config, method="flat", rollout="heuristic", simulations=40,
                         rollout_depth=60, z=1e9, seed=0)
    loose = SearchAgent(game, config, method="flat", rollout="heuristic", simulations=40,
                        rollout_depth=60, z=0.0, seed=0)
    differs = 0
    for engine in choice_positions(game, players, 8):
        favoured = heuristic_move(game, players, engine)
        assert strict.act_in(engine) == favoured
        differs += loose.act_in(engine) != favoured
    assert differs > 0


def test_flat_without_a_heuristic_plays_the_best_mean() -> None:
    # Any engine with the hooks, random rollouts: from 3 sticks taking all 3 wins at once,
    # and each other take loses to a random reply half the time or more.
    agent = SearchAgent(None, method="flat", simulations=300, seed=0)
    assert agent.act_in(Sticks(3)) == 2
    assert agent.last_visits[2] >= agent.last_visits[0]


def test_clearly_better_is_a_paired_test() -> None:
    base = {0: 0.0, 1: 1.0, 2: 0.0, 3: 1.0}
    assert _clearly_better({0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}, base, 1.0)  # wins every world
    assert not _clearly_better(dict(base), base, 0.0)  # the same results: no advantage
    # One world better, one worse: a mean of 0 is never an advantage.
    assert not _clearly_better({0: 1.0, 1: 0.0, 2: 0.0, 3: 1.0}, base, 0.0)
    noisy = {0: 1.0, 1: 0.0, 2: 1.0, 3: 1.0}  # +1, -1, +1, 0: mean 0.25, se 0.479
    assert _clearly_better(noisy, base, 0.5)
    assert not _clearly_better(noisy, base, 1.0)
    assert not _clearly_better({7: 1.0}, base, 0.0)  # no shared world: no evidence


def test_flat_time_budget_is_honoured() -> None:
    engine = choice_positions("roy", 2, 1)[0]
    agent = SearchAgent("roy", method="flat", rollout="heuristic", simulations=100000,
                        time_ms=40, seed=0)
    agent.act_in(engine)  # warm-up
    start = time.process_time()
    agent.act_in(engine)
    cpu = time.process_time() - start
    assert 1 <= agent.last_simulations < 100000
    assert cpu < 0.040 + 0.1, cpu


@pytest.mark.parametrize("spec,words", [
    ("search:method=tree", "method='tree': expected one of ismcts, flat"),
    ("search:method=flat,prior=heuristic", "method=flat scores every root move"),
    ("search:method=flat,opponents=rollout", "method=flat scores every root move"),
    ("search:z=-1", "z=-1.0: expected a number >= 0"),
    ("search:z=lots", "z='lots': expected a number"),
])
def test_flat_spec_errors_name_the_problem(spec: str, words: str) -> None:
    with pytest.raises(ValueError) as err:
        make_agent(spec, "roy")
    assert words in str(err.value)


def test_flat_spec_parsing() -> None:
    agent = make_agent("search:method=flat,rollout=heuristic,z=0.5,time_ms=50", "roy")
    assert isinstance(agent, SearchAgent)
    assert (agent.settings.method, agent.settings.z, agent.settings.time_ms) == ("flat", 0.5,
                                                                                50.0)



# -- a policy as the flat search's prior ---------------------------------------------------------
@pytest.fixture(scope="module")
def roy_policy(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An untrained ROY policy, saved as training saves one: its move probabilities differ
    from the heuristic's choices, which is all these tests need."""
    import torch
    from sb3_contrib import MaskablePPO

    from card_envs.agents.provenance import record_identity
    from card_envs.core.gym_env import CardGymEnv

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("policy") / "p.zip"
    MaskablePPO("MlpPolicy", CardGymEnv("roy", opponent="random"), seed=0, device="cpu",
                n_steps=64, batch_size=64).save(path)
    record_identity(path, "roy", {"num_players": 2})
    return str(path)


def policy_ranking(policy: str, engine) -> list[int]:
    """The legal moves by the policy's probability, most probable first (ties: lower id),
    read through the policy agent rather than the search."""
    import torch

    model = make_agent(policy, "roy", engine.config).model  # type: ignore[attr-defined]
    obs = torch.as_tensor(engine.observation(engine.current_player)[None])
    with torch.no_grad():
        probs = model.policy.get_distribution(obs).distribution.probs[0].numpy()
    legal = np.flatnonzero(engine.legal_mask()).tolist()
    return sorted(legal, key=lambda a: (-probs[a], a))


def test_flat_with_a_policy_baseline_keeps_the_policys_move_unless_clearly_beaten(
        roy_policy: str) -> None:
    strict = SearchAgent("roy", method="flat", rollout="heuristic", simulations=40,
                         rollout_depth=60, policy=roy_policy, baseline="policy", z=1e9, seed=0)
    loose = SearchAgent("roy", method="flat", rollout="heuristic", simulations=40,
                        rollout_depth=60, policy=roy_policy, baseline="policy", z=0.0, seed=0)
    differs_from_heuristic = differs_from_policy = 0
    for engine in choice_positions("roy", 2, 8):
        favoured = policy_ranking(roy_policy, engine)[0]
        assert strict.act_in(engine) == favoured
        differs_from_heuristic += favoured != heuristic_move("roy", 2, engine)
        differs_from_policy += loose.act_in(engine) != favoured
    assert differs_from_heuristic > 0  # the baseline is the policy's, not the heuristic's
    assert differs_from_policy > 0  # and the rollouts can still overrule it


@pytest.mark.parametrize("baseline", ["policy", "heuristic"])
def test_flat_top_k_scores_k_moves_the_policys_likeliest_and_the_baseline(
        roy_policy: str, baseline: str) -> None:
    """Exactly k moves: the policy's k likeliest, or, where the baseline is not among them,
    its k-1 likeliest and the baseline."""
    agent = SearchAgent("roy", method="flat", rollout="heuristic", simulations=60,
                        rollout_depth=40, policy=roy_policy, baseline=baseline, top_k=2, seed=0)
    checked = displaced = 0
    for engine in choice_positions("roy", 2, 8):
        ranking = policy_ranking(roy_policy, engine)
        favoured = ranking[0] if baseline == "policy" else heuristic_move("roy", 2, engine)
        move = agent.act_in(engine)
        scored = set(agent.last_visits)
        expected = set(ranking[:2]) if favoured in ranking[:2] else {ranking[0], favoured}
        assert move in scored and scored == expected, (scored, ranking[:3], favoured)
        checked += len(ranking) > 2
        displaced += favoured not in ranking[:2]
    assert checked  # some position had more legal moves than k
    if baseline == "heuristic":
        assert displaced  # some baseline the policy ranked below its top k


def test_flat_with_a_policy_prior_is_deterministic_for_a_seed(roy_policy: str) -> None:
    def moves(seed: int) -> list[int]:
        agent = make_agent(f"search:method=flat,rollout=heuristic,simulations=30,z=0,"
                           f"policy={roy_policy},baseline=policy,top_k=3", "roy", seed=seed)
        return [agent.act_in(e) for e in choice_positions("roy", 2, 6)]  # type: ignore[attr-defined]
    assert moves(4) == moves(4)


@pytest.mark.parametrize("spec,words", [
    ("search:method=flat,baseline=policy", "baseline=policy, top_k=None need policy="),
    ("search:method=flat,top_k=3", "baseline=heuristic, top_k=3 need policy="),
    ("search:method=flat,policy=p.zip,top_k=0", "top_k=0: expected an integer >= 1"),
    ("search:method=flat,top_k=two", "top_k='two': expected an integer"),
    ("search:method=flat,policy=p.zip,baseline=heuristics", "baseline='heuristics': expected "
                                                            "one of heuristic, policy"),
    ("search:policy=p.zip,baseline=policy", "baseline and top_k are method=flat's settings"),
    ("search:policy=p.zip,top_k=4", "baseline and top_k are method=flat's settings"),
    ("search:method=flat,rollout=heuristic,policy=p.zip", "as its rollout agent "
                                                          "(rollout=policy) or as its prior"),
])
def test_flat_policy_prior_errors_name_the_problem(spec: str, words: str) -> None:
    with pytest.raises(ValueError) as err:
        make_agent(spec, "roy")
    assert words in str(err.value)


class Clock:
    """A stand-in for the ``time`` module whose ``perf_counter`` moves only when told to: a
    test of the time budget that no load on the machine can disturb."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now


class SlowSteps:
    """Two seats, any of three moves, the episode over after ``length`` steps, each step
    taking ``step_s`` seconds on ``clock``: a rollout of known cost."""

    name = "slow_steps"
    num_players = 2

    def __init__(self, clock: Clock, length: int = 3, step_s: float = 0.010) -> None:
        self.clock, self.left, self.step_s = clock, length, step_s
        self.current_player = 0
        self.winners: list[int] = []
        self.rewards = np.zeros(2)

    @property
    def done(self) -> bool:
        return self.left == 0

    def clone(self) -> SlowSteps:
        other = SlowSteps(self.clock, self.left, self.step_s)
        other.current_player = self.current_player
        return other

    def resample_hidden(self, seat: int, rng) -> None:
        pass

    def legal_mask(self) -> np.ndarray:
        return np.ones(3, dtype=np.int8) if self.left else np.zeros(3, dtype=np.int8)

    def step(self, action: int) -> None:
        self.clock.now += self.step_s
        self.left -= 1
        self.current_player = 1 - self.current_player
        if not self.left:
            self.winners = [action % 2]


def test_flat_starts_no_rollout_that_would_end_after_the_deadline(monkeypatch) -> None:
    """Rollouts of 30 ms under a 50 ms budget: the second would end at 60 ms, so it is not
    started (the first round is then incomplete and dropped), and the decision takes 30 ms.
    The old check, the deadline not yet passed before each rollout, started it: 60 ms."""
    from card_envs.agents import search, search_flat

    clock = Clock()
    monkeypatch.setattr(search, "time", clock)
    monkeypatch.setattr(search_flat, "time", clock)

    def decision_ms() -> float:
        agent = SearchAgent(None, method="flat", simulations=1000, time_ms=50, seed=0)
        agent.act_in(SlowSteps(clock))
        assert agent.searched == 1
        return 1000 * agent.search_seconds

    assert decision_ms() == pytest.approx(30)
    monkeypatch.setattr(search_flat._Clock, "fits", lambda self, round_start=False:
                        clock.perf_counter() < self.deadline)
    assert decision_ms() == pytest.approx(60)



def test_flat_clock_counts_a_rounds_set_up_before_starting_it(monkeypatch) -> None:
    """A round starts only if its set-up and one rollout, at their mean costs so far, end by
    the deadline; a rollout within a round needs only its own cost to fit. Before anything
    is measured, whatever starts before the deadline may start."""
    from card_envs.agents import search_flat

    clock = Clock()
    monkeypatch.setattr(search_flat, "time", clock)
    budget = search_flat._Clock(clock.now + 0.050)
    assert budget.fits(round_start=True) and budget.fits()
    budget.set_up(0.010)
    budget.rolled_out(0.012)
    budget.rolled_out(0.008)  # a mean of 10 ms
    clock.now += 0.035  # 15 ms left
    assert budget.fits() and not budget.fits(round_start=True)
    clock.now += 0.006  # 9 ms left
    assert not budget.fits()
    assert search_flat._Clock(None).fits(round_start=True)  # no time budget

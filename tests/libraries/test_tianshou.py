"""Tianshou, for real (``make test-marl`` runs this in a virtualenv with Tianshou installed;
the default test run skips it): a collector run of every game through the adapter, and each
seat's learner, fed by Tianshou's own multi-agent dispatcher, receives exactly the returns the
env paid it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tianshou")

from pettingzoo.utils.wrappers import BaseWrapper  # noqa: E402
from tianshou.algorithm.algorithm_base import policy_within_training_step  # noqa: E402

from card_envs.games import GAMES  # noqa: E402
from tests.libraries.snippets import env_module, for_game, run, snippet  # noqa: E402

GAME_NAMES = list(GAMES)
#: Short episodes, and score rewards where a game has them: points paid on others' moves.
CONFIG: dict[str, dict[str, Any]] = {
    "roy": {},
    "memory_uno": {"reward": "score"},
    "mega_memory": {},
    "deluxe_memory": {"num_players": 2},
    "dogpile": {"reward": "score", "ticks_per_second": 1, "round_seconds": (4, 3, 2)},
}


class Ledger(BaseWrapper):
    """Sums what the env pays each seat, step by step, per finished episode."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.finished: list[dict[str, float]] = []
        self.current: dict[str, float] = {}

    def reset(self, seed: Any = None, options: Any = None) -> None:
        super().reset(seed=seed, options=options)
        self.current = dict.fromkeys(self.possible_agents, 0.0)

    def step(self, action: Any) -> None:
        super().step(action)
        for agent, reward in self.env.rewards.items():
            self.current[agent] += reward
        if all(self.env.terminations[a] or self.env.truncations[a] for a in self.env.agents):
            self.finished.append(self.current)
            self.current = dict.fromkeys(self.possible_agents, 0.0)


def _ledgers(collector: Any) -> list[Ledger]:
    """The Ledger inside each of the collector's envs (PettingZooEnv > SeatRewards > Ledger)."""
    return [worker.env.env.env for worker in collector.env.workers]


@pytest.fixture(autouse=True)
def _seeded() -> None:
    """The random policies draw from numpy's global stream: seeded, each run plays the same."""
    np.random.seed(0)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_page_s_collector_runs_every_game(game: str) -> None:
    ns = run(for_game(snippet("tianshou"), game))
    stats = ns["stats"]
    assert stats.n_collected_episodes == 4
    buffer = ns["collector"].buffer
    batch, _ = buffer.sample(0)
    # Every action taken was allowed by the mask the policy was given.
    assert batch.obs.mask[np.arange(len(batch)), batch.act].all()
    assert batch.obs.mask.any(1).all()
    n = len(ns["env"].agents)
    assert batch.info.winners.shape == (len(batch), n)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_each_seat_s_learner_receives_exactly_what_the_env_paid(game: str) -> None:
    """Recording learners behind Tianshou's MultiAgentOffPolicyAlgorithm: the rewards each one
    is handed in an update (the dispatcher's column of its own transitions) sum to the env's
    payments to that seat over the collected episodes."""
    config = CONFIG[game]
    code = for_game(snippet("tianshou"), game).replace(
        f"{game}_v1.env()", f"Ledger({game}_v1.env(**CONFIG))")
    ns = run(code, Ledger=Ledger, CONFIG=config)
    algorithm, collector = ns["algorithm"], ns["collector"]
    received: dict[str, float] = {}
    for agent in ns["env"].agents:
        learner = algorithm.get_algorithm(agent)

        def record(batch: Any, agent: str = agent, learner: Any = learner) -> Any:
            received[agent] = float(np.sum(batch.rew))
            return type(learner)._update_with_batch(learner, batch)

        learner._update_with_batch = record
    with policy_within_training_step(algorithm.policy):
        algorithm.update(buffer=collector.buffer, sample_size=0)
    ledgers = _ledgers(collector)
    assert all(not any(ledger.current.values()) for ledger in ledgers)
    paid = {a: sum(ep[a] for ledger in ledgers for ep in ledger.finished) for a in received}
    assert sum(len(ledger.finished) for ledger in ledgers) == 4
    assert received == pytest.approx(paid)
    assert any(any(ep.values()) for ledger in ledgers for ep in ledger.finished)


def test_without_the_adapter_a_loser_s_reward_is_lost() -> None:
    """Why the adapter exists: the plain PettingZooEnv credits a step's rewards to the seat
    that acted only, and ROY's loser is paid -1 on the winner's move."""
    from tianshou.env import PettingZooEnv

    from card_envs.adapters.tianshou import SeatRewards

    rng = np.random.default_rng(0)
    lost = kept = 0
    for wrap in (lambda e: e, SeatRewards):
        env = PettingZooEnv(wrap(env_module("roy").env()))
        for seed in range(20):
            obs, _ = env.reset(seed=seed)
            own = np.zeros(2)
            done = False
            while not done:
                seat = env.agent_idx[obs["agent_id"]]
                obs, rew, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
                own[seat] += rew[seat]
                done = term or trunc
            if wrap is SeatRewards:
                kept += int(sorted(own.tolist()) == [-1.0, 1.0])
            else:
                lost += int(-1.0 not in own.tolist())
    assert kept == 20 and lost > 0

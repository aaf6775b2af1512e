"""AgileRL, for real (``make test-marl`` runs this in a virtualenv where AgileRL is installed
beside card-envs, PettingZoo below 1.27 as AgileRL pins it; the default test run skips it):
IPPO decides for every game through the adapter, as docs/libraries/agilerl.md shows, and each
decision of the seat to act is legal."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("agilerl")

from pettingzoo import ParallelEnv  # noqa: E402

from card_envs.games import GAMES  # noqa: E402
from tests.libraries.snippets import env_module, for_game, run, snippet  # noqa: E402

GAME_NAMES = list(GAMES)


class Checked(ParallelEnv):
    """Checks every step's actions against the masks the last step gave (in ``info``), and
    that the observations hold no mask (AgileRL refuses them)."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.possible_agents = env.possible_agents
        self.metadata = env.metadata
        self.infos: dict[str, Any] = {}
        self.decisions = self.episodes = 0

    @property
    def agents(self) -> list[str]:
        return self.env.agents

    def observation_space(self, agent: str) -> Any:
        return self.env.observation_space(agent)

    def action_space(self, agent: str) -> Any:
        return self.env.action_space(agent)

    def reset(self, seed: Any = None, options: Any = None) -> Any:
        obs, self.infos = self.env.reset(seed=seed, options=options)
        self._check(obs, self.infos)
        return obs, self.infos

    def step(self, actions: dict[str, Any]) -> Any:
        for agent, action in actions.items():
            info = self.infos[agent]
            assert info["action_mask"][action] == 1, (agent, action)
            self.decisions += info.get("to_act", True)
        obs, rewards, terms, truncs, self.infos = self.env.step(actions)
        self._check(obs, self.infos)
        self.episodes += not self.env.agents
        return obs, rewards, terms, truncs, self.infos

    def result(self) -> Any:
        return self.env.result()

    @staticmethod
    def _check(obs: dict[str, Any], infos: dict[str, Any]) -> None:
        for agent, o in obs.items():
            assert isinstance(o, np.ndarray) and o.ndim == 1
            mask = infos[agent]["action_mask"]
            assert isinstance(mask, list) and all(type(x) is int for x in mask) and any(mask)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_ippo_decides_every_game_through_the_page_s_snippet(game: str) -> None:
    code = for_game(snippet("agilerl"), game).replace(
        f"agilerl_env({game}_v1.env())", f"Checked(agilerl_env({game}_v1.env()))")
    ns = run(code, Checked=Checked)
    env = ns["env"]
    assert ns["decisions"] == 200 and env.decisions == 200


def test_ippo_on_dogpile_s_parallel_env_and_a_finished_game() -> None:
    """Every dog decides each tick; a whole short game ends with ``winners`` in ``info``."""
    from agilerl.algorithms.ippo import IPPO

    from card_envs.adapters.agilerl import agilerl_env

    env = Checked(agilerl_env(env_module("dogpile").parallel_env(
        ticks_per_second=1, round_seconds=(4, 3, 2))))
    agents = env.possible_agents
    ippo = IPPO([env.observation_space(a) for a in agents],
                [env.action_space(a) for a in agents], agent_ids=agents)
    obs, infos = env.reset(seed=0)
    while env.agents:
        actions, *_ = ippo.get_action(obs, infos)
        obs, _, _, _, infos = env.step({a: int(actions[a].item()) for a in env.agents})
    assert env.episodes == 1 and env.decisions > 0
    assert all(info["winners"].shape == (3,) for info in infos.values())
    assert env.result()["winners"] == np.flatnonzero(infos["player_0"]["winners"]).tolist()


def test_turns_as_parallel_pays_every_seat_on_the_step_it_is_paid() -> None:
    """ROY's loser gets its -1 on the winner's move: the Parallel view pays it there."""
    from card_envs.adapters.agilerl import TurnsAsParallel

    env = TurnsAsParallel(env_module("roy").env())
    rng = np.random.default_rng(0)
    for seed in range(5):
        obs, infos = env.reset(seed=seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        while env.agents:
            actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"])))
                       for a in env.agents}
            obs, rewards, _, _, infos = env.step(actions)
            for a, r in rewards.items():
                totals[a] += r
        assert sorted(totals.values()) == [-1.0, 1.0]

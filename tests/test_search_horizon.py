"""A search one deal ahead (``horizon=deal``): the engines' ``deal_number``, rollouts and the
tree stopping where the deal ends, ``value=margin``, and the settings' errors."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from card_envs.agents import make_agent
from card_envs.agents.search import SearchAgent, SearchSettings
from card_envs.games import make_engine

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

#: Games whose ``episode="game"`` deals again, and the attribute their snapshots count deals in.
MULTI_DEAL = [("roy", "hand_number", {"target_score": 30}),
              ("mega_memory", "round_number", {}),
              ("memory_uno", "round_number", {})]
FULL_ROY = {"episode": "game", "reward": "score", "target_score": 100}


def played_into_a_later_deal(game: str, options: dict[str, Any], seed: int) -> Any:
    """A live position of a full game, random moves in, past the first deal, with a choice
    to make (more than one legal move: a forced move is played without a search)."""
    rng = np.random.default_rng(seed)
    engine = make_engine(game, **options)
    engine.reset(seed=seed)
    while (engine.deal_number < 2 or rng.random() < 0.9
           or np.count_nonzero(engine.legal_mask()) < 2):
        legal = np.flatnonzero(engine.legal_mask())
        engine.step(int(legal[rng.integers(legal.size)]))
        assert not engine.done, "the game ended in its first deal: pick another seed"
    return engine


@pytest.mark.parametrize("game,counter,extra", MULTI_DEAL)
def test_deal_number_counts_the_deals_of_a_full_game(game: str, counter: str,
                                                     extra: dict[str, Any]) -> None:
    engine = make_engine(game, episode="game", **extra)
    engine.reset(seed=4)
    assert engine.deal_number == 1
    rng = np.random.default_rng(4)
    seen = [1]
    while not engine.done:
        legal = np.flatnonzero(engine.legal_mask())
        engine.step(int(legal[rng.integers(legal.size)]))
        assert engine.deal_number == getattr(engine, counter)
        assert engine.deal_number in (seen[-1], seen[-1] + 1), "a deal was skipped"
        if engine.deal_number != seen[-1]:
            seen.append(engine.deal_number)
            assert engine.clone().deal_number == engine.deal_number
    assert len(seen) > 1, "a full game of one deal tests nothing"


@pytest.mark.parametrize("game", ["roy", "memory_uno", "mega_memory", "deluxe_memory",
                                  "dogpile"])
def test_one_deal_episodes_stay_in_deal_one(game: str) -> None:
    engine = make_engine(game)
    engine.reset(seed=0)
    rng = np.random.default_rng(0)
    while not engine.done:
        assert engine.deal_number == 1
        legal = np.flatnonzero(engine.legal_mask())
        engine.step(int(legal[rng.integers(legal.size)]))
    assert engine.deal_number == 1


@pytest.mark.parametrize("game,counter,extra", MULTI_DEAL)
@pytest.mark.parametrize("rollout", ["random", "heuristic"])
def test_a_deal_horizon_rollout_stops_where_the_deal_ends(game: str, counter: str,
                                                          extra: dict[str, Any],
                                                          rollout: str) -> None:
    options = {"episode": "game", "reward": "score", **extra}
    agent = SearchAgent(game, options, horizon="deal", value="reward", rollout=rollout, seed=0)
    for seed in range(3):
        engine = played_into_a_later_deal(game, options, seed)
        deal = engine.deal_number
        agent._deal = deal  # as act_in sets it for the decision
        world = engine.clone()
        summed = [0.0] * engine.num_players
        values = agent.leaf_values(world, engine.num_players, random.Random(seed), summed)
        # Stopped at the first step of the next deal (or the game's end in this deal).
        assert world.deal_number == deal + 1 or (world.done and world.deal_number == deal)
        assert not world.done or world.deal_number == deal
        assert values == summed
        # The same rollout with the episode as its horizon plays on past the deal.
        agent._deal = None
        whole = engine.clone()
        agent.leaf_values(whole, engine.num_players, random.Random(seed),
                          [0.0] * engine.num_players)
        assert whole.done


def test_a_deal_horizon_rollout_is_scored_by_what_the_deal_paid() -> None:
    """ROY pays a hand's points to its winner as the hand ends: a rollout to the hand's end
    scores its winner the cards left in the other hands, and margin is zero-sum."""
    reward = SearchAgent("roy", FULL_ROY, horizon="deal", value="reward", seed=0)
    margin = SearchAgent("roy", FULL_ROY, horizon="deal", value="margin", seed=0)
    checked = 0
    for seed in range(6):
        engine = played_into_a_later_deal("roy", FULL_ROY, seed)
        scores = list(engine.scores)
        for agent in (reward, margin):
            agent._deal = engine.deal_number
            world = engine.clone()
            values = agent.leaf_values(world, 2, random.Random(seed), [0.0, 0.0])
            if world.done or world.last_hand_winner < 0:
                continue
            gained = [world.scores[i] - scores[i] for i in range(2)]
            winner = world.last_hand_winner
            assert gained[1 - winner] == 0 and gained[winner] > 0
            if agent is reward:
                assert values == [float(g) for g in gained]
            else:
                assert values[winner] == gained[winner] == -values[1 - winner]
            checked += 1
    assert checked >= 6


def test_margin_is_each_seats_reward_less_the_others_mean() -> None:
    from card_envs.agents.search import _margins

    assert _margins([6.0, 0.0, 3.0]) == [4.5, -4.5, 0.0]
    assert _margins([2.0]) == [2.0]


@pytest.mark.parametrize("method", ["ismcts", "flat"])
def test_a_deal_horizon_search_plays_legal_moves_and_leaves_the_game_alone(method: str) -> None:
    spec = (f"search:method={method},rollout=heuristic,simulations=24,horizon=deal,"
            "value=margin")
    agent = make_agent(spec, "roy", FULL_ROY, seed=3)
    assert isinstance(agent, SearchAgent)
    for seed in range(4):
        engine = played_into_a_later_deal("roy", FULL_ROY, seed)
        before = engine.state_dict()
        action = agent.act_in(engine)
        assert engine.is_legal(action), engine.illegal_reason(action)
        assert engine.state_dict() == before


def near_a_deal_end(seed: int) -> Any:
    """A full ROY game's position, with a choice to make, from which random play ends the
    hand within two steps in some worlds: a tree of a few hundred simulations reaches past it."""
    rng = np.random.default_rng(seed)
    for k in range(200):
        engine = played_into_a_later_deal("roy", FULL_ROY, seed * 1000 + k)
        for _ in range(30):
            world = engine.clone()
            world.resample_hidden(world.current_player, rng)
            for _ in range(2):
                legal = np.flatnonzero(world.legal_mask())
                world.step(int(legal[rng.integers(legal.size)]))
                if world.done or world.deal_number != engine.deal_number:
                    return engine
    raise AssertionError("no position near a hand's end was found")


def test_a_deal_horizon_tree_never_crosses_into_the_next_deal(monkeypatch: Any) -> None:
    """The tree selects no move past the decision's deal, and every leaf it scores lies in
    that deal or at the first step of the next."""
    engine = near_a_deal_end(1)
    deal = engine.deal_number
    selected_in: list[int] = []
    leaves: list[int] = []
    real_select, real_leaf = SearchAgent._select, SearchAgent.leaf_values

    def select(self: SearchAgent, world: Any, *args: Any) -> Any:
        selected_in.append(world.deal_number)
        return real_select(self, world, *args)

    def leaf(self: SearchAgent, world: Any, *args: Any) -> list[float]:
        out = real_leaf(self, world, *args)
        leaves.append(world.deal_number)
        return out

    monkeypatch.setattr(SearchAgent, "_select", select)
    monkeypatch.setattr(SearchAgent, "leaf_values", leaf)
    agent = SearchAgent("roy", FULL_ROY, horizon="deal", value="margin", simulations=300,
                        seed=5)
    agent.act_in(engine)
    assert set(selected_in) == {deal}
    assert deal + 1 in leaves, "no simulation reached the hand's end: the test shows nothing"
    assert set(leaves) <= {deal, deal + 1}


def test_same_seed_same_moves_one_deal_ahead() -> None:
    engine = played_into_a_later_deal("roy", FULL_ROY, 2)
    moves = [SearchAgent("roy", FULL_ROY, horizon="deal", value="margin", simulations=60,
                         rollout="heuristic", seed=9).act_in(engine) for _ in range(2)]
    assert moves[0] == moves[1]


@pytest.mark.parametrize("spec,words", [
    ("search:horizon=round", "horizon='round': expected one of episode, deal"),
    ("search:horizon=deal", "horizon=deal scores a rollout by what the deal pays: it needs "
                            "value=reward or value=margin"),
    ("search:value=points", "value='points': expected one of win, reward, margin"),
])
def test_horizon_errors_name_the_problem(spec: str, words: str) -> None:
    with pytest.raises(ValueError) as err:
        make_agent(spec, "roy")
    assert words in str(err.value)


def test_a_deal_horizon_needs_rewards_paid_as_deals_end() -> None:
    words = "reward='win', which pays only at the episode's end"
    with pytest.raises(ValueError, match=words):
        SearchAgent("roy", {"episode": "game"}, horizon="deal", value="margin")
    # A search for any engine learns its reward mode from the position.
    anywhere = SearchAgent(None, horizon="deal", value="margin", simulations=4)
    engine = make_engine("roy", episode="game")
    engine.reset(seed=0)
    with pytest.raises(ValueError, match=words):
        anywhere.act_in(engine)


def test_a_training_config_with_a_deal_horizon_needs_rewards_paid_as_deals_end() -> None:
    from training.config import ConfigError, load_config

    teacher = "search:method=flat,rollout=heuristic,horizon=deal,value=margin"
    overrides = {"pretrain.dagger_rounds": 1, "pretrain.dagger_games": 2,
                 "pretrain.dagger_epochs": 1, "pretrain.dagger_teacher": teacher}
    config = CONFIGS / "roy.yaml"
    load_config(config, overrides, check_cuda=False)  # env.reward: score
    with pytest.raises(ConfigError, match="pretrain.dagger_teacher: horizon=deal scores what "
                                          "a deal pays, but env.reward is 'win'"):
        load_config(config, {**overrides, "env.reward": "win"}, check_cuda=False)


def test_settings_parse_the_horizon() -> None:
    assert SearchSettings.parse("horizon=deal,value=margin") == SearchSettings(
        horizon="deal", value="margin")

"""A VecEnv that plays N games of any card game against a mixed opponent pool, batched.

Each env is a bare engine (no Gymnasium wrapper per game). One ``step`` applies the learner's
N actions, then repeatedly gathers every pending opponent decision across all N games and runs
it through ONE call per opponent: one forward pass per snapshot network, one vectorised draw for
the random agent, a loop for the heuristic. Finished games are reset in the same loop, so a step
costs a handful of forward passes however many games are waiting.

Per episode the learner takes a seat (fixed or random) and every other seat draws an opponent:
a past snapshot of the learner (the newest with probability ``latest_prob``, else uniform over
the pool), the random agent, the game's heuristic, or a search agent (``search``: it searches
each game's engine itself, one decision at a time), by the configured relative weights.
Rewards that arrive on an opponent's move (including the terminal one) are added to the
learner's last step.
"""

from __future__ import annotations

import numbers
import pickle
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from card_envs.agents import make_agent
from card_envs.core.engine import check_count, integer_action
from card_envs.games import make_engine

from .actors import (
    AgentActor,
    RandomActor,
    TorchPolicyActor,
    load_policy_net,
    weightless_extractor,
)

REWARD_MODES = ("learner", "zero_sum")
RANDOM, HEURISTIC = 0, 1  # actor ids; snapshot slot j is actor 2 + j
SEARCH = -1  # the search agent's actor id (below the others: older checkpoints keep theirs)
OPPONENT_KINDS = ("self", "random", "heuristic", "search")
#: The search opponent's default spec (``selfplay.search`` in a config).
DEFAULT_SEARCH = "search:simulations=25,prior=heuristic"
_MAX_REDEALS = 100


def check_reward(mode: str, scale: float) -> None:
    """Raise ``ValueError`` naming the ``selfplay`` key if the reward settings are invalid."""
    if mode not in REWARD_MODES:
        raise ValueError(f"selfplay.reward: expected one of {', '.join(REWARD_MODES)}, "
                         f"got {mode!r}")
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not scale > 0:
        raise ValueError(f"selfplay.reward_scale: expected a positive number, got {scale!r}")


def check_options(num_players: int, n_envs: Any, rates: Any, pool_size: Any, latest_prob: Any,
                  learner_seat: Any) -> None:
    """Raise ``ValueError`` naming the argument, when :class:`SelfPlayVecEnv` is built directly
    (a config is checked on load): a seat out of range would otherwise loop until the redeal cap,
    a mistyped opponent kind would be dropped without a word, and a bad count fail deep in numpy
    or at the first snapshot."""
    check_count("n_envs", n_envs)
    if not isinstance(rates, dict):
        raise ValueError(f"rates: expected a mapping such as {{'self': 0.6, 'random': 0.2, "
                         f"'heuristic': 0.2}}, got {rates!r}")
    for kind, weight in rates.items():
        if kind not in OPPONENT_KINDS:
            raise ValueError(f"rates: unknown opponent kind {kind!r}; expected "
                             f"{', '.join(OPPONENT_KINDS)}")
        if (isinstance(weight, bool) or not isinstance(weight, numbers.Real)
                or not 0 <= float(weight) < np.inf):
            raise ValueError(f"rates[{kind!r}]: expected a weight >= 0 (the weights are "
                             f"relative), got {weight!r}")
    if not sum(rates.values()) > 0:
        raise ValueError(f"rates: at least one weight must be positive, got {rates!r}")
    check_count("pool_size", pool_size)
    if (isinstance(latest_prob, bool) or not isinstance(latest_prob, numbers.Real)
            or not 0 <= float(latest_prob) <= 1):
        raise ValueError(f"latest_prob: expected a number in [0, 1], got {latest_prob!r}")
    if learner_seat != "random" and not (integer_action(learner_seat) is not None
                                         and 0 <= learner_seat < num_players):
        raise ValueError(f"learner_seat: expected 'random' or a seat 0..{num_players - 1}, "
                         f"got {learner_seat!r}")


def check_actions(actions: Any, num_envs: int, num_actions: int) -> np.ndarray:
    """The learner's actions as ``num_envs`` integers in range, else ``ValueError``: an action
    past the last one failed as an IndexError on the mask, and a float was truncated (1.9
    played action 1)."""
    actions = np.asarray(actions)
    if actions.size != num_envs:
        raise ValueError(f"expected {num_envs} actions (one per env), got {actions.size}")
    actions = actions.reshape(num_envs)
    if actions.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers, got dtype {actions.dtype}: {actions}")
    # Two reductions per step; the offending env is looked up only on failure.
    if actions.min() < 0 or actions.max() >= num_actions:
        i = int(np.flatnonzero((actions < 0) | (actions >= num_actions))[0])
        raise ValueError(f"env {i}: the learner chose action {int(actions[i])}, out of "
                         f"range: actions are integers in 0..{num_actions - 1}")
    return actions


def reward_weights(num_players: int, seat: int, mode: str, scale: float) -> np.ndarray:
    """How the seats' game rewards add up to ``seat``'s training reward (see ``reward``)."""
    other = -1.0 / (num_players - 1) if mode == "zero_sum" and num_players > 1 else 0.0
    weights = np.full(num_players, other)
    weights[seat] = 1.0
    return weights * scale


class OpponentPool:
    """The last ``size`` snapshots of the learner, each held in its own small policy network."""

    def __init__(self, size: int, deterministic: bool, rng: np.random.Generator) -> None:
        self.size = size
        self.deterministic = deterministic
        self.rng = rng
        self.actors: list[TorchPolicyActor] = []
        self.steps: list[int] = []  # learner step at which each slot was taken
        self.newest = -1  # slot of the most recent snapshot

    def add(self, policy: Any, step: int) -> int:
        """Snapshot ``policy`` now; once full, the oldest slot is overwritten."""
        if len(self.actors) < self.size:
            net = load_policy_net(policy)
            self.actors.append(TorchPolicyActor(net, self.deterministic, self.rng,
                                                name=f"snapshot@{step}"))
            self.steps.append(step)
            slot = len(self.actors) - 1
        else:
            slot = int(np.argmin(self.steps))
            self.steps[slot] = step
            self.actors[slot].name = f"snapshot@{step}"
        self.actors[slot].policy.load_state_dict(policy.state_dict())
        self.newest = slot
        return slot

    def state_dict(self) -> dict[str, Any]:
        return {
            "steps": list(self.steps),
            "newest": self.newest,
            "weights": [{k: v.clone() for k, v in a.policy.state_dict().items()}
                        for a in self.actors],
        }

    def load_state_dict(self, state: dict[str, Any], template_policy: Any) -> None:
        # Kept silently, the extra snapshots would outlive the pool's size for good: add()
        # only overwrites once the pool is full, and never trims it.
        if len(state["steps"]) > self.size:
            raise ValueError(f"the opponent pool's state holds {len(state['steps'])} snapshots, "
                             f"more than this pool keeps (pool_size {self.size})")
        self.actors, self.steps = [], []
        for step, weights in zip(state["steps"], state["weights"], strict=True):
            net = load_policy_net(template_policy)
            net.load_state_dict(weights)
            self.actors.append(TorchPolicyActor(net, self.deterministic, self.rng,
                                                name=f"snapshot@{step}"))
            self.steps.append(step)
        self.newest = state["newest"]


class SelfPlayVecEnv(VecEnv):
    """N games of ``game`` with the learner in one seat of each; see the module docstring.

    Args:
        game: registered game name.
        env_config: the game's options (validated by the engine).
        n_envs: games stepped together.
        rates: ``{"self": p, "random": q, "heuristic": r}``, relative weights (divided by their
            sum) of each opponent kind for every opponent seat.
        pool_size: snapshots kept; ``pool.add`` is called by the training loop.
        latest_prob: chance that a self-play seat gets the newest snapshot; otherwise the
            snapshot is drawn uniformly from the pool (the newest included).
        learner_seat: a seat number, or ``"random"`` to rotate the learner each episode.
        seed: seeds every game, the seat and opponent draws, the opponents' sampling and the
            heuristic's own random choices.
        reward: ``"learner"`` pays the learner its own reward from the game; ``"zero_sum"``
            pays its reward minus the mean of the other seats' (with ``reward="score"`` games:
            the point margin, which a race to a target rewards, rather than points alone).
        reward_scale: every learner reward is multiplied by this (scores to about +-1).
        search: the agent spec (``search[:<key>=<value>,...]``) the ``"search"`` opponents
            play; it is given each game's engine (``act_in``), one decision at a time.
    """

    def __init__(
        self,
        game: str,
        env_config: dict[str, Any],
        n_envs: int,
        rates: dict[str, float],
        pool_size: int = 8,
        latest_prob: float = 0.5,
        learner_seat: int | str = "random",
        opponent_deterministic: bool = False,
        seed: int = 0,
        reward: str = "learner",
        reward_scale: float = 1.0,
        search: str = DEFAULT_SEARCH,
    ) -> None:
        check_reward(reward, reward_scale)
        num_players = make_engine(game, **env_config).num_players
        check_options(num_players, n_envs, rates, pool_size, latest_prob, learner_seat)
        self.engines = [make_engine(game, **env_config) for _ in range(n_envs)]
        eng = self.engines[0]
        self.game = game
        self.env_config = dict(env_config)
        self.num_players = eng.num_players
        self.num_actions = eng.num_actions
        self.obs_size = eng.layout.size
        low, high = eng.layout.bounds()
        super().__init__(n_envs, spaces.Box(low, high, dtype=np.float32),
                         spaces.Discrete(eng.num_actions))

        self.rng = np.random.default_rng()  # seats and opponent draws
        opp_rng = np.random.default_rng()  # opponents' own action sampling
        # Search last: a zero weight there leaves every draw of the other kinds as it was.
        weights = np.array([rates.get("random", 0.0), rates.get("heuristic", 0.0),
                            rates.get("self", 0.0), rates.get("search", 0.0)],
                           dtype=np.float64)
        self.kind_p = weights / weights.sum()
        self.latest_prob = float(latest_prob)
        self.learner_seat_option = learner_seat
        self.pool = OpponentPool(pool_size, opponent_deterministic, opp_rng)
        self.random_actor = RandomActor(opp_rng)
        self.heuristic_actor = (AgentActor(make_agent("heuristic", game, eng.config), "heuristic")
                                if weights[1] > 0 else None)
        self.search_agent: Any = None
        if weights[3] > 0:
            if not (search == "search" or str(search).startswith("search:")):
                raise ValueError(f"search: expected a search agent spec "
                                 f"'search[:<key>=<value>,...]', got {search!r}")
            self.search_agent = make_agent(search, game, eng.config)
        self._seed_streams(seed)

        n = self.num_players
        self.reward_mode = reward
        self.reward_scale = float(reward_scale)
        # Per env, the weight of each seat's game reward in the learner's: set per episode.
        self._reward_weights = np.zeros((n_envs, n), dtype=np.float64)
        self.learner = np.zeros(n_envs, dtype=np.int64)
        self.seat_actor = np.zeros((n_envs, n), dtype=np.int64)  # actor id per seat
        self.ep_return = np.zeros(n_envs, dtype=np.float64)
        self.ep_length = np.zeros(n_envs, dtype=np.int64)
        self.ep_start = np.zeros(n_envs, dtype=np.float64)
        self._obs = np.zeros((n_envs, self.obs_size), dtype=np.float32)
        self._masks = np.zeros((n_envs, self.num_actions), dtype=bool)
        self._scratch = np.zeros((n_envs, self.obs_size), dtype=np.float32)
        self._scratch_mask = np.zeros((n_envs, self.num_actions), dtype=np.int8)
        self._actions: np.ndarray | None = None
        self.episodes_finished = 0

    def _seed_streams(self, seed: int) -> None:
        """Seed every random stream from ``seed``, the generators' objects kept (the pool's
        actors and the random actor share the opponents' one)."""
        # Streams: 0 seats and opponent draws, 1 opponents' sampling, 2..n_envs+1 the games,
        # n_envs+2 the heuristic's own choices, n_envs+3 the search's (appended last, so the
        # others keep their values).
        n_envs = self.num_envs
        seeds = np.random.SeedSequence(seed).spawn(n_envs + 4)
        for engine, ss in zip(self.engines, seeds[2:n_envs + 2], strict=True):
            engine.rng = np.random.default_rng(ss)
        self.rng.bit_generator.state = np.random.default_rng(seeds[0]).bit_generator.state
        self.pool.rng.bit_generator.state = np.random.default_rng(seeds[1]).bit_generator.state
        # Seeded: Dogpile's and Deluxe Memory's heuristics draw random numbers, and an unseeded
        # one would make the same seed play different games.
        if self.heuristic_actor is not None:
            self.heuristic_actor.agent.seed(int(seeds[n_envs + 2].generate_state(1)[0]))
        if self.search_agent is not None:
            self.search_agent.seed(int(seeds[n_envs + 3].generate_state(1)[0]))

    # -- VecEnv API ------------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        """Deal every game anew; after :meth:`seed` (which MaskablePPO's ``seed`` calls), first
        restart every stream as the constructor's ``seed`` does: SB3's VecEnvs apply a seed at
        the next reset, and the same seed must give the same games."""
        if self._seeds[0] is not None:
            self._seed_streams(int(self._seeds[0]))
            self._reset_seeds()
        for i in range(self.num_envs):
            self._new_episode(i)
        self._advance(list(range(self.num_envs)), rewards=None, finished=None)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = check_actions(actions, self.num_envs, self.num_actions)

    def step_wait(self):
        actions = self._actions
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        finished: dict[int, dict[str, Any]] = {}
        for i, engine in enumerate(self.engines):
            a = int(actions[i])
            if not self._masks[i, a]:
                raise ValueError(f"env {i}: the learner chose illegal action {a} "
                                 f"({engine.illegal_reason(a)})")
            engine.step(a)
            rewards[i] += self._reward_weights[i] @ engine.rewards
            self.ep_length[i] += 1
        self._advance(list(range(self.num_envs)), rewards, finished)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i, info in finished.items():
            dones[i] = True
            infos[i] = info
        self.ep_return[~dones] += rewards[~dones]
        return self._obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self._masks.copy()

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list[Any]:
        if method_name == "action_masks":
            return list(self._masks[list(self._get_indices(indices))])
        raise AttributeError(f"SelfPlayVecEnv has no per-env method {method_name!r}")

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        idx = list(self._get_indices(indices))
        if attr_name == "render_mode":
            return [None] * len(idx)
        if attr_name == "learner_seat":
            return [int(self.learner[i]) for i in idx]
        raise AttributeError(f"SelfPlayVecEnv has no per-env attribute {attr_name!r}")

    def has_attr(self, attr_name: str) -> bool:
        return attr_name in ("action_masks", "render_mode", "learner_seat")

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"SelfPlayVecEnv does not set per-env attribute {attr_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def close(self) -> None:
        pass

    # -- episodes --------------------------------------------------------------------------------
    def _new_episode(self, i: int) -> None:
        """Deal a game, seat the learner, and draw an opponent for every other seat."""
        n = self.num_players
        rng = self.rng
        opt = self.learner_seat_option
        self.learner[i] = rng.integers(n) if opt == "random" else int(opt)
        self._set_reward_weights(i)
        kinds = rng.choice(len(self.kind_p), size=n, p=self.kind_p)
        for seat in range(n):
            kind = kinds[seat]
            if kind == 3:
                self.seat_actor[i, seat] = SEARCH
            elif kind == 2 and self.pool.actors:
                if rng.random() < self.latest_prob:
                    slot = self.pool.newest
                else:
                    slot = int(rng.integers(len(self.pool.actors)))
                self.seat_actor[i, seat] = 2 + slot
            else:
                # No snapshot yet (before the first): play the random agent instead.
                self.seat_actor[i, seat] = HEURISTIC if kind == 1 else RANDOM
        self.engines[i].reset()
        self.ep_return[i] = 0.0
        self.ep_length[i] = 0
        self.ep_start[i] = time.time()

    def _set_reward_weights(self, i: int) -> None:
        self._reward_weights[i] = reward_weights(self.num_players, int(self.learner[i]),
                                                 self.reward_mode, self.reward_scale)

    def _actor(self, actor_id: int):
        if actor_id == SEARCH:
            return self.search_agent
        if actor_id == RANDOM:
            return self.random_actor
        if actor_id == HEURISTIC:
            return self.heuristic_actor
        return self.pool.actors[actor_id - 2]

    def _advance(self, pending: Sequence[int], rewards: np.ndarray | None,
                 finished: dict[int, dict[str, Any]] | None) -> None:
        """Play opponents (batched) until every game in ``pending`` waits on the learner.

        A game that ends is recorded in ``finished`` (when this follows a learner step) and
        re-dealt; a game that ends before the learner's first decision is simply re-dealt.
        Rewards before the learner's first decision are not paid: no action of its can change
        them (the Gymnasium env adds them to its first step, to match the AEC env's returns).
        """
        live = list(pending)
        in_episode = np.zeros(self.num_envs, dtype=bool)  # learner has acted this episode
        if rewards is not None:
            in_episode[list(pending)] = True
        redeals = np.zeros(self.num_envs, dtype=np.int64)
        while live:
            groups: dict[int, list[int]] = {}
            still: list[int] = []
            for i in live:
                engine = self.engines[i]
                if engine.done:
                    if in_episode[i]:
                        # Only a learner step starts episodes here, and it passes both.
                        assert rewards is not None and finished is not None
                        finished[i] = self._finish(i, float(rewards[i]))
                        in_episode[i] = False
                    else:
                        redeals[i] += 1
                        if redeals[i] > _MAX_REDEALS:  # pragma: no cover - no game does this
                            raise RuntimeError("episodes keep ending before the learner acts")
                    self._new_episode(i)
                seat = engine.current_player
                if seat == self.learner[i]:
                    engine.write_observation(seat, self._obs[i])
                    self._masks[i] = engine.legal_mask()
                    continue
                groups.setdefault(int(self.seat_actor[i, seat]), []).append(i)
                still.append(i)
            # Each group's observations and masks in its own rows of the scratch arrays, the
            # snapshots' first and together (the groups still act in their order, which the
            # random streams follow).
            rows: dict[int, slice] = {}
            start = 0
            for actor_id in sorted(groups, key=lambda a: a < 2):
                if actor_id == SEARCH:  # it reads each game's engine itself
                    continue
                idx = groups[actor_id]
                rows[actor_id] = slice(start, start + len(idx))
                for j, i in enumerate(idx, start):
                    engine = self.engines[i]
                    engine.write_observation(engine.current_player, self._scratch[j])
                    self._scratch_mask[j] = engine.legal_mask()
                start += len(idx)
            snapshot_features = self._snapshot_features(
                [len(idx) for actor_id, idx in groups.items() if actor_id >= 2])
            for actor_id, idx in groups.items():
                if actor_id == SEARCH:  # it searches each game's position itself
                    self._play_search(idx, in_episode, rewards)
                    continue
                at = rows[actor_id]
                obs, masks = self._scratch[at], self._scratch_mask[at]
                if snapshot_features is not None and actor_id >= 2:
                    actions = self.pool.actors[actor_id - 2].act(obs, masks,
                                                                 snapshot_features[at])
                else:
                    actions = self._actor(actor_id).act(obs, masks)
                for j, i in enumerate(idx):
                    engine = self.engines[i]
                    a = int(actions[j])
                    if not masks[j, a]:
                        raise ValueError(f"opponent {self._actor(actor_id).name!r} chose illegal "
                                         f"action {a}: {engine.illegal_reason(a)}")
                    engine.step(a)
                    if in_episode[i] and rewards is not None:
                        rewards[i] += self._reward_weights[i] @ engine.rewards
            live = still

    def _snapshot_features(self, counts: list[int]) -> torch.Tensor | None:
        """The features of every snapshot's pending observations (the first ``sum(counts)``
        rows of the scratch array) in ONE pass of the extractor, when it has no weights (then
        every snapshot's gives the same): derived features cost mostly per call, so one call per
        step instead of one per snapshot. ``None`` when fewer than two snapshots play."""
        if len(counts) < 2 or not weightless_extractor(self.pool.actors[0].policy):
            return None
        return self.pool.actors[0].features(self._scratch[:sum(counts)])

    def _play_search(self, idx: list[int], in_episode: np.ndarray,
                     rewards: np.ndarray | None) -> None:
        """One move of the search agent in each game of ``idx`` (its seat there to move)."""
        for i in idx:
            engine = self.engines[i]
            a = int(self.search_agent.act_in(engine))
            if not engine.is_legal(a):
                raise ValueError(f"opponent {self.search_agent.name!r} chose illegal action "
                                 f"{a}: {engine.illegal_reason(a)}")
            engine.step(a)
            if in_episode[i] and rewards is not None:
                rewards[i] += self._reward_weights[i] @ engine.rewards

    def _finish(self, i: int, last_reward: float) -> dict[str, Any]:
        """The info SB3 and our callbacks read when an episode ends."""
        engine = self.engines[i]
        learner = int(self.learner[i])
        terminal = np.empty(self.obs_size, dtype=np.float32)
        engine.write_observation(learner, terminal)
        result = engine.result()
        winners = result["winners"]
        win = (1.0 / len(winners)) if learner in winners else 0.0
        ids = [int(a) for s, a in enumerate(self.seat_actor[i]) if s != learner]
        kinds = ["random" if a == RANDOM else "heuristic" if a == HEURISTIC
                 else "search" if a == SEARCH else "self" for a in ids]
        opponent = kinds[0] if len(set(kinds)) == 1 else "mixed"
        self.episodes_finished += 1
        return {
            "terminal_observation": terminal,
            "TimeLimit.truncated": bool(engine.truncated and not engine.terminated),
            "episode": {"r": float(self.ep_return[i] + last_reward), "l": int(self.ep_length[i]),
                        "t": round(time.time() - self.ep_start[i], 6)},
            "is_success": win > 0,
            "win": win,
            "winners": list(winners),
            "opponent": opponent,
            "learner_seat": learner,
        }

    # -- checkpoints -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly: games, seats, opponents, RNG streams."""
        return {
            "engines": [e.state_dict() for e in self.engines],
            "rng": self.rng.bit_generator.state,
            "opp_rng": self.pool.rng.bit_generator.state,
            "learner": self.learner.copy(),
            "seat_actor": self.seat_actor.copy(),
            "ep_return": self.ep_return.copy(),
            "ep_length": self.ep_length.copy(),
            "obs": self._obs.copy(),
            "masks": self._masks.copy(),
            "pool": self.pool.state_dict(),
            "heuristic": pickle.dumps(self.heuristic_actor),
            "search": pickle.dumps(self.search_agent),
            "episodes_finished": self.episodes_finished,
        }

    def load_state_dict(self, state: dict[str, Any], template_policy: Any) -> None:
        if len(state["engines"]) != self.num_envs:
            raise ValueError(f"checkpoint has {len(state['engines'])} envs, config has "
                             f"{self.num_envs} (selfplay.n_envs)")
        for engine, es in zip(self.engines, state["engines"], strict=True):
            engine.load_state_dict(es)
        self.rng.bit_generator.state = state["rng"]
        self.pool.rng.bit_generator.state = state["opp_rng"]
        self.learner[:] = state["learner"]
        for i in range(self.num_envs):
            self._set_reward_weights(i)
        self.seat_actor[:] = state["seat_actor"]
        self.ep_return[:] = state["ep_return"]
        self.ep_length[:] = state["ep_length"]
        self._obs[:] = state["obs"]
        self._masks[:] = state["masks"]
        self.pool.load_state_dict(state["pool"], template_policy)
        self.heuristic_actor = pickle.loads(state["heuristic"])
        if "search" in state:  # (a checkpoint from before search opponents has none)
            self.search_agent = pickle.loads(state["search"])
        self.episodes_finished = state["episodes_finished"]
        now = time.time()
        self.ep_start[:] = now
        self._reset_seeds()  # the loaded streams go on; a seed pending before must not reseed

"""Our training config as Ray RLlib's PPO (new API stack): league self-play in a MultiRLModule.

:func:`build_algorithm_config` is the whole mapping; the trainer (:mod:`training.rllib_train`)
and the throughput benchmark build their algorithm from it. The MultiRLModule holds:

* ``learner``: :class:`~card_envs.adapters.rllib_module.MaskedPPOModule` (the SB3 trainer's
  network), the only module RLlib trains (``policies_to_train``);
* ``snapshot_0`` ... ``snapshot_<pool_size-1>``: frozen copies of the learner, written by the
  driver every ``selfplay.snapshot_every`` learner steps (:func:`take_snapshot`);
* ``random`` and ``heuristic``: :class:`~card_envs.adapters.rllib_module.AgentModule`, our
  agents, acting inside the EnvRunners that step the games.

:class:`~training.league.League` (the ``policy_mapping_fn``) seats them each episode at the
``selfplay`` rates. Only the learner's samples reach the learner: the opponents' are dropped
before RLlib's learner connectors batch them
(:class:`~card_envs.adapters.rllib_selfplay.LearnerOnly`), so no value or advantage is
computed for a module that is never trained. Imports Ray.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import ray
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

from card_envs.adapters.rllib import SimultaneousEnv, TurnBasedEnv
from card_envs.adapters.rllib_league import HEURISTIC, LEARNER, RANDOM, League, snapshot_id
from card_envs.adapters.rllib_module import agent_module_spec, module_spec
from card_envs.adapters.rllib_selfplay import LeagueMetrics, LearnerOnly

from .config import Config
from .rllib_settings import (
    envs_per_runner,
    ppo_training_settings,
    require_ray,
    rollout_fragment_length,
)

__all__ = ["LEARNER", "LeagueMetrics", "LearnerOnly", "build_algorithm_config",
           "env_config", "init_ray", "learner_weights", "sync_league", "take_snapshot"]


def env_config(cfg: Config) -> dict[str, Any]:
    """The adapter's ``env_config``: the game, its options and the ``selfplay`` payout."""
    return {"game": cfg.game, "env": dict(cfg.env), "reward": cfg.selfplay.reward,
            "reward_scale": cfg.selfplay.reward_scale}


def _probe(cfg: Config) -> TurnBasedEnv | SimultaneousEnv:
    from card_envs.games import get_game

    env_class = SimultaneousEnv if get_game(cfg.game).parallel else TurnBasedEnv
    return env_class(env_config(cfg))


def build_algorithm_config(cfg: Config) -> PPOConfig:
    """RLlib's PPOConfig for ``cfg`` (``backend: rllib``): env, league, PPO settings, scale."""
    require_ray()
    probe = _probe(cfg)
    agents = list(probe.possible_agents)
    obs_space = probe.observation_spaces[agents[0]]
    act_space = probe.action_spaces[agents[0]]
    simultaneous = isinstance(probe, SimultaneousEnv)
    probe.close()
    sp, rl = cfg.selfplay, cfg.rllib
    league = League(agents, {str(k): v for k, v in sp.opponents.items()}, sp.latest_prob,
                    sp.learner_seat, cfg.seed)
    policy_kwargs = dict(cfg.ppo["policy_kwargs"])
    specs = {LEARNER: module_spec(cfg.game, cfg.env, cfg.features, policy_kwargs)}
    for slot in range(sp.pool_size):
        specs[snapshot_id(slot)] = module_spec(cfg.game, cfg.env, cfg.features, policy_kwargs,
                                               greedy=sp.opponent_deterministic)
    for agent in (RANDOM, HEURISTIC):
        specs[agent] = agent_module_spec(agent, cfg.game, cfg.env, seed=cfg.seed)
    for spec in specs.values():
        spec.observation_space, spec.action_space = obs_space, act_space
    num_players = len(agents)
    return (
        PPOConfig()
        .environment(SimultaneousEnv if simultaneous else TurnBasedEnv,
                     env_config=env_config(cfg),
                     # RLlib's check steps the env with unmasked random moves (illegal ones
                     # warn); the adapters have their own tests.
                     disable_env_checking=True)
        .env_runners(num_env_runners=rl.num_env_runners,
                     num_envs_per_env_runner=envs_per_runner(cfg),
                     num_cpus_per_env_runner=rl.num_cpus_per_env_runner,
                     rollout_fragment_length=rollout_fragment_length(cfg, num_players,
                                                                     simultaneous),
                     sample_timeout_s=rl.sample_timeout_s)
        .learners(num_learners=rl.num_learners, num_gpus_per_learner=rl.num_gpus_per_learner,
                  learner_connector=lambda *_: [LearnerOnly()])
        .multi_agent(policies=set(specs), policy_mapping_fn=league,
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(**ppo_training_settings(cfg, num_players, simultaneous))
        .callbacks(LeagueMetrics)
        .reporting(metrics_num_episodes_for_smoothing=cfg.ppo.get("stats_window_size", 100))
        .debugging(seed=cfg.seed, log_level="ERROR")
    )


#: How long a local Ray's raylet waits for its agents (:func:`init_ray`): Ray's default is
#: 100 s. (Ray's own 30 s wait for the raylet is fixed in its code: no setting.)
LOCAL_RAY_TIMEOUTS = {"RAY_agent_register_timeout_ms": "300000"}
#: Starts of a local Ray (:func:`init_ray`): a loaded machine's raylet can miss Ray's fixed
#: 30 s wait for it ("timed out during startup"), and the run would end before it began.
LOCAL_RAY_ATTEMPTS = 3


def init_ray(cfg: Config) -> bool:
    """Join ``rllib.address``'s cluster, or start a small local Ray (no dashboard); False
    (and nothing done) where Ray is already initialised in this process."""
    if ray.is_initialized():
        return False
    rl = cfg.rllib
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if rl.address is None:
        # A loaded machine starts Ray's node processes slowly: on ours the raylet gave up
        # waiting for its agents after Ray's 100 s. A longer wait, unless the user set one;
        # the processes ray.init starts inherit it.
        for key, value in LOCAL_RAY_TIMEOUTS.items():
            os.environ.setdefault(key, value)
        cpus = rl.num_cpus or max(1, int(np.ceil(rl.num_env_runners
                                                 * rl.num_cpus_per_env_runner)) + 1)
        kwargs.update(num_cpus=cpus, object_store_memory=200 * 1024**2)
        if rl.num_learners == 0 and rl.num_gpus_per_learner:
            kwargs["num_gpus"] = 1
    else:
        kwargs["address"] = rl.address
    attempts = LOCAL_RAY_ATTEMPTS if rl.address is None else 1
    for attempt in range(1, attempts + 1):
        try:
            # A copy: ray.init rewrites the runtime_env it is given (local py_modules and
            # working_dir paths become gcs:// URIs): the run's config, which a resume checks.
            ray.init(**kwargs, runtime_env=copy.deepcopy(rl.runtime_env))
            break
        except Exception as err:
            if attempt == attempts or "timed out during startup" not in str(err):
                raise
            ray.shutdown()
            print(f"ray.init: {err} Starting Ray again ({attempt + 1} of {attempts}).",
                  file=sys.stderr, flush=True)
    return True


def learner_weights(algo: Algorithm) -> dict[str, Any]:
    """The learner module's weights (a torch state dict), from the LearnerGroup."""
    weights = algo.learner_group.get_weights(module_ids=[LEARNER])
    return dict(weights[LEARNER])


def take_snapshot(algo: Algorithm, slot: int) -> None:
    """Copy the learner's weights into snapshot ``slot``: in the LearnerGroup (so checkpoints
    hold it) and in every EnvRunner (where it plays)."""
    module = snapshot_id(slot)
    algo.learner_group.set_weights({module: learner_weights(algo)})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       policies=[module], inference_only=True)


def sync_league(algo: Algorithm, slots: Sequence[int], newest: int, generation: int) -> None:
    """Tell every EnvRunner's :class:`League` the filled snapshot slots and give it its own
    seeded stream (its index and ``generation``)."""
    slots = list(slots)

    def update(runner: Any) -> None:
        league = runner.config.policy_mapping_fn
        league.set_pool(slots, newest)
        if (league.worker_index, league.generation) != (runner.worker_index, generation):
            league.bind(runner.worker_index, generation)

    algo.env_runner_group.foreach_env_runner(update, local_env_runner=True)

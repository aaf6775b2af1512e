"""What ``backend: rllib`` makes of a config, without Ray: the checks, and our ``ppo`` and
``selfplay`` sections as RLlib's PPO settings.

Kept free of Ray so a config is checked (and ``configs/config.schema.json`` built) where Ray is
not installed, and so the mapping is tested in the default test run. :mod:`training.rllib_algo`
hands these numbers to RLlib's ``PPOConfig``.

SB3 keys with no RLlib counterpart are refused, not dropped: RLlib clips the value *loss*
(SB3's ``clip_range_vf`` clips the value *prediction*), always standardises advantages, and
has an adaptive KL penalty where SB3's ``target_kl`` stops the epochs early.
"""

from __future__ import annotations

import importlib.util
import math
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Config

#: What to install for ``backend: rllib``.
INSTALL_HINT = "pip install 'card-envs[rllib]'"


#: What Ray reads as it is imported, set (unless the user set it) before our first import of
#: it: without it the driver's Ray core worker, which ray.init starts, puts a C++ crash
#: handler (absl's) on SIGTERM until the trainer takes the signal back after ray.init, and a
#: SIGTERM meanwhile aborts the process (status 134, no summary). Processes a local Ray
#: starts inherit it: they write no C++ stack trace to Ray's logs when they crash.
RAY_IMPORT_ENV = {"RAY_DISABLE_FAILURE_SIGNAL_HANDLER": "1"}


def require_ray() -> None:
    """A :class:`~training.config.ConfigError` naming the extra when Ray RLlib is missing.
    Ray is imported from here on (``find_spec`` imports the parent package): its import-time
    settings (:data:`RAY_IMPORT_ENV`) are set first."""
    from .config import ConfigError

    for key, value in RAY_IMPORT_ENV.items():
        os.environ.setdefault(key, value)
    try:
        found = importlib.util.find_spec("ray.rllib") is not None
    except ModuleNotFoundError:  # no ``ray`` package at all
        found = False
    if not found:
        raise ConfigError(f"backend: 'rllib' needs Ray RLlib, which is not installed here; "
                          f"{INSTALL_HINT} (or use backend: sb3)")


def check_rllib(cfg: Config, check_cuda: bool = True) -> None:
    """Settings ``backend: rllib`` cannot honour, each a clear error (module docstring)."""
    from .config import ConfigError

    ppo, sp, rl, tr = cfg.ppo, cfg.selfplay, cfg.rllib, cfg.training
    refused = {
        "ppo.clip_range_vf": (ppo.get("clip_range_vf") is not None,
                              "RLlib clips the value loss, not the value prediction; leave it "
                              "out (null)"),
        "ppo.normalize_advantage": (not ppo.get("normalize_advantage", True),
                                    "RLlib's PPO always standardises advantages; leave it out"),
        "ppo.target_kl": (ppo.get("target_kl") is not None,
                          "RLlib has an adaptive KL penalty, not SB3's early stop; leave it "
                          "out (null)"),
        "ppo.policy_kwargs.optimizer_kwargs": (
            bool(ppo["policy_kwargs"].get("optimizer_kwargs")),
            "RLlib's learner builds its own Adam (learning_rate only); leave it out"),
        "selfplay.workers": (sp.workers != "auto",
                             "under RLlib the games run in rllib.num_env_runners EnvRunners; "
                             "set that instead (leave workers out)"),
        "training.device": (tr.device != "cpu",
                            "the RLlib learner's device is set by rllib.num_gpus_per_learner; "
                            "leave training.device at cpu"),
        "training.precision": (tr.precision != "float32",
                               "RLlib's learner trains in float32 here; leave it out"),
        "rllib.num_cpus": (rl.num_cpus is not None and rl.address is not None,
                           "only for the local Ray started when rllib.address is null; a "
                           "cluster has its own CPUs"),
    }
    for key, (bad, why) in refused.items():
        if bad:
            raise ConfigError(f"{key}: not supported with backend: rllib: {why}")
    given = rl.num_envs_per_env_runner
    if given != "auto" and "n_envs" in sp.model_fields_set:
        total = given * max(1, rl.num_env_runners)
        if total != sp.n_envs:
            raise ConfigError(
                f"rllib.num_envs_per_env_runner: {given} games in each of "
                f"{max(1, rl.num_env_runners)} EnvRunner(s) is {total} games, but "
                f"selfplay.n_envs is {sp.n_envs}; set one of them (auto shares n_envs out)")
    if rl.num_gpus_per_learner and check_cuda and rl.address is None:
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(f"rllib.num_gpus_per_learner: {rl.num_gpus_per_learner}, but "
                              "this machine has no CUDA device for a local Ray; use 0")
    if rl.num_gpus_per_learner and rl.num_learners == 0 and rl.num_gpus_per_learner != 1:
        raise ConfigError(f"rllib.num_gpus_per_learner: {rl.num_gpus_per_learner} with "
                          "num_learners 0 (the driver's learner) must be 0 or 1")


def driver_torch_threads(cfg: Config) -> int:
    """The driver's torch threads: ``training.torch_threads``, whose ``auto`` leaves a core to
    each EnvRunner (counted as if on this machine, as a local Ray's are)."""
    from .selfplay_workers import resolve_torch_threads

    return resolve_torch_threads(cfg.training.torch_threads, cfg.rllib.num_env_runners)


def envs_per_runner(cfg: Config) -> int:
    """Games each EnvRunner steps: the given number, or ``selfplay.n_envs`` shared out."""
    given = cfg.rllib.num_envs_per_env_runner
    if given != "auto":
        return int(given)
    return max(1, math.ceil(cfg.selfplay.n_envs / max(1, cfg.rllib.num_env_runners)))


def env_steps_per_learner_step(num_players: int, simultaneous: bool) -> int:
    """Env steps per learner decision: every seat in turn (turn-based), or one (Dogpile's
    ticks, where every dog acts at once)."""
    return 1 if simultaneous else num_players


def ppo_training_settings(cfg: Config, num_players: int, simultaneous: bool
                          ) -> dict[str, Any]:
    """``PPOConfig.training`` keyword arguments from ``cfg.ppo`` (SB3's names, RLlib's
    meaning where they agree; :func:`check_rllib` refused the rest).

    SB3's rollout is ``ppo.n_steps`` learner steps in each of the ``selfplay.n_envs`` games;
    RLlib counts its train batch in env steps, of which the learner makes about one in
    :func:`env_steps_per_learner_step`, so the batch is scaled by that to hold about as many
    learner samples. ``ppo.batch_size`` (the minibatch) counts the learner's samples in both.
    """
    ppo, rl = cfg.ppo, cfg.rllib
    games = envs_per_runner(cfg) * max(1, rl.num_env_runners)
    batch = ppo["n_steps"] * games * env_steps_per_learner_step(num_players, simultaneous)
    return {
        "lr": ppo["learning_rate"],
        "gamma": ppo["gamma"],
        "lambda_": ppo["gae_lambda"],
        "clip_param": ppo["clip_range"],
        "vf_clip_param": math.inf,  # SB3's default: no clipping of the value
        "entropy_coeff": ppo["ent_coef"],
        "vf_loss_coeff": ppo["vf_coef"],
        "grad_clip": ppo["max_grad_norm"],
        "grad_clip_by": "global_norm",  # SB3's clip_grad_norm_
        "num_epochs": ppo["n_epochs"],
        "minibatch_size": ppo["batch_size"],
        "train_batch_size_per_learner": max(1, batch // max(1, rl.num_learners)),
        "use_kl_loss": False,  # SB3's PPO has no KL term
    }


def rollout_fragment_length(cfg: Config, num_players: int, simultaneous: bool) -> int:
    """Env steps each game runs before its EnvRunner hands the samples on: ``ppo.n_steps``
    learner steps, as SB3's rollout."""
    return cfg.ppo["n_steps"] * env_steps_per_learner_step(num_players, simultaneous)

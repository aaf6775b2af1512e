"""Checkpoints that survive SIGKILL and full disks: written atomically (:mod:`training.files`).

A checkpoint holds everything a run needs to continue exactly: the learner (weights and
optimizer), the opponent pool, every game in flight, every RNG stream (python, numpy, torch,
the envs'), the step count and the schedule of snapshots, evaluations and checkpoints. Taken at a
rollout boundary, so resuming replays the same trajectory an uninterrupted run would.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .files import atomic_write, atomic_write_bytes, serialised

__all__ = ["CHECKPOINT_NAME", "RESUMABLE_KEYS", "CheckpointError", "atomic_write",
           "load_checkpoint", "rng_states", "save_checkpoint", "set_rng_states"]

FORMAT = 1
CHECKPOINT_NAME = "checkpoint.pt"
#: Keys that say how long to train, not what: a resumed run may change them (to extend it).
#: And the device, so a run from a CUDA machine can go on where there is none (a CUDA device
#: there is a config error, and no longer a silent fall-back to the CPU); and whether to keep
#: every checkpoint's policy, which changes no training. And the self-play workers: a resumed run
#: keeps the checkpoint's number of worker processes (its games and streams are per worker);
#: "auto" adopts it, another number is refused when the games are restored. And the learner's
#: precision, for the same reason as the device: a bfloat16 run goes on in float32 on a
#: machine that would emulate bfloat16 (the config check refuses it there).
RESUMABLE_KEYS = {"training.total_timesteps", "training.time_limit_minutes",
                  "evaluation.final_games", "training.device", "training.keep_policies",
                  "selfplay.workers", "training.precision",
                  # Where an RLlib run runs: resume it on a cluster, or with more EnvRunners
                  # (``num_envs_per_env_runner: auto`` shares the same games out over them).
                  "rllib.address", "rllib.num_env_runners", "rllib.num_cpus_per_env_runner",
                  "rllib.num_gpus_per_learner", "rllib.num_cpus", "rllib.runtime_env",
                  "rllib.sample_timeout_s"}


def _added_keys() -> dict[str, Any]:
    """Config keys added after checkpoints were first written, with the value every run from
    before had: such a checkpoint is of an SB3 run, with the rllib section's defaults."""
    from .config import RLlibSettings

    return {"backend": "sb3", "rllib": RLlibSettings().model_dump()}


class CheckpointError(RuntimeError):
    """A checkpoint is missing, corrupt, or from a different configuration."""


def rng_states() -> dict[str, Any]:
    """Every global stream; CUDA's too where CUDA is in use (a GPU learner samples its actions
    and minibatch noise there)."""
    states = {"python": random.getstate(), "numpy": np.random.get_state(),
              "torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["torch_cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: dict[str, Any]) -> None:
    """Restore :func:`rng_states`; a CUDA state is restored where CUDA is (a run from a GPU
    machine resumed on a CPU-only one has no CUDA stream to continue)."""
    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])
    cuda = states.get("torch_cuda")
    if cuda is not None and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> None:
    """Write ``state`` atomically; a failure is a :class:`~training.files.RunWriteError`
    naming ``path`` and its cause, and leaves the previous checkpoint."""
    state = {"format": FORMAT, **state}
    atomic_write_bytes(path, serialised(lambda buffer: torch.save(state, buffer)))


def load_checkpoint(path: str | Path, config: dict[str, Any]) -> dict[str, Any]:
    """Load and check a checkpoint against the run's config; errors say what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {str(path)!r}: the run stopped before its "
                              "first one (or it was deleted); start the run again: train(cfg, "
                              "run_dir) in the same directory, or in a new one if it holds "
                              "saved policies")
    try:
        # Our own file: it holds numpy RNG states and pickled heuristics, so not weights-only.
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or unreadable "
                              f"({type(err).__name__}: {err})") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a card-envs training checkpoint "
                              f"(format {FORMAT})")
    # A key added since: the old checkpoint had its default (compared where the config has it).
    added = {k: v for k, v in _added_keys().items() if k in config}
    saved = {**added, **state.get("config", {})}
    diff = [d for d in _diff(saved, config) if not _resumable(_key_of(d))]
    if diff:
        raise CheckpointError(f"checkpoint {str(path)!r} was written with a different config: "
                              + "; ".join(diff[:8]))
    return state


def _resumable(key: str) -> bool:
    """``key`` or a section holding it may change on resume (``rllib.runtime_env.pip``)."""
    parts = key.split(".")
    return any(".".join(parts[:n]) in RESUMABLE_KEYS for n in range(1, len(parts) + 1))


def _key_of(difference: str) -> str:
    """The config key a line of :func:`_diff` is about."""
    return difference.split(":")[0].removesuffix(" is new").removesuffix(" is missing")


def _diff(a: Any, b: Any, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            name = f"{prefix}{key}"
            if key not in a:
                out.append(f"{name} is new")
            elif key not in b:
                out.append(f"{name} is missing")
            else:
                out += _diff(a[key], b[key], name + ".")
        return out
    if a != b:
        return [f"{prefix.rstrip('.')}: checkpoint {a!r}, now {b!r}"]
    return []

"""Self-play games stepped in worker processes: ``selfplay.workers: N``.

The learner stays in the main process. The ``n_envs`` games are split into N contiguous
slices, each a :class:`~training.selfplay.SelfPlayVecEnv` in its own process, which plays its
games' opponents itself, batched as in one process (one forward pass per snapshot network per
step, on the CPU). One step sends each worker its slice of the learner's actions and gathers
observations, rewards, dones, infos and the next legal-action masks in one reply.

Worker w is seeded from ``SeedSequence(seed).spawn(N)[w]``: the same seed and worker count play
the same games (a different count plays different ones). The opponent pool is kept in every
worker; :meth:`RemotePool.add` ships the learner's weights (on the CPU) to all of them, so
their pools stay identical. A checkpoint holds every worker's state (games, streams, pool
once), and a resumed run gets the same number of workers.

The process plumbing is SB3's (``SubprocVecEnv``'s start method and ``CloudpickleWrapper``);
its worker loop is not reused because each of ours hosts a batched VecEnv with an opponent
pool, not one Gymnasium env.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import CloudpickleWrapper

from card_envs.core.engine import check_count

from .selfplay import SelfPlayVecEnv, check_actions

_INFO_KEYS = ("render_mode", "learner_seat")


def available_cores() -> int:
    """The cores this process may run on (its affinity, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def resolve_workers(workers: int | str, n_envs: int) -> int:
    """``"auto"``: the cores this process may use less the learner's, at least 1 and at most
    ``n_envs``; else ``workers``, which may not exceed ``n_envs`` (a worker without a game).

    The learner keeps a core: on 2 cores, 2 workers plus the learner ran 0.86x (ROY) and 0.67x
    (Dogpile) one in-process worker's steps/s (docs/results.md), so ``auto`` is 1 there."""
    if workers == "auto":
        return max(1, min(available_cores() - 1, n_envs))
    check_count("selfplay.workers", workers)
    if int(workers) > n_envs:
        raise ValueError(f"selfplay.workers: {workers} worker processes for selfplay.n_envs "
                         f"{n_envs} games; at most one worker per game")
    return int(workers)


def resolve_torch_threads(threads: int | str, busy_processes: int) -> int:
    """``"auto"``: the cores this process may use less one per other busy process of the run
    on this machine (``busy_processes``: worker processes or EnvRunners), at least 1; else
    ``threads``.

    In one process the games and the update take turns, so the update may have every core
    (docs/results.md, the round on a run with the machine to itself)."""
    if threads == "auto":
        return max(1, available_cores() - busy_processes)
    return int(threads)


def learner_torch_threads(threads: int | str, workers: int) -> int:
    """The learner's torch threads beside ``workers`` self-play workers (1: the games run in
    the learner's process, so no other process is busy)."""
    return resolve_torch_threads(threads, workers if workers > 1 else 0)


def worker_seeds(seed: int, workers: int) -> list[int]:
    """Each worker's seed: independent streams, fixed by ``seed`` and the worker count."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(workers)]


def checkpoint_workers(state: dict[str, Any]) -> int:
    """The number of worker processes a checkpoint's games were stepped in (1: in-process,
    which every checkpoint from before workers is)."""
    saved = state["venv"].get("workers")
    return 1 if saved is None else len(saved)


def make_selfplay_venv(game: str, env_config: dict[str, Any], n_envs: int,
                       rates: dict[str, float], workers: int,
                       **kwargs: Any) -> SelfPlayVecEnv | WorkerSelfPlayVecEnv:
    """The self-play VecEnv: in this process for one worker, else in ``workers`` processes."""
    if workers == 1:
        return SelfPlayVecEnv(game, env_config, n_envs, rates, **kwargs)
    return WorkerSelfPlayVecEnv(game, env_config, n_envs, rates, workers, **kwargs)


def _worker(remote: Any, parent_remote: Any, wrapped: CloudpickleWrapper) -> None:
    """One worker: a SelfPlayVecEnv for its slice, driven by commands from the main process."""
    import signal

    import torch

    # Ctrl-C reaches the whole process group: the main process stops at the next rollout
    # boundary and checkpoints, which needs every worker alive until then.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)  # one core per worker: its opponents' forward passes
    parent_remote.close()
    kwargs = wrapped.var
    venv = SelfPlayVecEnv(**kwargs)
    template: Any = None  # a CPU policy of the learner's architecture: snapshots load into it
    while True:
        try:
            cmd, data = remote.recv()
        except EOFError:  # the main process is gone
            break
        except Exception as err:  # a message that does not unpickle here
            remote.send(("error", err))
            continue
        try:
            if cmd == "step":
                venv.step_async(data)
                obs, rewards, dones, infos = venv.step_wait()
                remote.send(("ok", (obs, rewards, dones, infos, venv._masks.copy())))
            elif cmd == "reset":
                if data is not None:
                    venv.seed(data)
                obs = venv.reset()
                remote.send(("ok", (obs, venv._masks.copy())))
            elif cmd == "template":
                template = data.var
                remote.send(("ok", None))
            elif cmd == "pool_add":
                weights, step = data
                template.load_state_dict(weights)
                venv.pool.add(template, step)
                remote.send(("ok", None))
            elif cmd == "get_state":
                remote.send(("ok", venv.state_dict()))
            elif cmd == "set_state":
                venv.load_state_dict(data, template)
                remote.send(("ok", (venv._obs.copy(), venv._masks.copy())))
            elif cmd == "get_attr":
                remote.send(("ok", venv.get_attr(data)))
            elif cmd == "close":
                remote.send(("ok", None))
                break
            else:
                raise ValueError(f"unknown command {cmd!r}")
        except Exception as err:  # reported to the main process, which raises it
            remote.send(("error", err))
    remote.close()


class RemotePool:
    """The main process's view of the workers' opponent pools (kept identical in each)."""

    def __init__(self, owner: WorkerSelfPlayVecEnv) -> None:
        self.owner = owner
        self.steps: list[int] = []

    @property
    def actors(self) -> list[int]:
        """One entry per snapshot (what the training loop counts)."""
        return list(self.steps)

    def add(self, policy: Any, step: int) -> None:
        """Ship ``policy``'s weights (on the CPU) to every worker's pool."""
        self.owner.send_template(policy)
        weights = {k: v.detach().cpu() for k, v in policy.state_dict().items()}
        self.owner.call_all("pool_add", (weights, step))
        if len(self.steps) < self.owner.pool_size:
            self.steps.append(step)
        else:
            self.steps[int(np.argmin(self.steps))] = step


class WorkerSelfPlayVecEnv(VecEnv):
    """:class:`SelfPlayVecEnv`'s games in ``workers`` processes; same arguments, plus
    ``workers`` (at least 2; one is :class:`SelfPlayVecEnv` itself)."""

    def __init__(self, game: str, env_config: dict[str, Any], n_envs: int,
                 rates: dict[str, float], workers: int, seed: int = 0, pool_size: int = 8,
                 start_method: str | None = None, **kwargs: Any) -> None:
        check_count("n_envs", n_envs)
        check_count("workers", workers)
        if not 2 <= workers <= n_envs:
            raise ValueError(f"workers: expected 2..n_envs ({n_envs}), got {workers}")
        # Checked here, once: a bad argument fails in this process, not in every worker.
        probe = SelfPlayVecEnv(game, env_config, 1, rates, pool_size=pool_size, seed=seed,
                               **kwargs)
        self.num_actions = probe.num_actions
        self.pool_size = pool_size
        self.slices = list(np.array_split(np.arange(n_envs), workers))
        if start_method is None:  # SB3's choice: forkserver where it exists (fork is unsafe
            # with torch's threads), else spawn
            methods = mp.get_all_start_methods()
            start_method = "forkserver" if "forkserver" in methods else "spawn"
        ctx = mp.get_context(start_method)
        self.remotes, self.processes = [], []
        self.closed = False
        for part, wseed in zip(self.slices, worker_seeds(seed, workers), strict=True):
            args = {"game": game, "env_config": env_config, "n_envs": len(part),
                    "rates": rates, "pool_size": pool_size, "seed": wseed, **kwargs}
            remote, work_remote = ctx.Pipe()
            proc = ctx.Process(target=_worker,  # type: ignore[attr-defined]
                               args=(work_remote, remote, CloudpickleWrapper(args)),
                               daemon=True)
            proc.start()
            work_remote.close()
            self.remotes.append(remote)
            self.processes.append(proc)
        self.pool = RemotePool(self)
        self._template_sent = False
        self._masks = np.zeros((n_envs, self.num_actions), dtype=bool)
        self._actions: np.ndarray | None = None
        super().__init__(n_envs, probe.observation_space,
                         spaces.Discrete(self.num_actions))

    # -- plumbing --------------------------------------------------------------------------------
    def _gather(self) -> list[Any]:
        replies = []
        for w, remote in enumerate(self.remotes):  # all: the pipes stay in step
            try:
                replies.append(remote.recv())
            except EOFError:
                raise RuntimeError(f"self-play worker {w} exited (exit code "
                                   f"{self.processes[w].exitcode})") from None
        for w, (status, value) in enumerate(replies):
            if status == "error":
                lo, hi = int(self.slices[w][0]), int(self.slices[w][-1])
                message = f"self-play worker {w} (envs {lo}..{hi}): {value}"
                try:  # the worker's own exception type, so callers catch what they expect
                    err = type(value)(message)
                except Exception:
                    err = RuntimeError(message)
                raise err from value
        return [value for _, value in replies]

    def call_all(self, cmd: str, data: Any = None) -> list[Any]:
        for remote in self.remotes:
            remote.send((cmd, data))
        return self._gather()

    def send_template(self, policy: Any) -> None:
        """Once: the learner's architecture, on the CPU, for the workers' snapshot networks."""
        if self._template_sent:
            return
        from .actors import load_policy_net

        net = load_policy_net(policy, "cpu")
        self.call_all("template", CloudpickleWrapper(net))
        self._template_sent = True

    # -- VecEnv API ------------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        seeds: Sequence[int | None] = [None] * len(self.remotes)
        if self._seeds[0] is not None:  # as SelfPlayVecEnv: a seed applies at the next reset
            seeds = worker_seeds(int(self._seeds[0]), len(self.remotes))
            self._reset_seeds()
        for remote, s in zip(self.remotes, seeds, strict=True):
            remote.send(("reset", s))
        parts = self._gather()
        self._masks = np.concatenate([m for _, m in parts])
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return np.concatenate([o for o, _ in parts])

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = check_actions(actions, self.num_envs, self.num_actions)

    def step_wait(self):
        actions = self._actions
        assert actions is not None
        for remote, part in zip(self.remotes, self.slices, strict=True):
            remote.send(("step", actions[part]))
        parts = self._gather()
        obs = np.concatenate([p[0] for p in parts])
        rewards = np.concatenate([p[1] for p in parts])
        dones = np.concatenate([p[2] for p in parts])
        infos = [info for p in parts for info in p[3]]
        self._masks = np.concatenate([p[4] for p in parts])
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self._masks.copy()

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list[Any]:
        if method_name == "action_masks":
            return list(self._masks[list(self._get_indices(indices))])
        raise AttributeError(f"the self-play workers have no per-env method {method_name!r}")

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        if attr_name not in _INFO_KEYS:
            raise AttributeError(f"the self-play workers have no per-env attribute "
                                 f"{attr_name!r}")
        values = [v for part in self.call_all("get_attr", attr_name) for v in part]
        return [values[i] for i in self._get_indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return attr_name in ("action_masks", *_INFO_KEYS)

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"the self-play workers do not set per-env attribute {attr_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def close(self) -> None:
        if self.closed:
            return
        for remote in self.remotes:
            try:
                remote.send(("close", None))
                remote.recv()
            except (BrokenPipeError, EOFError, ConnectionResetError):
                pass
        for proc in self.processes:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
        self.closed = True

    def __del__(self) -> None:
        if not getattr(self, "closed", True):
            self.close()

    # -- checkpoints -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Every worker's state; the pool's weights once (every worker holds the same)."""
        states = self.call_all("get_state")
        for state in states[1:]:
            state["pool"] = {**state["pool"], "weights": None}
        return {"workers": states, "pool_steps": list(self.pool.steps)}

    def load_state_dict(self, state: dict[str, Any], template_policy: Any) -> None:
        saved: list[dict[str, Any]] = state.get("workers") or []
        count = len(saved) or 1
        if count != len(self.remotes):
            raise ValueError(f"checkpoint has {count} self-play worker process(es), this run "
                             f"{len(self.remotes)} (selfplay.workers)")
        self.send_template(template_policy)
        weights = saved[0]["pool"]["weights"]
        for remote, ws in zip(self.remotes, saved, strict=True):
            remote.send(("set_state", {**ws, "pool": {**ws["pool"], "weights": weights}}))
        parts = self._gather()
        self._masks = np.concatenate([m for _, m in parts])
        self.pool.steps = list(state["pool_steps"])
        self._reset_seeds()

"""``backend: rllib``: league self-play PPO on Ray RLlib, writing the SB3 trainer's run directory.

:func:`train_rllib` is what :func:`training.train.train` runs for such a config (the command
line is the same). The algorithm is :func:`training.rllib_algo.build_algorithm_config`'s; this
module drives it one ``algo.train()`` iteration at a time and, between iterations (where the
learner's weights are settled), does what the SB3 trainer's callback does at rollout
boundaries: a snapshot into the league every ``selfplay.snapshot_every`` learner steps, an
evaluation against random and heuristic every ``evaluation.every`` (with our evaluator, on the
learner's network in this process: no Ray), a checkpoint every ``training.checkpoint_every``,
the time limit and SIGINT/SIGTERM.

A checkpoint is RLlib's own (``algo.save_to_path``: learner weights and optimizer, every
snapshot slot, the EnvRunners' state) in ``rllib/step-<N>/``, then ``checkpoint.pt`` (ours,
atomic) naming it, with the step count, schedule, snapshot pool and metrics' state. Only
``checkpoint.pt`` makes a checkpoint current, so a kill while RLlib writes its directory leaves
the previous one; older directories are deleted after. ``--resume`` restores both. Games in
flight are not in RLlib's checkpoints: a resumed run deals new ones, and its league draws come
from a new stream (a generation per session), so it continues the run's statistics, not its
exact trajectory (the SB3 trainer's resume is exact).

Every saved policy (``latest.zip``, ``best.zip``, ``final.zip``, ``policies/``) is the learner
exported as a MaskablePPO ``.zip``
(:func:`~card_envs.adapters.rllib_module.export_maskable_ppo`): every tool that takes an agent
plays it without Ray.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import ray
import ray._private.utils as ray_utils
import torch

from card_envs.adapters.rllib_league import SnapshotPool
from card_envs.adapters.rllib_module import MaskedPPOModule, export_maskable_ppo, module_spec
from card_envs.agents.provenance import env_identity, identity_differences

from .checkpoint import CHECKPOINT_NAME, CheckpointError, load_checkpoint, save_checkpoint
from .config import Config, ConfigError
from .files import writing
from .plots import plot_training_curve
from .rllib_algo import (
    LEARNER,
    build_algorithm_config,
    init_ray,
    learner_weights,
    sync_league,
    take_snapshot,
)
from .rllib_settings import driver_torch_threads

#: RLlib's checkpoints, one directory per step, inside the run directory.
RLLIB_DIR = "rllib"
EVAL_OPPONENTS = ("random", "heuristic")
WIN_KINDS = ("self", "random", "heuristic")


def _learner_steps(result: dict[str, Any]) -> int:
    """The learner's decisions sampled in this iteration."""
    steps = result.get("env_runners", {}).get("num_module_steps_sampled", {})
    return int(steps.get(LEARNER, 0))


def _mean(value: Any) -> float | str:
    """A metric as a rounded number, or '' where RLlib has none yet."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return round(number, 4) if np.isfinite(number) else ""


class RLlibRun:
    """One session of a run: the algorithm, its schedule and the run directory's files."""

    def __init__(self, cfg: Config, run_dir: Path, state: dict[str, Any] | None,
                 progress: bool) -> None:
        from .train import CsvLog, StopOnSignal

        self.cfg, self.run_dir, self.progress = cfg, run_dir, progress
        sp, tr = cfg.selfplay, cfg.training
        sched = (state or {}).get("schedule", {})
        self.num_timesteps = int((state or {}).get("num_timesteps", 0))
        self.next_snapshot = sched.get("next_snapshot", sp.snapshot_every)
        self.next_eval = sched.get("next_eval", 0)
        self.next_checkpoint = sched.get("next_checkpoint", tr.checkpoint_every)
        self.best_score = sched.get("best_score", -np.inf)
        self.elapsed_before = sched.get("elapsed", 0.0)
        self.last_checkpoint = sched.get("last_checkpoint", -1)
        self.last_eval = sched.get("last_eval", -1)
        # The warm start's figures (the SB3 trainer's summary field): a fresh run's, set by
        # build(); a resumed run's, kept in every checkpoint.
        self.pretrain_stats: dict[str, float] = dict((state or {}).get("pretrain", {}))
        self.generation = int((state or {}).get("generation", -1)) + 1
        self.session_start = time.time()
        self.pool = SnapshotPool(sp.pool_size)
        if state is not None:
            self.pool.load_state_dict(state["pool"])
        self.identity = env_identity(cfg.game, cfg.env)
        resume_step = self.num_timesteps if state is not None else None
        self.progress_csv = CsvLog(run_dir / "progress.csv", [
            "step", "elapsed", "fps", "ep_rew_mean", "ep_len_mean", "win_vs_self",
            "win_vs_random", "win_vs_heuristic", "pool"], resume_step)
        cols = ["step", "elapsed", "chance"]
        for opp in EVAL_OPPONENTS:
            cols += [f"{opp}_win_rate", f"{opp}_ci_low", f"{opp}_ci_high"]
        self.eval_csv = CsvLog(run_dir / "eval.csv", cols,
                               self.last_eval if state is not None else None)
        from torch.utils.tensorboard import SummaryWriter

        with writing(run_dir / "tb"):
            self.tb = SummaryWriter(log_dir=str(run_dir / "tb"),
                                    purge_step=None if resume_step is None else resume_step + 1)
        self.stop_request = StopOnSignal("rllib")
        self.stop_reason: str | None = None
        self.algo: Any = None
        self.owns_ray = False  # whether this run started (or joined) Ray, to let go after
        # The learner's network in this process, for evaluations and exports.
        self.module: MaskedPPOModule | None = None

    def elapsed(self) -> float:
        return self.elapsed_before + time.time() - self.session_start

    # -- the algorithm ---------------------------------------------------------------------------
    def build(self, state: dict[str, Any] | None) -> None:
        cfg = self.cfg
        # ray.init sets its own SIGTERM handler (sys.exit: the run would die unsaved, or
        # mid-teardown with no summary): not while it runs, and ours again after it (in case
        # a Ray version sets it another way), to the end of the session.
        with self.stop_request.keeping(ray_utils, "set_sigterm_handler"):
            self.owns_ray = init_ray(cfg)
        self.stop_request.reclaim()
        config = build_algorithm_config(cfg)
        self.algo = config.build_algo()
        spec = config.rl_module_spec.rl_module_specs[LEARNER]
        self.module = module_spec(cfg.game, cfg.env, cfg.features,
                                  dict(cfg.ppo["policy_kwargs"]))
        self.module.observation_space = spec.observation_space
        self.module.action_space = spec.action_space
        self.module = self.module.build()
        if state is not None:
            self.algo.restore_from_path(str((self.run_dir / state["rllib_checkpoint"]).resolve()))
            # Every module's weights, snapshots included, to every EnvRunner.
            self.algo.env_runner_group.sync_weights(
                from_worker_or_learner_group=self.algo.learner_group, inference_only=True)
        else:
            initial, self.pretrain_stats = initial_weights(cfg)
            if initial is not None:
                self.algo.learner_group.set_weights({LEARNER: initial})
                self.algo.env_runner_group.sync_weights(
                    from_worker_or_learner_group=self.algo.learner_group, policies=[LEARNER],
                    inference_only=True)
            take_snapshot(self.algo, self.pool.add(0))  # the pool's first: the start
        sync_league(self.algo, self.pool.slots, self.pool.newest, self.generation)

    def refresh_module(self) -> MaskedPPOModule:
        """The driver's copy of the learner, with the LearnerGroup's current weights."""
        assert self.module is not None
        weights = {k: torch.as_tensor(np.asarray(v)) if not torch.is_tensor(v) else v
                   for k, v in learner_weights(self.algo).items()}
        self.module.load_state_dict(weights)
        return self.module

    def export(self, path: Path) -> None:
        export_maskable_ppo(self.refresh_module(), path, seed=self.cfg.seed)

    # -- the loop --------------------------------------------------------------------------------
    def run(self) -> None:
        cfg = self.cfg
        total, limit = cfg.training.total_timesteps, cfg.training.time_limit_minutes
        bar = self._bar()
        try:
            self.checkpoint()  # step 0 of a fresh run (a no-op on resume)
            if self.num_timesteps >= self.next_eval:
                self.evaluate()
                self.checkpoint(again=True)
            while True:
                # Checked after the last iteration too: a signal during it stops the run there
                # (checkpointed, unfinished), as during any other (the SB3 trainer's rule).
                if self.stop_request.requested():
                    self.checkpoint()
                    self.stop_reason = self.stop_request.name
                    return
                if self.num_timesteps >= total:
                    break
                self.boundary()
                if limit is not None and self.elapsed() >= 60 * limit:
                    self.checkpoint()
                    self.stop_reason = "time limit"
                    return
                started = time.time()
                result = self.algo.train()
                steps = _learner_steps(result)
                self.num_timesteps += steps
                self.record(result, steps / max(time.time() - started, 1e-9))
                if bar is not None:
                    bar.update(steps)
            if self.last_eval < self.num_timesteps:
                self.evaluate()  # the curve's last point
                self.checkpoint(again=True)  # (one at this step already: now with the evaluation)
            else:
                self.checkpoint()
        finally:
            if bar is not None:
                bar.close()

    def _bar(self) -> Any:
        if not self.progress:
            return None
        from tqdm import tqdm

        return tqdm(total=self.cfg.training.total_timesteps, initial=self.num_timesteps,
                    unit="step", unit_scale=True, dynamic_ncols=True)

    def boundary(self) -> None:
        """Between two iterations: what is due of snapshot, evaluation, checkpoint."""
        from .train import _next

        sp, tr = self.cfg.selfplay, self.cfg.training
        step = self.num_timesteps
        if step >= self.next_snapshot:
            slot = self.pool.add(step)
            take_snapshot(self.algo, slot)
            sync_league(self.algo, self.pool.slots, self.pool.newest, self.generation)
            self.next_snapshot = _next(self.next_snapshot, sp.snapshot_every, step)
        if step >= self.next_eval:
            self.evaluate()
        if step >= self.next_checkpoint:
            self.next_checkpoint = _next(self.next_checkpoint, tr.checkpoint_every, step)
            self.checkpoint()

    def record(self, result: dict[str, Any], fps: float) -> None:
        runners = result.get("env_runners", {})
        returns = runners.get("module_episode_returns_mean", {})
        row = {"step": self.num_timesteps, "elapsed": round(self.elapsed(), 1),
               "fps": round(fps), "ep_rew_mean": _mean(returns.get(LEARNER)),
               "ep_len_mean": _mean(runners.get("episode_len_mean")),
               **{f"win_vs_{k}": _mean(runners.get(f"win_vs_{k}")) for k in WIN_KINDS},
               "pool": len(self.pool.slots)}
        self.progress_csv.append(row)
        scalars = {f"selfplay/win_vs_{k}": row[f"win_vs_{k}"] for k in WIN_KINDS}
        scalars.update({"rollout/ep_rew_mean": row["ep_rew_mean"],
                        "rollout/ep_len_mean": row["ep_len_mean"], "time/fps": fps,
                        "selfplay/pool_size": row["pool"]})
        learner = result.get("learners", {}).get(LEARNER, {})
        for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "vf_explained_var"):
            if key in learner:
                scalars[f"train/{key}"] = learner[key]
        with writing(self.run_dir / "tb"):
            for key, value in scalars.items():
                if value != "":
                    self.tb.add_scalar(key, float(value), self.num_timesteps)
            self.tb.flush()

    # -- evaluation and checkpoints --------------------------------------------------------------
    def evaluate(self) -> None:
        """The learner against random and heuristic, as the SB3 trainer's evaluations."""
        from .train import _next, evaluate_learner

        cfg, ev, step = self.cfg, self.cfg.evaluation, self.num_timesteps
        row, scalars = evaluate_learner(cfg, self.refresh_module().policy, step, self.elapsed())
        for tag, value in scalars.items():
            with writing(self.run_dir / "tb"):
                self.tb.add_scalar(tag, value, step)
        self.eval_csv.append(row)
        self.last_eval = step
        self.next_eval = _next(self.next_eval, ev.every, step)
        with writing(self.run_dir / "training_curve.png"):
            plot_training_curve(self.run_dir / "eval.csv", self.run_dir / "training_curve.png",
                                title=f"{cfg.game} RLlib self-play ({self.run_dir.name})")
        score = sum(row[f"{opp}_win_rate"] for opp in EVAL_OPPONENTS)
        if score > self.best_score:
            self.best_score = score
            self.export(self.run_dir / "best.zip")

    def checkpoint(self, again: bool = False) -> None:
        """RLlib's checkpoint, then ours naming it (module docstring); once per step."""
        step = self.num_timesteps
        if step == self.last_checkpoint and not again:
            return
        self.last_checkpoint = step
        folder = self.run_dir / RLLIB_DIR
        name = f"step-{step:012d}-{self.generation}"
        with writing(folder / name):
            folder.mkdir(exist_ok=True)
            if (folder / name).exists():  # a kill's leftover, or the step's earlier save
                shutil.rmtree(folder / name)
            self.algo.save_to_path(str((folder / name).resolve()))
        save_checkpoint(self.run_dir / CHECKPOINT_NAME, {
            "backend": "rllib",
            "config": self.cfg.to_dict(),
            "num_timesteps": step,
            "rllib_checkpoint": f"{RLLIB_DIR}/{name}",
            "pool": self.pool.state_dict(),
            "generation": self.generation,
            "identity": self.identity,
            "pretrain": self.pretrain_stats,
            "schedule": {"next_snapshot": self.next_snapshot, "next_eval": self.next_eval,
                         "next_checkpoint": self.next_checkpoint, "best_score": self.best_score,
                         "elapsed": self.elapsed(), "last_checkpoint": step,
                         "last_eval": self.last_eval},
        })
        for old in _old_checkpoints(folder, keep=name):
            shutil.rmtree(old, ignore_errors=True)
        self.export(self.run_dir / "latest.zip")
        if self.cfg.training.keep_policies:
            path = self.run_dir / "policies" / f"step-{step:09d}.zip"
            path.parent.mkdir(exist_ok=True)
            self.export(path)


def _old_checkpoints(folder: Path, keep: str) -> Iterator[Path]:
    return (p for p in folder.iterdir() if p.is_dir() and p.name != keep)


def initial_weights(cfg: Config) -> tuple[dict[str, Any] | None, dict[str, float]]:
    """The learner's starting weights where the config asks for any (else None):
    ``training.init_from``'s policy and/or the behaviour-cloning warm start (``pretrain``),
    both done on the SB3 policy the learner module holds (the SB3 trainer's own code), then
    handed to RLlib; and the warm start's figures (``pretrain``'s, empty without one)."""
    if not cfg.training.init_from and not cfg.pretrain.games:
        return None, {}
    from sb3_contrib import MaskablePPO

    from .selfplay import SelfPlayVecEnv
    from .train import init_weights, policy_class, ppo_arguments, warm_start

    venv = SelfPlayVecEnv(cfg.game, cfg.env, 1, {"random": 1.0}, seed=cfg.seed)
    try:
        model = MaskablePPO(policy_class(cfg), venv, seed=cfg.seed, device="cpu", verbose=0,
                            **ppo_arguments(cfg))
        if cfg.training.init_from:
            init_weights(model, cfg.training.init_from)
        stats: dict[str, float] = {}
        if cfg.pretrain.games:
            # Not stopped by a signal: it finishes, then the run stops at its step-0 checkpoint.
            stats = warm_start(model, cfg)
            print(f"behaviour cloning: {stats['decisions']} decisions, accuracy "
                  f"{stats['bc_accuracy']:.3f}, {stats['seconds']:.0f} s")
        return {f"policy.{k}": v for k, v in model.policy.state_dict().items()}, stats
    finally:
        venv.close()


def train_rllib(cfg: Config, run_dir: Path, resume: bool = False, progress: bool = True,
                final_eval: bool = True, allow_policy_mismatch: bool = False
                ) -> dict[str, Any]:
    """Train (or continue) the ``backend: rllib`` run in ``run_dir`` (the caller holds its
    lock and, for a fresh run, wrote its config.yaml); returns the run's summary, as
    :func:`training.train.train` does."""
    from .train import completed_summary, final_evaluation, run_summary

    if resume and (done := completed_summary(run_dir, cfg)) is not None:
        return done
    torch.set_num_threads(driver_torch_threads(cfg))
    state = load_checkpoint(run_dir / CHECKPOINT_NAME, cfg.to_dict()) if resume else None
    if state is not None:
        if state.get("backend") != "rllib":
            raise CheckpointError(f"the checkpoint of {run_dir} is not an RLlib run's")
        differences = identity_differences(state.get("identity"),
                                           env_identity(cfg.game, cfg.env), "checkpoint")
        if differences and not allow_policy_mismatch:
            raise CheckpointError(
                f"the checkpoint of {run_dir} was written for another env or package "
                f"version: {'; '.join(differences)}. To resume it anyway, pass "
                f"--allow-policy-mismatch (train(..., allow_policy_mismatch=True))")
        if not (run_dir / state["rllib_checkpoint"]).is_dir():
            raise CheckpointError(f"{run_dir}: the RLlib checkpoint "
                                  f"{state['rllib_checkpoint']} that checkpoint.pt names is gone")
    from .config import save_config
    from .files import atomic_write_bytes

    run = RLlibRun(cfg, run_dir, state, progress)
    # SIGINT/SIGTERM ask the session to stop at its next safe point from here until Ray is shut
    # down and the summary written (build() takes SIGTERM back from ray.init); the caller's
    # handlers are back for the closing evaluation, which a signal may end: the summary
    # written before it says the run is not yet evaluated, and a resume evaluates it.
    with run.stop_request:
        try:
            run.build(state)
            if state is not None:
                save_config(cfg, run_dir / "config.yaml")
                print(f"resuming from the checkpoint at step {state['num_timesteps']}, to "
                      f"training.total_timesteps {cfg.training.total_timesteps}")
            run.run()
            stopped = run.stop_reason is not None and run.stop_reason != "time limit"
            if not stopped:
                run.export(run_dir / "final.zip")
        finally:
            run.tb.close()
            if run.algo is not None:
                run.algo.stop()
            if run.owns_ray:
                ray.shutdown()
        signalled = run.stop_request.name
        summary = run_summary(run_dir, num_timesteps=run.num_timesteps,
                              checkpoint_step=run.last_checkpoint, elapsed=run.elapsed(),
                              stopped_by_time_limit=run.stop_reason == "time limit",
                              stopped_by_signal=signalled, best_score=run.best_score,
                              pretrain=run.pretrain_stats, stopped=stopped)
        summary["backend"] = "rllib"
        atomic_write_bytes(run_dir / "summary.json",
                           json.dumps(summary, indent=2, default=float).encode())
    if final_eval and cfg.evaluation.final_games > 0 and signalled is None:
        summary["evaluation"] = final_evaluation(cfg, run_dir)
        atomic_write_bytes(run_dir / "summary.json",
                           json.dumps(summary, indent=2, default=float).encode())
    return summary


__all__ = ["ConfigError", "train_rllib"]

"""Self-play MaskablePPO for any card-envs game, from one YAML config.

    python -m training.train --config configs/roy.yaml
    python -m training.train --resume runs/roy/<run>

Read top to bottom: build the batched self-play VecEnv and the learner; a callback snapshots the
learner into the opponent pool every ``selfplay.snapshot_every`` steps, evaluates it against
the random and heuristic agents every ``evaluation.every`` steps (keeping ``best.zip``), and
writes an atomic checkpoint at step 0 (right after the warm start) and every
``training.checkpoint_every`` steps. All three happen at rollout boundaries, where the run's
whole state is small and well defined, so ``--resume`` continues exactly as if never stopped.
SIGINT and SIGTERM stop the run at the next rollout boundary, after a checkpoint, or during
the warm start at once, with nothing saved (a second signal aborts). The end of a run
evaluates ``best.zip`` and ``final.zip`` over ``evaluation.final_games`` games per opponent.

Everything lands in ``runs/<game>/<run>/``: ``config.yaml`` (resolved), ``checkpoint.pt``,
``latest.zip`` / ``best.zip`` / ``final.zip``, ``progress.csv`` and ``eval.csv`` (metrics),
``tb/`` (TensorBoard), ``training_curve.png``, ``evaluation.json`` / ``evaluation.png``.

A config with ``backend: rllib`` is trained on Ray RLlib by :mod:`training.rllib_train` instead,
from the same command line into the same run directory.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import itertools
import json
import math
import os
import shlex
import shutil
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat, configure

from card_envs.agents.provenance import env_identity, identity_differences, with_identity

from .actors import TorchPolicyActor
from .checkpoint import (
    CHECKPOINT_NAME,
    CheckpointError,
    load_checkpoint,
    rng_states,
    save_checkpoint,
    set_rng_states,
)
from .config import Config, ConfigError, from_dict, load_config, save_config
from .evaluate import evaluate, plot_report
from .files import RunWriteError, atomic_write, atomic_write_bytes, serialised, writing
from .plots import plot_training_curve
from .precision import learner_class
from .pretrain import WarmStartStopped, pretrain
from .rllib_settings import require_ray
from .run_lock import LOCK_NAME, RunLock, RunLockedError
from .selfplay import SelfPlayVecEnv
from .selfplay_workers import (
    WorkerSelfPlayVecEnv,
    checkpoint_workers,
    learner_torch_threads,
    make_selfplay_venv,
    resolve_workers,
)

EVAL_OPPONENTS = ("random", "heuristic")
#: How the command line is started by default; :func:`main` takes another (``card-envs train``)
#: so that the commands its messages suggest are the ones the user can type.
PROG = "python -m training.train"


# -- metrics files -----------------------------------------------------------------------------
class CsvLog:
    """An append-only CSV that, on resume, drops rows written after the checkpoint (and a row
    a full disk cut short). The file is rewritten atomically: a failed rewrite keeps it."""

    def __init__(self, path: Path, columns: Sequence[str], keep_until: int | None) -> None:
        """``keep_until``: on resume, the last step whose row the checkpoint had seen."""
        self.path, self.columns = path, list(columns)
        if keep_until is not None and path.exists():
            with open(path, newline="") as f:
                rows = [r for r in csv.DictReader(f) if _whole_row(r, keep_until)]
            self._write_all(rows)
        elif not path.exists() or keep_until is None:
            self._write_all([])

    def _write_all(self, rows: list[dict[str, Any]]) -> None:
        def write(tmp: Path) -> None:
            with open(tmp, "w", newline="") as f:
                writer = csv.DictWriter(f, self.columns)
                writer.writeheader()
                writer.writerows(rows)

        atomic_write(self.path, write)

    def append(self, row: dict[str, Any]) -> None:
        with writing(self.path), open(self.path, "a", newline="") as f:
            csv.DictWriter(f, self.columns).writerow(row)


def _whole_row(row: dict[str, Any], keep_until: int) -> bool:
    """A row of a step the checkpoint had seen, with every column (not cut short)."""
    if None in row or any(value is None for value in row.values()):
        return False
    try:
        return int(row["step"]) <= keep_until
    except (KeyError, ValueError):
        return False


def tensorboard_logger(folder: Path, resume_state: dict[str, Any] | None) -> Logger:
    """SB3's TensorBoard logger, continuing the checkpoint's curves on resume.

    SB3 dumps at the end of each rollout, before the checkpoint at the same step; what the run
    recorded after that dump (the update's losses, an evaluation) is still pending and comes
    back from the checkpoint. What the interrupted run dumped after its checkpoint, TensorBoard
    hides (``purge_step``): the resumed run logs those steps again, and two curves drawn over
    each other would show work the run no longer has."""
    logger = configure(str(folder), ["tensorboard"])
    for output in logger.output_formats:
        if isinstance(output, TensorBoardOutputFormat):
            _name_write_errors(output, folder)
    if resume_state is not None:
        from torch.utils.tensorboard import SummaryWriter

        purge_step = resume_state["num_timesteps"] + 1
        for output in logger.output_formats:
            if isinstance(output, TensorBoardOutputFormat):
                output.writer.close()
                output.writer = SummaryWriter(log_dir=str(folder), purge_step=purge_step)
        pending = resume_state.get("logger_pending", {})
        logger.name_to_value.update(pending.get("values", {}))
        logger.name_to_count.update(pending.get("counts", {}))
        logger.name_to_excluded.update(pending.get("excluded", {}))
    return logger


def _name_write_errors(output: TensorBoardOutputFormat, folder: Path) -> None:
    """SB3's dumps write TensorBoard from inside ``learn()``, and a failed write surfaces there
    as an ``OSError`` without a file name: this one names the folder."""
    write, close = output.write, output.close

    def named_write(*args: Any, **kwargs: Any) -> None:
        with writing(folder):
            write(*args, **kwargs)

    def named_close() -> None:
        with writing(folder):
            close()

    output.write = named_write  # type: ignore[method-assign]
    output.close = named_close  # type: ignore[method-assign]


@contextlib.contextmanager
def quiet_tensorboard_thread() -> Iterator[None]:
    """TensorBoard writes its event file from a thread, which prints a traceback when a write
    fails before the next write in the main thread raises the same error again (and that one
    is reported, named). The thread's copy is left unprinted; any other thread's is not."""
    previous = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        if not (type(args.thread).__name__ == "_AsyncWriterThread"
                and isinstance(args.exc_value, OSError)):
            previous(args)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = previous


def write_scalars(logger: Logger, step: int, values: dict[str, float]) -> None:
    """Write ``values`` to TensorBoard at ``step`` now. ``logger.record`` would wait for SB3's
    next dump, at the end of the rollout that follows: an evaluation made at a rollout's start
    would be drawn a rollout late, and the closing one (after the last rollout) never."""
    for output in logger.output_formats:
        if isinstance(output, TensorBoardOutputFormat):
            with writing(Path(output.writer.log_dir)):
                for key, value in values.items():
                    output.writer.add_scalar(key, value, step)
                output.writer.flush()


def logger_pending(logger: Logger) -> dict[str, dict[str, Any]]:
    """What ``logger`` recorded since its last dump (see :func:`tensorboard_logger`)."""
    return {"values": dict(logger.name_to_value), "counts": dict(logger.name_to_count),
            "excluded": dict(logger.name_to_excluded)}


# -- stopping on SIGINT / SIGTERM ----------------------------------------------------------------
class StopOnSignal:
    """While active, SIGINT and SIGTERM ask the run to stop at its next safe point instead of
    killing it mid-rollout; a second signal goes to the previous handler (Ctrl-C twice aborts).

    Handlers can only be set from the main thread; elsewhere this does nothing. On exit the
    previous handlers are back, since ``train()`` may be called from a longer Python program.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)
    #: Where each backend stops, and what becomes of a warm start in progress: the SB3
    #: trainer's asks between decisions and minibatches and ends unsaved; RLlib's (run while
    #: Ray's actors are up) is not asked, and the run stops at its step-0 checkpoint after it.
    WORDING = {"sb3": ("rollout boundary", "a warm start in progress stops at once, unsaved"),
               "rllib": ("iteration boundary", "a warm start in progress finishes first")}

    def __init__(self, backend: str = "sb3") -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}
        self._boundary, self._warm_start = self.WORDING[backend]

    @property
    def name(self) -> str | None:
        return None if self.signum is None else signal.Signals(self.signum).name

    def requested(self) -> bool:
        return self.signum is not None

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                previous = signal.getsignal(sig)
                if previous is not None:  # None: set outside Python, cannot be restored
                    self._previous[sig] = previous
                    signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def reclaim(self) -> None:
        """Set the handlers again after code that replaced them (``ray.init`` sets its own
        SIGTERM handler, a ``sys.exit``); the handlers restored on exit stay those from entry."""
        for sig in self._previous:
            signal.signal(sig, self._handle)

    @contextlib.contextmanager
    def keeping(self, owner: Any, setter: str) -> Iterator[None]:
        """While inside, ``owner.<setter>`` (a library's function that sets its own SIGTERM
        handler) does nothing, so a signal meanwhile reaches this handler.

        ``ray.init`` sets Ray's (``sys.exit``) first thing, through
        ``ray._private.utils.set_sigterm_handler``, and keeps it for the seconds it runs.
        Blocking the signals with ``pthread_sigmask`` instead does not work: the mask is the
        main thread's alone, so the kernel hands a SIGTERM to another thread (numpy's and
        torch's pools) and Python runs the handler then set, Ray's; and every process Ray
        starts meanwhile (its daemons, the EnvRunners) inherits the mask and ignores the
        SIGTERM Ray stops it with. Where ``owner`` has no such function (another Ray
        version), nothing changes here; :meth:`reclaim` still takes the handler back after."""
        original = getattr(owner, setter, None)
        if original is None or not self._previous:  # no handler of ours is set
            yield
            return
        setattr(owner, setter, lambda *args, **kwargs: None)
        try:
            yield
        finally:
            setattr(owner, setter, original)

    def _restore(self) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signum is None:
            self.signum = signum
            # os.write, not print: print may be mid-call in the interrupted code (reentrancy).
            os.write(2, f"\n{self.name}: the run stops at the next {self._boundary}, after a "
                        f"checkpoint ({self._warm_start}); send it again to abort "
                        f"now\n".encode())
            return
        previous = self._previous.get(signum, signal.SIG_DFL)
        self._restore()
        if callable(previous):
            previous(signum, frame)  # Python's SIGINT handler: KeyboardInterrupt
        elif previous == signal.SIG_DFL:
            os.kill(os.getpid(), signum)  # the default action, now that it is back


# -- the callback that runs self-play around SB3's learn() ---------------------------------------
class SelfPlayCallback(BaseCallback):
    """Snapshots, evaluations, checkpoints, metrics, the progress bar and the time limit."""

    model: MaskablePPO  # SB3 sets it when learning starts; this trainer learns with no other

    def __init__(self, cfg: Config, run_dir: Path, venv: SelfPlayVecEnv | WorkerSelfPlayVecEnv,
                 progress: bool,
                 resume_state: dict[str, Any] | None = None,
                 stop_request: StopOnSignal | None = None,
                 pretrain_stats: dict[str, float] | None = None) -> None:
        """``pretrain_stats``: a fresh run's warm start (a resumed run's are in its state)."""
        super().__init__()
        self.cfg, self.run_dir, self.venv, self.show_progress = cfg, run_dir, venv, progress
        self.stop_request = stop_request
        sp, tr = cfg.selfplay, cfg.training
        sched = (resume_state or {}).get("schedule", {})
        self.next_snapshot = sched.get("next_snapshot", sp.snapshot_every)
        self.next_eval = sched.get("next_eval", 0)
        self.next_checkpoint = sched.get("next_checkpoint", tr.checkpoint_every)
        self.best_score = sched.get("best_score", -np.inf)
        self.elapsed_before = sched.get("elapsed", 0.0)
        # Kept in every checkpoint, so a resumed run's summary still reports its warm start.
        self.pretrain_stats = dict((resume_state or {}).get("pretrain", pretrain_stats or {}))
        if resume_state is None:  # the warm start's wall time counts against the time limit
            self.elapsed_before += self.pretrain_stats.get("seconds", 0.0)
        self.last_checkpoint = sched.get("last_checkpoint", -1)
        self.last_eval = sched.get("last_eval", -1)
        self.session_start = time.time()
        self.stop = False
        self.stop_reason: str | None = None  # "time limit", or the signal's name
        saved_wins = (resume_state or {}).get("wins", {})
        self.wins: dict[str, deque] = {k: deque(saved_wins.get(k, ()), maxlen=500)
                                       for k in ("self", "random", "heuristic", "search",
                                                 "mixed")}
        resume_step = resume_state["num_timesteps"] if resume_state else None
        self.progress_csv = CsvLog(run_dir / "progress.csv", [
            "step", "elapsed", "fps", "ep_rew_mean", "ep_len_mean", "win_vs_self",
            "win_vs_random", "win_vs_heuristic", "pool"], resume_step)
        cols = ["step", "elapsed", "chance"]
        for opp in EVAL_OPPONENTS:
            cols += [f"{opp}_win_rate", f"{opp}_ci_low", f"{opp}_ci_high"]
        # Not every row at the checkpoint's step came before it: the step-0 checkpoint and one
        # taken on a signal precede that step's evaluation, which the resumed run then does.
        self.eval_csv = CsvLog(run_dir / "eval.csv", cols,
                               self.last_eval if resume_state else None)
        self.bar = None
        self.fps_mark = (time.time(), 0)
        #: What every saved policy and checkpoint records of the env it was trained on.
        self.identity = env_identity(cfg.game, cfg.env)
        #: The step of the last checkpoint on disk (a write that fails leaves that one).
        self.saved_checkpoint: int | None = resume_step

    def elapsed(self) -> float:
        return self.elapsed_before + time.time() - self.session_start

    def _on_training_start(self) -> None:
        if self.show_progress:
            from tqdm import tqdm

            self.bar = tqdm(total=self.cfg.training.total_timesteps, initial=self.num_timesteps,
                            unit="step", unit_scale=True, dynamic_ncols=True)
        # Step 0 of a fresh run (a no-op on resume, where the checkpoint is this step): from
        # here on a kill loses at most one checkpoint interval, never the warm start.
        self.checkpoint()
        # An evaluation due now follows, and the checkpoint is written again with it done, as
        # at every later checkpoint: a run resumed from it must not evaluate (and draw in
        # TensorBoard) this step twice.
        if self.num_timesteps >= self.next_eval:
            self.evaluate(self.num_timesteps)
            self.checkpoint(again=True)
        self.fps_mark = (time.time(), self.num_timesteps)  # after both: fps counts training only

    def _on_rollout_start(self) -> None:
        step = self.num_timesteps
        if self.stop_request is not None and self.stop_request.signum is not None:
            # Asked to stop: checkpoint now. A snapshot or evaluation due at this step is not
            # lost: the schedule is saved unadvanced, so the resumed run does it here.
            self.checkpoint()
            self.stop, self.stop_reason = True, self.stop_request.name
            return
        if step >= self.next_snapshot:
            self.venv.pool.add(self.model.policy, step)
            self.next_snapshot = _next(self.next_snapshot, self.cfg.selfplay.snapshot_every, step)
        paused = time.time()  # evaluations and checkpoints are not training: fps leaves them out
        if step >= self.next_eval:
            self.evaluate(step)
        if step >= self.next_checkpoint:
            self.next_checkpoint = _next(self.next_checkpoint, self.cfg.training.checkpoint_every,
                                         step)
            self.checkpoint()
        mark, marked_step = self.fps_mark
        self.fps_mark = (mark + time.time() - paused, marked_step)
        limit = self.cfg.training.time_limit_minutes
        if limit is not None and self.elapsed() >= 60 * limit:
            self.checkpoint()
            self.stop, self.stop_reason = True, "time limit"

    def _on_step(self) -> bool:
        dones, infos = self.locals["dones"], self.locals["infos"]
        for i in np.flatnonzero(dones):
            info = infos[i]
            self.wins[info["opponent"]].append(info["win"])
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        return not self.stop

    def _on_rollout_end(self) -> None:
        now, step = time.time(), self.num_timesteps
        fps = (step - self.fps_mark[1]) / max(now - self.fps_mark[0], 1e-9)
        self.fps_mark = (now, step)
        buf = self.model.ep_info_buffer or ()  # SB3 creates it before the first rollout
        row = {
            "step": step, "elapsed": round(self.elapsed(), 1), "fps": round(fps),
            "ep_rew_mean": _mean([e["r"] for e in buf]),
            "ep_len_mean": _mean([e["l"] for e in buf]),
            "win_vs_self": _mean(self.wins["self"]), "win_vs_random": _mean(self.wins["random"]),
            "win_vs_heuristic": _mean(self.wins["heuristic"]),
            "pool": len(self.venv.pool.actors),
        }
        self.progress_csv.append(row)
        for key in ("win_vs_self", "win_vs_random", "win_vs_heuristic"):
            if row[key] != "":
                self.logger.record(f"selfplay/{key}", row[key])
        self.logger.record("selfplay/pool_size", row["pool"])
        if self.bar is not None:
            self.bar.set_postfix(win_rnd=row["win_vs_random"], win_heu=row["win_vs_heuristic"],
                                 fps=row["fps"], refresh=False)

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()

    # -- evaluation and checkpoints --------------------------------------------------------------
    def evaluate(self, step: int) -> None:
        """Greedy learner against random and heuristic, seats rotated; keep the best policy.

        Uses its own seeded RNGs and no torch sampling, so it never perturbs training.
        """
        cfg, ev = self.cfg, self.cfg.evaluation
        row, scalars = evaluate_learner(cfg, self.model.policy, step, self.elapsed())
        write_scalars(self.logger, step, scalars)
        self.eval_csv.append(row)
        self.last_eval = step
        # Also after the closing evaluation: extending the run must not evaluate this step again.
        self.next_eval = _next(self.next_eval, ev.every, step)
        with writing(self.run_dir / "training_curve.png"):
            plot_training_curve(self.run_dir / "eval.csv", self.run_dir / "training_curve.png",
                                title=f"{cfg.game} self-play ({self.run_dir.name})")
        score = sum(row[f"{opp}_win_rate"] for opp in EVAL_OPPONENTS)
        if score > self.best_score:
            self.best_score = score
            save_model(self.model, self.run_dir / "best.zip", self.identity)
        if self.bar is not None:
            self.bar.write(f"step {step}: win rate vs random {row['random_win_rate']:.3f}, "
                           f"vs heuristic {row['heuristic_win_rate']:.3f}")

    def checkpoint(self, again: bool = False) -> None:
        """Save the run's whole state at this step (once per step, unless ``again``)."""
        step = self.num_timesteps
        if step == self.last_checkpoint and not again:
            return
        self.last_checkpoint = step
        model = self.model
        save_checkpoint(self.run_dir / CHECKPOINT_NAME, {
            "config": self.cfg.to_dict(),
            "num_timesteps": step,
            "n_updates": model._n_updates,
            "policy": model.policy.state_dict(),
            "optimizer": model.policy.optimizer.state_dict(),
            "last_obs": model._last_obs,
            "last_episode_starts": model._last_episode_starts,
            "ep_info_buffer": list(model.ep_info_buffer or []),
            "ep_success_buffer": list(model.ep_success_buffer or []),
            "logger_pending": logger_pending(model.logger),
            "wins": {kind: list(values) for kind, values in self.wins.items()},
            "pretrain": self.pretrain_stats,
            "venv": self.venv.state_dict(),
            "rng": rng_states(),
            "identity": self.identity,
            "schedule": {"next_snapshot": self.next_snapshot, "next_eval": self.next_eval,
                         "next_checkpoint": self.next_checkpoint, "best_score": self.best_score,
                         "elapsed": self.elapsed(), "last_checkpoint": step,
                         "last_eval": self.last_eval},
        })
        self.saved_checkpoint = step
        save_model(model, self.run_dir / "latest.zip", self.identity)
        self.keep_policy(model)

    def keep_policy(self, model: MaskablePPO) -> None:
        """With ``training.keep_policies``, the policy of the last checkpoint, by its step.
        Written after the checkpoint (a policy never outlives a run's first checkpoint), and
        again on resume if a kill came between the two."""
        if not self.cfg.training.keep_policies:
            return
        path = self.run_dir / "policies" / f"step-{self.last_checkpoint:09d}.zip"
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            save_model(model, path, self.identity)


def _next(current: int, every: int, step: int) -> int:
    while current <= step:
        current += every
    return current


def evaluate_learner(cfg: Config, policy: Any, step: int,
                     elapsed: float) -> tuple[dict[str, Any], dict[str, float]]:
    """One periodic evaluation of the learner's ``policy`` against ``EVAL_OPPONENTS`` (both
    trainers): its ``eval.csv`` row and its TensorBoard scalars."""
    ev = cfg.evaluation
    learner = TorchPolicyActor(policy, ev.deterministic, np.random.default_rng(step),
                               name="learner")
    report = evaluate(cfg.game, [learner, *EVAL_OPPONENTS], games=ev.games, config=cfg.env,
                      seed=cfg.seed + step, parallel=ev.parallel,
                      pairs=[(0, 1 + k) for k in range(len(EVAL_OPPONENTS))],
                      labels=["learner", *EVAL_OPPONENTS])
    row: dict[str, Any] = {"step": step, "elapsed": round(elapsed, 1),
                           "chance": report["chance"]}
    scalars = {}
    for opp, match in zip(EVAL_OPPONENTS, report["matches"], strict=True):
        row[f"{opp}_win_rate"] = round(match["win_rate"], 4)
        row[f"{opp}_ci_low"], row[f"{opp}_ci_high"] = (round(x, 4) for x in match["ci95"])
        scalars[f"eval/win_rate_vs_{opp}"] = match["win_rate"]
    return row, scalars


def _mean(values: Any) -> float | str:
    values = list(values)
    return round(float(np.mean(values)), 4) if values else ""


def save_model(model: MaskablePPO, path: Path, identity: dict[str, Any]) -> None:
    """Save ``model`` atomically, recording the env it was trained on (``identity``, see
    :mod:`card_envs.agents.provenance`)."""
    atomic_write_bytes(path, with_identity(serialised(model.save), identity))


# -- the run -------------------------------------------------------------------------------------
#: What a run writes; a run directory restarted because it holds no checkpoint loses these.
RUN_OUTPUTS = ("config.yaml", "progress.csv", "eval.csv", "latest.zip", "best.zip", "final.zip",
               "training_curve.png", "summary.json", "evaluation.json", "evaluation.png", "tb",
               "rllib")


def make_run_dir(cfg: Config, runs_dir: str, name: str | None,
                 prog: str = PROG) -> tuple[Path, RunLock]:
    """``runs_dir/<game>/<name>``, new or holding no checkpoint (a run stopped before its first
    one has nothing to resume, so it is started again, saying so, not refused), locked for this
    process: the returned lock is held until the caller releases it (or the process ends).

    The directory is created and locked before anything in it is looked at, so two starts with
    one name cannot both see it free: the second is refused, naming the first."""
    name = name or f"{time.strftime('%Y%m%d-%H%M%S')}-seed{cfg.seed}"
    run_dir = Path(runs_dir) / cfg.game / name
    # A folder that is no run directory gets no lock file (a run directory has config.yaml
    # from its first moments on, or had our lock file before it).
    if (run_dir.is_dir() and not (run_dir / LOCK_NAME).exists()
            and not (run_dir / "config.yaml").is_file() and any(run_dir.iterdir())):
        raise FileExistsError(f"{run_dir} exists and is not a run directory (no "
                              "config.yaml); choose another --run-name")
    lock = RunLock(run_dir).acquire(hint="choose another --run-name")
    try:
        _claim_run_dir(cfg, run_dir, prog)
    except BaseException:
        lock.release()
        raise
    return run_dir, lock


def _saved_policies(run_dir: Path) -> list[str]:
    """The saved policies in ``run_dir`` (``*.zip`` and ``policies/*.zip``), by relative path."""
    return sorted(str(p.relative_to(run_dir))
                  for p in [*run_dir.glob("*.zip"), *run_dir.glob("policies/*.zip")])


def _claim_run_dir(cfg: Config, run_dir: Path, prog: str) -> None:
    """With the lock held: refuse a directory that holds a run; empty one that holds no
    checkpoint."""
    if (run_dir / CHECKPOINT_NAME).exists():
        raise FileExistsError(f"{run_dir} holds a run (choose another --run-name for a new "
                              f"one); continue it with: {_resume_command(run_dir, prog)}")
    contents = [p for p in run_dir.iterdir() if p.name != LOCK_NAME]
    if not contents:
        return
    if not (run_dir / "config.yaml").is_file():
        raise FileExistsError(f"{run_dir} exists and is not a run directory (no "
                              "config.yaml); choose another --run-name")
    # A saved policy is never deleted on the user's behalf (runs since the step-0
    # checkpoint cannot leave one without a checkpoint; older ones could, and so can a
    # checkpoint deleted by hand).
    policies = _saved_policies(run_dir)
    if policies:
        raise FileExistsError(f"{run_dir} holds no checkpoint but saved policies "
                              f"({', '.join(policies)}); move them or choose another "
                              "--run-name")
    removed = []
    for output in RUN_OUTPUTS:
        path = run_dir / output
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        else:
            continue
        removed.append(output)
    print(f"{run_dir} holds no checkpoint (its run stopped before the first one): "
          f"starting it again (replacing its {', '.join(removed)})")


def train(cfg: Config, run_dir: str | os.PathLike[str], resume: bool = False,
          progress: bool = True, extra_callbacks: Sequence[BaseCallback] = (),
          final_eval: bool = True, allow_policy_mismatch: bool = False) -> dict[str, Any]:
    """Train (or continue) the run in ``run_dir``; returns a summary of the run.

    SIGINT or SIGTERM (in the main thread) stops it at the next rollout boundary after a
    checkpoint, without the closing evaluation: ``summary["stopped_by_signal"]`` names it.
    During the warm start it stops at once, before any checkpoint exists, and
    ``summary["stopped_in_warm_start"]`` is True. Resuming a complete run (see
    :func:`completed_summary`) returns its summary and touches nothing.

    ``cfg`` is validated again (a ``Config`` built or changed in Python skipped the checks on
    load, and one built directly lacks the ``ppo`` defaults). A fresh run writes its
    ``config.yaml``, which ``--resume`` and ``training.evaluate`` read the run's game options
    from, and refuses a directory that holds a run, as the command line does: it would
    overwrite that run's checkpoint and mix the two runs' metrics.

    The run directory is locked for the whole call (:mod:`training.run_lock`): while another
    process trains in it, this raises :class:`~training.run_lock.RunLockedError` naming that
    process. A write that fails raises :class:`~training.files.RunWriteError` naming the path
    and the cause; the last good checkpoint is kept. A checkpoint that records another
    package version, env version or observation layout than this one's is refused on resume
    unless ``allow_policy_mismatch``.
    """
    run_dir = Path(run_dir)
    cfg = from_dict(cfg.to_dict())
    if cfg.backend == "rllib":
        require_ray()
    if resume and not run_dir.is_dir():
        raise CheckpointError(f"no run directory at {str(run_dir)!r} to resume")
    with RunLock(run_dir).acquire(hint="train in another directory" if not resume else ""):
        if not resume:
            if (run_dir / CHECKPOINT_NAME).exists():
                raise FileExistsError(f"{run_dir} holds a run; continue it with resume=True, or "
                                      "train in another directory")
            save_config(cfg, run_dir / "config.yaml")
        return train_locked(cfg, run_dir, resume, progress, extra_callbacks, final_eval,
                            allow_policy_mismatch=allow_policy_mismatch)


def train_locked(cfg: Config, run_dir: Path, resume: bool = False, progress: bool = True,
                 extra_callbacks: Sequence[BaseCallback] = (), final_eval: bool = True,
                 allow_policy_mismatch: bool = False) -> dict[str, Any]:
    """:func:`train` for a caller that holds ``run_dir``'s lock and, for a fresh run, has
    written its ``config.yaml`` (the command line, which checks the directory under the lock
    first). Any failed write comes out as a :class:`RunWriteError` naming its path.
    ``backend: rllib`` runs :func:`training.rllib_train.train_rllib` (no SB3 callbacks)."""
    if cfg.backend == "rllib" and extra_callbacks:
        raise ValueError("extra_callbacks are SB3 callbacks: backend 'rllib' takes none")
    try:
        with quiet_tensorboard_thread():
            if cfg.backend == "rllib":
                require_ray()
                from .rllib_train import train_rllib

                return train_rllib(cfg, run_dir, resume, progress, final_eval,
                                   allow_policy_mismatch)
            return _train(cfg, run_dir, resume, progress, extra_callbacks, final_eval,
                          allow_policy_mismatch)
    except OSError as err:  # one no write below named (a write inside a library)
        raise RunWriteError(err.filename or run_dir, err) from err


def _train(cfg: Config, run_dir: Path, resume: bool, progress: bool,
           extra_callbacks: Sequence[BaseCallback], final_eval: bool,
           allow_policy_mismatch: bool) -> dict[str, Any]:
    if resume and (done := completed_summary(run_dir, cfg)) is not None:
        return done
    sp = cfg.selfplay
    opponents = {str(kind): weight for kind, weight in sp.opponents.items()}

    # A resumed run's games live in the checkpoint's number of worker processes.
    state = load_checkpoint(run_dir / CHECKPOINT_NAME, cfg.to_dict()) if resume else None
    workers = run_workers(cfg, state)
    torch.set_num_threads(learner_torch_threads(cfg.training.torch_threads, workers))
    with StopOnSignal() as stop_request, contextlib.ExitStack() as closing:
        # 1. N games of the game, opponents batched, learner seat rotating (in worker
        # processes with selfplay.workers above 1).
        venv = make_selfplay_venv(cfg.game, cfg.env, sp.n_envs, opponents, workers,
                                  pool_size=sp.pool_size, latest_prob=sp.latest_prob,
                                  learner_seat=sp.learner_seat,
                                  opponent_deterministic=sp.opponent_deterministic,
                                  seed=cfg.seed, reward=sp.reward,
                                  reward_scale=sp.reward_scale, search=sp.search)
        closing.callback(venv.close)

        # 2. The learner: MaskablePPO reads legal-action masks from venv.action_masks().
        model = learner_class(cfg.training.precision)(
            policy_class(cfg), venv, seed=cfg.seed, device=cfg.training.device, verbose=0,
            **ppo_arguments(cfg))

        # 3. Fresh run: the starting policy (after the optional warm start) is the pool's first
        # snapshot, before any game is dealt. Resume: restore it all.
        pretrain_stats: dict[str, float] = {}
        if state is not None:
            differences = identity_differences(state.get("identity"),
                                               env_identity(cfg.game, cfg.env), "checkpoint")
            if differences and not allow_policy_mismatch:
                venv.close()
                raise CheckpointError(
                    f"the checkpoint of {run_dir} was written for another env or package "
                    f"version: {'; '.join(differences)}. To resume it anyway, pass "
                    f"--allow-policy-mismatch (train(..., allow_policy_mismatch=True))")
            restore(model, venv, state)
            # Only now: a resume refused (a corrupt or mismatched checkpoint) leaves the run's
            # config.yaml as it was. The checkpoint allows only RESUMABLE_KEYS to differ.
            save_config(cfg, run_dir / "config.yaml")
            limit = cfg.training.time_limit_minutes
            print(f"resuming from the checkpoint at step {state['num_timesteps']} (any work "
                  f"after it is done again), to training.total_timesteps "
                  f"{cfg.training.total_timesteps}"
                  + ("" if limit is None else f" within training.time_limit_minutes {limit:g}"))
        else:
            if cfg.training.init_from:
                init_weights(model, cfg.training.init_from)
            if cfg.pretrain.games:
                # Optional warm start: clone the heuristic before self-play (pretrain.py).
                started = time.time()
                try:
                    pretrain_stats = warm_start(model, cfg, stop_request.requested)
                except WarmStartStopped:
                    # Nothing to checkpoint yet: the run directory is started again next time.
                    venv.close()
                    return run_summary(run_dir, num_timesteps=0, checkpoint_step=None,
                                       elapsed=time.time() - started,
                                       stopped_by_signal=stop_request.name,
                                       stopped_in_warm_start=True)
                print(f"behaviour cloning: {pretrain_stats['decisions']} decisions, accuracy "
                      f"{pretrain_stats['bc_accuracy']:.3f} (held-out games "
                      f"{pretrain_stats['bc_val_accuracy']:.3f}, epoch "
                      f"{pretrain_stats['bc_best_epoch']} kept), "
                      f"{pretrain_stats['seconds']:.0f} s (teacher's games "
                      f"{pretrain_stats['teacher_seconds']:.0f} s, cloning "
                      f"{pretrain_stats['clone_seconds']:.0f} s)")
            venv.pool.add(model.policy, 0)
        # (Only now: a checkpoint that fails to load leaves no new TensorBoard file behind.)
        model.set_logger(tensorboard_logger(run_dir / "tb", state))
        callback = SelfPlayCallback(cfg, run_dir, venv, progress, resume_state=state,
                                    stop_request=stop_request, pretrain_stats=pretrain_stats)
        if resume:
            callback.keep_policy(model)  # holds the checkpoint's weights until learn() starts

        # 4. Learn until total_timesteps (or the time limit or a signal; checkpoint first). A
        # fresh run checkpoints at step 0, when learning starts.
        remaining = cfg.training.total_timesteps - model.num_timesteps
        if remaining > 0:
            model.learn(remaining, callback=[callback, *extra_callbacks],
                        reset_num_timesteps=not resume)
            if not callback.stop and model.num_timesteps >= cfg.training.total_timesteps:
                if callback.last_eval < model.num_timesteps:
                    callback.evaluate(model.num_timesteps)  # the curve's last point
                callback.checkpoint()  # after train(): a rollout boundary, exact to resume from
            elif callback.stop:
                # SB3 steps the envs once before a callback can stop it; that step is never
                # trained on, and a resume starts from the checkpoint: the run ends there.
                model.num_timesteps = callback.last_checkpoint
        # Only a run that ended as configured (its steps, or its time) has a final policy: a
        # stopped one is continued with --resume, and its final.zip would read as finished.
        stopped = callback.stop and callback.stop_reason != "time limit"
        if not stopped:
            save_model(model, run_dir / "final.zip", callback.identity)
    signalled = stop_request.name
    summary = run_summary(run_dir, num_timesteps=model.num_timesteps,
                          checkpoint_step=callback.last_checkpoint, elapsed=callback.elapsed(),
                          stopped_by_time_limit=callback.stop_reason == "time limit",
                          stopped_by_signal=signalled, best_score=callback.best_score,
                          pretrain=callback.pretrain_stats, stopped=stopped)

    # 5. The honest figure: fresh games, many of them, for best.zip and final.zip (skipped
    # when a signal asked the run to stop).
    if final_eval and cfg.evaluation.final_games > 0 and signalled is None:
        summary["evaluation"] = final_evaluation(cfg, run_dir)
    atomic_write_bytes(run_dir / "summary.json",
                       json.dumps(summary, indent=2, default=float).encode())
    return summary


def warm_start(model: MaskablePPO, cfg: Config,
               should_stop: Callable[[], bool] | None = None) -> dict[str, float]:
    """The config's ``pretrain`` (behaviour cloning, DAgger) on ``model``'s policy, every key
    passed on; both backends' warm start (the RLlib trainer's, on the same network)."""
    pt, sp = cfg.pretrain, cfg.selfplay
    return pretrain(model, cfg.game, cfg.env, pt.games, pt.epochs, pt.batch_size,
                    pt.learning_rate, pt.max_decisions, seed=cfg.seed, reward=sp.reward,
                    reward_scale=sp.reward_scale, dagger_rounds=pt.dagger_rounds,
                    dagger_games=pt.dagger_games, dagger_epochs=pt.dagger_epochs,
                    should_stop=should_stop, teacher=pt.teacher,
                    policy_prior=pt.policy_prior, dagger_teacher=pt.dagger_teacher,
                    precision=cfg.training.precision)


def run_summary(run_dir: Path, *, num_timesteps: int, checkpoint_step: int | None,
                elapsed: float, stopped_by_signal: str | None,
                stopped_by_time_limit: bool = False, stopped_in_warm_start: bool = False,
                best_score: float | None = None,
                pretrain: dict[str, float] | None = None,
                stopped: bool = False) -> dict[str, Any]:
    """What ``train()`` returns (and writes to ``summary.json`` after a run that trained): the
    same keys however the run ended. ``status`` says how in words: "finished at step N", "out
    of time at step N", or "stopped at step N by SIGINT: unfinished" (``stopped``: a signal
    ended the training before its steps or time were done; no final.zip then); a signal after
    the training ended adds that the closing evaluation was skipped."""
    if stopped_in_warm_start:
        status = f"stopped during the warm start by {stopped_by_signal}: nothing saved"
    elif stopped:
        status = (f"stopped at step {checkpoint_step} by {stopped_by_signal}: unfinished, "
                  "resume it to go on (no final.zip)")
    elif stopped_by_time_limit:
        status = f"out of time at step {num_timesteps}"
    else:
        status = f"finished at step {num_timesteps}"
    if stopped_by_signal and not stopped and not stopped_in_warm_start:
        # The signal came after the training ended: only the closing evaluation was skipped.
        status += f"; its closing evaluation skipped ({stopped_by_signal}): resume it to run it"
    return {"run_dir": str(run_dir), "status": status, "num_timesteps": num_timesteps,
            "checkpoint_step": checkpoint_step, "elapsed_seconds": round(elapsed, 1),
            "stopped_by_time_limit": stopped_by_time_limit,
            "stopped_by_signal": stopped_by_signal,
            "stopped_in_warm_start": stopped_in_warm_start,
            # None before any evaluation (strict JSON has no -Infinity, the score's start).
            "best_training_eval_score": (best_score if best_score is not None
                                         and math.isfinite(best_score) else None),
            "pretrain": pretrain or {}}


def policy_class(cfg: Config) -> Any:
    """SB3's MLP policy for the raw observation; with derived features, the policy that also
    scores actions by their own features where the game has them."""
    if cfg.features == "derived":
        from card_envs.agents.features import ScoredActionsPolicy

        return ScoredActionsPolicy
    return "MlpPolicy"


def ppo_arguments(cfg: Config) -> dict[str, Any]:
    """MaskablePPO's keyword arguments: ``cfg.ppo`` plus the policy input ``cfg.features``."""
    ppo = copy.deepcopy(cfg.ppo)
    if cfg.features == "derived":
        from card_envs.agents.features import DerivedFeatures, DerivedRolloutBuffer

        kwargs = ppo.setdefault("policy_kwargs", {})
        kwargs["features_extractor_class"] = DerivedFeatures
        kwargs["features_extractor_kwargs"] = {"game": cfg.game, "env_config": dict(cfg.env)}
        # The features once per sample, not once per PPO epoch (DerivedRolloutBuffer).
        ppo["rollout_buffer_class"] = DerivedRolloutBuffer
        ppo["rollout_buffer_kwargs"] = {"game": cfg.game, "env_config": dict(cfg.env)}
    return ppo


def init_weights(model: MaskablePPO, path: str) -> None:
    """Start from a saved policy's weights (same game layout and net_arch), fresh optimizer."""
    from card_envs.agents.policy import load_maskable_ppo

    try:
        source = load_maskable_ppo(path)
    except (FileNotFoundError, ValueError) as err:
        raise ConfigError(f"training.init_from: {err}") from None
    weights, own = source.policy.state_dict(), model.policy.state_dict()
    # torch's own message lists every tensor over many lines; one line names the first.
    misfits = [f"{k} is missing from it" for k in own if k not in weights]
    misfits += [f"it has {k}, this policy has not" for k in weights if k not in own]
    misfits += [f"{k} is {list(weights[k].shape)} in it, {list(own[k].shape)} here"
                for k in own if k in weights and weights[k].shape != own[k].shape]
    if misfits:
        more = f" (and {len(misfits) - 1} more)" if len(misfits) > 1 else ""
        raise ConfigError(f"training.init_from: {path!r} does not fit this config's policy "
                          f"(game layout, features or ppo.policy_kwargs.net_arch differ): "
                          f"{misfits[0]}{more}")
    model.policy.load_state_dict(weights)


def check_init_from(cfg: Config) -> None:
    """Fail before a run directory exists if ``training.init_from`` is missing or does not fit
    (the run would otherwise stop there, leaving a directory behind). Global RNGs are reseeded
    when ``train()`` builds its model, so building one here changes nothing."""
    if not cfg.training.init_from:
        return
    venv = SelfPlayVecEnv(cfg.game, cfg.env, cfg.selfplay.n_envs, {"random": 1.0}, seed=0)
    model = MaskablePPO(policy_class(cfg), venv, device="cpu", verbose=0, **ppo_arguments(cfg))
    init_weights(model, cfg.training.init_from)


def run_workers(cfg: Config, state: dict[str, Any] | None) -> int:
    """The self-play worker processes of a run: ``selfplay.workers`` resolved on this machine,
    or, resumed, the checkpoint's number (its games and streams are per worker)."""
    wanted = cfg.selfplay.workers
    if state is None:
        return resolve_workers(wanted, cfg.selfplay.n_envs)
    saved = checkpoint_workers(state)
    if wanted not in ("auto", saved):
        raise CheckpointError(f"selfplay.workers: the checkpoint's games run in {saved} worker "
                              f"process(es), the config asks for {wanted}; resume with "
                              f"selfplay.workers {saved} (or auto)")
    return saved


def restore(model: MaskablePPO, venv: SelfPlayVecEnv | WorkerSelfPlayVecEnv,
            state: dict[str, Any]) -> None:
    """Put a checkpoint back into a freshly built model and VecEnv."""
    model.policy.load_state_dict(state["policy"])
    model.policy.optimizer.load_state_dict(state["optimizer"])
    model.num_timesteps = state["num_timesteps"]
    model._n_updates = state["n_updates"]
    model._last_obs = state["last_obs"]
    model._last_episode_starts = state["last_episode_starts"]
    # learn(reset_num_timesteps=False) keeps these buffers: progress.csv's means continue.
    window = model._stats_window_size
    model.ep_info_buffer = deque(state["ep_info_buffer"], maxlen=window)
    model.ep_success_buffer = deque(state.get("ep_success_buffer", ()), maxlen=window)
    venv.load_state_dict(state["venv"], model.policy)
    set_rng_states(state["rng"])


def final_evaluation(cfg: Config, run_dir: Path) -> dict[str, Any]:
    policies = [p for p in ("best.zip", "final.zip") if (run_dir / p).exists()]
    agents = [str(run_dir / p) for p in policies] + list(EVAL_OPPONENTS)
    k = len(policies)
    pairs = [(i, k + j) for i in range(k) for j in range(len(EVAL_OPPONENTS))]
    report = evaluate(cfg.game, agents, games=cfg.evaluation.final_games, config=cfg.env,
                      seed=cfg.seed + 10**9, parallel=cfg.evaluation.parallel,
                      deterministic=cfg.evaluation.deterministic, pairs=pairs,
                      labels=[*policies, *EVAL_OPPONENTS])
    atomic_write_bytes(run_dir / "evaluation.json", json.dumps(report, indent=2).encode())
    with writing(run_dir / "evaluation.png"):
        plot_report(report, str(run_dir / "evaluation.png"))
    return {f"{m['a']} vs {m['b']}": {"win_rate": round(m["win_rate"], 4),
                                      "ci95": [round(x, 4) for x in m["ci95"]],
                                      "wins": m["wins"], "losses": m["losses"],
                                      "games": m["games"]} for m in report["matches"]}


EXAMPLES = """\
examples:
  {prog} roy                                  # the shipped config of a game
  {prog} configs/roy.yaml --seed 3            # a config file, another seed
  {prog} roy --set training.time_limit_minutes=5 --set ppo.learning_rate=3e-4
  {prog} --resume runs/roy/<run>              # continue from its checkpoint
  {prog} --resume runs/roy/<run> --total-timesteps 4000000   # train a finished run further

A run writes runs/<game>/<run>/: config.yaml (resolved), checkpoint.pt, latest.zip, best.zip,
final.zip, progress.csv, eval.csv, tb/ (TensorBoard), training_curve.png, evaluation.json and
summary.json. Ctrl-C (or SIGTERM) stops at the next rollout boundary after a checkpoint, from
which --resume continues exactly; a second Ctrl-C aborts at once.
"""


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> dict[str, Any]:
    """The command line (``card-envs train``; ``prog`` names it in help and messages, and
    every command an error or a summary suggests begins with it)."""
    from .assignments import parse_assignments
    from .shipped import resolve_config, shipped_configs

    parser = argparse.ArgumentParser(
        prog=prog, epilog=EXAMPLES.format(prog=prog),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Self-play MaskablePPO training of any card-envs game from one YAML config "
                    "(or Ray RLlib PPO with backend: rllib; see the training docs for every "
                    "key).")
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("source", nargs="?", metavar="GAME_OR_CONFIG",
                     help="a game, whose shipped config it trains (shipped: "
                          f"{', '.join(shipped_configs())}), or a config .yaml file")
    src.add_argument("--config", help="the same as GAME_OR_CONFIG (the older spelling)")
    src.add_argument("--resume", metavar="RUN_DIR",
                     help="runs/<game>/<run>: continue from its checkpoint")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        dest="assignments",
                        help="set any config key, dotted (training.time_limit_minutes=5, "
                             "ppo.learning_rate=3e-4, env.num_players=3); the value is YAML, "
                             "checked as in the file; repeat for more keys")
    parser.add_argument("--runs-dir", default="runs",
                        help="the directory that holds <game>/<run> (default: runs)")
    parser.add_argument("--run-name", default=None,
                        help="default: <date>-<time>-seed<seed>; a directory of that name that "
                             "holds no checkpoint is started again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--seed", type=int, default=None,
                        help="a new run's seed (--set seed=N): one config, many seeds")
    parser.add_argument("--total-timesteps", type=int, default=None,
                        help="--set training.total_timesteps=N (with --resume: train the run "
                             "to this many steps, e.g. to extend a finished run)")
    parser.add_argument("--time-limit-minutes", type=float, default=None,
                        help="--set training.time_limit_minutes=M: wall time of the whole run, "
                             "warm start and earlier sessions included")
    parser.add_argument("--allow-policy-mismatch", action="store_true",
                        help="with --resume: continue a checkpoint written by another package "
                             "version, env version or observation layout (refused by default)")
    args = parser.parse_args(argv)

    if args.resume and args.seed is not None:
        parser.error("--seed applies to a new run; a resumed run keeps its own seed")
    try:
        overrides = parse_assignments(args.assignments, "--set")
    except ConfigError as err:
        parser.error(str(err))
    for flag, key, value in (("--seed", "seed", args.seed),
                             ("--total-timesteps", "training.total_timesteps",
                              args.total_timesteps),
                             ("--time-limit-minutes", "training.time_limit_minutes",
                              args.time_limit_minutes)):
        if value is not None:
            if key in overrides:
                parser.error(f"{flag} and --set {key} both set {key}; keep one")
            overrides[key] = value
    if not args.resume:
        try:
            config_path = resolve_config(args.source or args.config)
        except FileNotFoundError as err:
            parser.error(str(err))
    lock: RunLock | None = None
    try:
        # Everything is validated before a run directory is created or a config rewritten, and
        # the directory is locked before anything in it is read.
        if args.resume:
            run_dir = Path(args.resume)
            if not (run_dir / "config.yaml").is_file():
                parser.error(f"{run_dir} is not a run directory (no config.yaml)")
            lock = RunLock(run_dir).acquire()
            cfg = load_config(run_dir / "config.yaml", overrides)
            if cfg.backend == "rllib":
                require_ray()
            if not (run_dir / CHECKPOINT_NAME).is_file():
                raise CheckpointError(f"{run_dir} holds no checkpoint (its run stopped before "
                                      f"the first one, or it was deleted); "
                                      f"{_restart(run_dir, cfg, prog)}")
            done = completed_summary(run_dir, cfg)
            if done is not None:
                _print_complete(run_dir, cfg, done, prog)
                return done
        else:
            cfg = load_config(config_path, overrides)
            if cfg.backend == "rllib":
                require_ray()  # before a run directory exists
            check_init_from(cfg)
            run_dir, lock = make_run_dir(cfg, args.runs_dir, args.run_name, prog)
            save_config(cfg, run_dir / "config.yaml")
        print(f"run directory: {run_dir}")
        summary = train_locked(cfg, run_dir, resume=bool(args.resume),
                               progress=not args.no_progress,
                               allow_policy_mismatch=args.allow_policy_mismatch)
    except (ConfigError, CheckpointError, FileExistsError, RunLockedError) as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    except RunWriteError as err:
        parser.exit(1, f"{parser.prog}: error: {err}. {_after_write_error(run_dir, prog)}\n")
    finally:
        if lock is not None:
            lock.release()
    _print_summary(summary)
    if summary.get("stopped_by_signal"):
        name = summary["stopped_by_signal"]
        if summary.get("stopped_in_warm_start"):
            print(f"stopped by {name} during the warm start, before the first checkpoint: "
                  f"nothing to resume; {_restart(run_dir, cfg, prog)}")
        else:
            print(f"stopped by {name} after a checkpoint at step {summary['checkpoint_step']}; "
                  f"continue with: {_resume_command(run_dir, prog)}")
        raise SystemExit(128 + signal.Signals[name].value)  # the shell's code for a signal
    return summary


def _resume_command(run_dir: Path, prog: str) -> str:
    return f"{prog} --resume {shlex.quote(str(run_dir))}"


def _print_complete(run_dir: Path, cfg: Config, done: dict[str, Any], prog: str) -> None:
    """What resuming a complete run says: how to train it further, as a command that does."""
    steps, total = done["num_timesteps"], cfg.training.total_timesteps
    resume = _resume_command(run_dir, prog)
    if steps >= total:
        print(f"{run_dir}: the run is already complete at {steps} steps "
              f"(training.total_timesteps {total}); to train it further, give more steps, "
              f"e.g.: {resume} --total-timesteps {2 * steps}")
    else:
        limit = cfg.training.time_limit_minutes
        assert limit is not None  # complete short of its steps: out of time
        print(f"{run_dir}: the run is already complete at {steps} steps: it used up its time "
              f"limit (training.time_limit_minutes {limit:g}) before training.total_timesteps "
              f"{total}; to train it further, give it more time, e.g.: {resume} "
              f"--time-limit-minutes {2 * limit:g}")


def _after_write_error(run_dir: Path, prog: str) -> str:
    """What a run stopped by a failed write keeps, and how to go on once the cause is fixed."""
    try:
        step = torch.load(run_dir / CHECKPOINT_NAME, map_location="cpu",
                          weights_only=False)["num_timesteps"]
    except Exception:
        return ("No checkpoint was kept (the run had none yet); once the cause is fixed, "
                "start it again")
    return (f"The last good checkpoint (step {step}) is kept; once the cause is fixed, "
            f"continue with: {_resume_command(run_dir, prog)}")


def completed_summary(run_dir: Path, cfg: Config) -> dict[str, Any] | None:
    """The summary of the run in ``run_dir`` if it has nothing left to do under ``cfg``, else
    None: trained to ``training.total_timesteps``, or stopped by a time limit that ``cfg``
    still leaves used up (resumed, it would train nothing and only evaluate again), and
    closed: its ``summary.json`` (written last) of its checkpoint's step and holding the
    closing evaluation, over ``evaluation.final_games`` games, unless that is 0. A run killed
    during its closing evaluation is not complete; nor is one extended past an earlier
    closing evaluation."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict):
        return None
    steps, final_games = summary.get("num_timesteps"), cfg.evaluation.final_games
    limit = cfg.training.time_limit_minutes
    out_of_time = summary.get("stopped_by_time_limit") is True and limit is not None
    if not isinstance(steps, int) or (steps < cfg.training.total_timesteps and not out_of_time):
        return None
    evaluation = summary.get("evaluation") or {}
    if final_games and (not evaluation or any(m.get("games") != final_games
                                              for m in evaluation.values())):
        return None
    state = load_checkpoint(run_dir / CHECKPOINT_NAME, cfg.to_dict())
    if state["num_timesteps"] != steps:
        return None
    if (steps < cfg.training.total_timesteps and limit is not None
            and state["schedule"]["elapsed"] < 60 * limit):
        return None  # the limit was raised: there is time to train on
    return summary


def _restart(run_dir: Path, cfg: Config, prog: str = PROG) -> str:
    """How to start the run in ``run_dir`` again, as a command that works: in the same
    directory if it sits where ``--runs-dir`` and ``--run-name`` can name it and holds no saved
    policy (which a restart never deletes), else as a new run from its config."""
    command = f"{prog} --config {shlex.quote(str(run_dir / 'config.yaml'))}"
    if run_dir.parent.name != cfg.game:
        return f"start a new run from its config: {command}"
    runs_dir = shlex.quote(str(run_dir.parent.parent))
    if not _saved_policies(run_dir):
        return (f"start it again: {command} --runs-dir {runs_dir} "
                f"--run-name {shlex.quote(run_dir.name)}")
    fresh = next(name for k in itertools.count(2)
                 if not (run_dir.parent / (name := f"{run_dir.name}-{k}")).exists())
    return (f"its saved policies stay; start a new run from its config: {command} "
            f"--runs-dir {runs_dir} --run-name {shlex.quote(fresh)}")


def _print_summary(summary: dict[str, Any]) -> None:
    print(f"steps {summary['num_timesteps']}, wall time {summary['elapsed_seconds']:.0f} s"
          + (" (stopped by the time limit)" if summary["stopped_by_time_limit"] else ""))
    for name, m in summary.get("evaluation", {}).items():
        lo, hi = m["ci95"]
        print(f"  {name:<28} win rate {m['win_rate']:.3f}  [{lo:.3f}, {hi:.3f}]  "
              f"({m['wins']} W / {m['losses']} L of {m['games']})")


if __name__ == "__main__":
    main()

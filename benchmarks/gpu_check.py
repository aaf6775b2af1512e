"""GPU check: every game's shipped config trains on a device, survives a kill, and its policy
is evaluated where no GPU is visible.

    python benchmarks/gpu_check.py                      # on a CUDA machine: every game
    python benchmarks/gpu_check.py --device cpu --steps 256 --games roy   # the logic, anywhere

For each game, its shipped config (``configs/<game>.yaml``) cut to ``--steps`` steps (a short
warm start, an evaluation, a checkpoint every quarter) trains on ``--device`` through the real
command line (``python -m training.train``). One game (``--kill``) is started with a run
longer than ``--steps``, killed with SIGKILL after its first checkpoint past step 0, and
finished with ``--resume``. Every run's policy is then evaluated against the random agent in a
subprocess with ``CUDA_VISIBLE_DEVICES=""`` (no GPU visible: files saved on the GPU must load
on the CPU). One game (``--bfloat16``) also trains with ``training.precision: bfloat16``, the
update's hidden layers in bfloat16 on the device, and is evaluated the same way. Prints one
table and exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from card_envs.games import GAMES  # noqa: E402
from training import yaml12  # noqa: E402
from training.shipped import shipped_configs  # noqa: E402


def shrunk_config(game: str, device: str, steps: int,
                  precision: str = "float32") -> dict[str, Any]:
    """``game``'s shipped config on ``device`` (training in ``precision``), cut to ``steps``
    steps, every phase kept."""
    data = yaml12.load(shipped_configs()[game].read_text())
    quarter = max(steps // 4, 1)
    data["training"] = {**data.get("training", {}), "device": device, "total_timesteps": steps,
                        "checkpoint_every": quarter, "time_limit_minutes": None,
                        "precision": precision}
    data["selfplay"] = {**data.get("selfplay", {}), "snapshot_every": quarter}
    data["evaluation"] = {**data.get("evaluation", {}), "every": max(steps // 2, 1), "games": 8,
                          "final_games": 8, "parallel": 8}
    pretrain = data.get("pretrain") or {}
    if pretrain.get("games"):
        data["pretrain"] = {**pretrain, "games": 2, "epochs": 1, "max_decisions": 2000,
                            "dagger_games": 1}
    ppo = data["ppo"]
    # A rollout no longer than the run, so that it checkpoints and evaluates within it.
    rollout = ppo["n_steps"] * data["selfplay"]["n_envs"]
    if rollout > quarter:
        ppo["n_steps"] = max(2, quarter // data["selfplay"]["n_envs"])
        ppo["batch_size"] = min(ppo["batch_size"], ppo["n_steps"] * data["selfplay"]["n_envs"])
    return data


def _train_command(cfg_path: Path, runs: Path, name: str) -> list[str]:
    return [sys.executable, "-m", "training.train", "--config", str(cfg_path), "--runs-dir",
            str(runs), "--run-name", name, "--no-progress"]


def _run(command: list[str], env: dict[str, str] | None = None,
         timeout: float = 1800) -> tuple[bool, str]:
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    return proc.returncode == 0, " | ".join(tail)


def _checkpoint_step(run: Path) -> int | None:
    import torch

    try:
        state = torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=False)
    except Exception:  # not there yet, or mid-write
        return None
    return int(state["num_timesteps"])


def train_game(game: str, device: str, steps: int, runs: Path,
               precision: str = "float32") -> dict[str, Any]:
    """Train the shrunk config in ``runs/<game>/<name>`` (name: the game, with ``-bfloat16``
    for that precision); the row's ``run`` is that directory."""
    name = game if precision == "float32" else f"{game}-{precision}"
    cfg_path = runs / f"{name}.yaml"
    cfg_path.write_text(yaml12.dump(shrunk_config(game, device, steps, precision)))
    start = time.time()
    ok, tail = _run(_train_command(cfg_path, runs, name))
    row: dict[str, Any] = {"game": game if name == game else f"{game} ({precision})",
                           "train": ok, "seconds": round(time.time() - start, 1),
                           "note": "" if ok else tail, "run": runs / game / name}
    if ok:
        summary = json.loads((runs / game / name / "summary.json").read_text())
        row["steps"] = summary["num_timesteps"]
    return row


def kill_and_resume(game: str, device: str, steps: int, runs: Path,
                    timeout: float = 1800) -> tuple[bool, str]:
    """Train ``game`` (a longer run), SIGKILL it after its first checkpoint past step 0, and
    finish it with ``--resume``."""
    cfg = shrunk_config(game, device, steps)
    cfg["training"]["total_timesteps"] = steps * 20  # still running when the kill comes
    cfg_path = runs / f"{game}-kill.yaml"
    cfg_path.write_text(yaml12.dump(cfg))
    run = runs / game / "killed"
    proc = subprocess.Popen(_train_command(cfg_path, runs, "killed"), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + timeout
    try:
        while (step := _checkpoint_step(run)) is None or step == 0:
            if proc.poll() is not None:
                return False, f"the run ended (rc {proc.returncode}) before a checkpoint: " + (
                    proc.stderr.read() if proc.stderr else "")[-300:]
            if time.time() > deadline:
                return False, "no checkpoint past step 0 in time"
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
    killed_at = _checkpoint_step(run)
    ok, tail = _run([sys.executable, "-m", "training.train", "--resume", str(run),
                     "--total-timesteps", str((killed_at or 0) + steps), "--no-progress"])
    return ok, f"killed after the checkpoint at {killed_at}" + ("" if ok else f": {tail}")


def evaluate_without_gpu(game: str, run: Path, games: int) -> tuple[bool, str]:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    return _run([sys.executable, "-m", "training.evaluate", "--game", game, "--agents",
                 str(run), "random", "--games", str(games), "--out",
                 str(run / "gpu-check-eval")], env=env)


def machine() -> str:
    import torch

    from training.selfplay_workers import available_cores

    cores = available_cores()
    gpu = (", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
           if torch.cuda.is_available() else "none visible")
    return f"{cores} cores; GPU: {gpu}; torch {torch.__version__}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", help="training.device of every run")
    parser.add_argument("--steps", type=int, default=4096, help="steps per run")
    parser.add_argument("--games", default=",".join(g for g in GAMES if g in shipped_configs()),
                        help="comma-separated games (default: every game with a shipped config)")
    parser.add_argument("--kill", default="roy", help="the game killed and resumed ('' for none)")
    parser.add_argument("--bfloat16", default="dogpile",
                        help="the game also trained with training.precision: bfloat16 ('' for "
                             "none)")
    parser.add_argument("--eval-games", type=int, default=20)
    parser.add_argument("--runs-dir", default=None, help="default: a temporary directory")
    args = parser.parse_args(argv)
    games = [g for g in args.games.split(",") if g]
    unknown = [g for g in games if g not in shipped_configs()]
    if unknown:
        parser.error(f"--games: no shipped config for {', '.join(unknown)}")
    if args.kill and args.kill not in shipped_configs():
        parser.error(f"--kill: no shipped config for {args.kill!r}")
    if args.bfloat16 and args.bfloat16 not in shipped_configs():
        parser.error(f"--bfloat16: no shipped config for {args.bfloat16!r}")
    if args.steps < 8:
        parser.error("--steps: expected at least 8")
    print(f"gpu_check: device {args.device}, {args.steps} steps per run; machine: {machine()}",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(args.runs_dir or tmp)
        runs.mkdir(parents=True, exist_ok=True)
        rows = []
        trained = [(game, "float32") for game in games]
        trained += [(args.bfloat16, "bfloat16")] if args.bfloat16 else []
        for game, precision in trained:
            row = train_game(game, args.device, args.steps, runs, precision)
            if row["train"]:
                ok, tail = evaluate_without_gpu(game, row["run"], args.eval_games)
                row["evaluate"] = ok
                row["note"] = row["note"] or ("" if ok else tail)
            rows.append(row)
            # Each game's verdict as it comes: a run cut off by a time limit still says what passed.
            print(f"  {row['game']}: trained {row['train']}, evaluated without a GPU "
                  f"{row.get('evaluate', '-')}, {row['seconds']} s {row['note'][:200]}".rstrip(),
                  flush=True)
        if args.kill:
            ok, note = kill_and_resume(args.kill, args.device, args.steps, runs)
            row = {"game": f"{args.kill} (SIGKILL + --resume)", "train": ok, "note": note}
            if ok:
                ok, tail = evaluate_without_gpu(args.kill, runs / args.kill / "killed",
                                                args.eval_games)
                row["evaluate"] = ok
                row["note"] += "" if ok else f"; {tail}"
            rows.append(row)
    print(f"\n{'run':<34} {'train':>6} {'eval (no GPU)':>14} {'steps':>7} {'s':>7}  note")
    failed = False
    for row in rows:
        ev = row.get("evaluate")
        passed = row["train"] and ev is True
        failed |= not passed
        print(f"{row['game']:<34} {'pass' if row['train'] else 'FAIL':>6} "
              f"{'-' if ev is None else 'pass' if ev else 'FAIL':>14} "
              f"{row.get('steps', ''):>7} {row.get('seconds', ''):>7}  {row['note'][:200]}")
    print("\nRESULT:", "FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Training throughput: env steps/s of MaskablePPO ``learn()`` in self-play vs a random opponent.

    python benchmarks/training_throughput.py --game roy --steps 65536

All runs but the tutorial pattern use the game's training config (same policy, with its derived
features where the config has them, same PPO settings, same number of envs, the same batched
VecEnv); only the opponents differ, so the ratio is the cost of self-play itself:

* ``self-play (config mix)``: the config's mixture of snapshots, random and heuristic;
* ``self-play (snapshots only)``: every opponent seat a past snapshot (a full pool);
* ``random opponent``: every opponent seat the random agent;
* ``tutorial pattern``: PettingZoo's SB3 tutorial set-up for comparison: one env
  (``CardGymEnv``), MaskablePPO defaults, random opponent (the issue's 420 steps/s reference is
  this pattern on connect four).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sb3_contrib import MaskablePPO  # noqa: E402

from training.config import load_config  # noqa: E402
from training.selfplay import SelfPlayVecEnv  # noqa: E402
from training.train import policy_class, ppo_arguments  # noqa: E402

REFERENCE = 420.0  # env steps/s, PettingZoo SB3 tutorial (connect four) on this machine


def learn_rate(env, policy: Any, ppo: dict, steps: int, seed: int, fill_pool: int = 0) -> float:
    model = MaskablePPO(policy, env, seed=seed, verbose=0, **ppo)
    if isinstance(env, SelfPlayVecEnv):
        for k in range(max(1, fill_pool)):
            env.pool.add(model.policy, k)
    model.learn(min(steps, 4096))  # warm-up: imports, allocations, first rollout
    start, before = time.perf_counter(), model.num_timesteps
    model.learn(steps, reset_num_timesteps=False)
    return (model.num_timesteps - before) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="roy")
    parser.add_argument("--config", default=None, help="default: configs/<game>.yaml")
    parser.add_argument("--steps", type=int, default=65536)
    parser.add_argument("--tutorial-steps", type=int, default=8192)
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = load_config(args.config or Path(__file__).resolve().parents[1] / "configs"
                      / f"{args.game}.yaml")
    sp = cfg.selfplay

    def venv(rates: dict[str, float]) -> SelfPlayVecEnv:
        return SelfPlayVecEnv(cfg.game, cfg.env, sp.n_envs, rates, pool_size=sp.pool_size,
                              latest_prob=sp.latest_prob, learner_seat=sp.learner_seat,
                              opponent_deterministic=sp.opponent_deterministic, seed=cfg.seed,
                              reward=sp.reward, reward_scale=sp.reward_scale)

    print(f"{cfg.game}: {sp.n_envs} envs, n_steps {cfg.ppo['n_steps']}, batch "
          f"{cfg.ppo['batch_size']}, epochs {cfg.ppo['n_epochs']}, net "
          f"{cfg.ppo['policy_kwargs']}, {args.steps} steps per figure, torch threads 1")
    policy, ppo = policy_class(cfg), ppo_arguments(cfg)  # what training builds
    rows = {
        "self-play (config mix)": learn_rate(venv({str(k): w for k, w in sp.opponents.items()}),
                                             policy, ppo, args.steps, cfg.seed,
                                             fill_pool=sp.pool_size),
        "self-play (snapshots only)": learn_rate(venv({"self": 1.0}), policy, ppo, args.steps,
                                                 cfg.seed, fill_pool=sp.pool_size),
        "random opponent": learn_rate(venv({"random": 1.0}), policy, ppo, args.steps, cfg.seed),
    }
    from card_envs.core.gym_env import CardGymEnv

    rows["tutorial pattern (1 env, defaults)"] = learn_rate(
        CardGymEnv(cfg.game, opponent="random", **cfg.env), "MlpPolicy", {},
        args.tutorial_steps, cfg.seed)
    base = rows["random opponent"]
    print(f"{'run':<36} {'env steps/s':>12} {'vs random opp':>14} {'vs 420 ref':>11}")
    for name, rate in rows.items():
        print(f"{name:<36} {rate:12.0f} {base / rate:13.2f}x {rate / REFERENCE:10.1f}x")
    print("(vs random opp: how many times slower than the random-opponent run; the issue's "
          "target is at most 1.5x for self-play, and >= 10x the 420 steps/s reference)")


if __name__ == "__main__":
    main()

"""A short demo: one episode of a game (ROY by default) rendered move by move, then heuristic
vs random over many episodes.

    card-envs demo [--game roy] [--games 2000] [--seed 0]   (or python -m card_envs.demo)
"""

from __future__ import annotations

import argparse
import importlib
import math
import time
from collections.abc import Callable
from typing import cast

from card_envs.agents import make_agent
from card_envs.agents.arena import head_to_head
from card_envs.core.config import int_range
from card_envs.games import GAMES


def show_one_episode(game: str, seed: int) -> None:
    env = importlib.import_module(GAMES[game].module).env(render_mode="ansi")
    env.reset(seed=seed)
    agents = {a: make_agent("heuristic" if i == 0 else "random", game, env.engine.config,
                            seed=seed + i)
              for i, a in enumerate(env.possible_agents)}
    print(env.render())
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agents[agent].act(obs["observation"], obs["action_mask"])
        print(f"{agent} ({agents[agent].name}): {env.action_name(action)}")
        env.step(action)
    print(env.engine.render_text())
    print(f"result: {env.engine.result()}\n")


def _int_from(lo: int) -> Callable[[str], int]:
    """An argparse type: --games 0 divided by zero after the first episode, a negative seed
    failed inside numpy; both are now a usage error naming the argument."""

    def parse(text: str) -> int:
        try:
            value: int | None = int(text)
        except ValueError:
            value = None
        problem = int_range(lo)(value)
        if problem is not None:
            raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected {problem}")
        return cast(int, value)  # int_range refuses None

    return parse


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    parser = argparse.ArgumentParser(prog=prog,
                                     description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--game", default="roy", choices=list(GAMES),
                        help="the game (default: roy)")
    parser.add_argument("--games", type=_int_from(1), default=2000,
                        help="heuristic vs random games after the shown one (default: 2000)")
    parser.add_argument("--seed", type=_int_from(0), default=0,
                        help="seed of the shown game and of the match (default: 0)")
    args = parser.parse_args(argv)

    show_one_episode(args.game, args.seed)
    start = time.perf_counter()
    result = head_to_head(args.game, "heuristic", "random", games=args.games, seed=args.seed)
    elapsed = time.perf_counter() - start
    p = result.win_rate
    half = 1.96 * math.sqrt(p * (1 - p) / result.games)
    print(f"{GAMES[args.game].title}: heuristic vs random over {result.games} games "
          f"(seats rotated): heuristic won {result.wins} ({100 * p:.1f}% +/- {100 * half:.1f}), "
          f"shared {result.shared}, lost {result.losses}  [{elapsed:.1f} s]")


if __name__ == "__main__":
    main()

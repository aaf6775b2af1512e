"""benchmarks/connect_four_reference.py: issue 7's speed reference, the env measured in the same
run as the figures compared with it. It must be a correct Gymnasium env and pay as PettingZoo
pays, or the reference would time another game."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

# Nothing here depends on which engine build runs: make test runs it, make test-pure not.
pytestmark = pytest.mark.same_in_either_build

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.connect_four_reference import ConnectFourVsRandom  # noqa: E402


class _AlwaysLastColumn:
    """An opponent stream that always picks the last legal column."""

    def integers(self, n: int) -> int:
        return n - 1


def test_it_passes_gymnasiums_checker() -> None:
    check_env(ConnectFourVsRandom(), skip_render_check=True)


def test_the_learner_wins_and_loses_as_pettingzoo_pays() -> None:
    env = ConnectFourVsRandom()
    env.reset(seed=0)  # seat 0: the learner moves first
    env._opponent_rng = _AlwaysLastColumn()  # type: ignore[assignment]
    for move in range(4):
        _, reward, terminated, truncated, _ = env.step(0)
        assert (reward, terminated, truncated) == ((1.0, True, False) if move == 3
                                                   else (0.0, False, False))
    obs, _ = env.reset()  # seat 1: the opponent has moved already (column 6)
    env._opponent_rng = _AlwaysLastColumn()  # type: ignore[assignment]
    assert obs.reshape(6, 7, 2)[5, 6].tolist() == [0.0, 1.0]  # the other's piece, bottom right
    for move in range(3):
        _, reward, terminated, _, _ = env.step(0)
        assert (reward, terminated) == ((-1.0, True) if move == 2 else (0.0, False))


def test_the_same_seed_gives_the_same_games() -> None:
    def play(seed: int) -> list[tuple[list[float], float]]:
        env, rng = ConnectFourVsRandom(), np.random.default_rng(1)
        obs, _ = env.reset(seed=seed)
        seen = []
        for _ in range(3):  # episodes, the seats alternating
            done = False
            while not done:
                action = int(rng.choice(np.flatnonzero(env.action_masks())))
                obs, reward, terminated, truncated, _ = env.step(action)
                seen.append((obs.tolist(), reward))
                done = terminated or truncated
            obs, _ = env.reset()
        return seen

    assert play(3) == play(3)
    assert play(3) != play(4)


def test_a_full_column_is_refused_naming_it() -> None:
    env = ConnectFourVsRandom()
    env.reset(seed=0)
    env._opponent_rng = _AlwaysLastColumn()  # type: ignore[assignment]
    env._mask[2] = False  # as when column 2 is full
    with pytest.raises(ValueError, match="column 2 is full"):
        env.step(2)


def test_without_pygame_the_error_says_which_extra_to_install() -> None:
    # A fresh interpreter: PettingZoo caches an env's module once it has loaded it.
    script = ("import sys; sys.modules['pygame'] = None  # import pygame raises ImportError\n"
              "from benchmarks.connect_four_reference import ConnectFourVsRandom\n"
              "ConnectFourVsRandom()\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert re.search(r"ImportError: the connect four reference needs PettingZoo's connect four, "
                     r"which imports pygame \(.*pygame.*\): pip install 'card-envs\[bench\]'",
                     done.stderr), done.stderr

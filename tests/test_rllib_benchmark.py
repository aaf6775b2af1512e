"""benchmarks/rllib_throughput.py's weak-scaling option, without Ray (the figures themselves
are measured in tests/libraries/test_rllib_cluster.py, in the rllib virtualenv)."""

from __future__ import annotations

import pytest

from benchmarks import rllib_throughput as bench


@pytest.mark.parametrize(("runners", "expected"), [
    (1, ["selfplay.n_envs=32", "ppo.n_steps=128"]),
    (2, ["selfplay.n_envs=64", "ppo.n_steps=64"]),
    (4, ["selfplay.n_envs=128", "ppo.n_steps=32"]),
])
def test_weak_scaling_keeps_each_runners_games_and_the_samples_per_iteration(
        runners: int, expected: list[str]) -> None:
    sets = bench.weak_scaling_sets(32, 128, 32, runners)
    assert sets == expected
    games, steps = (int(s.split("=")[1]) for s in sets)
    assert games == 32 * runners and games * steps == 32 * 128


def test_weak_scaling_refuses_a_split_that_changes_the_update(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="does not divide the config's 4096 samples"):
        bench.weak_scaling_sets(32, 128, 48, 2)
    with pytest.raises(SystemExit):  # refused before Ray or any figure starts
        bench.main(["--game", "roy", "--games-per-runner", "48", "--no-sb3"])
    assert "--games-per-runner 48 with 1 runner(s) is 48 games" in capsys.readouterr().err


def test_child_passes_the_weak_scaling_sets_after_the_users(monkeypatch) -> None:
    seen: list[list[str]] = []

    class Done:
        stdout = 'FIGURES {"games": 64}\n'
        stderr = ""
        returncode = 0

    def run(cmd: list[str], **_: object) -> Done:
        seen.append(cmd)
        return Done()

    monkeypatch.setattr(bench.subprocess, "run", run)
    args = bench.build_parser().parse_args(["--set", "seed=3"])
    assert bench.child(args, "--one-rllib", 2, None, None,
                       bench.weak_scaling_sets(32, 128, 32, 2)) == {"games": 64}
    cmd = seen[0]
    sets = [cmd[i + 1] for i, item in enumerate(cmd) if item == "--set"]
    assert sets == ["seed=3", "selfplay.n_envs=64", "ppo.n_steps=64"]

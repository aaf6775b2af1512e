"""benchmarks/search_strength.py: its fixed budget, and games split over processes and pooled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.search_strength import main, pooled, run, run_sharded, shard_sizes
from training.evaluate import wilson_interval


def test_shards_are_whole_seat_rotations_and_cover_every_game() -> None:
    sizes = shard_sizes(500, 2, 16)
    assert sum(sizes) == 500 and len(sizes) == 16
    assert all(n % 2 == 0 for n in sizes) and max(sizes) - min(sizes) == 2
    assert shard_sizes(150, 3, 4) == [39, 39, 36, 36]
    assert shard_sizes(7, 2, 3) == [3, 2, 2]  # not a whole number of rotations: single games
    with pytest.raises(ValueError, match="--processes: 5 shards for 8 games; at most 4"):
        shard_sizes(8, 2, 5)


def test_pooled_sums_the_scores_and_weights_per_decision_figures() -> None:
    rows = [{"games": 10, "win_rate": 0.75, "decisions": 30, "ms_per_decision": 40.0,
             "simulations_per_decision": 20.0, "wall_s": 5.0, "seed": 0},
            {"games": 30, "win_rate": 0.5, "decisions": 10, "ms_per_decision": 80.0,
             "simulations_per_decision": 40.0, "wall_s": 9.0, "seed": 1}]
    row = pooled(rows)
    assert row["games"] == 40 and row["win_rate"] == pytest.approx(22.5 / 40)
    assert row["ci95"] == list(wilson_interval(22.5, 40))
    assert row["ms_per_decision"] == pytest.approx(50.0)  # (30 * 40 + 10 * 80) / 40
    assert row["simulations_per_decision"] == pytest.approx(25.0)
    assert row["decisions"] == 40 and row["wall_s"] == 9.0
    assert [s["seed"] for s in row["shards"]] == [0, 1]
    assert [(s["ms_per_decision"], s["decisions"]) for s in row["shards"]] == [(40.0, 30),
                                                                               (80.0, 10)]


def test_two_processes_play_the_two_seeded_shards(capsys) -> None:
    """Shard i is the single run with seed + i: pooled, in whatever process it ran, and
    reported as it ends."""
    args = ("roy", 2, 3, "heuristic")
    row = run_sharded(*args, 8, 5, "none", "flat", None, 2)
    printed = capsys.readouterr().out
    for shard in row["shards"]:
        assert (f"shard seed {shard['seed']}: search wins {shard['win_rate']:.3f} "
                f"of 4 hands") in printed
        assert (f"{shard['ms_per_decision']:.1f} ms and "  # its own cost, as it ends
                f"{shard['simulations_per_decision']:.1f} simulations a decision over "
                f"{shard['decisions']} decisions") in printed
    alone = [run(*args, 4, seed, "none", "flat", None) for seed in (5, 6)]
    assert row["games"] == 8
    assert [s["win_rate"] for s in row["shards"]] == [r["win_rate"] for r in alone]
    assert row["win_rate"] == pytest.approx(sum(r["win_rate"] for r in alone) / 2)
    assert row["decisions"] == sum(r["decisions"] for r in alone)


def test_cli_fixed_budget_and_refusals(tmp_path: Path, capsys) -> None:
    out = tmp_path / "s.json"
    main(["--only", "roy:2", "--games", "2", "--simulations", "2", "--method", "flat",
          "--rollout", "heuristic", "--json", str(out)])
    (row,) = json.loads(out.read_text())["rows"]
    assert row["simulations"] == 2 and row["games"] == 2 and row["method"] == "flat"
    for argv, message in (
            (["--simulations", "2", "--time-ms", "50"], "give one budget, not both"),
            (["--simulations", "0"], "--simulations: expected at least 1, got 0"),
            (["--processes", "0"], "--processes: expected at least 1, got 0"),
            (["--processes", "100000", "--time-ms", "50"], "would share cores"),
            (["--only", "roy:2", "--games", "4", "--processes", "3"],
             "--processes: 3 shards for 4 games; at most 2")):
        with pytest.raises(SystemExit):
            main(argv)
        assert message in capsys.readouterr().err

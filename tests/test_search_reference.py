"""The heuristics and the flat search play exactly the moves recorded before their speed work
(tests/search_reference.py: a faster clone, rollout loop or heuristic must not change a move)."""

from __future__ import annotations

import json

import pytest

from tests import search_reference as ref

SAVED = json.loads(ref.PATH.read_text())


@pytest.mark.parametrize("game,players", ref.SETTINGS)
def test_heuristic_moves_are_the_recorded_ones(game: str, players: int) -> None:
    moves = ref.heuristic_moves(game, players)
    saved = SAVED[f"{game}:{players}"]["heuristic"]
    differ = [i for i, (a, b) in enumerate(zip(moves, saved, strict=True)) if a != b]
    assert not differ, f"{game} {players}p: the heuristic's move differs at positions {differ}"


@pytest.mark.parametrize("game,players", ref.SETTINGS)
def test_flat_search_moves_and_rollouts_are_the_recorded_ones(game: str, players: int) -> None:
    assert ref.search_moves(game, players) == SAVED[f"{game}:{players}"]["search"]


def test_the_rollout_rate_benchmark_counts_the_budgeted_rollouts(tmp_path, monkeypatch) -> None:
    from benchmarks import flat_rollouts

    out = tmp_path / "rate.json"
    monkeypatch.setattr("sys.argv", ["flat_rollouts.py", "--only", "roy:2", "--positions", "2",
                                     "--simulations", "12", "--json", str(out)])
    flat_rollouts.main()
    (row,) = json.loads(out.read_text())["rows"]
    assert row["game"] == "roy" and 0 < row["rollouts"] <= 2 * 12
    assert row["rollouts_per_s"] == pytest.approx(row["rollouts"] / row["cpu_s"])

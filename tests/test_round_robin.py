"""benchmarks/round_robin.py: every pair plays, with its own game count, and the table says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.round_robin import main


def test_round_robin_plays_every_pair_and_writes_the_tables(tmp_path: Path) -> None:
    out, md = tmp_path / "rr.json", tmp_path / "rr.md"
    main(["--only", "roy:2", "--games", "6", "--search-games", "2", "--simulations", "3",
          "--flat-ms", "2", "--cost-positions", "3", "--json", str(out), "--markdown", str(md)])
    (result,) = json.loads(out.read_text())["results"]
    labels = ["random", "heuristic", "search", "search-prior", "search-flat"]
    assert list(result["agents"]) == labels and result["unit"] == "hand"
    assert result["agents"]["search-prior"] == "search:simulations=3,prior=heuristic"
    assert result["agents"]["search-flat"] == "search:method=flat,rollout=heuristic,time_ms=2"
    pairs = {(m["a"], m["b"]): m["games"] for m in result["matches"]}
    assert pairs == {("random", "heuristic"): 6, ("random", "search"): 2,
                     ("random", "search-prior"): 2, ("random", "search-flat"): 2,
                     ("heuristic", "search"): 2, ("heuristic", "search-prior"): 2,
                     ("heuristic", "search-flat"): 2, ("search", "search-prior"): 2,
                     ("search", "search-flat"): 2, ("search-prior", "search-flat"): 2}
    assert set(result["cpu_ms_per_decision"]) == set(labels)
    table = md.read_text().splitlines()
    assert table[0] == "### roy (2 players, unit: hand)"
    first = next(m for m in result["matches"] if m["b"] == "heuristic")
    row = next(line for line in table if line.startswith("| heuristic |"))
    # The column agent's cell is the row agent's win rate: the mirror of the match's.
    assert row.split(" | ")[1].startswith(f"{1 - first['win_rate']:.2f}")


def test_round_robin_resume_keeps_the_pairs_played_and_plays_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "rr.json"
    cheap = ["--only", "roy:2", "--games", "4", "--simulations", "2", "--flat-ms", "0",
             "--cost-positions", "2", "--json", str(out)]
    main([*cheap, "--search-games", "0"])  # a run cut short: the search pairs not played
    (first,) = json.loads(out.read_text())["results"]
    assert [(m["a"], m["b"]) for m in first["matches"]] == [("random", "heuristic")]
    main([*cheap, "--search-games", "2", "--resume"])
    (second,) = json.loads(out.read_text())["results"]
    assert second["matches"][0] == first["matches"][0]  # kept, not played again
    assert second["ms_per_decision"] == first["ms_per_decision"]
    assert len(second["matches"]) == 6
    with pytest.raises(SystemExit, match="earlier agents"):  # another agent set: refused
        main(["--only", "roy:2", "--simulations", "2", "--flat-ms", "3", "--json", str(out),
              "--resume"])
    with pytest.raises(SystemExit, match="--seed 0, this run's is 1"):  # other deals: refused
        main([*cheap, "--seed", "1", "--resume"])


def test_round_robin_refuses_unknown_settings() -> None:
    with pytest.raises(SystemExit):
        main(["--only", "roy:3"])
    with pytest.raises(SystemExit):
        main(["--policy", "chess=x.zip"])
    with pytest.raises(SystemExit):
        main(["--resume"])  # nothing to resume from
    with pytest.raises(SystemExit):
        main(["--flat-ms", "-1"])

"""The throughput benchmark runs end to end (a fraction of a second per case here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("rlcard")

import card_envs  # noqa: E402
from card_envs.bench import throughput  # noqa: E402


def test_throughput_benchmark_measures_every_case(tmp_path: Path, capsys) -> None:
    out = tmp_path / "bench.json"
    code = throughput.main(["--games", "roy", "memory_uno", "--seconds", "0.05", "--rounds", "2",
                            "--json", str(out)])
    assert code == 0  # without --check a missed target is reported, not an exit code
    figures = json.loads(out.read_text())
    assert figures.pop("build") == card_envs.BUILD
    expected = {"RLCard UNO (native)", "trivial AEC, PettingZoo wrappers"} | {
        f"{g} {kind}" for g in ("roy", "memory_uno") for kind in ("raw AEC", "env()", "Gymnasium")}
    assert set(figures) == expected
    assert all(f["decisions_per_s"] > 0 for f in figures.values())
    table = capsys.readouterr().out
    assert "x RLCard UNO" in table and "x wrapped trivial" in table
    assert f"card_envs build: {card_envs.BUILD}" in table

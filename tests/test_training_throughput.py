"""benchmarks/training_throughput.py's own logic: its network-size argument and the
learner-device table (on the CPU; the GPU column runs on a GPU machine)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
import torch

# Nothing here depends on which engine build runs: make test runs it, make test-pure not.
pytestmark = pytest.mark.same_in_either_build

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import training_throughput  # noqa: E402
from training.selfplay_workers import available_cores  # noqa: E402


def test_network_sizes_parse_as_width_times_layers() -> None:
    assert training_throughput.parse_archs("256x2, 1024x3,64") == [
        [256, 256], [1024, 1024, 1024], [64, 64]]


@pytest.mark.parametrize("text", ["256xx2", "wide", "0x2", "256x0", ""])
def test_a_bad_network_size_is_refused_naming_it(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="network size"):
        training_throughput.parse_archs(text)


def test_the_learner_table_prints_each_size_on_each_device(
        capsys: pytest.CaptureFixture) -> None:
    training_throughput.main(["--game", "memory_uno", "--steps", "128", "--only-workers",
                              "--learner-table", "16x1,32x2", "--learner-devices", "cpu,cpu",
                              "--learner-threads", "1"])
    out = capsys.readouterr().out
    assert "CPU learner on 1 torch threads" in out
    rows = [line.split() for line in out.splitlines() if line.lstrip().startswith("[")]
    assert [row[0] for row in rows] == ["[16]", "[32,"]
    assert all(float(row[-3]) > 0 and float(row[-2]) > 0 and row[-1].endswith("x")
               for row in rows)


@pytest.mark.parametrize("args, named", [
    (["--only-workers"], "--only-workers needs"),
    (["--learner-table", "64x2", "--learner-devices", " , "], "--learner-devices"),
    (["--learner-table", "64x2", "--learner-workers", "0"], "worker count"),
    (["--learner-table", "64x2", "--learner-threads", "2,4"], "one thread count"),
    (["--torch-threads", "0"], "thread count"),
    (["--reference-steps", "-1"], "--reference-steps: expected 0"),
])
def test_bad_arguments_are_refused_naming_them(args: list[str], named: str,
                                               capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        training_throughput.main(args)
    assert exit_info.value.code == 2 and named in capsys.readouterr().err


def test_the_worker_table_splits_learn_into_env_wait_and_update(
        capsys: pytest.CaptureFixture) -> None:
    training_throughput.main(["--game", "memory_uno", "--steps", "128", "--workers", "1",
                              "--only-workers"])
    row = next(line.split() for line in capsys.readouterr().out.splitlines()
               if line.split()[:1] == ["1"])
    env_wait, update = (int(cell.rstrip("%")) for cell in row[-2:])
    assert row[-1].endswith("%") and env_wait > 0 and update > 0 and env_wait + update <= 100


def _main_keeping_threads(argv: list[str]) -> None:
    """The benchmark's main table, torch's thread count put back after (it sets the config's)."""
    before = torch.get_num_threads()
    try:
        training_throughput.main(argv)
    finally:
        torch.set_num_threads(before)


def test_the_main_table_has_a_row_of_each_run_for_each_precision(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The default table (it crashed at the tutorial pattern's row, a single env with no
    ``step_wait`` of its own), both precisions measured in one run, and every row against the
    connect four reference measured in the same run."""
    config = tmp_path / "small.yaml"
    config.write_text("game: memory_uno\nselfplay: {n_envs: 4, pool_size: 2}\n"
                      "ppo: {n_steps: 16, batch_size: 64, policy_kwargs: {net_arch: [16]}}\n"
                      "training: {torch_threads: auto}\n")
    _main_keeping_threads(["--game", "memory_uno", "--config", str(config), "--steps", "64",
                           "--tutorial-steps", "64", "--reference-steps", "64",
                           "--precision", "float32,bfloat16"])
    out = capsys.readouterr().out
    # One process: auto is every core, as a run alone on the machine has them.
    assert f"torch threads {available_cores()}," in out
    # name, steps/s, vs random opp, vs 420, vs the reference here, update µs per step
    rows = {name: cells for name, *cells in (line.rsplit(None, 5) for line in out.splitlines()
                                             if line.split()[-2:-1]
                                             and line.split()[-2].endswith("x"))}
    assert list(rows) == [f"{run}, {precision}" for precision in ("float32", "bfloat16")
                          for run in ("self-play (config mix)", "self-play (snapshots only)",
                                      "random opponent")] + [
        "tutorial pattern (1 env, defaults)", "reference: connect four (1 env, defaults)"]
    reference = float(rows["reference: connect four (1 env, defaults)"][0])
    for steps, _, versus_420, versus_here, update in rows.values():
        assert float(steps) > 0 and float(update) > 0
        assert float(versus_420.rstrip("x")) == pytest.approx(float(steps) / 420, abs=0.051)
        assert float(versus_here.rstrip("x")) == pytest.approx(float(steps) / reference,
                                                               abs=0.051)


def test_the_reference_row_can_be_left_out(tmp_path: Path,
                                           capsys: pytest.CaptureFixture) -> None:
    config = tmp_path / "small.yaml"
    config.write_text("game: memory_uno\nselfplay: {n_envs: 2, pool_size: 1}\n"
                      "ppo: {n_steps: 16, batch_size: 32, policy_kwargs: {net_arch: [8]}}\n")
    _main_keeping_threads(["--game", "memory_uno", "--config", str(config), "--steps", "32",
                           "--tutorial-steps", "32", "--reference-steps", "0"])
    out = capsys.readouterr().out
    assert "reference: connect four" not in out
    rows = [line.split() for line in out.splitlines()
            if line.startswith(("self-play", "random opponent", "tutorial pattern"))]
    assert len(rows) == 4 and all(row[-2] == "-" for row in rows)  # no ratio to a reference


def test_a_bad_precision_is_refused_naming_it(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        training_throughput.main(["--precision", "float32,half"])
    assert "precision 'half': expected float32 or bfloat16" in capsys.readouterr().err


def test_the_machine_line_says_whether_the_cpu_computes_bfloat16(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for capabilities, said in (({"avx512_bf16": True, "amx_bf16": True, "avx2": True},
                                "avx512_bf16, amx_bf16"),
                               ({"avx2": True, "avx512_bf16": False}, "none (emulated: slow)")):
        monkeypatch.setattr(torch.cpu, "get_capabilities", lambda c=capabilities: c)
        assert training_throughput.machine().endswith(f", CPU bfloat16: {said}")
    monkeypatch.delattr(torch.cpu, "get_capabilities")
    assert training_throughput.machine().endswith(", CPU bfloat16: unknown")

"""benchmarks/gpu_check.py's own logic, on the CPU: train, SIGKILL and resume, evaluate with no
GPU visible, and a table that says pass (the real check runs on a GPU machine)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Nothing here depends on which engine build runs: make test runs it, make test-pure not.
pytestmark = pytest.mark.same_in_either_build

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import gpu_check  # noqa: E402
from training.precision import cpu_bfloat16_instructions  # noqa: E402


def test_gpu_check_passes_on_the_cpu(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # The config check refuses bfloat16 on a CPU that would emulate it.
    bfloat16 = "roy" if cpu_bfloat16_instructions() != [] else ""
    code = gpu_check.main(["--device", "cpu", "--steps", "256", "--games", "roy",
                           "--kill", "roy", "--bfloat16", bfloat16, "--eval-games", "2",
                           "--runs-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "RESULT: PASS" in out
    assert "roy (SIGKILL + --resume)" in out and "killed after the checkpoint at" in out
    # Each game's verdict is printed as it comes, so a run cut off by a time limit still says it.
    assert "  roy: trained True, evaluated without a GPU True," in out
    assert (tmp_path / "roy" / "killed" / "final.zip").is_file()
    if bfloat16:
        assert "  roy (bfloat16): trained True, evaluated without a GPU True," in out
        config = (tmp_path / "roy" / "roy-bfloat16" / "config.yaml").read_text()
        assert "precision: bfloat16" in config


def test_gpu_check_fails_when_a_run_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A device the config check refuses: the run fails, the table says so, the exit code 1."""
    code = gpu_check.main(["--device", "cuda:99", "--steps", "64", "--games", "roy", "--kill",
                           "", "--bfloat16", "", "--runs-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "RESULT: FAIL" in out and "training.device" in out


def test_the_shrunk_config_keeps_every_phase() -> None:
    data = gpu_check.shrunk_config("dogpile", "cuda", 4096)
    assert data["training"]["device"] == "cuda"
    assert data["training"]["total_timesteps"] == 4096
    assert data["pretrain"]["games"] > 0 and data["pretrain"].get("dagger_rounds", 0) > 0
    assert data["ppo"]["n_steps"] * data["selfplay"]["n_envs"] <= 1024

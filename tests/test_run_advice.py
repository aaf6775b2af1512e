"""Every command the trainer's messages suggest works as given: each test takes the command
out of the message and runs it (in this process, through the same command line)."""

from __future__ import annotations

import json
import re
import shlex
import signal
from pathlib import Path

import pytest

from tests.test_training import (
    NO_WARM_START,
    SignalAt,
    _out_of_time_at_the_warm_start,
    game_config,
    require_main_thread,
)
from training.config import from_dict, save_config
from training.train import main as train_main
from training.train import train


def _tiny(total: int = 512) -> dict:
    data = game_config("roy")
    data["training"].update(total_timesteps=total, checkpoint_every=256)
    data["evaluation"].update(every=256, final_games=0)
    data["pretrain"].update(NO_WARM_START)
    return data


def _suggested(text: str, after: str, prog: str = "python -m training.train") -> list[str]:
    """The arguments of the command that follows ``after`` in ``text`` (one line), checking
    that it starts with ``prog``."""
    line = next(line for line in text.splitlines() if after in line)
    words = shlex.split(line.split(after, 1)[1])
    assert words[:len(prog.split())] == prog.split(), line
    return words[len(prog.split()):]


def _error(capsys, argv: list[str], prog: str = "python -m training.train") -> str:
    with pytest.raises(SystemExit) as exit_info:
        train_main(argv, prog=prog)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_a_deleted_checkpoint_s_advice_is_no_circle(tmp_path: Path, capsys) -> None:
    """The issue's circle: --resume suggested a restart, which was refused because best.zip
    and latest.zip exist. The advice now starts a new run from the config, beside the old one
    (whose policies stay), and that command runs."""
    run = tmp_path / "runs" / "roy" / "r"
    train(from_dict(_tiny()), run, progress=False)
    (run / "checkpoint.pt").unlink()
    err = _error(capsys, ["--resume", str(run)])
    assert "holds no checkpoint" in err and "its saved policies stay" in err
    argv = _suggested(err, "start a new run from its config: ")
    summary = train_main([*argv, "--no-progress"])
    assert summary["status"] == "finished at step 512"
    assert Path(summary["run_dir"]) == run.parent / "r-2"
    assert (run / "best.zip").exists() and (run / "latest.zip").exists()  # untouched


def test_a_run_that_holds_a_checkpoint_suggests_resume_and_more_steps(tmp_path: Path,
                                                                      capsys) -> None:
    cfg_path = tmp_path / "c.yaml"
    save_config(from_dict(_tiny()), cfg_path)
    argv = ["--config", str(cfg_path), "--runs-dir", str(tmp_path / "runs"), "--run-name", "x",
            "--no-progress"]
    train_main(argv)
    capsys.readouterr()
    err = _error(capsys, argv)  # started again by mistake: refused, with the resume command
    # Resumed as suggested: the run is complete, and it says how to train it further.
    train_main([*_suggested(err, "continue it with: "), "--no-progress"])
    out = capsys.readouterr().out
    assert "already complete at 512 steps" in out
    summary = train_main([*_suggested(out, "give more steps, e.g.: "), "--no-progress"])
    assert summary["status"] == "finished at step 1024"


def test_a_run_out_of_time_suggests_more_time_that_trains(tmp_path: Path, capsys,
                                                         monkeypatch) -> None:
    data = _out_of_time_at_the_warm_start(monkeypatch, final_games=0)
    data["training"]["total_timesteps"] = 256
    run = tmp_path / "runs" / "roy" / "late"
    train(from_dict(data), run, progress=False)
    capsys.readouterr()
    train_main(["--resume", str(run), "--no-progress"])
    out = capsys.readouterr().out
    summary = train_main([*_suggested(out, "give it more time, e.g.: "), "--no-progress"])
    assert summary["status"] == "finished at step 256"


def test_a_stopped_run_says_so_and_its_resume_command_finishes_it(tmp_path: Path,
                                                                   capsys) -> None:
    """Ctrl-C used to write final.zip and a summary that read like a finished run."""
    require_main_thread()
    cfg_path = tmp_path / "c.yaml"
    save_config(from_dict(_tiny(1024)), cfg_path)
    import training.train as train_module

    original = train_module.train_locked

    def with_a_signal(*args, **kwargs):
        return original(*args, **{**kwargs, "extra_callbacks": [SignalAt(300)]})

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(train_module, "train_locked", with_a_signal)
    try:
        with pytest.raises(SystemExit) as exit_info:
            train_main(["--config", str(cfg_path), "--runs-dir", str(tmp_path / "runs"),
                        "--run-name", "s", "--no-progress"], prog="card-envs train")
    finally:
        monkeypatch.undo()
    assert exit_info.value.code == 128 + signal.SIGINT
    run = tmp_path / "runs" / "roy" / "s"
    assert not (run / "final.zip").exists()
    status = json.loads((run / "summary.json").read_text())["status"]
    assert re.fullmatch(r"stopped at step \d+ by SIGINT: unfinished, resume it to go on "
                        r"\(no final\.zip\)", status), status
    out = capsys.readouterr().out
    summary = train_main([*_suggested(out, "continue with: ", prog="card-envs train"),
                          "--no-progress"])
    assert summary["status"] == "finished at step 1024" and (run / "final.zip").exists()


def test_suggested_commands_name_the_program_the_user_ran(tmp_path: Path, capsys) -> None:
    """``card-envs train`` and ``python -m training.train`` call the same main(): each error
    suggests the form the user typed."""
    run = tmp_path / "runs" / "roy" / "r"
    run.mkdir(parents=True)
    save_config(from_dict(_tiny()), run / "config.yaml")
    for prog in ("card-envs train", "python -m training.train"):
        err = _error(capsys, ["--resume", str(run)], prog=prog)
        assert err.startswith(f"{prog}: error: ") and f"start it again: {prog} --config" in err

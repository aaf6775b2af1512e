"""The ``card-envs`` command, in process: its dispatch, arguments, messages and exit codes.

The same command from a real install (a wheel in a fresh virtualenv) is tests/test_install.py.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import card_envs
from card_envs.cli import COMMANDS, main
from card_envs.games import GAMES, make_engine
from training import yaml12

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "stable_baselines3", "sb3_contrib")


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    """``card-envs argv``: (exit status, stdout, stderr), argparse's exits included."""
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


# -- dispatch ----------------------------------------------------------------------------------
def test_help_lists_every_command_and_each_command_has_its_own_help(capsys) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in COMMANDS:
        assert f"  {command.name} " in out
    for command in ("games", "demo", "bench", "train", "evaluate"):
        code, out, _ = run(capsys, command, "--help")
        assert code == 0 and out.startswith(f"usage: card-envs {command}"), out


def test_no_command_unknown_command_and_version(capsys) -> None:
    code, out, err = run(capsys)
    assert code == 2 and "commands:" in err and not out
    code, _, err = run(capsys, "trian")
    assert code == 2 and "unknown command 'trian' (did you mean 'train'?)" in err
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"card-envs {card_envs.__version__}"


def test_python_m_card_envs_is_the_command() -> None:
    done = subprocess.run([sys.executable, "-m", "card_envs", "--version"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"card-envs {card_envs.__version__}"


def test_the_installed_console_script_is_the_command() -> None:
    import importlib.metadata

    (script,) = importlib.metadata.entry_points(group="console_scripts", name="card-envs")
    assert script.load() is main


# -- games -------------------------------------------------------------------------------------
def test_games_json_holds_every_game_with_the_engines_own_figures(capsys) -> None:
    code, out, _ = run(capsys, "games", "--json")
    assert code == 0
    games = {g["name"]: g for g in json.loads(out)["games"]}
    assert list(games) == list(GAMES)
    for name, game in games.items():
        options = GAMES[name].engine_class().options()
        assert set(game["options"]) == set(options)
        for key, option in game["options"].items():
            assert option["doc"] == options[key].doc
            assert option["allowed"] == options[key].allowed()
            default = options[key].default
            assert option["default"] == (list(default) if isinstance(default, tuple) else default)
        players = options["num_players"]
        assert game["players"] == {"default": players.default,
                                   "allowed": list(players.choices or (players.default,))}
        for n in game["players"]["allowed"]:
            engine = make_engine(name, num_players=n)
            assert game["by_players"][str(n)] == {"actions": engine.num_actions,
                                                  "observation": engine.layout.size,
                                                  "state": engine.state_layout.size}
        assert game["gymnasium_id"] == GAMES[name].gym_id


def test_games_text_names_every_option_with_its_default_and_allowed_values(capsys) -> None:
    code, out, _ = run(capsys, "games")
    assert code == 0
    lines = [line.split(None, 1) for line in out.splitlines() if line.strip()]
    for name, spec in GAMES.items():
        assert f"{name} ({spec.title})" in out
        for key, option in spec.engine_class().options().items():
            default = option.default
            shown = (f"default {list(default) if isinstance(default, tuple) else default!r}; "
                     f"allowed: {option.allowed()}")
            assert [key, shown] in lines, (name, key)
    code, out, _ = run(capsys, "games", "dogpile")
    assert code == 0 and out.startswith("dogpile (Dogpile)") and "roy (ROY)" not in out


def test_games_refuses_an_unknown_game(capsys) -> None:
    code, _, err = run(capsys, "games", "ro")
    assert code == 2 and "unknown game 'ro'" in err and "roy" in err


def test_every_option_says_what_it_allows() -> None:
    """``Option.allowed``: the choices, else the words its check answers any refused value
    with; never empty, never the catch-all for an option that checks."""
    for spec in GAMES.values():
        for key, option in spec.engine_class().options().items():
            text = option.allowed()
            assert text and text != "any value", (spec.name, key)
            if option.choices is not None:
                assert all(repr(c) in text for c in option.choices)


@pytest.mark.parametrize("argv", [["games"], ["games", "--json"],
                                  ["demo", "--games", "3"], ["--help"]])
def test_games_and_demo_import_no_torch(argv: list[str]) -> None:
    """The envs' users install no torch: these commands must not pull it in."""
    code = (f"import sys\nfrom card_envs.cli import main\nassert main({argv!r}) == 0\n"
            f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
            "assert not heavy, heavy\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


# -- train -------------------------------------------------------------------------------------
@pytest.fixture
def fake_train(monkeypatch: pytest.MonkeyPatch) -> list:
    """Replaces train_locked() behind the command (the module ``card-envs train`` runs is the one
    the tests import as training.train); records (config, run directory, resume)."""
    import training.train as train_module

    calls: list = []

    def fake(cfg, run_dir: Path, resume: bool = False, progress: bool = True,
             **kwargs) -> dict:
        calls.append((cfg, run_dir, resume))
        return {"num_timesteps": 0, "elapsed_seconds": 0.0, "stopped_by_time_limit": False,
                "stopped_by_signal": None}

    # The command calls train_locked, under the run directory's lock (training.run_lock).
    monkeypatch.setattr(train_module, "train_locked", fake)
    return calls


def test_train_a_game_by_name_with_set(tmp_path: Path, capsys, fake_train) -> None:
    code, out, err = run(capsys, "train", "roy", "--set", "training.total_timesteps=2048",
                         "--set", "ppo.learning_rate=3e-4", "--set", "env.num_players=3",
                         "--set", "training.time_limit_minutes=null", "--runs-dir",
                         str(tmp_path / "runs"), "--run-name", "r", "--no-progress")
    assert code == 0, err
    ((cfg, run_dir, resume),) = fake_train
    assert (cfg.game, run_dir, resume) == ("roy", tmp_path / "runs" / "roy" / "r", False)
    # YAML 1.2: 3e-4 is a number (YAML 1.1 readers make it a string), null is None.
    assert cfg.ppo["learning_rate"] == 3e-4 and isinstance(cfg.ppo["learning_rate"], float)
    assert cfg.training.total_timesteps == 2048 and cfg.training.time_limit_minutes is None
    assert cfg.env["num_players"] == 3
    saved = yaml12.load((run_dir / "config.yaml").read_text())
    assert saved["training"]["total_timesteps"] == 2048 and saved["env"]["num_players"] == 3
    shipped = yaml12.load((ROOT / "configs" / "roy.yaml").read_text())
    assert saved["seed"] == shipped["seed"]  # the rest is the shipped config's
    assert f"run directory: {run_dir}" in out


def test_train_takes_a_config_file_and_the_older_config_flag(tmp_path: Path, capsys,
                                                           fake_train) -> None:
    path = tmp_path / "mine.yaml"
    data = yaml12.load((ROOT / "configs" / "memory_uno.yaml").read_text())
    path.write_text(yaml12.dump({**data, "seed": 77}))
    for argv in ([str(path)], ["--config", str(path)], ["--config", "memory_uno"]):
        code, _, err = run(capsys, "train", *argv, "--runs-dir", str(tmp_path / "runs"),
                           "--no-progress")
        assert code == 0, err
    seeds = [cfg.seed for cfg, _, _ in fake_train]
    assert seeds == [77, 77, data["seed"]]


def test_a_file_named_like_a_game_is_the_user_s(tmp_path: Path, capsys, fake_train,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``card-envs train roy`` in a directory holding a file ``roy`` trains that file."""
    data = yaml12.load((ROOT / "configs" / "roy.yaml").read_text())
    (tmp_path / "roy").write_text(yaml12.dump({**data, "seed": 99}))
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "train", "roy", "--no-progress")
    assert code == 0, err
    ((cfg, run_dir, _),) = fake_train
    assert cfg.seed == 99 and run_dir.parent == Path("runs") / "roy"


def _usage_error(capsys: pytest.CaptureFixture, *argv: str) -> str:
    code, _, err = run(capsys, *argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert "Traceback" not in err and lines[-1].startswith("card-envs "), err
    return lines[-1]


@pytest.mark.parametrize("key, value, file_key, message", [
    ("ppo.learnin_rate", "3", "learnin_rate",
     r"ppo\.learnin_rate: unknown key \(did you mean 'learning_rate'\?\)"),
    ("ppo.learning_rate", "-1", "learning_rate", r"ppo\.learning_rate: expected a number > 0"),
    ("ppo.learning_rate", "fast", "learning_rate", r"ppo\.learning_rate: expected a number"),
])
def test_set_is_validated_exactly_like_the_file(tmp_path: Path, capsys, fake_train, key: str,
                                                value: str, file_key: str,
                                                message: str) -> None:
    """A bad key or value given with --set gets the message it gets in a file, and no run
    directory is made."""
    runs = tmp_path / "runs"
    from_set = _usage_error(capsys, "train", "roy", "--set", f"{key}={value}", "--runs-dir",
                            str(runs))
    data = yaml12.load((ROOT / "configs" / "roy.yaml").read_text())
    data["ppo"][file_key] = yaml12.load(value)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml12.dump(data))
    from_file = _usage_error(capsys, "train", str(path), "--runs-dir", str(runs))
    for err in (from_set, from_file):
        assert re.search(message, err), err
    # The same words after where the value came from (the file, or the file with the --set).
    problem = f"ppo.{file_key}: "
    assert from_set[from_set.index(problem):] == from_file[from_file.index(problem):]
    assert f"with {key}=" in from_set
    assert not runs.exists() and not fake_train


@pytest.mark.parametrize("argv, message", [
    (["--set", "seed"], "--set: expected KEY=VALUE, got 'seed'"),
    (["--set", "=3"], "--set: expected KEY=VALUE, got '=3'"),
    (["--set", "seed=1", "--set", "seed=2"], "--set: seed given twice; keep one"),
    (["--set", "seed=1", "--seed", "2"], "--seed and --set seed both set seed; keep one"),
    (["--set", "ppo.learning_rate=[1"], "--set ppo.learning_rate=[1: not valid YAML"),
    (["--set", "bogus=1"], "bogus"),
])
def test_set_syntax_errors_name_the_item(tmp_path: Path, capsys, fake_train, argv: list[str],
                                         message: str) -> None:
    err = _usage_error(capsys, "train", "roy", *argv, "--runs-dir", str(tmp_path / "runs"))
    assert message in err, err
    assert not fake_train and not (tmp_path / "runs").exists()


def test_train_names_the_games_when_given_neither_a_file_nor_a_game(tmp_path: Path,
                                                                     capsys) -> None:
    err = _usage_error(capsys, "train", "royy", "--runs-dir", str(tmp_path))
    assert "'royy' is neither a config file nor a game" in err and "roy, " in err
    err = _usage_error(capsys, "train", "nothere.yaml", "--runs-dir", str(tmp_path))
    assert "no config file at 'nothere.yaml'" in err
    err = _usage_error(capsys, "train", "--runs-dir", str(tmp_path))
    assert "GAME_OR_CONFIG" in err


def test_train_messages_name_the_command_they_came_from(tmp_path: Path, capsys) -> None:
    """A hint to resume or restart says ``card-envs train``, not the repository's module."""
    run_dir = tmp_path / "runs" / "roy" / "r"
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text((ROOT / "configs" / "roy.yaml").read_text())
    err = _usage_error(capsys, "train", "--resume", str(run_dir))
    assert "holds no checkpoint" in err and "card-envs train " in err
    assert "python -m training" not in err


def test_the_shipped_configs_are_the_repository_s() -> None:
    from card_envs.training.shipped import config_dir, shipped_configs

    assert config_dir() == ROOT / "configs"
    assert set(shipped_configs()) == {p.stem for p in (ROOT / "configs").glob("*.yaml")}
    assert set(GAMES) <= set(shipped_configs())


# -- the extra ---------------------------------------------------------------------------------
def test_train_and_evaluate_without_the_extra_say_how_to_install_it(capsys, monkeypatch) -> None:
    """The check reads the [train] extra from the installed metadata: a library of it that is
    not installed is named, with the install command, before anything imports it."""
    import importlib.metadata

    real = importlib.metadata.distribution

    def without_torch(name: str):
        if name == "torch":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", without_torch)
    for command in ("train", "evaluate"):
        code, out, err = run(capsys, command, "roy")
        assert code == 2 and not out
        assert err.strip() == (f'card-envs {command}: needs the train extra, and torch is not '
                               f'installed: pip install "card-envs[train]"')


def test_the_extra_check_reads_the_installed_extra() -> None:
    from card_envs.cli.extras import _in_extra, missing

    assert missing("train") == [] and missing("dev") == []
    assert _in_extra('torch>=2.3; extra == "train"', "train")
    assert not _in_extra('torch>=2.3; extra == "train"', "bench")
    assert not _in_extra("numpy>=1.24", "train")
    assert not _in_extra('tomli; python_version < "3.0" and extra == "train"', "train")


# -- evaluate, demo, bench ---------------------------------------------------------------------
def test_evaluate_is_the_evaluator_with_its_arguments(tmp_path: Path, capsys) -> None:
    out_prefix = tmp_path / "e"
    code, out, err = run(capsys, "evaluate", "--game", "roy", "--agents", "random", "heuristic",
                         "--games", "4", "--parallel", "2", "--env", "num_players=3",
                         "--out", str(out_prefix))
    assert code == 0, err
    report = json.loads(out_prefix.with_suffix(".json").read_text())
    assert report["config"]["num_players"] == 3 and report["games_per_match"] == 4
    assert out_prefix.with_suffix(".png").exists() and "wrote" in out
    err = _usage_error(capsys, "evaluate", "--game", "roy", "--agents", "random", "heuristic",
                       "--env", "num_players")
    assert "--env: expected KEY=VALUE, got 'num_players'" in err


def test_demo_plays(capsys) -> None:
    code, out, _ = run(capsys, "demo", "--game", "memory_uno", "--games", "5", "--seed", "2")
    assert code == 0 and "Memory-Uno: heuristic vs random over 5 games" in out
    err = _usage_error(capsys, "demo", "--games", "0")
    assert err.startswith("card-envs demo: error: argument --games")


def test_bench_without_rlcard_measures_the_rest(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "rlcard", None)  # find_spec answers None: not installed
    out_json = tmp_path / "bench.json"
    code, out, _ = run(capsys, "bench", "--games", "roy", "--seconds", "0.02", "--rounds", "1",
                       "--json", str(out_json))
    assert code == 0
    assert 'RLCard is not installed (pip install "card-envs[bench]")' in out
    figures = json.loads(out_json.read_text())
    assert set(figures) == {"build", "trivial AEC, PettingZoo wrappers", "roy raw AEC",
                            "roy env()", "roy Gymnasium"}
    assert "x wrapped trivial" in out and "x RLCard UNO" not in out
    err = _usage_error(capsys, "bench", "--seconds", "0")
    assert "--seconds: expected a number > 0" in err


# -- layout ------------------------------------------------------------------------------------
def _trainer_found_elsewhere(root: Path, env: dict[str, str] | None = None) -> bool:
    """Whether a process in ``root`` would find card_envs.training outside it (an editable
    install of another checkout maps it there)."""
    done = subprocess.run([sys.executable, "-c", "import importlib.util as u; "
                           "s = u.find_spec('card_envs.training'); print(s.origin if s else '')"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)
    origin = done.stdout.strip()
    return bool(origin) and not Path(origin).resolve().is_relative_to(root.resolve())


@pytest.mark.parametrize("first", ["training", "card_envs.training"])
def test_the_checkout_s_training_is_card_envs_training(first: str) -> None:
    """One module object per source, whichever name is imported first: the exception a
    command raises is the one the tests catch, and a checkpoint pickles the class under the
    name an install has."""
    if first == "card_envs.training" and _trainer_found_elsewhere(ROOT):
        pytest.skip("a copy of the repository: card_envs.training alone is another checkout's")
    code = f"""
import importlib, sys
importlib.import_module({first!r} + ".config")
import training, training.actors, training.config
import card_envs.training, card_envs.training.actors, card_envs.training.config
assert training is card_envs.training
assert training.config is card_envs.training.config
assert training.config.ConfigError is card_envs.training.config.ConfigError
assert training.actors.AgentActor.__module__ == "card_envs.training.actors"
# (training._checkout, which makes the alias, is the one module under the short name alone.)
assert not [m for m in sys.modules if m.startswith("training.") and m != "training._checkout"
            and sys.modules[m] is not sys.modules["card_envs." + m]]
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_python_m_training_train_still_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "training.train", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m training.train")
    assert "Warning" not in done.stderr, done.stderr


def test_nothing_installed_imports_the_checkout_only_name_training() -> None:
    """An install has card_envs.training and no top-level training: the package and the
    trainer import the trainer relatively or by its installed name."""
    offenders = []
    for path in [*(ROOT / "card_envs").rglob("*.py"), *(ROOT / "training").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} imports {name}"
                          for name in names if name.split(".")[0] == "training"]
    assert not offenders, offenders


def test_output_cut_short_by_its_reader_is_no_traceback() -> None:
    """``card-envs games | head``: the reader leaves early; the command ends quietly. (The
    reading end is closed before the command has imported enough to write.)"""
    process = subprocess.Popen([sys.executable, "-m", "card_envs", "games"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1 and not err, err


def test_a_copy_of_the_checkout_runs_its_own_trainer(tmp_path: Path) -> None:
    """A copy of the repository run in this environment (the mutation audit's), whose
    editable install maps card_envs.training to this checkout: importing ``training`` loads
    the copy's trainer, and a trainer already loaded from elsewhere is an error, not a silent
    run of other code."""
    copy = tmp_path / "copy"
    for name in ("card_envs", "training", "configs"):
        shutil.copytree(ROOT / name, copy / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd",
                                                      "_compiled.json"))
    env = {**os.environ, "PYTHONPATH": str(copy), "CARD_ENVS_PURE_PYTHON": "1"}

    def python(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code], cwd=copy, env=env,
                              capture_output=True, text=True, timeout=300)

    done = python("import training, card_envs.training.shipped as s\n"
                  "print(s.__file__); print(s.config_dir())")
    assert done.returncode == 0, done.stderr
    assert all(line.startswith(str(copy)) for line in done.stdout.split()), done.stdout
    if not _trainer_found_elsewhere(copy, env):
        pytest.skip("no editable install maps card_envs.training elsewhere")
    done = python("import card_envs.training\nimport training")
    assert done.returncode != 0
    assert "ImportError: card_envs.training was imported from" in done.stderr, done.stderr

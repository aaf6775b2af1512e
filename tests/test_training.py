"""Self-play training: config validation, the batched VecEnv, checkpoints and exact resume.

Fast by design (a few thousand learner steps per game); real training runs are behind
``@pytest.mark.slow``.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.callbacks import BaseCallback

from card_envs.games import GAMES
from training import yaml12
from training.checkpoint import CheckpointError, atomic_write, load_checkpoint
from training.config import (
    SECTIONS,
    Config,
    ConfigError,
    EvaluationConfig,
    SelfPlayConfig,
    TrainingConfig,
    from_dict,
    load_config,
    parse_yaml,
    save_config,
)
from training.evaluate import main as evaluate_main
from training.files import RunWriteError
from training.run_lock import LOCK_NAME
from training.selfplay import HEURISTIC, RANDOM, SelfPlayVecEnv
from training.train import StopOnSignal, completed_summary, run_summary, train
from training.train import main as train_main

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
TINY = {
    "ppo": {"n_steps": 32, "batch_size": 128, "n_epochs": 1,
            "policy_kwargs": {"net_arch": [32, 32]}},
    # One process (the trainer's path before selfplay.workers): tests/test_selfplay_workers.py
    # runs the workers.
    "selfplay": {"n_envs": 8, "snapshot_every": 512, "pool_size": 3, "workers": 1},
    # One thread: the tests run two at a time (the shipped configs say auto).
    "training": {"total_timesteps": 1024, "checkpoint_every": 512, "torch_threads": 1},
    "evaluation": {"every": 1024, "games": 8, "final_games": 12, "parallel": 16},
    "pretrain": {"games": 2, "epochs": 1, "max_decisions": 500, "dagger_games": 1},
}


def require_heuristic(game: str) -> None:
    """Training needs the game's heuristic. Every game ships one now, so a heuristic that does
    not load is a failure here (it used to skip, from when games landed in stages)."""
    GAMES[game].heuristic_class()


#: A shipped config's ``pretrain`` without its warm start (nor the DAgger rounds after it).
NO_WARM_START = {"games": 0, "dagger_rounds": 0, "dagger_teacher": None}


def game_config(game: str, **overrides) -> dict:
    """The game's shipped config shrunk to a smoke-test size."""
    data = yaml12.load((CONFIGS / f"{game}.yaml").read_text())
    for section, values in {**TINY, **overrides}.items():
        if isinstance(values, dict):
            data[section] = {**(data.get(section) or {}), **values}
        else:
            data[section] = values
    return data


# -- config validation -------------------------------------------------------------------------
@pytest.mark.parametrize("game", list(GAMES))
def test_every_installed_game_has_a_valid_config(game: str) -> None:
    cfg = load_config(CONFIGS / f"{game}.yaml")
    assert cfg.game == game
    assert cfg.training.time_limit_minutes is not None and cfg.training.time_limit_minutes <= 20


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"sefplay": {}}, r"sefplay: unknown key \(did you mean 'selfplay'\?\)"),
        ({"ppo": {"n_step": 64}}, r"ppo.n_step: unknown key \(did you mean 'n_steps'\?\)"),
        ({"ppo": {"learning_rate": "fast"}}, r"ppo.learning_rate: expected a number"),
        ({"ppo": {"policy_kwargs": {"net_arc": [8]}}}, r"ppo.policy_kwargs.net_arc: .*'net_arch'"),
        ({"selfplay": {"pool_szie": 3}}, r"selfplay.pool_szie: .*'pool_size'"),
        ({"selfplay": {"n_envs": "8"}}, r"selfplay.n_envs: expected an integer >= 1, got '8'"),
        ({"selfplay": {"opponents": {"heuristc": 1.0}}}, r"opponents.heuristc: .*'heuristic'"),
        ({"selfplay": {"opponents": {"self": 0.0, "random": 0.0}}}, r"at least one weight"),
        ({"selfplay": {"learner_seat": 7}}, r"selfplay.learner_seat"),
        ({"selfplay": {"reward": "zero-sum"}}, r"selfplay.reward: expected 'learner' or "
         r"'zero_sum', got 'zero-sum'"),
        ({"selfplay": {"reward_scale": 0}}, r"selfplay.reward_scale: expected a number > 0"),
        ({"training": {"total_timestep": 5}}, r"'total_timesteps'"),
        ({"training": {"n_envs": 16}}, r"training.n_envs: unknown key \(it belongs in "
         r"selfplay.n_envs\)"),
        ({"evaluation": {"seed": 3}}, r"evaluation.seed: unknown key \(it belongs at the top "
         r"level\)"),
        ({"selfplay": {"gamma": 0.9}}, r"selfplay.gamma: unknown key \(it belongs in ppo.gamma\)"),
        # ... next to a look-alike key of the section it is in (either may be the slip):
        ({"selfplay": {"n_steps": 64}}, r"selfplay.n_steps: unknown key \(did you mean "
         r"'n_envs'\? n_steps belongs in ppo.n_steps\)"),
        ({"n_envs": 4}, r"^n_envs: unknown key \(did you mean 'env'\? n_envs belongs in "
         r"selfplay.n_envs\)"),
        ({"evaluation": {"game": 300}}, r"evaluation.game: unknown key \(did you mean 'games'\? "
         r"game belongs at the top level\)"),
        # Only this game's options belong in env: sniff is Dogpile's, not ROY's.
        ({"sniff": "required"}, r"^sniff: unknown key; allowed"),
        ({"num_players": 3}, r"^num_players: unknown key \(it belongs in env.num_players\)"),
        ({"learning_rate": 3e-4}, r"^learning_rate: unknown key \(it belongs in "
         r"ppo.learning_rate or in pretrain.learning_rate\)"),
        ({"training": {"checkpoint_every": 0}}, r"training.checkpoint_every: expected an "
         r"integer >= 1, got 0"),
        ({"evaluation": {"games": True}}, r"evaluation.games: expected an integer >= 1, got True"),
        ({"env": {"num_player": 2}}, r"env: unknown config key 'num_player'.*'num_players'"),
        ({"env": {"num_players": 9}}, r"env: invalid value 9 for 'num_players'"),
        ({"game": "ryo"}, r"unknown game 'ryo' \(did you mean 'roy'\?\)"),
        ({"features": "smart"}, r"features: expected 'raw' or 'derived', got 'smart'"),
        ({"features": "derived"}, r"features: roy has no derived features"),
        ({"ppo": {"policy_kwargs": {"features_extractor_class": "X"}}},
         r"ppo.policy_kwargs.features_extractor_class: .*top-level 'features"),
        # Values that used to crash without naming the key, fail late, or pass silently:
        ({"ppo": {"batch_size": 0}}, r"ppo.batch_size: expected an integer >= 1, got 0"),
        ({"ppo": {"batch_size": -1}}, r"ppo.batch_size: expected an integer >= 1, got -1"),
        ({"ppo": [1, 2]}, r"ppo: expected a mapping, got \[1, 2\]"),
        ({"ppo": {"policy_kwargs": [1, 2]}}, r"ppo.policy_kwargs: expected a mapping .*\[1, 2\]"),
        ({"ppo": {"policy_kwargs": "big"}}, r"ppo.policy_kwargs: expected a mapping .*'big'"),
        ({"ppo": {"policy_kwargs": None}}, r"ppo.policy_kwargs: expected a mapping .*got None"),
        ({"ppo": {"policy_kwargs": {"net_arch": "big"}}},
         r"ppo.policy_kwargs.net_arch: expected a list of layer widths"),
        ({"ppo": {"policy_kwargs": {"activation_fn": "tanh"}}},
         r"ppo.policy_kwargs.activation_fn: cannot be set in a config"),
        ({"ppo": {"policy_kwargs": {"optimizer_kwargs": {"epsilon": 1e-5}}}},
         r"optimizer_kwargs.epsilon: unknown key \(did you mean 'eps'\?\)"),
        # A number in quotes is text; torch refused it only when the run built its model:
        ({"ppo": {"policy_kwargs": {"optimizer_kwargs": {"eps": "1e-5"}}}},
         r"optimizer_kwargs: torch.optim.Adam refuses \{'eps': '1e-5'\}: .*quotes is text"),
        ({"ppo": {"policy_kwargs": {"optimizer_kwargs": {"betas": 0.9}}}},
         r"optimizer_kwargs: torch.optim.Adam refuses \{'betas': 0.9\}"),
        # ... and these only at the first update, after the run directory was made:
        ({"ppo": {"policy_kwargs": {"optimizer_kwargs": {"betas": [0.9]}}}},
         r"optimizer_kwargs: torch.optim.Adam refuses \{'betas': \[0.9\]\}: IndexError"),
        ({"ppo": {"policy_kwargs": {"optimizer_kwargs": {"differentiable": True}}}},
         r"optimizer_kwargs.differentiable: PPO's update steps Adam outside autograd"),
        ({"ppo": {"policy_kwargs": {"optimizer_kwargs": {"capturable": True}}},
          "training": {"device": "cpu"}},
         r"optimizer_kwargs.capturable: true needs the model on CUDA, but training.device 'cpu' "
         r"is not a CUDA device here"),
        ({"ppo": {"batch_size": 1, "n_steps": 4}}, r"ppo.batch_size: minibatches of one sample "
         r"\(ppo.batch_size 1, a rollout of 128\) normalise advantages to NaN"),
        ({"ppo": {"n_steps": 1, "batch_size": 2}, "selfplay": {"n_envs": 1}},
         r"ppo.n_steps: minibatches of one sample \(ppo.batch_size 2, a rollout of 1\)"),
        ({"training": {"device": "meta"}}, r"training.device: expected 'auto', 'cpu', 'cuda', "
         r"'cuda:<index>' or 'mps', got 'meta'"),
        ({"training": {"torch_threads": 100000}}, r"training.torch_threads: expected an "
         r"integer in 1\.\.1024"),
        ({"env": {1: 2}}, r"env: option names are words such as num_players, got 1"),
        ({"seed": -1}, r"seed: expected an integer in 0\.\.4294967295, got -1"),
        ({"training": {"device": "gpu0"}}, r"training.device: expected 'auto', 'cpu', 'cuda'"),
        ({"ppo": {"n_steps": 0}}, r"ppo.n_steps: expected an integer >= 1, got 0"),
        ({"ppo": {"n_steps": 2.5}}, r"ppo.n_steps: expected an integer >= 1, got 2.5"),
        ({"ppo": {"n_epochs": 0}}, r"ppo.n_epochs: expected an integer >= 1, got 0"),
        ({"ppo": {"target_kl": "abc"}}, r"ppo.target_kl: expected null or a number > 0"),
        ({"ppo": {"learning_rate": -1.0}}, r"ppo.learning_rate: expected a number > 0"),
        ({"ppo": {"gamma": 1.5}}, r"ppo.gamma: expected a number in \[0, 1\], got 1.5"),
        ({"ppo": {"clip_range": -0.2}}, r"ppo.clip_range: expected a number > 0, got -0.2"),
        ({"training": {"time_limit_minutes": 0}}, r"training.time_limit_minutes: expected a "
         r"number > 0 \(or null for no limit\), got 0"),
        ({"training": {"time_limit_minutes": -1}}, r"training.time_limit_minutes: .*got -1"),
        ({"pretrain": {"games": 5, "epochs": 0}}, r"pretrain.epochs: expected >= 1 when "
         r"pretrain.games > 0"),
        # YAML's .nan and .inf: a NaN passes no range check, an infinity passes "> 0".
        ({"selfplay": {"opponents": {"self": float("nan")}}},
         r"selfplay.opponents.self: expected a finite number, got nan"),
        ({"ppo": {"learning_rate": float("inf")}}, r"ppo.learning_rate: expected a finite"),
        ({"pretrain": {"learning_rate": float("nan")}}, r"pretrain.learning_rate: expected a "),
        ({"selfplay": {"reward_scale": float("inf")}}, r"selfplay.reward_scale: expected a fi"),
        # One past the top of a range (the tests above only tried far outside it):
        ({"selfplay": {"learner_seat": 2}}, r"selfplay.learner_seat: expected 'random' or 0..1, "
         r"got 2"),
        ({"selfplay": {"latest_prob": 1.5}}, r"selfplay.latest_prob: expected a number in "
         r"\[0, 1\], got 1.5"),
    ],
)
def test_config_errors_name_the_key(patch: dict, message: str) -> None:
    data = yaml12.load((CONFIGS / "roy.yaml").read_text())
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict) and value:
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    with pytest.raises(ConfigError, match=message):
        from_dict(data)


def test_policy_kwargs_are_merged_over_the_defaults() -> None:
    """Setting one policy option keeps the default net_arch instead of SB3's smaller one."""
    cfg = from_dict({"game": "roy", "ppo": {"policy_kwargs": {"ortho_init": False}}})
    assert cfg.ppo["policy_kwargs"] == {"net_arch": [128, 128], "ortho_init": False}
    cfg = from_dict({"game": "roy", "ppo": {"policy_kwargs": {"net_arch": {"pi": [8], "vf": []}}}})
    assert cfg.ppo["policy_kwargs"] == {"net_arch": {"pi": [8], "vf": []}}
    assert from_dict({"game": "roy", "ppo": None}).ppo["policy_kwargs"] == {"net_arch": [128, 128]}
    assert from_dict({"game": "roy", "training": {"device": "auto"}}).training.device == "auto"


@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_a_cuda_device_without_cuda_is_an_error(device: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """SB3 trained on the CPU instead, silently, while config.yaml still said cuda."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    data = {"game": "roy", "training": {"device": device}}
    with pytest.raises(ConfigError, match=rf"^training.device: '{device}', but CUDA is not "
                                          r"available on this machine"):
        from_dict(data)
    for fine in ("cpu", "auto"):
        assert from_dict({"game": "roy", "training": {"device": fine}}).training.device == fine
    # Read only for its game options (to evaluate the run), a config need not fit this machine.
    assert from_dict(data, check_cuda=False).training.device == device
    path = tmp_path / "gpu.yaml"
    path.write_text(yaml12.dump(data))
    with pytest.raises(ConfigError, match=r"gpu.yaml: training.device: .*CUDA is not available"):
        load_config(path)
    assert load_config(path, check_cuda=False).training.device == device


def test_a_cuda_device_beyond_the_machine_s_count_is_an_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    for fine in ("cuda", "cuda:0", "cuda:1"):
        assert from_dict({"game": "roy", "training": {"device": fine}}).training.device == fine
    with pytest.raises(ConfigError, match=r"^training.device: 'cuda:2', but this machine has 2 "
                                          r"CUDA device\(s\): cuda:0 to cuda:1$"):
        from_dict({"game": "roy", "training": {"device": "cuda:2"}})


@pytest.mark.parametrize("device", ["cuda", "auto"])
def test_bfloat16_on_a_gpu_without_it_is_an_error(device: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation: False)
    data = {"game": "roy", "training": {"device": device, "precision": "bfloat16"}}
    with pytest.raises(ConfigError, match=rf"^training.precision: bfloat16, but the CUDA device "
                                          rf"of training.device '{device}' has no native "
                                          r"bfloat16 .*; use float32$"):
        from_dict(data)
    assert from_dict(data, check_cuda=False).training.precision == "bfloat16"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation: True)
    assert from_dict(data).training.precision == "bfloat16"


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_bfloat16_on_a_cpu_without_it_is_an_error(device: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Emulated bfloat16 made the hidden layers' products 5 to 9 times slower than float32."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    capabilities = {"avx2": True, "avx512_f": True, "avx512_bf16": False, "amx_bf16": False}
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: capabilities)
    data = {"game": "roy", "training": {"device": device, "precision": "bfloat16"}}
    with pytest.raises(ConfigError, match=rf"^training.precision: bfloat16, but training.device "
                                          rf"'{device}' trains on this machine's CPU, which has "
                                          r"no native bfloat16 .*; use float32 \(a run started "
                                          r"elsewhere resumes with --set training.precision="
                                          r"float32\)$"):
        from_dict(data)
    assert from_dict(data, check_cuda=False).training.precision == "bfloat16"
    assert from_dict({"game": "roy", "training": {"device": device}}).training.device == device
    for native in ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16"):  # x86's two, Arm's two
        monkeypatch.setattr(torch.cpu, "get_capabilities", lambda n=native: {n: True})
        assert from_dict(data).training.precision == "bfloat16"
    # A torch that cannot say is trusted; the learner on a GPU does not need the CPU's.
    monkeypatch.delattr(torch.cpu, "get_capabilities")
    assert from_dict(data).training.precision == "bfloat16"
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: capabilities, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation: True)
    assert from_dict({**data, "training": {"device": "cuda", "precision": "bfloat16"}})


def test_a_number_written_without_a_dot_is_a_number(tmp_path: Path) -> None:
    """PyYAML (YAML 1.1) reads 1e-4 as text, and the config refused a learning rate written
    the usual way; config files are read as YAML 1.2 reads numbers."""
    path = tmp_path / "c.yaml"
    data = game_config("roy")
    data["ppo"].update(learning_rate="LR", ent_coef="EC")
    text = yaml12.dump(data).replace("LR", "1e-4").replace("EC", "5E-3")
    path.write_text(text)
    cfg = load_config(path)
    assert (cfg.ppo["learning_rate"], cfg.ppo["ent_coef"]) == (1e-4, 5e-3)
    assert parse_yaml("a: 10\nb: 1_000\nc: .5\nd: 1e4x\ne: 0x10", "x") == \
        {"a": 10, "b": 1000, "c": 0.5, "d": "1e4x", "e": 16}
    # Integers too: YAML 1.1 reads 010 as octal 8 (a seed silently changed) and 1:30 as 90.
    assert parse_yaml("seed: 010\nf: 0o10\ng: 1:30\nh: -007", "x") == \
        {"seed": 10, "f": 8, "g": "1:30", "h": -7}
    # An explicit tag on text that is no number: ruamel.yaml's own error named no line.
    with pytest.raises(ConfigError, match=r"^x: not valid YAML: line 1, column 4: expected an "
                                          r"integer, found 'abc'$"):
        parse_yaml('i: !!int "abc"', "x")
    with pytest.raises(ConfigError, match=r"^x: not valid YAML: line 2, column 4: expected a "
                                          r"number, found '1e'$"):
        parse_yaml('h: 1\ni: !!float "1e"', "x")


def test_config_round_trips_through_yaml(tmp_path: Path) -> None:
    cfg = load_config(CONFIGS / "roy.yaml")
    save_config(cfg, tmp_path / "c.yaml")
    assert load_config(tmp_path / "c.yaml").to_dict() == cfg.to_dict()
    # Into a folder that does not exist yet (the error named the temporary file).
    save_config(cfg, tmp_path / "new" / "c.yaml")
    assert load_config(tmp_path / "new" / "c.yaml").to_dict() == cfg.to_dict()


def test_config_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: roy\nppo: {n_step: 3}\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: ppo.n_step"):
        load_config(bad)
    with pytest.raises(ConfigError, match="no config file"):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match=r"overrides: expected a mapping .*got \['seed=3'\]"):
        load_config(bad, ["seed=3"])  # was an AttributeError
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("game: roy\n# café\n".encode("latin-1"))  # was a UnicodeDecodeError
    with pytest.raises(ConfigError, match=r"latin1.yaml: not UTF-8 text \(byte 0xe9 on line 2\)"):
        load_config(latin1)
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")  # was "a config must be a mapping, got NoneType"
    with pytest.raises(ConfigError, match=r"empty.yaml: the config is empty: it needs at least"):
        load_config(empty)
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("roy\n")
    with pytest.raises(ConfigError, match=r"mapping of keys to values, got str 'roy'"):
        load_config(scalar)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("game: roy\ngame: dogpile\n", r"game: duplicate key at line 2 \(first at line 1\)"),
        ("game: roy\nenv:\n  num_players: 2\n  memory: none\n  num_players: 3\n",
         r"env.num_players: duplicate key at line 5 \(first at line 3\)"),
        ("game: roy\nppo:\n  policy_kwargs: {net_arch: [8], net_arch: [16]}\n",
         r"ppo.policy_kwargs.net_arch: duplicate key at line 3, column 34 \(first at line 3, "
         r"column 19\)"),
    ],
)
def test_a_duplicate_key_is_an_error_naming_its_path_and_line(tmp_path: Path, text: str,
                                                              message: str) -> None:
    """PyYAML keeps the last of two equal keys without a word: a config that sets a value twice
    trained with the one the user may not have meant."""
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: {message}; keep one$"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("game: roy\nenv: {num_players: 2\nppo: {}\n",
         r"line 3, column 4: expected ',' or '}', but got ':' \(while parsing a flow mapping at "
         r"line 2, column 6\)"),
        ("game: roy\nseed: 1: 2\n", r"line 2, column 8: mapping values are not allowed here"),
        ("game: roy\nenv: \x07\n", r"line 2, column 6: unacceptable character #x0007"),
    ],
)
def test_a_yaml_syntax_error_is_one_line_naming_the_file_and_position(
        tmp_path: Path, text: str, message: str) -> None:
    """PyYAML's own message spans several lines and names the file "<unicode string>"."""
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    error = str(info.value)
    assert len(error.splitlines()) == 1 and "<unicode string>" not in error, error
    assert re.match(rf"{re.escape(str(path))}: not valid YAML: {message}", error), error


def test_docs_list_every_config_key_with_its_default() -> None:
    """docs/training.md's key table is the reference users read: one row per key, each with
    the default the code applies."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "training.md").read_text()
    table = text.split("### Every key", 1)[1].split("\n\n", 2)[1]
    rows = dict(re.findall(r"^\| `([\w.]+)` \| ([^|]+) \|", table, flags=re.M))
    defaults = from_dict({"game": "roy"}).to_dict()
    expected = {}
    for name in Config.model_fields:
        if name in SECTIONS:  # the sections
            expected.update({f"{name}.{k}": v for k, v in defaults[name].items()})
        else:
            expected[name] = defaults[name]
    assert sorted(rows) == sorted(expected)
    expected["game"] = "(required)"
    expected["ppo"] = {}  # the table gives what a config leaves out, before the policy default
    for key, shown in rows.items():
        shown = shown.strip()
        value = shown if shown == "(required)" else yaml12.load(shown.strip("`"))
        assert value == expected[key], (key, shown, expected[key])


# -- the batched self-play VecEnv ----------------------------------------------------------------
def _random_learner_actions(env: SelfPlayVecEnv, rng: np.random.Generator) -> np.ndarray:
    masks = get_action_masks(env)
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


@pytest.mark.parametrize("game", list(GAMES))
def test_vecenv_delivers_terminal_rewards_and_masks(game: str) -> None:
    require_heuristic(game)
    env = SelfPlayVecEnv(game, {}, 8, {"random": 1.0, "heuristic": 1.0}, seed=0)
    assert is_masking_supported(env)
    obs = env.reset()
    rng = np.random.default_rng(0)
    assert obs.shape == (8, env.obs_size)
    returns = np.zeros(8)
    episodes = 0
    for _ in range(400):
        masks = get_action_masks(env)
        assert masks.shape == (8, env.num_actions) and masks.any(axis=1).all()
        obs, rewards, dones, infos = env.step(_random_learner_actions(env, rng))
        returns += rewards
        for i in np.flatnonzero(dones):
            info = infos[i]
            assert info["terminal_observation"].shape == (env.obs_size,)
            assert info["episode"]["r"] == pytest.approx(returns[i])
            if not info["TimeLimit.truncated"]:
                # Win-mode rewards reach the learner whoever made the last move.
                winners, seat = info["winners"], info["learner_seat"]
                n = env.num_players
                expected = (0.0 if len(winners) in (0, n) else
                            1.0 / len(winners) if seat in winners else -1.0)
                assert returns[i] == pytest.approx(expected)
            returns[i] = 0.0
            episodes += 1
    assert episodes > 0


def _episode_returns(env: SelfPlayVecEnv, steps: int, seed: int) -> list[tuple[float, dict]]:
    """(learner return, info) of every episode that ends within ``steps`` random steps."""
    env.reset()
    rng = np.random.default_rng(seed)
    returns = np.zeros(env.num_envs)
    done_episodes = []
    for _ in range(steps):
        _, rewards, dones, infos = env.step(_random_learner_actions(env, rng))
        returns += rewards
        for i in np.flatnonzero(dones):
            assert infos[i]["episode"]["r"] == pytest.approx(returns[i])
            done_episodes.append((float(returns[i]), infos[i]))
            returns[i] = 0.0
    return done_episodes


def _trajectory(env: SelfPlayVecEnv, steps: int) -> list[bytes]:
    """Observations and rewards of ``steps`` steps with the learner playing its first legal move
    (no randomness of its own)."""
    out = [env.reset().tobytes()]
    for _ in range(steps):
        obs, rewards, _, _ = env.step(env.action_masks().argmax(axis=1))
        out += [obs.tobytes(), rewards.tobytes()]
    return out


@pytest.mark.parametrize("game", ["dogpile", "deluxe_memory"])
def test_vecenv_with_a_random_heuristic_is_reproducible_from_its_seed(game: str) -> None:
    """These heuristics draw random numbers: the VecEnv's seed must seed them too."""
    require_heuristic(game)

    def make() -> SelfPlayVecEnv:
        return SelfPlayVecEnv(game, {"num_players": 2}, 4, {"heuristic": 1.0}, seed=123)

    assert _trajectory(make(), 150) == _trajectory(make(), 150)


def test_vecenv_zero_sum_rewards_pay_the_learner_its_margin() -> None:
    # Win rewards, two seats: the margin of +1 over -1 is 2; scaled by 1/2 it is the win again.
    env = SelfPlayVecEnv("roy", {}, 8, {"random": 1.0, "heuristic": 1.0}, seed=0,
                         reward="zero_sum", reward_scale=0.5)
    episodes = _episode_returns(env, 400, seed=0)
    assert episodes
    for ret, info in episodes:
        if info["winners"]:
            assert ret == pytest.approx(1.0 if info["learner_seat"] in info["winners"] else -1.0)
    # Score rewards (ROY pays a hand's points to its winner only): a won hand pays the learner
    # its points, a lost one costs it the winner's, the same trajectories as with the plain
    # learner reward (which pays nothing for a lost hand).
    plain = SelfPlayVecEnv("roy", {"reward": "score"}, 8, {"random": 1.0}, seed=3)
    margin = SelfPlayVecEnv("roy", {"reward": "score"}, 8, {"random": 1.0}, seed=3,
                            reward="zero_sum", reward_scale=0.01)
    plain_episodes = _episode_returns(plain, 300, seed=3)
    margin_episodes = _episode_returns(margin, 300, seed=3)
    assert len(plain_episodes) == len(margin_episodes) > 5
    lost = 0
    for (own, info), (ret, same) in zip(plain_episodes, margin_episodes, strict=True):
        assert info["winners"] == same["winners"]
        if info["learner_seat"] in info["winners"]:
            assert ret == pytest.approx(own / 100) and own > 0
        elif info["winners"]:
            assert own == 0 and ret < 0
            lost += 1
    assert lost > 0
    # Three seats: the other two share the margin's negative side.
    env3 = SelfPlayVecEnv("roy", {"num_players": 3}, 4, {"random": 1.0}, seed=0,
                          reward="zero_sum", reward_scale=2.0)
    env3.reset()
    for i in range(4):
        weights = env3._reward_weights[i]
        learner = int(env3.learner[i])
        assert weights[learner] == 2.0
        assert np.delete(weights, learner).tolist() == [-1.0, -1.0]


def test_a_shared_win_counts_one_over_k_in_the_win_rates() -> None:
    """The win an episode reports (the training win rates, ``is_success``) scores as the
    evaluation does: 1 for a sole win, 1/k for a k-way shared win, 0 otherwise."""
    env = SelfPlayVecEnv("roy", {"num_players": 3}, 1, {"random": 1.0}, seed=0)
    env.reset()
    learner = int(env.learner[0])
    others = [s for s in range(3) if s != learner]
    for winners, win in (([learner], 1.0), ([learner, others[0]], 0.5), (others, 0.0)):
        engine = env.engines[0]
        engine.reset()
        engine.finish(winners)
        info = env._finish(0, 0.0)
        assert info["win"] == win and info["is_success"] == (win > 0)


def test_vecenv_losses_on_opponent_moves_reach_the_learner() -> None:
    env = SelfPlayVecEnv("roy", {}, 16, {"heuristic": 1.0}, seed=1)
    env.reset()
    rng = np.random.default_rng(1)
    losses = []
    for _ in range(400):
        _, rewards, dones, infos = env.step(_random_learner_actions(env, rng))
        losses += [rewards[i] for i in np.flatnonzero(dones) if infos[i]["win"] == 0.0]
    # ROY ends when a player empties the hand, so every loss was the opponent's last move.
    assert len(losses) > 20 and all(r == -1.0 for r in losses)


def test_vecenv_batches_opponent_decisions_and_fills_every_seat() -> None:
    """Every seat of a 3-player game is filled, the learner's seat rotates, and opponents run
    one batched call per actor per round rather than one per decision, each row holding its own
    game's observation and mask (a stale row would still get a legal-looking action)."""
    from sb3_contrib import MaskablePPO

    # (The ROY heuristic searches discard chains: it is left out here to keep the test fast.)
    env = SelfPlayVecEnv("roy", {"num_players": 3}, 16, {"self": 1.0, "random": 0.5},
                         pool_size=2, seed=2)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, seed=0,
                        policy_kwargs={"net_arch": [16]})
    env.pool.add(model.policy, 0)
    env.pool.add(model.policy, 1)
    calls, decisions = [0], [0]
    for actor in env.pool.actors:
        original = actor.act

        def counted(obs, masks, *extra, _orig=original):  # extra: the snapshots' shared features
            calls[0] += 1
            decisions[0] += len(obs)
            pending = {(e.observation(e.current_player).tobytes(), e.legal_mask().tobytes())
                       for e in env.engines if not e.done}
            for row, mask in zip(obs, masks, strict=True):
                assert (row.tobytes(), mask.astype(np.int8).tobytes()) in pending
            return _orig(obs, masks, *extra)

        actor.act = counted
    env.reset()
    rng = np.random.default_rng(2)
    seats, kinds = set(), set()
    for _ in range(60):
        env.step(_random_learner_actions(env, rng))
        seats.update(env.learner.tolist())
        for i in range(env.num_envs):
            for s in range(3):
                if s != env.learner[i]:
                    kinds.add(int(env.seat_actor[i, s]))
    assert seats == {0, 1, 2}
    assert kinds == {RANDOM, 2, 3}
    assert decisions[0] / calls[0] > 2.0, "snapshot opponents are not batched"


def _tiny_policy(env: SelfPlayVecEnv):
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=0,
                       policy_kwargs={"net_arch": [8]}).policy


def test_pool_keeps_the_last_pool_size_snapshots() -> None:
    """Four snapshots into a pool of two: it holds the two newest, each with its own weights."""
    from training.selfplay import OpponentPool

    policy = _tiny_policy(SelfPlayVecEnv("roy", {}, 2, {"random": 1.0}, seed=0))
    pool = OpponentPool(2, deterministic=True, rng=np.random.default_rng(0))
    for step in range(4):
        with torch.no_grad():
            for p in policy.parameters():
                p.fill_(step)
        pool.add(policy, step)
    assert len(pool.actors) == 2 and sorted(pool.steps) == [2, 3]
    assert pool.steps[pool.newest] == 3
    for actor, step in zip(pool.actors, pool.steps, strict=True):
        assert all(bool((p == step).all()) for p in actor.policy.parameters())


def test_a_pool_refuses_a_state_with_more_snapshots_than_it_keeps() -> None:
    from training.selfplay import OpponentPool

    policy = _tiny_policy(SelfPlayVecEnv("roy", {}, 2, {"random": 1.0}, seed=0))
    big = OpponentPool(3, deterministic=True, rng=np.random.default_rng(0))
    for step in range(3):
        big.add(policy, step)
    small = OpponentPool(2, deterministic=True, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"holds 3 snapshots.*pool_size 2"):
        small.load_state_dict(big.state_dict(), policy)
    OpponentPool(3, deterministic=True, rng=np.random.default_rng(0)).load_state_dict(
        big.state_dict(), policy)


@pytest.mark.parametrize("latest_prob", [1.0, 0.0])
def test_self_play_seats_get_the_newest_snapshot_with_latest_prob(latest_prob: float) -> None:
    """latest_prob 1: every self-play seat plays the newest snapshot; 0: uniform over the pool."""
    env = SelfPlayVecEnv("roy", {"num_players": 3}, 64, {"self": 1.0}, pool_size=3,
                         latest_prob=latest_prob, seed=4)
    policy = _tiny_policy(env)
    for step in range(4):  # wraps: the newest snapshot is not in the last slot
        env.pool.add(policy, step)
    env.reset()
    slots = [int(env.seat_actor[i, s]) - 2 for i in range(64) for s in range(3)
             if s != env.learner[i]]
    counts = np.bincount(slots, minlength=3)
    if latest_prob == 1.0:
        assert counts[env.pool.newest] == len(slots) == 128
    else:
        assert counts.min() > 128 / 3 - 20, counts


@pytest.mark.parametrize("rates, kind, share", [
    ({"self": 3.0, "random": 1.0}, "self", 0.75),
    ({"random": 1.0, "heuristic": 3.0}, HEURISTIC, 0.75),
    ({"random": 1.0, "heuristic": 3.0}, RANDOM, 0.25),
])
def test_opponent_kinds_follow_the_configured_rates(rates: dict, kind, share: float) -> None:
    """Rates are relative weights per opponent seat: {self: 3, random: 1} means 75% / 25%."""
    env = SelfPlayVecEnv("roy", {"num_players": 3}, 400, rates, pool_size=2, seed=5)
    env.pool.add(_tiny_policy(env), 0)
    for i in range(env.num_envs):
        env._new_episode(i)
    seats = [int(env.seat_actor[i, s]) for i in range(env.num_envs) for s in range(3)
             if s != env.learner[i]]
    hits = sum(a >= 2 if kind == "self" else a == kind for a in seats)
    assert abs(hits / len(seats) - share) < 0.06, (hits, len(seats))


@pytest.mark.parametrize("kwargs, message", [
    ({"learner_seat": 2}, r"learner_seat: expected 'random' or a seat 0\.\.1, got 2"),
    ({"learner_seat": -1}, r"learner_seat: .* got -1"),
    ({"learner_seat": "rand"}, r"learner_seat: .* got 'rand'"),
    ({"learner_seat": 1.0}, r"learner_seat: .* got 1\.0"),
    ({"rates": {"random": 1.0, "heuristc": 1.0}}, r"rates: unknown opponent kind 'heuristc'"),
    ({"rates": {"random": 2.0, "heuristic": -1.0}}, r"rates\['heuristic'\]: expected a weight"),
    ({"rates": {"self": 0.0}}, r"rates: at least one weight must be positive"),
    ({"n_envs": 0}, r"n_envs: expected an integer >= 1, got 0"),
    ({"pool_size": 0}, r"pool_size: expected an integer >= 1, got 0"),
    ({"latest_prob": 50}, r"latest_prob: expected a number in \[0, 1\], got 50"),
    ({"reward_scale": "1"}, r"reward_scale: expected a positive number, got '1'"),
])
def test_vecenv_arguments_are_checked_where_it_is_built(kwargs: dict, message: str) -> None:
    """Built directly (not from a config), a bad argument is an error naming it, not a loop
    to the redeal cap (a seat the game lacks), a dropped opponent kind or a numpy error."""
    args = {"n_envs": 2, "rates": {"random": 1.0}, **kwargs}
    with pytest.raises(ValueError, match=message):
        SelfPlayVecEnv("roy", {}, **args)
    SelfPlayVecEnv("roy", {}, 2, {"random": 1.0}, learner_seat=np.int64(1), latest_prob=1)


@pytest.mark.parametrize("actions, message", [
    ([70, 0], r"env 0: the learner chose action 70, out of range: actions are integers in "
              r"0\.\.69"),
    ([0, -1], r"env 1: the learner chose action -1, out of range"),
    ([1.5, 0.0], r"actions must be integers, got dtype float64"),
    ([0, 0, 0], r"expected 2 actions \(one per env\), got 3"),
])
def test_vecenv_refuses_actions_that_are_not_actions(actions: list, message: str) -> None:
    env = SelfPlayVecEnv("roy", {}, 2, {"random": 1.0}, seed=0)
    env.reset()
    with pytest.raises(ValueError, match=message):
        env.step(np.array(actions))


def test_vecenv_seed_applies_at_the_next_reset_as_sb3_s_vecenvs_do() -> None:
    """``seed(s)`` then ``reset()`` plays the games of a VecEnv built with ``seed=s`` (SB3's
    contract, and what ``MaskablePPO(seed=s)`` relies on); it used to change nothing."""
    def make(seed: int) -> SelfPlayVecEnv:
        return SelfPlayVecEnv("dogpile", {}, 3, {"random": 1.0, "heuristic": 1.0}, seed=seed)

    expected = _trajectory(make(7), 30)
    env = make(0)
    _trajectory(env, 5)  # streams part-used: seeding restarts them
    assert env.seed(7) == [7, 8, 9]
    assert _trajectory(env, 30) == expected
    assert _trajectory(env, 30) != expected  # one reset only: the streams go on
    model_env = make(0)
    MaskablePPO("MlpPolicy", model_env, n_steps=8, batch_size=8, seed=7,
                policy_kwargs={"net_arch": [8]})
    assert _trajectory(model_env, 30) == expected


def test_only_a_step_cap_marks_an_episode_truncated() -> None:
    """SB3 bootstraps truncated episodes only: a hand that ends by the rules is not one."""
    def episodes(config: dict, steps: int) -> list[dict]:
        env = SelfPlayVecEnv("roy", {"episode": "hand", **config}, 8, {"random": 1.0}, seed=0)
        return [info for _, info in _episode_returns(env, steps, seed=0)]

    ended, capped = episodes({}, 200), episodes({"max_steps": 4}, 20)
    assert ended and not any(info["TimeLimit.truncated"] for info in ended)
    assert capped and all(info["TimeLimit.truncated"] and not info["winners"] for info in capped)


# -- training, checkpoints and resume ----------------------------------------------------------
@pytest.mark.parametrize("game", list(GAMES))
def test_training_smoke_checkpoint_resume_evaluate(game: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    """A few thousand steps, a checkpoint, a resume that extends the run, an evaluation."""
    require_heuristic(game)
    cfg = from_dict(game_config(game))
    run = tmp_path / game
    run.mkdir()
    save_config(cfg, run / "config.yaml")
    summary = train(cfg, run, progress=False)
    assert summary["num_timesteps"] >= 1024
    warm_start = summary["pretrain"]
    assert warm_start["decisions"] > 0
    for name in ("checkpoint.pt", "best.zip", "final.zip", "latest.zip", "progress.csv",
                 "eval.csv", "training_curve.png", "evaluation.json", "evaluation.png"):
        assert (run / name).is_file(), name
    assert any((run / "tb").iterdir())
    assert set(summary["evaluation"]) == {"best.zip vs random", "best.zip vs heuristic",
                                          "final.zip vs random", "final.zip vs heuristic"}
    assert all(m["games"] == 12 for m in summary["evaluation"].values())

    # Resume with a longer run: the step count continues from the checkpoint, and the closing
    # evaluation of the first run is not repeated (it used to leave a duplicate eval.csv row).
    # A resume the checkpoint refuses changes nothing, not even config.yaml (it used to save
    # the override first); one that loads saves it and says where it continues from.
    before = (run / "config.yaml").read_text()
    checkpoint = (run / "checkpoint.pt").read_bytes()
    (run / "checkpoint.pt").write_bytes(checkpoint[:1000])
    with pytest.raises(SystemExit) as exit_info:
        train_main(["--resume", str(run), "--total-timesteps", "1536", "--no-progress"])
    assert exit_info.value.code == 2 and "corrupt or unreadable" in capsys.readouterr().err
    assert (run / "config.yaml").read_text() == before
    (run / "checkpoint.pt").write_bytes(checkpoint)
    summary = train_main(["--resume", str(run), "--total-timesteps", "1536", "--no-progress"])
    assert summary["num_timesteps"] >= 1536
    assert summary["pretrain"] == warm_start  # the checkpoint keeps it (it used to be {})
    assert load_config(run / "config.yaml").training.total_timesteps == 1536
    assert re.search(r"resuming from the checkpoint at step \d+ .*total_timesteps 1536",
                     capsys.readouterr().out)
    for name in ("eval.csv", "progress.csv"):
        steps = [row["step"] for row in _csv_rows(run / name)]
        assert len(steps) == len(set(steps)), (name, steps)


def test_keep_policies_keeps_every_checkpoints_policy(tmp_path: Path) -> None:
    """training.keep_policies: policies/step-<N>.zip at every checkpoint, restored on resume
    when a kill came between the checkpoint and its policy, and evaluated on the run's game
    options like the run's own .zip files."""
    data = game_config("roy", training={"total_timesteps": 1024, "checkpoint_every": 512,
                                        "keep_policies": True},
                       evaluation={"every": 1024, "games": 4, "final_games": 0})
    run = tmp_path / "roy" / "k"
    train(from_dict(data), run, progress=False)
    kept = sorted(p.name for p in (run / "policies").iterdir())
    assert kept[0] == "step-000000000.zip" and len(kept) >= 3, kept
    last = run / "policies" / kept[-1]
    last.unlink()  # as if killed between the checkpoint and its policy
    data["training"]["total_timesteps"] = 1536
    train(from_dict(data), run, resume=True, progress=False)
    assert last.is_file() and len(list((run / "policies").iterdir())) > len(kept)
    report = evaluate_main(["--game", "roy", "--agents", str(last), "random", "--games", "2",
                            "--out", str(tmp_path / "e")])
    assert report["config_from"] == [str(run / "config.yaml")]
    assert report["config"]["episode"] == "game"  # configs/roy.yaml's, not ROY's default


class StopAfter(BaseCallback):
    """Stops learn() mid-rollout once ``steps`` are done, like a kill would."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = steps

    def _on_step(self) -> bool:
        return self.num_timesteps < self.steps


def _policy_params(run: Path) -> dict[str, torch.Tensor]:
    return torch.load(run / "checkpoint.pt", weights_only=False)["policy"]


class CrashAt(BaseCallback):
    """Raises once ``steps`` are done, like a crash would."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = steps

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.steps:
            raise RuntimeError("simulated crash")
        return True


class SignalAt(BaseCallback):
    """Sends this process SIGINT once ``steps`` are done; ``times`` signals, a step apart."""

    def __init__(self, steps: int, times: int = 1) -> None:
        super().__init__()
        self.steps, self.left = steps, times

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.steps and self.left:
            self.left -= 1
            os.kill(os.getpid(), signal.SIGINT)
        return True


def require_main_thread() -> None:
    """Signal handlers exist only in the main thread: elsewhere SIGINT would end the session."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers need the main thread")


def _csv_rows(path: Path, drop: tuple[str, ...] = ("elapsed", "fps")) -> list[dict[str, str]]:
    """The rows of a metrics CSV without its wall-clock columns."""
    with open(path, newline="") as f:
        return [{k: v for k, v in row.items() if k not in drop} for row in csv.DictReader(f)]


def _tensorboard_scalars(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar curve as TensorBoard draws it (across the folder's event files, purges
    applied), but for wall-clock ones."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(folder))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)]
            for tag in events.Tags()["scalars"] if not tag.startswith("time/")}


def _exact_config(workers: int | str = 1) -> Config:
    # One-hand episodes: many end within the run, so the episode metrics are not empty.
    data = game_config("roy", seed=5, env={"episode": "hand"})
    data["selfplay"]["workers"] = workers
    data["training"].update(total_timesteps=1536, checkpoint_every=512)
    data["evaluation"].update(every=512, final_games=0)
    return from_dict(data)


@pytest.fixture(scope="module")
def uninterrupted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cfg = _exact_config()
    run = tmp_path_factory.mktemp("full")
    save_config(cfg, run / "config.yaml")
    train(cfg, run, progress=False)
    return run


@pytest.mark.parametrize(
    ("interrupt", "checkpoint_step"),
    [
        # Stopped between checkpoints (512 and 1024): the work after 512 is lost and redone.
        (lambda: StopAfter(900), 512),
        # A crash during the first rollout: the step-0 checkpoint keeps the warm start.
        (lambda: CrashAt(1), 0),
        # SIGINT: a checkpoint at the next rollout boundary (768: none was due there) ...
        (lambda: SignalAt(600), 768),
        # ... and at 1024, where a snapshot and an evaluation are due: they follow on resume.
        (lambda: SignalAt(900), 1024),
    ],
    ids=["stop", "crash-at-step-0", "sigint", "sigint-at-snapshot"],
)
def test_resume_continues_exactly(interrupt, checkpoint_step: int, uninterrupted_run: Path,
                                  tmp_path: Path) -> None:
    """Interrupted and resumed, a run ends with the same weights and the same metrics rows as
    the uninterrupted run (but for wall-clock columns)."""
    callback = interrupt()
    if isinstance(callback, SignalAt):
        require_main_thread()
    cfg = _exact_config()
    run = tmp_path / "run"
    run.mkdir()
    save_config(cfg, run / "config.yaml")
    handler = signal.getsignal(signal.SIGINT)
    if isinstance(callback, CrashAt):
        with pytest.raises(RuntimeError, match="simulated crash"):
            train(cfg, run, progress=False, extra_callbacks=[callback])
    else:
        summary = train(cfg, run, progress=False, extra_callbacks=[callback])
        stopped_by = "SIGINT" if isinstance(callback, SignalAt) else None
        assert summary["stopped_by_signal"] == stopped_by
        if stopped_by:  # the run ends at its checkpoint, and its files say it is unfinished
            assert summary["num_timesteps"] == summary["checkpoint_step"] == checkpoint_step
            assert not (run / "final.zip").exists()  # Ctrl-C used to write one
            status = json.loads((run / "summary.json").read_text())["status"]
            assert status == (f"stopped at step {checkpoint_step} by SIGINT: unfinished, resume "
                              "it to go on (no final.zip)")
    assert signal.getsignal(signal.SIGINT) is handler  # train() put the handler back
    assert torch.load(run / "checkpoint.pt", weights_only=False)["num_timesteps"] == checkpoint_step
    train(cfg, run, resume=True, progress=False)
    a, b = _policy_params(uninterrupted_run), _policy_params(run)
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    assert _csv_rows(run / "progress.csv") == _csv_rows(uninterrupted_run / "progress.csv")
    assert _csv_rows(run / "eval.csv") == _csv_rows(uninterrupted_run / "eval.csv")
    assert _tensorboard_scalars(run / "tb") == _tensorboard_scalars(uninterrupted_run / "tb")


def test_a_bfloat16_run_repeats_resumes_exactly_and_saves_float32(
        uninterrupted_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    """``training.precision: bfloat16`` (the warm start's cloning and PPO's update): the same
    seed trains the same weights, a stopped run resumes to them exactly, they differ from the
    float32 run's (bfloat16 was used), and the saved policies are float32 as any other. On a
    CPU that would emulate bfloat16 the run goes on in float32, as a GPU run goes on without
    the GPU."""
    data = _exact_config().to_dict()
    data["training"]["precision"] = "bfloat16"
    # As on a CPU with native bfloat16: the hardware check (here and in train(), which checks
    # the config again) refuses bfloat16 where the CPU would emulate it, slower, not different;
    # what it computes is checked on any CPU.
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {"avx2": True, "amx_bf16": True})
    cfg = from_dict(data)
    runs = {name: tmp_path / name for name in ("whole", "stopped")}
    for name, run in runs.items():
        run.mkdir()
        save_config(cfg, run / "config.yaml")
        train(cfg, run, progress=False,
              extra_callbacks=[StopAfter(900)] if name == "stopped" else [])
    train(cfg, runs["stopped"], resume=True, progress=False)
    whole, resumed = _policy_params(runs["whole"]), _policy_params(runs["stopped"])
    assert all(torch.equal(whole[key], resumed[key]) for key in whole)
    in_float32 = _policy_params(uninterrupted_run)
    assert not all(torch.equal(whole[key], in_float32[key]) for key in whole)
    saved = MaskablePPO.load(runs["whole"] / "final.zip", device="cpu")
    assert {p.dtype for p in saved.policy.parameters()} == {torch.float32}
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {"avx2": True})
    with pytest.raises(SystemExit) as exit_info:
        train_main(["--resume", str(runs["whole"]), "--total-timesteps", "2048",
                    "--no-progress"])
    assert exit_info.value.code == 2
    assert "resumes with --set training.precision=float32" in capsys.readouterr().err
    summary = train_main(["--resume", str(runs["whole"]), "--total-timesteps", "2048",
                          "--set", "training.precision=float32", "--no-progress"])
    assert summary["num_timesteps"] >= 2048
    assert load_config(runs["whole"] / "config.yaml").training.precision == "float32"


def test_tensorboard_draws_each_evaluation_at_its_step(uninterrupted_run: Path) -> None:
    """Every evaluation of eval.csv, the closing one too, is a TensorBoard point at its own
    step (recorded through SB3's logger they were drawn a rollout late, the closing one
    never)."""
    rows = _csv_rows(uninterrupted_run / "eval.csv")
    curves = _tensorboard_scalars(uninterrupted_run / "tb")
    for opp in ("random", "heuristic"):
        points = curves[f"eval/win_rate_vs_{opp}"]
        assert [step for step, _ in points] == [int(r["step"]) for r in rows] == \
            [0, 512, 1024, 1536]
        for (_, value), row in zip(points, rows, strict=True):
            assert round(value, 4) == float(row[f"{opp}_win_rate"])


def test_the_step_0_checkpoint_comes_before_the_step_0_evaluation(tmp_path: Path,
                                                                   monkeypatch) -> None:
    """A kill during the first evaluation (a full one: 300 games a side in configs/roy.yaml)
    must not lose the warm start: the step-0 checkpoint is already on disk."""
    import training.train as train_module

    def crashing(*args, **kwargs):
        raise RuntimeError("killed during the step-0 evaluation")

    monkeypatch.setattr(train_module, "evaluate", crashing)
    data = game_config("roy", env={"episode": "hand"}, pretrain=NO_WARM_START)
    data["training"]["total_timesteps"] = 512
    with pytest.raises(RuntimeError, match="killed during the step-0 evaluation"):
        train(from_dict(data), tmp_path, progress=False)
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    assert state["num_timesteps"] == 0 and state["schedule"]["next_eval"] == 0


def test_summary_before_any_evaluation_is_strict_json(tmp_path: Path) -> None:
    """A run stopped before its first evaluation has no best score: null, not the -Infinity
    it starts from, which strict JSON readers (jq, JavaScript) refuse."""
    summary = run_summary(tmp_path, num_timesteps=0, checkpoint_step=0, elapsed=1.0,
                          stopped_by_signal="SIGINT", best_score=-float("inf"))
    assert json.loads(json.dumps(summary, allow_nan=False))["best_training_eval_score"] is None
    assert run_summary(tmp_path, num_timesteps=0, checkpoint_step=0, elapsed=1.0,
                       stopped_by_signal=None, best_score=1.25)["best_training_eval_score"] == 1.25


def test_snapshots_at_step_0_and_every_snapshot_every_steps(uninterrupted_run: Path) -> None:
    """The pool (progress.csv, per rollout of 256) gains the starting policy, then one at 512
    and 1024, the rollout boundaries at snapshot_every."""
    pools = [(int(r["step"]), int(r["pool"])) for r in _csv_rows(uninterrupted_run /
                                                                   "progress.csv")]
    assert pools == [(256, 1), (512, 1), (768, 2), (1024, 2), (1280, 3), (1536, 3)]


def test_best_zip_follows_the_sum_of_the_two_win_rates(tmp_path: Path, monkeypatch) -> None:
    """Evaluations summing 1.0, 0.7 and 1.2 (but 0.1, 0.5, 0.6 vs heuristic): 0 and 2 save."""
    from types import SimpleNamespace

    import training.train as train_module

    rates = iter([(0.9, 0.1), (0.2, 0.5), (0.6, 0.6)])

    def scripted(game: str, agents: list, **kwargs) -> dict:
        return {"chance": 0.5, "matches": [{"win_rate": rate, "ci95": [0.0, 1.0]}
                                           for rate in next(rates)]}

    saved: list[int] = []
    monkeypatch.setattr(train_module, "evaluate", scripted)
    monkeypatch.setattr(train_module, "save_model",
                        lambda model, path, identity: saved.append(callback.last_eval))
    venv = SelfPlayVecEnv("roy", {}, 2, {"random": 1.0}, seed=0)
    callback = train_module.SelfPlayCallback(from_dict(game_config("roy")), tmp_path, venv,
                                             progress=False)
    callback.model = SimpleNamespace(policy=None, logger=SimpleNamespace(record=lambda *a: None,
                                                                         output_formats=[]))
    for step in range(3):
        callback.evaluate(step)
    assert saved == [0, 2] and callback.best_score == pytest.approx(1.2)


def test_progress_fps_leaves_out_evaluations(tmp_path: Path, monkeypatch) -> None:
    """docs/training.md: progress.csv's fps counts rollouts and updates only. Every rollout
    boundary here runs an evaluation, and the step-0 checkpoint is written before and after
    the first, each taking 1.5 s, more than a 256-step rollout of this tiny policy: counting
    them would put every row below 256 / 1.5."""
    import training.train as train_module

    def slow(game: str, agents: list, **kwargs) -> dict:
        time.sleep(1.5)
        return {"chance": 0.5, "matches": [{"win_rate": 0.5, "ci95": [0.0, 1.0]}] * 2}

    checkpoint = train_module.SelfPlayCallback.checkpoint

    def slow_checkpoint(self, again: bool = False) -> None:
        if self.num_timesteps == 0:
            time.sleep(1.5)
        checkpoint(self, again)

    monkeypatch.setattr(train_module, "evaluate", slow)
    monkeypatch.setattr(train_module.SelfPlayCallback, "checkpoint", slow_checkpoint)
    data = game_config("roy", env={"episode": "hand"}, pretrain=NO_WARM_START)
    data["training"]["total_timesteps"] = 768
    data["evaluation"].update(every=256, final_games=0)
    train(from_dict(data), tmp_path, progress=False)
    fps = [int(row["fps"]) for row in _csv_rows(tmp_path / "progress.csv", drop=())]
    assert len(fps) == 3 and min(fps) > 256 / 1.5, fps


def _out_of_time_at_the_warm_start(monkeypatch, final_games: int) -> dict:
    """A config whose 1-minute limit a (faked) 60 s warm start uses up."""
    import training.train as train_module

    monkeypatch.setattr(train_module, "pretrain", lambda *a, **k: {
        "decisions": 0, "bc_accuracy": 0.0, "bc_val_accuracy": 0.0, "bc_best_epoch": 0,
        "seconds": 60.0, "teacher_seconds": 59.0, "clone_seconds": 1.0})
    data = game_config("roy", env={"episode": "hand"})
    data["training"]["time_limit_minutes"] = 1
    data["evaluation"]["final_games"] = final_games
    return data


def test_the_time_limit_counts_minutes_and_the_warm_start(tmp_path: Path, monkeypatch) -> None:
    """A 60 s warm start uses up a 1-minute limit: the run stops at step 0, checkpoint kept."""
    data = _out_of_time_at_the_warm_start(monkeypatch, final_games=0)
    summary = train(from_dict(data), tmp_path, progress=False)
    assert summary["stopped_by_time_limit"] and summary["checkpoint_step"] == 0
    assert summary["num_timesteps"] < 1024


def test_resuming_a_run_out_of_time_says_so_and_touches_nothing(tmp_path: Path, monkeypatch,
                                                              capsys) -> None:
    """A run stopped by its time limit, resumed under the same limit, trained nothing and
    played its closing evaluation again, rewriting evaluation.json and summary.json."""
    data = _out_of_time_at_the_warm_start(monkeypatch, final_games=4)
    run = tmp_path / "runs" / "roy" / "late"
    summary = train(from_dict(data), run, progress=False)
    assert summary["stopped_by_time_limit"] and summary["num_timesteps"] == 0
    capsys.readouterr()
    before = _files(run)
    assert train_main(["--resume", str(run), "--no-progress"]) == summary
    assert capsys.readouterr().out == (
        f"{run}: the run is already complete at 0 steps: it used up its time limit "
        f"(training.time_limit_minutes 1) before training.total_timesteps 1024; to train it "
        f"further, give it more time, e.g.: python -m training.train --resume {run} "
        f"--time-limit-minutes 2\n")
    assert train(from_dict(data), run, resume=True, progress=False) == summary
    assert _files(run) == before
    data["training"]["time_limit_minutes"] = 2  # a raised limit leaves time to train
    assert completed_summary(run, from_dict(data)) is None


def test_a_second_signal_aborts_and_handlers_are_restored(tmp_path: Path) -> None:
    require_main_thread()
    cfg = from_dict(game_config("roy", training={"total_timesteps": 4096}))
    # The second signal goes to the handler from before train(): Python's own here, whatever
    # this worker process had (one CI run's xdist worker had another, and nothing was raised).
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        with pytest.raises(KeyboardInterrupt):
            train(cfg, tmp_path, progress=False, extra_callbacks=[SignalAt(100, times=2)])
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    finally:
        signal.signal(signal.SIGINT, inherited)
    # The warm start was saved when learning began.
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=False)["num_timesteps"] == 0


def test_stop_on_signal_takes_its_handler_back_from_a_library() -> None:
    """ray.init sets its own SIGTERM handler (sys.exit) inside the RLlib trainer's StopOnSignal:
    reclaim() puts ours back, and the handlers restored on exit are still those from before."""
    require_main_thread()
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

    def library_handler(signum: int, frame: object) -> None:
        raise SystemExit(signum)

    with StopOnSignal() as stop_request:
        signal.signal(signal.SIGTERM, library_handler)
        stop_request.reclaim()
        os.kill(os.getpid(), signal.SIGTERM)  # handled before the next line runs
        assert stop_request.requested() and stop_request.name == "SIGTERM"
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_stop_on_signal_keeps_its_handler_while_a_library_would_set_its_own() -> None:
    """ray.init sets Ray's SIGTERM handler (sys.exit) first thing, through a function of its
    own, and a SIGTERM while it runs ended the RLlib trainer with status 15 and no summary:
    inside keeping(), that function does nothing and the signal reaches ours."""
    require_main_thread()

    def library_handler(signum: int, frame: object) -> None:
        raise SystemExit(signum)

    def set_sigterm_handler(handler: Any) -> None:
        signal.signal(signal.SIGTERM, handler)

    library = types.SimpleNamespace(set_sigterm_handler=set_sigterm_handler)
    before = signal.getsignal(signal.SIGTERM)
    with StopOnSignal("rllib") as stop_request:
        with stop_request.keeping(library, "set_sigterm_handler"):
            library.set_sigterm_handler(library_handler)  # what ray.init does
            os.kill(os.getpid(), signal.SIGTERM)  # handled before the next line runs
            assert stop_request.name == "SIGTERM"
        assert library.set_sigterm_handler is set_sigterm_handler
        with stop_request.keeping(library, "no_such_function"):  # another version: no-op
            pass
    assert signal.getsignal(signal.SIGTERM) == before


@pytest.mark.parametrize("backend, says", [
    ("sb3", "stops at the next rollout boundary, after a checkpoint (a warm start in progress "
            "stops at once, unsaved)"),
    ("rllib", "stops at the next iteration boundary, after a checkpoint (a warm start in "
              "progress finishes first)")])
def test_the_stop_message_says_what_each_backend_does(backend: str, says: str, capfd) -> None:
    """The RLlib trainer does not stop its warm start (it finishes, then the step-0
    checkpoint is written: tests/libraries/test_rllib_train.py); the message must say so."""
    require_main_thread()
    with StopOnSignal(backend) as stop_request:
        os.kill(os.getpid(), signal.SIGTERM)  # handled before the next line runs
        assert stop_request.name == "SIGTERM"
    assert f"SIGTERM: the run {says}; send it again to abort now" in capfd.readouterr().err


def test_a_signal_after_the_training_leaves_only_the_closing_evaluation(tmp_path: Path) -> None:
    summary = run_summary(tmp_path, num_timesteps=2048, checkpoint_step=2048, elapsed=1.0,
                          stopped_by_signal="SIGTERM")
    assert summary["status"] == ("finished at step 2048; its closing evaluation skipped "
                                 "(SIGTERM): resume it to run it")
    assert run_summary(tmp_path, num_timesteps=2048, checkpoint_step=2048, elapsed=1.0,
                       stopped_by_signal=None)["status"] == "finished at step 2048"


def _signal_on_call(monkeypatch: pytest.MonkeyPatch, module: object, name: str,
                    at_call: int) -> list[int]:
    """Wraps ``module.name`` to send this process SIGINT on its ``at_call``-th call; returns
    the call counter."""
    calls = [0]
    original = getattr(module, name)

    def wrapped(*args, **kwargs):
        calls[0] += 1
        if calls[0] == at_call:
            os.kill(os.getpid(), signal.SIGINT)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)
    return calls


@pytest.mark.parametrize("phase", ["collecting", "cloning"])
def test_a_signal_during_the_warm_start_stops_it_at_once(phase: str, tmp_path: Path, capsys,
                                                         monkeypatch) -> None:
    """The warm start can take minutes: a signal stops it at the next lockstep decision or
    minibatch, not when it ends. There is no checkpoint before it, so nothing is saved and
    the CLI says how to start over."""
    require_main_thread()
    import training.pretrain as pretrain_module

    if phase == "collecting":
        # 40 games in lockstep: one step past the signal is at most 40 more decisions.
        calls = _signal_on_call(monkeypatch, pretrain_module._Game, "record", 10)
        limit = 10 + 40
    else:
        calls = _signal_on_call(monkeypatch, pretrain_module, "_evaluate", 1)
        limit = 1
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(yaml12.dump(game_config(
        "roy", pretrain={"games": 40, "epochs": 20, "batch_size": 8, "max_decisions": 10_000})))
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as exit_info:
        train_main(["--config", str(cfg_path), "--runs-dir", str(tmp_path / "runs"),
                    "--run-name", "w", "--no-progress"])
    assert exit_info.value.code == 128 + signal.SIGINT
    assert calls[0] <= limit
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
    run = tmp_path / "runs" / "roy" / "w"
    assert not (run / "checkpoint.pt").exists() and not list(run.glob("*.zip"))
    out = capsys.readouterr().out
    assert "stopped by SIGINT during the warm start, before the first checkpoint" in out
    assert "start it again: python -m training.train --config" in out and "--run-name w" in out


def test_resume_after_sigkill(tmp_path: Path) -> None:
    data = game_config("roy", seed=7)
    data["training"].update(total_timesteps=200_000, checkpoint_every=256)
    data["evaluation"].update(every=10_000, final_games=0)
    cfg_path = tmp_path / "cfg.yaml"
    cfg_path.write_text(yaml12.dump(data))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "training.train", "--config", str(cfg_path), "--runs-dir",
         str(tmp_path / "runs"), "--run-name", "k", "--no-progress"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    run = tmp_path / "runs" / "roy" / "k"
    deadline = time.time() + 120
    try:
        while time.time() < deadline:
            if (run / "checkpoint.pt").exists():
                step = torch.load(run / "checkpoint.pt", weights_only=False)["num_timesteps"]
                if step >= 512:
                    break
            time.sleep(0.2)
        else:
            pytest.fail("no checkpoint within 120 s: " + proc.stderr.read1().decode())
        os.kill(proc.pid, signal.SIGKILL)  # mid-training, possibly mid-write
    finally:
        proc.kill()
        proc.wait()
    # The checkpoint on disk is whole; no temporary file is left pretending to be one.
    cfg = load_config(run / "config.yaml")
    state = load_checkpoint(run / "checkpoint.pt", cfg.to_dict())
    before = state["num_timesteps"]
    summary = train_main(["--resume", str(run), "--total-timesteps", str(before + 512),
                          "--no-progress"])
    assert summary["num_timesteps"] >= before + 512
    progress = (run / "progress.csv").read_text().splitlines()[1:]
    steps = [int(r.split(",")[0]) for r in progress]
    assert steps == sorted(steps) and len(steps) == len(set(steps))


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder``: its bytes and modification time (but the run lock's file,
    which every process that takes the lock writes its identity into)."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != LOCK_NAME}


@pytest.mark.parametrize("final_games", [4, 0])
def test_resuming_a_complete_run_says_so_and_touches_nothing(final_games: int, tmp_path: Path,
                                                             capsys) -> None:
    """It used to evaluate the run again and rewrite final.zip, evaluation.json and
    summary.json, without a word. Killed during its closing evaluation, a run still gets it."""
    data = game_config("roy")
    data["training"].update(total_timesteps=512, checkpoint_every=512)
    data["evaluation"].update(every=512, final_games=final_games)
    run = tmp_path / "runs" / "roy" / "done"
    run.mkdir(parents=True)
    cfg = from_dict(data)
    save_config(cfg, run / "config.yaml")
    summary = train(cfg, run, progress=False)
    assert summary["num_timesteps"] == 512
    assert (run / "evaluation.json").exists() == bool(final_games)
    capsys.readouterr()
    before = _files(run)
    for flags in ([], ["--total-timesteps", "512"], ["--time-limit-minutes", "3"]):
        assert train_main(["--resume", str(run), "--no-progress", *flags]) == summary
        assert _files(run) == before, flags
        out = capsys.readouterr().out
        assert out == (f"{run}: the run is already complete at 512 steps "
                       f"(training.total_timesteps 512); to train it further, give more steps, "
                       f"e.g.: python -m training.train --resume {run} --total-timesteps "
                       f"1024\n")
    # From Python too (it used to evaluate again: only the command line checked).
    assert train(cfg, run, resume=True, progress=False) == summary
    assert _files(run) == before
    if not final_games:
        return
    # Killed during the closing evaluation: nothing after it was written. Resumed, the run is
    # evaluated (and trained no further); then it is complete.
    for name in ("evaluation.json", "evaluation.png", "summary.json"):
        (run / name).unlink()
    resumed = train_main(["--resume", str(run), "--no-progress"])
    assert "already complete" not in capsys.readouterr().out
    assert resumed["num_timesteps"] == 512
    assert resumed["evaluation"] == summary["evaluation"]
    assert json.loads((run / "summary.json").read_text())["evaluation"] == summary["evaluation"]
    after = _files(run)
    assert after["checkpoint.pt"] == before["checkpoint.pt"]  # not even rewritten
    for name in ("progress.csv", "eval.csv", "best.zip", "latest.zip"):
        assert after[name][0] == before[name][0], name
    assert (run / "evaluation.json").exists()
    train_main(["--resume", str(run), "--no-progress"])
    assert "already complete at 512 steps" in capsys.readouterr().out
    # A changed evaluation.final_games (config.yaml edited) is not complete yet: it evaluates.
    assert completed_summary(run, load_config(run / "config.yaml")) is not None
    data["evaluation"]["final_games"] = 6
    assert completed_summary(run, from_dict(data)) is None


def test_corrupt_or_mismatched_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    cfg = from_dict(game_config("roy"))
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(b"\x80\x02 not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt or unreadable"):
        load_checkpoint(path, cfg.to_dict())
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "none.pt", cfg.to_dict())
    torch.save({"format": 1, "config": cfg.to_dict()}, path)
    other = copy.deepcopy(cfg.to_dict())
    other["ppo"]["n_steps"] = 64
    with pytest.raises(CheckpointError, match=r"ppo.n_steps: checkpoint 32, now 64"):
        load_checkpoint(path, other)
    torch.save({"weights": 1}, path)
    with pytest.raises(CheckpointError, match="not a card-envs training checkpoint"):
        load_checkpoint(path, cfg.to_dict())


def test_a_run_from_a_cuda_machine_resumes_on_the_cpu(tmp_path: Path) -> None:
    """A CUDA training.device is an error where CUDA is not available, so the device must be
    changeable on resume, or such a run could not go on there at all."""
    cfg = from_dict(game_config("roy")).to_dict()
    gpu = copy.deepcopy(cfg)
    gpu["training"]["device"] = "cuda"
    path = tmp_path / "checkpoint.pt"
    torch.save({"format": 1, "config": gpu}, path)
    assert load_checkpoint(path, cfg)["config"]["training"]["device"] == "cuda"


def test_a_config_key_only_one_side_has_is_a_difference(tmp_path: Path) -> None:
    """A key the checkpoint's config lacks, or only it has, is a config change too."""
    cfg = from_dict(game_config("roy")).to_dict()
    old = copy.deepcopy(cfg)
    del old["env"]["memory"]
    path = tmp_path / "checkpoint.pt"
    torch.save({"format": 1, "config": old}, path)
    with pytest.raises(CheckpointError, match=r"env.memory is new"):
        load_checkpoint(path, cfg)
    torch.save({"format": 1, "config": cfg}, path)
    with pytest.raises(CheckpointError, match=r"env.memory is missing"):
        load_checkpoint(path, old)


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    atomic_write(path, lambda tmp: tmp.write_bytes(b"old"))

    def broken(tmp: Path) -> None:
        tmp.write_bytes(b"half")
        raise OSError("disk full")

    with pytest.raises(RunWriteError, match=f"could not write {path}: disk full"):
        atomic_write(path, broken)
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


@pytest.fixture
def fake_train(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Config, Path, bool]]:
    """Replaces train() behind the CLI; records (config, run directory, resume) per call."""
    import training.train as train_module

    calls: list[tuple[Config, Path, bool]] = []

    def fake(cfg: Config, run_dir: Path, resume: bool = False, progress: bool = True,
             **kwargs: object) -> dict:
        calls.append((cfg, run_dir, resume))
        return {"num_timesteps": 0, "elapsed_seconds": 0.0, "stopped_by_time_limit": False,
                "stopped_by_signal": None}

    monkeypatch.setattr(train_module, "train_locked", fake)
    return calls


def _cli_error(capsys: pytest.CaptureFixture, argv: list[str]) -> str:
    """Run the training CLI expecting a usage error: exit code 2 and one line, no traceback."""
    with pytest.raises(SystemExit) as exit_info:
        train_main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_new_run_refuses_to_overwrite(tmp_path: Path, capsys, fake_train) -> None:
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(yaml12.dump(game_config("roy")))
    runs = tmp_path / "runs"
    (runs / "roy" / "x").mkdir(parents=True)
    (runs / "roy" / "x" / "config.yaml").write_text("")
    (runs / "roy" / "x" / "checkpoint.pt").write_bytes(b"")
    err = _cli_error(capsys, ["--config", str(cfg_path), "--runs-dir", str(runs), "--run-name",
                              "x"])
    assert "--resume" in err
    (runs / "roy" / "y").mkdir()
    (runs / "roy" / "y" / "notes.txt").write_text("mine")
    err = _cli_error(capsys, ["--config", str(cfg_path), "--runs-dir", str(runs), "--run-name",
                              "y"])
    assert "not a run directory" in err
    assert not fake_train and (runs / "roy" / "y" / "notes.txt").exists()


def test_a_run_directory_without_a_checkpoint_is_started_again(tmp_path: Path, capsys,
                                                                fake_train) -> None:
    """A run killed before its first checkpoint: --resume says how to start it again, and that
    command reuses the directory (it used to say the directory exists)."""
    run = tmp_path / "runs" / "roy" / "x"
    run.mkdir(parents=True)
    save_config(from_dict(game_config("roy")), run / "config.yaml")
    (run / "progress.csv").write_text("step\n512\n")
    (run / "tb").mkdir()
    (run / "tb" / "events.old").write_text("")
    err = _cli_error(capsys, ["--resume", str(run)])
    assert "holds no checkpoint" in err
    command = shlex.split(err.split("start it again: ")[1])
    assert command[:3] == ["python", "-m", "training.train"]
    train_main([*command[3:], "--no-progress"])
    assert ("holds no checkpoint (its run stopped before the first one): starting it again "
            "(replacing its config.yaml, progress.csv, tb)") in capsys.readouterr().out
    assert [(c.game, r, resumed) for c, r, resumed in fake_train] == [("roy", run, False)]
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml", "run.lock"]


def test_a_run_directory_with_policies_but_no_checkpoint_is_not_emptied(tmp_path: Path, capsys,
                                                                        fake_train) -> None:
    run = tmp_path / "runs" / "roy" / "old"
    run.mkdir(parents=True)
    save_config(from_dict(game_config("roy")), run / "config.yaml")
    (run / "best.zip").write_bytes(b"a policy from before step-0 checkpoints")
    err = _cli_error(capsys, ["--config", str(run / "config.yaml"), "--runs-dir",
                              str(tmp_path / "runs"), "--run-name", "old"])
    assert "saved policies (best.zip)" in err
    assert not fake_train and (run / "best.zip").exists()


@pytest.mark.parametrize(
    ("patch", "flags", "message"),
    [
        ({"ppo": {"batch_size": 0}}, [], r"ppo.batch_size: expected an integer >= 1"),
        ({"ppo": [1, 2]}, [], r"ppo: expected a mapping"),
        ({"seed": -1}, [], r"seed: expected an integer in 0\.\."),
        ({}, ["--seed", "-1"], r"with seed=-1: seed: expected an integer in 0\.\."),
        ({}, ["--total-timesteps", "-5"], r"training.total_timesteps: expected an integer >= 1, "
         r"got -5"),
        ({}, ["--time-limit-minutes", "0"], r"training.time_limit_minutes: expected a number"),
        ({"training": {"init_from": "/nowhere/p.zip"}}, [], r"training.init_from: no saved"),
    ],
)
def test_a_bad_config_or_flag_leaves_no_run_directory(tmp_path: Path, capsys, fake_train,
                                                      patch: dict, flags: list[str],
                                                      message: str) -> None:
    data = game_config("roy")
    for key, value in patch.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(yaml12.dump(data))
    err = _cli_error(capsys, ["--config", str(cfg_path), "--runs-dir", str(tmp_path / "runs"),
                              *flags])
    assert re.search(message, err), err
    assert not (tmp_path / "runs").exists() and not fake_train


def test_length_flags_apply_to_a_new_run(tmp_path: Path, fake_train) -> None:
    """--total-timesteps and --time-limit-minutes used to be ignored with --config."""
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(yaml12.dump(game_config("roy")))
    train_main(["--config", str(cfg_path), "--runs-dir", str(tmp_path / "runs"), "--run-name",
                "r", "--total-timesteps", "2048", "--time-limit-minutes", "0.5"])
    ((cfg, run, _),) = fake_train
    assert (cfg.training.total_timesteps, cfg.training.time_limit_minutes) == (2048, 0.5)
    saved = load_config(run / "config.yaml").training
    assert (saved.total_timesteps, saved.time_limit_minutes) == (2048, 0.5)


def test_resume_flags_are_validated_before_saving_and_can_repair_a_config(
        tmp_path: Path, capsys, fake_train) -> None:
    run = tmp_path / "runs" / "roy" / "r"
    run.mkdir(parents=True)
    save_config(from_dict(game_config("roy")), run / "config.yaml")
    (run / "checkpoint.pt").write_bytes(b"")  # (train() is faked: never read)
    before = (run / "config.yaml").read_text()
    for flags in (["--total-timesteps", "-5"], ["--time-limit-minutes", "-1"]):
        err = _cli_error(capsys, ["--resume", str(run), *flags])
        assert "training." in err
        assert (run / "config.yaml").read_text() == before
    # A config.yaml the old code saved with a bad length: an error naming it, and the flag
    # that overrides it repairs the run.
    data = yaml12.load(before)
    data["training"]["total_timesteps"] = -5
    (run / "config.yaml").write_text(yaml12.dump(data))
    assert "training.total_timesteps: expected an integer >= 1" in _cli_error(
        capsys, ["--resume", str(run)])
    train_main(["--resume", str(run), "--total-timesteps", "4000"])
    assert [(c.training.total_timesteps, resumed) for c, _, resumed in fake_train] == [(4000,
                                                                                         True)]
    # train() saves it once the checkpoint loads (the smoke test checks that part).


def test_a_run_stopped_by_a_signal_exits_with_its_code(tmp_path: Path, capsys,
                                                       monkeypatch) -> None:
    import training.train as train_module

    def stopped(cfg, run_dir, resume=False, progress=True, **kwargs):
        return {"num_timesteps": 264, "checkpoint_step": 256, "elapsed_seconds": 1.0,
                "stopped_by_time_limit": False, "stopped_by_signal": "SIGTERM"}

    monkeypatch.setattr(train_module, "train_locked", stopped)
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(yaml12.dump(game_config("roy")))
    with pytest.raises(SystemExit) as exit_info:
        train_main(["--config", str(cfg_path), "--runs-dir", str(tmp_path / "runs"),
                    "--run-name", "s"])
    assert exit_info.value.code == 128 + signal.SIGTERM
    out = capsys.readouterr().out
    assert "stopped by SIGTERM after a checkpoint at step 256" in out
    assert f"--resume {tmp_path / 'runs' / 'roy' / 's'}" in out


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_validates(path: Path) -> None:
    game = yaml12.load(path.read_text())["game"]
    assert game in GAMES, f"{path.name} names {game!r}, not one of {sorted(GAMES)}"
    load_config(path)


def test_init_from_a_policy_that_does_not_fit_is_a_clear_error(tmp_path: Path, capsys) -> None:
    from sb3_contrib import MaskablePPO

    env = SelfPlayVecEnv("roy", {}, 2, {"random": 1.0}, seed=0)
    MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16,
                policy_kwargs={"net_arch": [16]}).save(tmp_path / "small.zip")
    data = game_config("roy")
    data["training"]["init_from"] = str(tmp_path / "small.zip")
    cfg = from_dict(data)
    with pytest.raises(ConfigError, match="training.init_from: .* does not fit"):
        train(cfg, tmp_path, progress=False)
    # From the command line: checked before the run directory is created.
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(yaml12.dump(data))
    err = _cli_error(capsys, ["--config", str(cfg_path), "--runs-dir", str(tmp_path / "runs")])
    assert "training.init_from:" in err and "does not fit" in err
    assert not (tmp_path / "runs").exists()


def test_train_from_python_checks_its_config_writes_it_and_keeps_other_runs(
        tmp_path: Path) -> None:
    """From Python: a str run directory, a Config built directly (it used to train with SB3's
    ppo defaults, not the documented ones) or changed after loading (unchecked), config.yaml
    (it was not written: --resume and training.evaluate need it), and a second fresh run in
    the same directory (it overwrote the first's checkpoint)."""
    cfg = Config(game="roy", env={"episode": "hand"}, selfplay=SelfPlayConfig(n_envs=8),
                 training=TrainingConfig(total_timesteps=1024),
                 evaluation=EvaluationConfig(every=1024, games=2, final_games=0))
    run = str(tmp_path / "runs" / "a")
    train(cfg, run, progress=False)
    assert MaskablePPO.load(Path(run) / "final.zip").n_steps == 128  # SB3's own is 2048
    assert load_config(Path(run) / "config.yaml") == from_dict(cfg.to_dict())
    checkpoint = (Path(run) / "checkpoint.pt").read_bytes()
    with pytest.raises(FileExistsError, match="holds a run; continue it with resume=True"):
        train(cfg, run, progress=False)
    assert (Path(run) / "checkpoint.pt").read_bytes() == checkpoint
    cfg.selfplay.n_envs = 0
    with pytest.raises(ConfigError, match="selfplay.n_envs: expected an integer >= 1, got 0"):
        train(cfg, tmp_path / "b", progress=False)
    assert not (tmp_path / "b").exists()


def test_cloning_values_are_the_reward_to_come_as_self_play_pays_it() -> None:
    from training.pretrain import collect

    # One ROY hand with score rewards: only the hand's end pays, so every decision of a seat
    # has the same reward to come, and under zero_sum the two seats' are opposite.
    data = collect("roy", {"reward": "score"}, games=1, max_decisions=100_000, seed=0,
                   reward="zero_sum", reward_scale=0.01)
    values = sorted(set(np.round(data.returns, 5).tolist()))
    assert len(values) == 2 and values[0] == -values[1] != 0
    # Full games: a won hand's points count only for the decisions before it.
    data = collect("roy", {"reward": "score", "episode": "game", "target_score": 30}, games=1,
                   max_decisions=100_000, seed=0)
    assert (data.returns >= 0).all()
    assert len(set(data.returns.tolist())) > 2


def test_seed_flag_overrides_the_config_seed_of_a_new_run(tmp_path: Path, monkeypatch) -> None:
    import training.train as train_module

    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(yaml12.dump(game_config("roy")))
    seen = {}

    def fake_train(cfg, run_dir, resume=False, progress=True, **kwargs):
        seen["seed"] = cfg.seed
        return {"num_timesteps": 0, "elapsed_seconds": 0.0, "stopped_by_time_limit": False}

    monkeypatch.setattr(train_module, "train_locked", fake_train)
    train_main(["--config", str(cfg_path), "--seed", "7", "--runs-dir", str(tmp_path / "runs"),
                "--run-name", "s7", "--no-progress"])
    assert seen["seed"] == 7
    assert load_config(tmp_path / "runs" / "roy" / "s7" / "config.yaml").seed == 7
    with pytest.raises(SystemExit):
        train_main(["--resume", str(tmp_path / "runs" / "roy" / "s7"), "--seed", "3"])

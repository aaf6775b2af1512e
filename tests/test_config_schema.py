"""The config schema: the committed JSON Schema is the models' own, the shipped configs pass it
(checked by a real JSON-Schema validator, as an editor would), and the models cover exactly
what MaskablePPO and its policy take."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from training import yaml12
from training.config import (
    POLICY_CLASS_KEYS,
    PPO_DEFAULTS,
    Config,
    ConfigError,
    PolicyKwargs,
    PPOSettings,
    SelfPlayConfig,
    config_schema,
    from_dict,
    load_config,
    schema_text,
)

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "configs" / "config.schema.json"
SHIPPED = sorted((ROOT / "configs").glob("*.yaml"))


def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    Draft202012Validator.check_schema(schema)  # the file is a valid 2020-12 schema itself
    return Draft202012Validator(schema)


def test_the_committed_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text() == schema_text(), (
        "configs/config.schema.json is stale: regenerate it with "
        "`python -m training.config > configs/config.schema.json`")


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_config_passes_the_schema_and_names_it(path: Path) -> None:
    text = path.read_text()
    assert text.splitlines()[0] == "# yaml-language-server: $schema=config.schema.json"
    errors = [e.message for e in validator().iter_errors(yaml12.load(text))]
    assert errors == []


@pytest.mark.parametrize(
    ("data", "refused"),
    [
        ({"game": "roy", "ppo": {"n_step": 64}}, "'n_step' was unexpected"),
        ({"game": "roy", "ppo": {"gamma": 1.5}}, "1.5 is greater than the maximum of 1"),
        ({"game": "roy", "selfplay": {"n_envs": True}}, "True is not of type 'integer'"),
        ({"game": "roy", "selfplay": {"opponents": {"heuristc": 1}}}, "'heuristc' is not one"),
        ({"game": "roy", "training": {"device": "gpu"}}, "'gpu' does not match"),
        ({"game": "ryo"}, "'ryo' is not one of"),
        # Each game's own options: sniff is Dogpile's, not ROY's; ROY takes 2 to 4 players.
        ({"game": "roy", "env": {"sniff": "required"}}, "'sniff' was unexpected"),
        ({"game": "roy", "env": {"num_players": 9}}, "9 is not one of [2, 3, 4]"),
        ({"seed": 1}, "'game' is a required property"),
    ],
)
def test_the_schema_refuses_what_the_loader_refuses(data: dict[str, Any], refused: str) -> None:
    messages = [e.message for e in validator().iter_errors(data)]
    assert any(refused in m for m in messages), messages
    with pytest.raises(ConfigError):
        from_dict(data)


def test_the_schema_takes_each_game_s_own_options() -> None:
    from card_envs.games import GAMES

    for name, game in GAMES.items():
        options = {k: o.default for k, o in game.engine_class().options().items()}
        assert list(validator().iter_errors({"game": name, "env": options})) == []
    assert "sniff" in GAMES["dogpile"].engine_class().options()


def test_ppo_settings_are_maskable_ppo_s_arguments() -> None:
    """A MaskablePPO release that adds an argument fails here (the schema would refuse it),
    and a key left out gets MaskablePPO's own default unless PPO_DEFAULTS says otherwise."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    params = inspect.signature(MaskablePPO.__init__).parameters
    trainer_sets = {"self", "policy", "env", "seed", "device", "verbose", "tensorboard_log",
                    "_init_setup_model"}
    assert set(PPOSettings.model_fields) == set(params) - trainer_sets
    for name, field in PPOSettings.model_fields.items():
        if name not in PPO_DEFAULTS:
            assert field.default == params[name].default, name
    policy = set(inspect.signature(MaskableActorCriticPolicy.__init__).parameters) - {
        "self", "observation_space", "action_space", "lr_schedule"}
    extractor = {k for k in policy if k.startswith("features_extractor")}
    assert set(PolicyKwargs.model_fields) == policy - extractor - set(POLICY_CLASS_KEYS)


def test_selfplay_choices_are_the_vecenv_s() -> None:
    from training.selfplay import OPPONENT_KINDS, REWARD_MODES

    schema = SelfPlayConfig.model_json_schema()["properties"]
    assert tuple(schema["reward"]["enum"]) == REWARD_MODES
    assert tuple(schema["opponents"]["propertyNames"]["enum"]) == OPPONENT_KINDS


@pytest.mark.parametrize(
    ("section", "value", "message"),
    [
        # No silent coercion: YAML's true, a quoted number, a float where a count goes.
        ({"selfplay": {"pool_size": True}}, None, r"selfplay.pool_size: expected an integer >= 1, "
         r"got True"),
        ({"evaluation": {"parallel": "16"}}, None, r"evaluation.parallel: expected an integer "
         r">= 1, got '16'"),
        ({"training": {"total_timesteps": 1000.0}}, None, r"training.total_timesteps: expected "
         r"an integer >= 1, got 1000.0"),
        ({"training": {"keep_policies": 1}}, None, r"training.keep_policies: expected true or "
         r"false, got 1"),
        ({"training": {"device": 0}}, None, r"training.device: expected 'auto', 'cpu'"),
        ({"training": {"init_from": ""}}, None, r"training.init_from: expected null or a "
         r"non-empty string, got ''"),
        ({"selfplay": {"learner_seat": "first"}}, None, r"selfplay.learner_seat: expected an "
         r"integer >= 0 or 'random', got 'first'"),
        ({"selfplay": {"opponents": [1]}}, None, r"selfplay.opponents: expected a mapping"),
        ({"ppo": {"rollout_buffer_class": "RolloutBuffer"}}, None, r"ppo.rollout_buffer_class: "
         r"expected null, got 'RolloutBuffer'"),
        ({"ppo": {"policy_kwargs": {"net_arch": [64, 0]}}}, None,
         r"ppo.policy_kwargs.net_arch: expected a list of layer widths .* got \[64, 0\]"),
        ({"ppo": {"policy_kwargs": {"net_arch": {"pi": [8], "qf": [8]}}}}, None,
         r"ppo.policy_kwargs.net_arch: expected .*got \{'pi': \[8\], 'qf': \[8\]\}"),
        ({"seed": 2**32}, None, r"^seed: expected an integer in 0\.\.4294967295, got 4294967296$"),
        ({"game": None}, None, r"^game: expected one of 'roy', .*got None$"),
    ],
)
def test_types_are_strict_and_errors_name_path_value_and_what_is_allowed(
        section: dict[str, Any], value: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_dict({"game": "roy", **section})


def test_an_int_passes_as_a_float_and_becomes_one() -> None:
    cfg = from_dict({"game": "roy", "selfplay": {"latest_prob": 1, "reward_scale": 2},
                     "ppo": {"learning_rate": 1}})
    assert (cfg.selfplay.latest_prob, cfg.selfplay.reward_scale) == (1.0, 2.0)
    assert type(cfg.selfplay.latest_prob) is float and type(cfg.ppo["learning_rate"]) is float


def test_every_problem_is_named_at_once_and_once_each() -> None:
    """pydantic reports a value outside a union once per member (learner_seat is an integer
    or 'random'): one problem, one line."""
    with pytest.raises(ConfigError) as info:
        from_dict({"game": "roy", "ppo": {"gamma": 2, "n_stepz": 4},
                   "selfplay": {"pool_size": 0, "learner_seat": "first"}})
    problems = str(info.value).splitlines()
    assert [p.split(":")[0] for p in problems] == [
        "ppo.gamma", "ppo.n_stepz", "selfplay.learner_seat", "selfplay.pool_size"]


def test_empty_sections_take_their_defaults_and_a_config_round_trips() -> None:
    cfg = from_dict({"game": "roy", "selfplay": None, "env": None, "ppo": None})
    assert cfg == from_dict({"game": "roy"}) == from_dict(cfg.to_dict())
    assert cfg.to_dict()["ppo"] == PPO_DEFAULTS
    assert Config(game="roy").to_dict() == cfg.to_dict()  # built directly: the same defaults


def test_the_schema_describes_every_key_and_default() -> None:
    """Editors show the descriptions; the defaults are the ones a run uses."""
    schema = config_schema()
    defaults = from_dict({"game": "roy"}).to_dict()
    for name in ("selfplay", "training", "evaluation", "pretrain"):
        section = schema["$defs"][schema["properties"][name]["$ref"].rsplit("/", 1)[1]]
        for key, prop in section["properties"].items():
            assert prop.get("description"), f"{name}.{key}"
            assert prop["default"] == defaults[name][key], f"{name}.{key}"
    ppo = schema["$defs"]["PPOSettings"]["properties"]
    for key, value in PPO_DEFAULTS.items():
        if key != "policy_kwargs":
            assert ppo[key]["default"] == value, key


@pytest.mark.parametrize(
    ("section", "message"),
    [
        # A key that is no text (YAML's 1:, null:, true:) is an unknown key where it stands, as
        # before the schema moved to pydantic: pydantic said the section was no mapping, and
        # crashed on optimizer_kwargs (KeyError: 'propertyNames').
        ({1: 2}, r"^1: unknown key; allowed: backend, env, evaluation, features, game, ppo, "),
        ({"selfplay": {None: 1}}, r"^selfplay\.None: unknown key; allowed: latest_prob, "),
        ({"training": {True: 1, "total_timesteps": 0}}, r"training\.total_timesteps: expected "
         r"an integer >= 1, got 0\ntraining\.True: unknown key; allowed: checkpoint_every"),
        ({"ppo": {"policy_kwargs": {1: 2}}}, r"^ppo\.policy_kwargs\.1: unknown key; allowed: "
         r"net_arch, "),
        ({"ppo": {"policy_kwargs": {"optimizer_kwargs": {1: 2}}}},
         r"^ppo\.policy_kwargs\.optimizer_kwargs\.1: unknown key; allowed: amsgrad, betas, "),
    ],
)
def test_a_key_that_is_no_name_is_an_unknown_key(section: dict[Any, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_dict({"game": "roy", **section})


@pytest.mark.parametrize(
    ("dotted", "value", "message"),
    [
        ("seed.x", 3, r"with seed\.x=3: seed: expected a mapping to set seed\.x in, got 0$"),
        ("ppo.policy_kwargs.net_arch.pi", [64], r": ppo\.policy_kwargs\.net_arch: expected a "
         r"mapping to set ppo\.policy_kwargs\.net_arch\.pi in, got \[128, 128\]$"),
    ],
)
def test_an_override_inside_a_value_that_is_no_section_is_an_error(
        dotted: str, value: Any, message: str, tmp_path: Path) -> None:
    """``--set seed.x=3`` (or ``net_arch.pi`` where the file gives a list) was dropped without
    a word and the run trained as if it had not been given."""
    path = tmp_path / "c.yaml"
    path.write_text("game: roy\nseed: 0\nppo:\n  policy_kwargs:\n    net_arch: [128, 128]\n")
    with pytest.raises(ConfigError, match=message):
        load_config(path, {dotted: value})
    assert load_config(path, {"ppo.policy_kwargs.net_arch": {"pi": [64], "vf": [64]}}
                       ).ppo["policy_kwargs"]["net_arch"] == {"pi": [64], "vf": [64]}

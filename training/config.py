"""Training configuration: one YAML per game, every key validated on load.

A config has seven sections; ``game``, ``seed`` and ``features`` sit at the top level. A key
that is unknown or of the wrong type is an error naming it (``ppo.n_step: unknown key (did you
mean 'n_steps'?)``), because a mistyped hyperparameter that silently falls back to its default
wastes a whole run. The game's own options (``env``) are checked by the game's engine, and
MaskablePPO's keyword arguments (``ppo``) against MaskablePPO's signature.
"""

from __future__ import annotations

import copy
import difflib
import inspect
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A config file problem; the message names the key."""


@dataclass
class SelfPlayConfig:
    n_envs: int = 32  # games stepped together (one batched forward per opponent per step)
    learner_seat: int | str = "random"  # a seat, or "random" to rotate it every episode
    snapshot_every: int = 50_000  # learner steps between snapshots into the pool
    pool_size: int = 8  # snapshots kept (the oldest is dropped)
    latest_prob: float = 0.5  # share of self-play seats that get the newest snapshot
    opponent_deterministic: bool = False  # snapshots act greedily (else sample)
    opponents: dict[str, float] = field(
        default_factory=lambda: {"self": 0.6, "random": 0.2, "heuristic": 0.2}
    )
    reward: str = "learner"  # "learner": its own game reward; "zero_sum": minus the others' mean
    reward_scale: float = 1.0  # learner rewards are multiplied by this


@dataclass
class TrainingConfig:
    total_timesteps: int = 1_000_000
    checkpoint_every: int = 50_000  # learner steps; a kill loses at most this much
    time_limit_minutes: float | None = None  # stop cleanly (checkpoint first) after this
    device: str = "cpu"
    torch_threads: int = 1
    init_from: str | None = None  # a policy .zip to start from (e.g. a curriculum stage)


@dataclass
class PretrainConfig:
    """Behaviour cloning from the heuristic before self-play (``games: 0`` turns it off).

    The heuristic plays every seat; the policy learns its moves (cross-entropy over legal
    actions) and the value head learns the games' outcomes. Its wall time counts against
    ``training.time_limit_minutes``."""

    games: int = 0  # heuristic-vs-heuristic games to learn from
    epochs: int = 4  # passes over those decisions
    batch_size: int = 1024
    learning_rate: float = 1e-3
    max_decisions: int = 400_000  # cap on the decisions kept per collection (memory and time)
    dagger_rounds: int = 0  # then: rounds of games played by the policy, labelled by the heuristic
    dagger_games: int = 0  # games per round
    dagger_epochs: int = 2  # epochs over all decisions gathered, after each round


@dataclass
class EvaluationConfig:
    every: int = 50_000  # learner steps between evaluations against random and heuristic
    games: int = 200  # games per opponent in those evaluations
    final_games: int = 1000  # games per opponent in the evaluation at the end of the run
    deterministic: bool = True  # evaluate the greedy policy
    parallel: int = 64  # games played at once (batched decisions)


@dataclass
class Config:
    game: str
    seed: int = 0
    features: str = "raw"  # policy input: "raw" observation, or "derived" (game's features.py)
    env: dict[str, Any] = field(default_factory=dict)
    ppo: dict[str, Any] = field(default_factory=dict)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(asdict(self))


#: Defaults that make MaskablePPO fast with many envs (its own defaults suit one env).
PPO_DEFAULTS: dict[str, Any] = {
    "learning_rate": 3e-4,
    "n_steps": 128,
    "batch_size": 1024,
    "n_epochs": 4,
    "gamma": 0.99,
    "gae_lambda": 0.95,
    "clip_range": 0.2,
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "policy_kwargs": {"net_arch": [128, 128]},
}
#: MaskablePPO arguments the trainer sets itself.
_PPO_RESERVED = {"policy", "env", "seed", "device", "verbose", "tensorboard_log",
                 "_init_setup_model"}
_OPPONENT_KINDS = ("self", "random", "heuristic")


def _unknown(section: str, key: str, allowed: list[str]) -> ConfigError:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"{section}{key}: unknown key{hint}; allowed: {', '.join(sorted(allowed))}")


def _check_type(name: str, value: Any, annotation: str) -> Any:
    """Check a scalar against a dataclass annotation string (ints pass as floats)."""
    ok_types: list[type] = []
    for part in annotation.replace(" ", "").split("|"):
        ok_types += {"int": [int], "float": [float, int], "str": [str], "bool": [bool],
                     "None": [type(None)]}.get(part, [object])
    if isinstance(value, bool) and bool not in ok_types:
        ok = False
    else:
        ok = any(isinstance(value, t) for t in ok_types)
    if not ok:
        raise ConfigError(f"{name}: expected {annotation}, got {value!r}")
    return float(value) if float in ok_types and int not in ok_types else value


def _build_section(cls: type, name: str, data: Any) -> Any:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: expected a mapping, got {data!r}")
    known = {f.name: f for f in fields(cls)}
    kwargs = {}
    for key, value in data.items():
        if key not in known:
            raise _unknown(f"{name}.", str(key), list(known))
        if known[key].type.startswith("dict"):
            if not isinstance(value, dict):
                raise ConfigError(f"{name}.{key}: expected a mapping, got {value!r}")
            kwargs[key] = value
        else:
            kwargs[key] = _check_type(f"{name}.{key}", value, known[key].type)
    return cls(**kwargs)


def _validate_ppo(ppo: dict[str, Any]) -> dict[str, Any]:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    params = inspect.signature(MaskablePPO.__init__).parameters
    allowed = [k for k in params if k not in _PPO_RESERVED and k != "self"]
    merged = copy.deepcopy(PPO_DEFAULTS)
    for key, value in ppo.items():
        if key not in allowed:
            raise _unknown("ppo.", str(key), allowed)
        default = params[key].default
        if isinstance(default, (int, float)) and not isinstance(default, bool) and not (
            isinstance(value, (int, float)) and not isinstance(value, bool)
        ):
            raise ConfigError(f"ppo.{key}: expected a number, got {value!r}")
        merged[key] = value
    pk = merged.get("policy_kwargs") or {}
    pol_allowed = [k for k in inspect.signature(MaskableActorCriticPolicy.__init__).parameters
                   if k not in ("self", "observation_space", "action_space", "lr_schedule")]
    pol_allowed = [k for k in pol_allowed if not k.startswith("features_extractor")]
    for key in pk:
        if str(key).startswith("features_extractor"):
            raise ConfigError(f"ppo.policy_kwargs.{key}: set the policy input with the "
                              "top-level 'features: raw | derived' instead")
        if key not in pol_allowed:
            raise _unknown("ppo.policy_kwargs.", str(key), pol_allowed)
    return merged


def _validate_env(game: str, env: dict[str, Any]) -> None:
    from card_envs.games import GAMES, make_engine

    if game not in GAMES:
        close = difflib.get_close_matches(game, list(GAMES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"game: unknown game {game!r}{hint}; installed: {', '.join(GAMES)}")
    try:
        make_engine(game, **env)
    except ValueError as err:
        raise ConfigError(f"env: {err}") from None


def _check_features(game: str, features: Any) -> str:
    from card_envs.games import get_game

    if features not in ("raw", "derived"):
        raise ConfigError(f"features: expected 'raw' or 'derived', got {features!r}")
    if features == "derived" and get_game(game).features is None:
        raise ConfigError(f"features: {game} has no derived features; use 'raw'")
    return str(features)


def from_dict(data: dict[str, Any]) -> Config:
    """Validate a config mapping (as loaded from YAML) into a :class:`Config`."""
    if not isinstance(data, dict):
        raise ConfigError(f"a config must be a mapping, got {type(data).__name__}")
    top = [f.name for f in fields(Config)]
    for key in data:
        if key not in top:
            raise _unknown("", str(key), top)
    if "game" not in data:
        raise ConfigError("game: missing (e.g. 'game: roy')")
    game = _check_type("game", data["game"], "str")
    env = data.get("env") or {}
    if not isinstance(env, dict):
        raise ConfigError(f"env: expected a mapping, got {env!r}")
    _validate_env(game, env)
    cfg = Config(
        game=game,
        seed=_check_type("seed", data.get("seed", 0), "int"),
        features=_check_features(game, data.get("features", "raw")),
        env=dict(env),
        ppo=_validate_ppo(data.get("ppo") or {}),
        selfplay=_build_section(SelfPlayConfig, "selfplay", data.get("selfplay")),
        training=_build_section(TrainingConfig, "training", data.get("training")),
        evaluation=_build_section(EvaluationConfig, "evaluation", data.get("evaluation")),
        pretrain=_build_section(PretrainConfig, "pretrain", data.get("pretrain")),
    )
    _check_values(cfg)
    return cfg


def _check_values(cfg: Config) -> None:
    sp, tr, ev = cfg.selfplay, cfg.training, cfg.evaluation
    for kind, rate in sp.opponents.items():
        if kind not in _OPPONENT_KINDS:
            raise _unknown("selfplay.opponents.", str(kind), list(_OPPONENT_KINDS))
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate < 0:
            raise ConfigError(f"selfplay.opponents.{kind}: expected a rate >= 0, got {rate!r}")
    if sum(sp.opponents.values()) <= 0:
        raise ConfigError("selfplay.opponents: at least one rate must be positive")
    from card_envs.games import make_engine

    n = make_engine(cfg.game, **cfg.env).num_players
    if sp.learner_seat != "random" and not (
        isinstance(sp.learner_seat, int) and 0 <= sp.learner_seat < n
    ):
        raise ConfigError(f"selfplay.learner_seat: expected 'random' or 0..{n - 1}, "
                          f"got {sp.learner_seat!r}")
    positive = {"selfplay.n_envs": sp.n_envs, "selfplay.snapshot_every": sp.snapshot_every,
                "selfplay.pool_size": sp.pool_size, "training.total_timesteps": tr.total_timesteps,
                "training.checkpoint_every": tr.checkpoint_every, "training.torch_threads":
                tr.torch_threads, "evaluation.every": ev.every, "evaluation.games": ev.games,
                "evaluation.parallel": ev.parallel}
    for name, value in positive.items():
        if value <= 0:
            raise ConfigError(f"{name}: expected a positive number, got {value!r}")
    from training.selfplay import check_reward

    try:
        check_reward(sp.reward, sp.reward_scale)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    if not 0.0 <= sp.latest_prob <= 1.0:
        raise ConfigError("selfplay.latest_prob: expected a number in [0, 1], "
                          f"got {sp.latest_prob}")
    pt = cfg.pretrain
    for name, value in {"pretrain.games": pt.games, "pretrain.epochs": pt.epochs,
                        "pretrain.dagger_rounds": pt.dagger_rounds,
                        "pretrain.dagger_games": pt.dagger_games,
                        "pretrain.dagger_epochs": pt.dagger_epochs}.items():
        if value < 0:
            raise ConfigError(f"{name}: expected >= 0, got {value!r}")
    if pt.dagger_rounds and not (pt.games and pt.dagger_games and pt.dagger_epochs):
        raise ConfigError("pretrain.dagger_rounds: needs pretrain.games, pretrain.dagger_games "
                          "and pretrain.dagger_epochs above 0")
    for name, value in {"pretrain.batch_size": pt.batch_size,
                        "pretrain.learning_rate": pt.learning_rate,
                        "pretrain.max_decisions": pt.max_decisions}.items():
        if value <= 0:
            raise ConfigError(f"{name}: expected a positive number, got {value!r}")
    if ev.final_games < 0:
        raise ConfigError(f"evaluation.final_games: expected >= 0, got {ev.final_games}")
    rollout = cfg.ppo["n_steps"] * sp.n_envs
    if rollout % cfg.ppo["batch_size"] and rollout >= cfg.ppo["batch_size"]:
        raise ConfigError(f"ppo.batch_size: {cfg.ppo['batch_size']} does not divide the rollout "
                          f"of ppo.n_steps * selfplay.n_envs = {rollout} samples")


def load_config(path: str | Path) -> Config:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no config file at {str(path)!r}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    try:
        return from_dict(data)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None


def save_config(cfg: Config, path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))

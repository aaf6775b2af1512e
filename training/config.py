"""Training configuration: one YAML per game, every key validated on load.

A config has six sections; ``game``, ``seed`` and ``features`` sit at the top level. A key
that is unknown, of the wrong type or out of range is an error naming it and what is allowed
(``ppo.n_step: unknown key (did you mean 'n_steps'?)``), raised before a run directory exists,
because a mistyped hyperparameter that silently falls back to its default, or a bad value that
fails an hour in, wastes a whole run. The game's own options (``env``) are checked by the
game's engine, and MaskablePPO's keyword arguments (``ppo``) against MaskablePPO's signature
and the ranges below.
"""

from __future__ import annotations

import copy
import difflib
import inspect
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A config file problem; the message names the key."""


class _ConfigLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that reads numbers as YAML 1.2 does. PyYAML follows YAML 1.1, which
    reads the usual way to write a learning rate (``1e-4``: it wants a dot) as text, a seed
    written ``010`` as octal 8 and ``1:30`` as the base-60 number 90."""


_FLOAT = "tag:yaml.org,2002:float"
_INT = "tag:yaml.org,2002:int"
_ConfigLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_FLOAT, _INT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
# YAML 1.2's integers: decimal (leading zeros too), 0o octal, 0x hexadecimal; the digit
# separator "_" as PyYAML allows it.
_ConfigLoader.add_implicit_resolver(_INT, re.compile(
    r"^(?:[-+]?[0-9][0-9_]*|0o[0-7_]+|0x[0-9a-fA-F_]+)$"), list("-+0123456789"))


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    try:
        if text[:2] in ("0o", "0x"):
            return int(text[2:], 8 if text[1] == "o" else 16)
        return int(text, 10)
    except ValueError:  # only an explicit !!int tag gets here with something else
        raise yaml.constructor.ConstructorError(
            None, None, f"expected an integer, found {text!r}", node.start_mark) from None


_ConfigLoader.add_constructor(_INT, _construct_int)
_ConfigLoader.add_implicit_resolver(_FLOAT, re.compile(r"""^(?:
    [-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
  | [-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
  | [-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
  | [-+]?\.(?:inf|Inf|INF)
  | \.(?:nan|NaN|NAN))$""", re.X), list("-+0123456789."))


@dataclass
class SelfPlayConfig:
    n_envs: int = 32  # games stepped together (one batched forward per opponent per step)
    learner_seat: int | str = "random"  # a seat, or "random" to rotate it every episode
    snapshot_every: int = 50_000  # learner steps between snapshots into the pool
    pool_size: int = 8  # snapshots kept (the oldest is dropped)
    latest_prob: float = 0.5  # chance a self-play seat gets the newest snapshot, else uniform
    opponent_deterministic: bool = False  # snapshots act greedily (else sample)
    # Relative weights of the opponent kinds for every opponent seat (divided by their sum).
    opponents: dict[str, float] = field(
        default_factory=lambda: {"self": 0.6, "random": 0.2, "heuristic": 0.2}
    )
    reward: str = "learner"  # "learner": its own game reward; "zero_sum": minus the others' mean
    reward_scale: float = 1.0  # learner rewards are multiplied by this


@dataclass
class TrainingConfig:
    total_timesteps: int = 1_000_000
    checkpoint_every: int = 50_000  # learner steps; a kill loses at most this (whole rollouts)
    time_limit_minutes: float | None = None  # stop cleanly (checkpoint first) after this
    device: str = "cpu"  # a torch device ("cpu", "cuda", "cuda:1", ...) or "auto"
    torch_threads: int = 1
    init_from: str | None = None  # a policy .zip to start from (e.g. a curriculum stage)
    keep_policies: bool = False  # also keep every checkpoint's policy: policies/step-<N>.zip


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


#: The sections built from dataclasses (a key there in the wrong section is named as such).
_SECTIONS: dict[str, type] = {"selfplay": SelfPlayConfig, "training": TrainingConfig,
                              "evaluation": EvaluationConfig, "pretrain": PretrainConfig}


#: Defaults that make MaskablePPO fast with many envs (its own defaults suit one env). A config's
#: ``ppo.policy_kwargs`` is merged over these ``policy_kwargs``, so setting another key keeps
#: the ``net_arch``.
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
#: Seeds reach ``np.random.seed`` (through SB3), which takes 0 .. 2**32 - 1.
_MAX_SEED = 2**32 - 1
#: More threads than any machine has cores; torch crashed (a segfault) at 100,000.
_MAX_THREADS = 1024


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _null(value: Any) -> bool:
    return value is None


#: What each MaskablePPO argument may be: (the allowed values in words, the test). A value
#: outside these fails late in SB3 (a division by zero, a silent no-op update) or not at all
#: (a discount above 1), without naming the key.
_PPO_RULES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "learning_rate": ("a number > 0", lambda v: _number(v) and v > 0),
    "n_steps": ("an integer >= 1", lambda v: _integer(v) and v >= 1),
    "batch_size": ("an integer >= 1", lambda v: _integer(v) and v >= 1),
    "n_epochs": ("an integer >= 1", lambda v: _integer(v) and v >= 1),
    "gamma": ("a number in [0, 1]", lambda v: _number(v) and 0 <= v <= 1),
    "gae_lambda": ("a number in [0, 1]", lambda v: _number(v) and 0 <= v <= 1),
    "clip_range": ("a number > 0", lambda v: _number(v) and v > 0),
    "clip_range_vf": ("null or a number > 0", lambda v: v is None or _number(v) and v > 0),
    "normalize_advantage": ("true or false", lambda v: isinstance(v, bool)),
    "ent_coef": ("a number >= 0", lambda v: _number(v) and v >= 0),
    "vf_coef": ("a number >= 0", lambda v: _number(v) and v >= 0),
    "max_grad_norm": ("a number > 0", lambda v: _number(v) and v > 0),
    "target_kl": ("null or a number > 0", lambda v: v is None or _number(v) and v > 0),
    "stats_window_size": ("an integer >= 1", lambda v: _integer(v) and v >= 1),
    # MaskablePPO builds its own masked buffer, which takes no extra arguments.
    "rollout_buffer_class": ("null (MaskablePPO's own masked buffer)", _null),
    "rollout_buffer_kwargs": ("null (MaskablePPO's own masked buffer)", _null),
}
#: ``ppo.policy_kwargs`` entries a YAML file can hold, and what they may be. Classes
#: (``activation_fn``, ``optimizer_class``) cannot be written in YAML.
_POLICY_RULES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "net_arch": ("a list of layer widths (integers >= 1), or {pi: [...], vf: [...]}",
                 lambda v: _layers(v) or isinstance(v, dict) and set(v) <= {"pi", "vf"}
                 and all(_layers(x) for x in v.values())),
    "ortho_init": ("true or false", lambda v: isinstance(v, bool)),
    "normalize_images": ("true or false", lambda v: isinstance(v, bool)),
    "share_features_extractor": ("true or false", lambda v: isinstance(v, bool)),
    "optimizer_kwargs": ("null or a mapping of torch.optim.Adam arguments",
                         lambda v: v is None or isinstance(v, dict)),
}


def _layers(value: Any) -> bool:
    return isinstance(value, list) and all(_integer(x) and x >= 1 for x in value)


def _unknown(section: str, key: str, allowed: list[str], game: Any = None) -> ConfigError:
    """The error for an unknown ``key``: a look-alike allowed here, and where a real key of
    that name belongs (``selfplay.n_steps`` looks like ``n_envs`` and belongs in ``ppo``)."""
    homes = [f"in {name}.{key}" for name, names in _section_keys(game).items()
             if f"{name}." != section and key in names]
    if section and key in {f.name for f in fields(Config)} and key not in _SECTIONS:
        homes.append("at the top level")
    close = difflib.get_close_matches(key, allowed, n=1)
    hints = [f"did you mean {close[0]!r}?"] if close else []
    if homes:
        hints.append(f"{key} belongs {' or '.join(homes)}" if hints
                     else f"it belongs {' or '.join(homes)}")
    hint = f" ({' '.join(hints)})" if hints else ""
    return ConfigError(f"{section}{key}: unknown key{hint}; allowed: {', '.join(sorted(allowed))}")


def _section_keys(game: Any) -> dict[str, set[str]]:
    """The keys each section takes: MaskablePPO's arguments, the fields, and ``game``'s
    options (when the config names an installed game)."""
    from sb3_contrib import MaskablePPO

    from card_envs.games import GAMES, get_game

    keys = {"ppo": set(inspect.signature(MaskablePPO.__init__).parameters)
            - _PPO_RESERVED - {"self"}}
    if isinstance(game, str) and game in GAMES:
        keys["env"] = set(get_game(game).engine_class().options())
    return {**keys, **{name: {f.name for f in fields(cls)} for name, cls in _SECTIONS.items()}}


_SCALAR_TYPES: dict[str, list[type]] = {"int": [int], "float": [float, int], "str": [str],
                                         "bool": [bool], "None": [type(None)]}


def _check_type(name: str, value: Any, annotation: str) -> Any:
    """Check a scalar against a dataclass annotation string (ints pass as floats)."""
    ok_types: list[type] = []
    for part in annotation.replace(" ", "").split("|"):
        ok_types += _SCALAR_TYPES.get(part, [object])
    if isinstance(value, bool) and bool not in ok_types:
        ok = False
    else:
        ok = any(isinstance(value, t) for t in ok_types)
    if not ok:
        raise ConfigError(f"{name}: expected {annotation}, got {value!r}")
    return float(value) if float in ok_types and int not in ok_types else value


def _build_section(cls: type, name: str, data: Any, game: str) -> Any:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: expected a mapping, got {data!r}")
    known = {f.name: f for f in fields(cls)}
    kwargs = {}
    for key, value in data.items():
        if key not in known:
            raise _unknown(f"{name}.", str(key), list(known), game)
        annotation = str(known[key].type)  # a string: this module postpones annotations
        if annotation.startswith("dict"):
            if not isinstance(value, dict):
                raise ConfigError(f"{name}.{key}: expected a mapping, got {value!r}")
            kwargs[key] = value
        else:
            kwargs[key] = _check_type(f"{name}.{key}", value, annotation)
    return cls(**kwargs)


def _validate_ppo(ppo: Any, game: str) -> dict[str, Any]:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    if not isinstance(ppo, dict):
        raise ConfigError(f"ppo: expected a mapping, got {ppo!r}")
    params = inspect.signature(MaskablePPO.__init__).parameters
    allowed = [k for k in params if k not in _PPO_RESERVED and k != "self"]
    merged = copy.deepcopy(PPO_DEFAULTS)
    for key, value in ppo.items():
        if key not in allowed:
            raise _unknown("ppo.", str(key), allowed, game)
        if key == "policy_kwargs":
            continue
        if key in _PPO_RULES:
            what, ok = _PPO_RULES[key]
            if not ok(value):
                raise ConfigError(f"ppo.{key}: expected {what}, got {value!r}")
        else:  # an argument a newer MaskablePPO added: at least its type
            default = params[key].default
            if _number(default) and not _number(value):
                raise ConfigError(f"ppo.{key}: expected a number, got {value!r}")
        merged[key] = value
    if "policy_kwargs" in ppo:
        pk = ppo["policy_kwargs"]
        if not isinstance(pk, dict):
            # (An empty "policy_kwargs:" is None, which would drop the default net_arch.)
            raise ConfigError("ppo.policy_kwargs: expected a mapping such as "
                              f"{{net_arch: [128, 128]}}, got {pk!r}; leave the key out for "
                              f"the default {PPO_DEFAULTS['policy_kwargs']}")
        merged["policy_kwargs"] = {**PPO_DEFAULTS["policy_kwargs"], **copy.deepcopy(pk)}
    pol_allowed = [k for k in inspect.signature(MaskableActorCriticPolicy.__init__).parameters
                   if k not in ("self", "observation_space", "action_space", "lr_schedule")]
    pol_allowed = [k for k in pol_allowed if not k.startswith("features_extractor")]
    for key, value in merged["policy_kwargs"].items():
        name = f"ppo.policy_kwargs.{key}"
        if str(key).startswith("features_extractor"):
            raise ConfigError(f"{name}: set the policy input with the top-level "
                              "'features: raw | derived' instead")
        if key not in pol_allowed:
            raise _unknown("ppo.policy_kwargs.", str(key), pol_allowed)
        if key not in _POLICY_RULES:
            raise ConfigError(f"{name}: cannot be set in a config (it takes a class, which "
                              "YAML cannot hold)")
        what, ok = _POLICY_RULES[key]
        if not ok(value):
            raise ConfigError(f"{name}: expected {what}, got {value!r}")
    _check_optimizer_kwargs(merged["policy_kwargs"].get("optimizer_kwargs") or {})
    return merged


def _check_optimizer_kwargs(kwargs: dict[str, Any]) -> None:
    import torch

    allowed = [k for k in inspect.signature(torch.optim.Adam).parameters
               if k not in ("params", "lr")]
    for key in kwargs:
        if key not in allowed:
            raise _unknown("ppo.policy_kwargs.optimizer_kwargs.", str(key), allowed)
    if kwargs.get("differentiable"):
        raise ConfigError("ppo.policy_kwargs.optimizer_kwargs.differentiable: PPO's update "
                          "steps Adam outside autograd, which a differentiable Adam refuses; "
                          "leave it out")
    # The values too, by one step on a CPU tensor (``capturable`` is checked against the device
    # with the training section): torch refused a bad one only when the run first updated,
    # after its directory was made. YAML 1.1 read "eps: 1e-5" as a string, for one.
    try:
        param = torch.zeros(1, requires_grad=True)
        adam = torch.optim.Adam([param], **{**kwargs, "capturable": False})
        param.grad = torch.ones(1)
        adam.step()
    except Exception as err:  # a betas of one number fails with an IndexError, say
        hint = ("; a number written in quotes is text" if any(isinstance(v, str)
                                                            for v in kwargs.values()) else "")
        raise ConfigError(f"ppo.policy_kwargs.optimizer_kwargs: torch.optim.Adam refuses "
                          f"{kwargs}: {type(err).__name__}: {err}{hint}") from None


def _check_device(device: str, check_cuda: bool) -> None:
    import torch

    if device == "auto":  # SB3's own choice: cuda when available, else cpu
        return
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError):
        parsed = None
    if parsed is None or parsed.type not in ("cpu", "cuda", "mps"):
        raise ConfigError(f"training.device: expected 'auto', 'cpu', 'cuda', 'cuda:<index>' or "
                          f"'mps', got {device!r}")
    if check_cuda and parsed.type == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("training.device: 'mps', but this machine has no MPS device "
                          "(torch.backends.mps.is_available() is False); use 'cpu' or 'auto'")
    # SB3 would train on the CPU instead, silently, while config.yaml still said cuda.
    if not check_cuda or parsed.type != "cuda":
        return
    if not torch.cuda.is_available():
        raise ConfigError(f"training.device: {device!r}, but CUDA is not available on this "
                          "machine (torch.cuda.is_available() is False); use 'cpu', or 'auto' "
                          "for CUDA where there is one")
    count = torch.cuda.device_count()
    if parsed.index is not None and parsed.index >= count:  # torch fails only at the first use
        raise ConfigError(f"training.device: {device!r}, but this machine has {count} CUDA "
                          f"device(s): cuda:0 to cuda:{count - 1}")


def _on_cuda(device: str) -> bool:
    """``training.device`` puts the model on a CUDA device here ('auto' does where one is)."""
    import torch

    if device == "auto":
        return torch.cuda.is_available()
    return torch.device(device).type == "cuda"


def _validate_env(game: str, env: dict[str, Any]) -> None:
    from card_envs.games import GAMES, make_engine

    if game not in GAMES:
        close = difflib.get_close_matches(game, list(GAMES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"game: unknown game {game!r}{hint}; installed: {', '.join(GAMES)}")
    for key in env:
        if not isinstance(key, str):
            raise ConfigError(f"env: option names are words such as num_players, got {key!r}")
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


def _check_finite(node: Any, path: str) -> None:
    """YAML's ``.nan`` and ``.inf`` are floats: a NaN passes no comparison, so a NaN weight or
    learning rate could slip past a range check; an infinite one passes ``> 0``."""
    if isinstance(node, dict):
        for key, value in node.items():
            _check_finite(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            _check_finite(value, f"{path}[{i}]")
    elif isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(f"{path}: expected a finite number, got {node!r}")


def from_dict(data: dict[str, Any], *, check_cuda: bool = True) -> Config:
    """Validate a config mapping (as loaded from YAML) into a :class:`Config`.

    ``check_cuda=False`` accepts a GPU ``training.device`` (CUDA or MPS, and a CUDA-only
    optimizer setting) on a machine without one: for reading a run's config for anything but
    training it (its game options, to evaluate it)."""
    if data is None:  # an empty file, or only comments
        raise ConfigError("the config is empty: it needs at least 'game' (see configs/)")
    if not isinstance(data, dict):
        raise ConfigError(f"a config must be a mapping of keys to values, got "
                          f"{type(data).__name__} {data!r:.60}")
    top = [f.name for f in fields(Config)]
    for key in data:
        if key not in top:
            raise _unknown("", str(key), top, data.get("game"))
    _check_finite(data, "")
    if "game" not in data:
        raise ConfigError("game: missing (e.g. 'game: roy')")
    game = _check_type("game", data["game"], "str")
    env = data.get("env") or {}
    if not isinstance(env, dict):
        raise ConfigError(f"env: expected a mapping, got {env!r}")
    _validate_env(game, env)
    seed = _check_type("seed", data.get("seed", 0), "int")
    if not 0 <= seed <= _MAX_SEED:
        raise ConfigError(f"seed: expected an integer in 0..{_MAX_SEED}, got {seed}")
    ppo = data.get("ppo")
    cfg = Config(
        game=game,
        seed=seed,
        features=_check_features(game, data.get("features", "raw")),
        env=dict(env),
        ppo=_validate_ppo({} if ppo is None else ppo, game),
        selfplay=_build_section(SelfPlayConfig, "selfplay", data.get("selfplay"), game),
        training=_build_section(TrainingConfig, "training", data.get("training"), game),
        evaluation=_build_section(EvaluationConfig, "evaluation", data.get("evaluation"),
                                  game),
        pretrain=_build_section(PretrainConfig, "pretrain", data.get("pretrain"), game),
    )
    _check_values(cfg, check_cuda)
    return cfg


def _check_values(cfg: Config, check_cuda: bool) -> None:
    sp, tr, ev = cfg.selfplay, cfg.training, cfg.evaluation
    for kind, rate in sp.opponents.items():
        if kind not in _OPPONENT_KINDS:
            raise _unknown("selfplay.opponents.", str(kind), list(_OPPONENT_KINDS))
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate < 0:
            raise ConfigError(f"selfplay.opponents.{kind}: expected a weight >= 0 (the weights "
                              f"are relative), got {rate!r}")
    if sum(sp.opponents.values()) <= 0:
        raise ConfigError("selfplay.opponents: at least one weight must be positive")
    from card_envs.games import make_engine

    n = make_engine(cfg.game, **cfg.env).num_players
    if sp.learner_seat != "random" and not (
        isinstance(sp.learner_seat, int) and 0 <= sp.learner_seat < n
    ):
        raise ConfigError(f"selfplay.learner_seat: expected 'random' or 0..{n - 1}, "
                          f"got {sp.learner_seat!r}")
    positive: dict[str, float] = {
        "selfplay.n_envs": sp.n_envs, "selfplay.snapshot_every": sp.snapshot_every,
        "selfplay.pool_size": sp.pool_size, "training.total_timesteps": tr.total_timesteps,
        "training.checkpoint_every": tr.checkpoint_every,
        "training.torch_threads": tr.torch_threads, "evaluation.every": ev.every,
        "evaluation.games": ev.games, "evaluation.parallel": ev.parallel}
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
    for name, count in {"pretrain.games": pt.games, "pretrain.epochs": pt.epochs,
                        "pretrain.dagger_rounds": pt.dagger_rounds,
                        "pretrain.dagger_games": pt.dagger_games,
                        "pretrain.dagger_epochs": pt.dagger_epochs}.items():
        if count < 0:
            raise ConfigError(f"{name}: expected >= 0, got {count!r}")
    if pt.dagger_rounds and not (pt.games and pt.dagger_games and pt.dagger_epochs):
        raise ConfigError("pretrain.dagger_rounds: needs pretrain.games, pretrain.dagger_games "
                          "and pretrain.dagger_epochs above 0")
    for name, value in {"pretrain.batch_size": pt.batch_size,
                        "pretrain.learning_rate": pt.learning_rate,
                        "pretrain.max_decisions": pt.max_decisions}.items():
        if value <= 0:
            raise ConfigError(f"{name}: expected a positive number, got {value!r}")
    if pt.games and not pt.epochs:
        raise ConfigError("pretrain.epochs: expected >= 1 when pretrain.games > 0 (the games "
                          "would be played and never learned from), got 0")
    if ev.final_games < 0:
        raise ConfigError(f"evaluation.final_games: expected >= 0, got {ev.final_games}")
    if tr.time_limit_minutes is not None and not tr.time_limit_minutes > 0:
        raise ConfigError("training.time_limit_minutes: expected a number > 0 (or null for no "
                          f"limit), got {tr.time_limit_minutes}")
    _check_device(tr.device, check_cuda)
    optimizer = cfg.ppo["policy_kwargs"].get("optimizer_kwargs") or {}
    if check_cuda and optimizer.get("capturable") and not _on_cuda(tr.device):
        raise ConfigError(f"ppo.policy_kwargs.optimizer_kwargs.capturable: true needs the "
                          f"model on CUDA, but training.device {tr.device!r} is not a CUDA "
                          "device here; leave it out")
    if tr.torch_threads > _MAX_THREADS:
        raise ConfigError(f"training.torch_threads: expected 1..{_MAX_THREADS}, got "
                          f"{tr.torch_threads}")
    if tr.init_from is not None and not tr.init_from:
        raise ConfigError("training.init_from: expected a policy .zip path or null, got ''")
    rollout = cfg.ppo["n_steps"] * sp.n_envs
    if rollout % cfg.ppo["batch_size"] and rollout >= cfg.ppo["batch_size"]:
        raise ConfigError(f"ppo.batch_size: {cfg.ppo['batch_size']} does not divide the rollout "
                          f"of ppo.n_steps * selfplay.n_envs = {rollout} samples")
    # Advantages are normalised per minibatch: one sample's standard deviation is NaN, and the
    # first update would crash MaskablePPO on NaN logits (plain PPO refuses this up front).
    if cfg.ppo.get("normalize_advantage", True) and min(rollout, cfg.ppo["batch_size"]) < 2:
        name = "ppo.batch_size" if cfg.ppo["batch_size"] < 2 else "ppo.n_steps"
        raise ConfigError(f"{name}: minibatches of one sample (ppo.batch_size "
                          f"{cfg.ppo['batch_size']}, a rollout of {rollout}) normalise "
                          "advantages to NaN; use at least 2, or ppo.normalize_advantage: false")


def load_config(path: str | Path, overrides: dict[str, Any] | None = None, *,
                check_cuda: bool = True) -> Config:
    """Load and validate a config file; ``overrides`` (``{"training.total_timesteps": 4000}``,
    from the command line) replace the file's values before validation, so a value they bring
    is checked like the file's own, and a bad value in the file can be overridden.
    ``check_cuda``: as in :func:`from_dict`."""
    path = Path(path)
    if overrides is not None and not isinstance(overrides, dict):
        raise ConfigError(f"overrides: expected a mapping such as "
                          f"{{'training.total_timesteps': 4000}}, got {overrides!r}")
    if not path.is_file():
        raise ConfigError(f"no config file at {str(path)!r}")
    where = str(path)
    data = parse_yaml(_read_text(path), where)
    if overrides and isinstance(data, dict):
        data = copy.deepcopy(data)
        for dotted, value in overrides.items():
            *sections, key = dotted.split(".")
            node = data
            for section in sections:
                if node.get(section) is None:
                    node[section] = {}
                node = node[section]
                if not isinstance(node, dict):
                    break  # the section itself is invalid: validation says so
            else:
                node[key] = value
        where += " with " + ", ".join(f"{k}={v!r}" for k, v in overrides.items())
    try:
        return from_dict(data, check_cuda=check_cuda)
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from None


def _read_text(path: Path) -> str:
    """The file as UTF-8 (YAML's encoding), or an error naming where it is not."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise ConfigError(f"{path}: not UTF-8 text (byte {raw[err.start]:#04x} on line "
                          f"{line}); save it as UTF-8") from None


def parse_yaml(text: str, where: str) -> Any:
    """``yaml.safe_load``, but ``1e-4`` is a number, a duplicate key is an error (PyYAML
    silently keeps the last value) and a syntax error is one line naming the file and the
    position."""
    try:
        loader = _ConfigLoader(text)  # (its reader already refuses some characters)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_duplicate_keys(node, "", where, set())
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as err:
        raise ConfigError(f"{where}: not valid YAML: {_yaml_problem(err, text)}") from None


def _check_duplicate_keys(node: yaml.Node, path: str, where: str, seen: set[int]) -> None:
    if id(node) in seen:  # an alias: its anchor was checked already (and may contain itself)
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        first: dict[tuple[str, str], yaml.Node] = {}
        for key, value in node.value:
            name = f"{path}.{key.value}" if path else str(key.value)
            if isinstance(key, yaml.ScalarNode):
                if (key.tag, key.value) in first:
                    at, before = key.start_mark, first[key.tag, key.value].start_mark
                    same_line = at.line == before.line  # a flow mapping: {a: 1, a: 2}
                    raise ConfigError(f"{where}: {name}: duplicate key at {_at(at, same_line)} "
                                      f"(first at {_at(before, same_line)}); keep one")
                first[key.tag, key.value] = key
            _check_duplicate_keys(value, name, where, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_duplicate_keys(item, f"{path}[{i}]", where, seen)


def _at(mark: yaml.Mark, column: bool) -> str:
    return f"line {mark.line + 1}" + (f", column {mark.column + 1}" if column else "")


def _yaml_problem(err: yaml.YAMLError, text: str) -> str:
    """PyYAML's message in one line, with the position: its own spans several lines and names
    the source "<unicode string>"."""
    mark = getattr(err, "problem_mark", None)
    if isinstance(err, yaml.MarkedYAMLError) and mark is not None:
        problem = f"line {mark.line + 1}, column {mark.column + 1}: {err.problem}"
        context_mark = err.context_mark
        if err.context and context_mark is not None:
            problem += (f" ({err.context} at line {context_mark.line + 1}, column "
                        f"{context_mark.column + 1})")
        return problem
    if isinstance(err, yaml.reader.ReaderError):  # a character YAML does not allow
        line = text.count("\n", 0, err.position) + 1
        column = err.position - (text.rfind("\n", 0, err.position) + 1) + 1
        return f"line {line}, column {column}: {str(err).splitlines()[0]}"
    return " ".join(str(err).split())


def save_config(cfg: Config, path: str | Path) -> None:
    """Write the resolved config atomically: a kill mid-write leaves the old file whole."""
    from training.checkpoint import atomic_write

    text = yaml.safe_dump(cfg.to_dict(), sort_keys=False)
    Path(path).parent.mkdir(parents=True, exist_ok=True)  # else the error names the temp file
    atomic_write(path, lambda tmp: Path(tmp).write_text(text))

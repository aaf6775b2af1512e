"""Training configuration: one YAML per game, every key validated on load.

The schema is the pydantic models below: types, ranges and the allowed keys of each section,
strictly (``true`` is not a count, ``"3"`` is not 3, NaN and infinity are no numbers). Their
JSON Schema is ``configs/config.schema.json`` (:func:`config_schema`), which editors use to
complete and check the YAML files. What the models cannot know is checked after them: the
game's own options (``env``, by its engine), a seat within the game's player count, settings
that only make sense together, and what torch says of the device and the optimizer.

A problem is a :class:`ConfigError` naming the key, the value and what is allowed
(``ppo.n_step: unknown key (did you mean 'n_steps'?)``), raised before a run directory exists:
a mistyped hyperparameter that silently falls back to its default, or a bad value that fails
an hour in, wastes a whole run.
"""

from __future__ import annotations

import copy
import difflib
import inspect
import json
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, GetPydanticSchema, ValidationError
from pydantic_core import core_schema

from . import yaml12


class ConfigError(ValueError):
    """A config file problem; the message names the key."""


class _Strict(BaseModel):
    # Strict: no bool for a number, no "3" for 3 (an int passes as a float and becomes one).
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


Count = Annotated[int, Field(ge=1)]
NonNegative = Annotated[int, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
Weight = Annotated[float, Field(ge=0)]
Probability = Annotated[float, Field(ge=0, le=1)]
Layers = list[Count]


class NetArch(_Strict):
    pi: Layers = Field([], description="the policy network's hidden layers")
    vf: Layers = Field([], description="the value network's hidden layers")


class PolicyKwargs(_Strict):
    """``MaskableActorCriticPolicy`` arguments a YAML file can hold (the others take a class)."""

    model_config = ConfigDict(json_schema_extra={
        "errorMessage": "a mapping such as {net_arch: [128, 128]} (leave the key out for the "
                        "default)"})

    net_arch: Layers | NetArch = Field(
        [128, 128], description="hidden layer widths",
        json_schema_extra={"errorMessage": "a list of layer widths (integers >= 1), or "
                                           "{pi: [...], vf: [...]}"})
    ortho_init: bool = True
    normalize_images: bool = True
    share_features_extractor: bool = True
    # Any keys: torch names the allowed ones (_check_torch), a key that is no name included.
    optimizer_kwargs: dict[Any, Any] | None = Field(
        None, description="torch.optim.Adam arguments other than lr (checked by torch)")


#: ``policy_kwargs`` keys that take a Python class: YAML cannot hold one.
POLICY_CLASS_KEYS = ("activation_fn", "optimizer_class")


class PPOSettings(_Strict):
    """sb3-contrib ``MaskablePPO`` keyword arguments (those the trainer does not set itself).

    The defaults suit many games stepped together; MaskablePPO's own suit one env."""

    learning_rate: Positive = 3e-4
    n_steps: Count = Field(128, description="steps per env per rollout")
    batch_size: Count = Field(1024, description="minibatch size")
    n_epochs: Count = 4
    gamma: Probability = 0.99
    gae_lambda: Probability = 0.95
    clip_range: Positive = 0.2
    clip_range_vf: Positive | None = None
    normalize_advantage: bool = True
    ent_coef: Annotated[float, Field(ge=0)] = 0.01
    vf_coef: Annotated[float, Field(ge=0)] = 0.5
    max_grad_norm: Positive = 0.5
    target_kl: Positive | None = None
    stats_window_size: Count = 100
    # MaskablePPO builds its own masked buffer, which takes no other class or arguments.
    rollout_buffer_class: None = None
    rollout_buffer_kwargs: None = None
    policy_kwargs: PolicyKwargs = Field(default_factory=PolicyKwargs,
                                        description="merged over {net_arch: [128, 128]}")


#: The ``ppo`` values a run uses for keys its config leaves out where MaskablePPO's own
#: default differs (a run's config.yaml lists them). A config's ``ppo.policy_kwargs`` is merged
#: over these ``policy_kwargs``, so setting another key keeps the ``net_arch``.
PPO_DEFAULTS: dict[str, Any] = {
    **PPOSettings().model_dump(include={"learning_rate", "n_steps", "batch_size", "n_epochs",
                                        "gamma", "gae_lambda", "clip_range", "ent_coef",
                                        "vf_coef", "max_grad_norm"}),
    "policy_kwargs": PolicyKwargs().model_dump(include={"net_arch"})}


def _ppo_arguments(ppo: PPOSettings) -> dict[str, Any]:
    """The validated ``ppo`` section as MaskablePPO's keyword arguments: the keys given, over
    :data:`PPO_DEFAULTS`."""
    given = ppo.model_dump(exclude_unset=True)
    policy = {**PPO_DEFAULTS["policy_kwargs"], **given.pop("policy_kwargs", {})}
    return {**copy.deepcopy(PPO_DEFAULTS), **given, "policy_kwargs": policy}


#: ``Config.ppo`` is a plain dict of MaskablePPO's keyword arguments, checked (and described in
#: the JSON Schema) as :class:`PPOSettings`.
PPOArguments = Annotated[dict[str, Any], GetPydanticSchema(
    lambda _, handler: core_schema.no_info_after_validator_function(
        _ppo_arguments, handler.generate_schema(PPOSettings),
        serialization=core_schema.plain_serializer_function_ser_schema(copy.deepcopy)))]


class SelfPlayConfig(_Strict):
    n_envs: Count = Field(32, description="games stepped together; opponents get one batched "
                                          "call per step")
    learner_seat: NonNegative | Literal["random"] = Field(
        "random", description="the learner's seat, or random to draw it every episode")
    snapshot_every: Count = Field(50_000, description="learner steps between snapshots into "
                                                      "the pool")
    pool_size: Count = Field(8, description="snapshots kept (the oldest is dropped)")
    latest_prob: Probability = Field(0.5, description="chance a self seat plays the newest "
                                                      "snapshot, else one drawn uniformly")
    opponent_deterministic: bool = Field(False, description="snapshots play their most likely "
                                                            "move instead of sampling")
    opponents: dict[Literal["self", "random", "heuristic", "search"], Weight] = Field(
        {"self": 0.6, "random": 0.2, "heuristic": 0.2},  # (pydantic copies a default)
        description="relative weights of the opponent kinds, drawn per seat (search: the "
                    "agent selfplay.search names)")
    search: str = Field(
        "search:simulations=25,prior=heuristic",
        description="the search agent the 'search' opponents play: an agent spec "
                    "search[:<key>=<value>,...] (docs/baselines.md)")
    reward: Literal["learner", "zero_sum"] = Field(
        "learner", description="learner: the learner's own reward; zero_sum: minus the "
                               "others' mean")
    reward_scale: Positive = Field(1.0, description="the learner's rewards are multiplied by "
                                                    "this")
    workers: Count | Literal["auto"] = Field(
        "auto", description="processes that step the games (each batching its own games' "
                            "opponents; the learner stays in the main process); auto: the "
                            "cores this process may use less one for the learner, at least 1 "
                            "and at most n_envs; 1: in the main process")


#: What ``training.precision`` takes (training/precision.py applies it).
Precision = Literal["float32", "bfloat16"]


class TrainingConfig(_Strict):
    total_timesteps: Count = Field(1_000_000, description="learner steps to train for")
    checkpoint_every: Count = Field(50_000, description="learner steps between checkpoints; a "
                                                        "kill loses at most this")
    time_limit_minutes: Positive | None = Field(
        None, description="stop cleanly after this long, warm start included (checkpoint "
                          "first); null: no limit",
        json_schema_extra={"errorMessage": "a number > 0 (or null for no limit)"})
    device: str = Field("cpu", pattern=r"^(auto|cpu|mps|cuda(:[0-9]+)?)$",
                        description="a torch device, or auto (CUDA where there is one)",
                        json_schema_extra={"errorMessage": "'auto', 'cpu', 'cuda', "
                                                           "'cuda:<index>' or 'mps'"})
    # More threads than any machine has cores; torch crashed (a segfault) at 100,000.
    torch_threads: Annotated[int, Field(ge=1, le=1024)] | Literal["auto"] = Field(
        1, description="torch's intra-op threads for the warm start and the learner; auto: "
                       "the cores this process may use less one per self-play worker process "
                       "(or RLlib EnvRunner), at least 1")
    precision: Precision = Field(
        "float32", description="the hidden layers' matrix products in PPO's update and the "
                               "warm start's cloning; bfloat16 needs a CPU or GPU that "
                               "computes it natively (AMX, AVX-512 BF16, Arm BF16; CUDA 8.0+) "
                               "and is refused where it would be emulated (heads, losses, "
                               "rollouts and saved policies stay float32: "
                               "training/precision.py)")
    init_from: Annotated[str, Field(min_length=1)] | None = Field(
        None, description="a policy .zip to start a fresh run from (a curriculum stage)")
    keep_policies: bool = Field(False, description="also keep every checkpoint's policy as "
                                                   "policies/step-<N>.zip")


class EvaluationConfig(_Strict):
    every: Count = Field(50_000, description="learner steps between evaluations against random "
                                             "and heuristic")
    games: Count = Field(200, description="games per opponent in those evaluations")
    final_games: NonNegative = Field(1000, description="games per opponent in the evaluation "
                                                       "at the end of the run")
    deterministic: bool = Field(True, description="evaluate the greedy policy (else it "
                                                  "samples its moves)")
    parallel: Count = Field(64, description="games played at once, with batched decisions")


class PretrainConfig(_Strict):
    """Behaviour cloning from a teacher before self-play (``games: 0`` turns it off).

    The teacher (the heuristic, or a search agent) plays every seat; the policy learns its
    moves (cross-entropy over legal actions; the search's visit distributions) and the value
    head learns the games' outcomes. Its wall time counts against
    ``training.time_limit_minutes``."""

    games: NonNegative = Field(0, description="teacher-against-teacher games to clone "
                                              "(0: no warm start)")
    epochs: NonNegative = Field(4, description="passes over those decisions")
    batch_size: Count = Field(1024, description="cloning minibatch size")
    learning_rate: Positive = Field(1e-3, description="cloning learning rate (Adam)")
    max_decisions: Count = Field(400_000, description="cap on the decisions kept per "
                                                      "collection (memory and time)")
    dagger_rounds: NonNegative = Field(0, description="rounds of DAgger after the clone")
    dagger_games: NonNegative = Field(0, description="games per DAgger round, played by the "
                                                     "policy, labelled by the teacher")
    dagger_epochs: NonNegative = Field(2, description="passes over everything gathered after "
                                                      "each DAgger round")
    teacher: str = Field(
        "heuristic", description="who plays the games and labels the moves: heuristic, or a "
                                 "search agent spec search[:<key>=<value>,...] (its visit "
                                 "counts are the targets)")
    dagger_teacher: str | None = Field(
        None, description="who labels the DAgger rounds' positions: heuristic, or a search "
                          "agent spec; null: the teacher (e.g. clone the heuristic's many "
                          "cheap games, then let the search correct the policy's own)")
    policy_prior: bool = Field(
        False, description="in each DAgger round the search labeller takes the policy trained "
                           "so far as its prior (expert iteration); needs a tree search "
                           "(method=ismcts) labelling the DAgger rounds")


class RLlibSettings(_Strict):
    """Where and how ``backend: rllib`` runs (Ray RLlib's new API stack; ``training.rllib_algo``
    maps the other sections onto RLlib's ``PPOConfig``)."""

    address: Annotated[str, Field(min_length=1)] | None = Field(
        None, description="a Ray cluster to join ('auto', or the head's host:port); null: "
                          "start a local Ray for the run")
    num_env_runners: NonNegative = Field(
        2, description="EnvRunner actors stepping the games (each its own process, on any "
                       "node; 0: sample in the driver)")
    num_envs_per_env_runner: Count | Literal["auto"] = Field(
        "auto", description="games each EnvRunner steps together; auto: selfplay.n_envs "
                            "shared out over the EnvRunners")
    num_cpus_per_env_runner: Positive = Field(1.0, description="CPUs Ray reserves for each "
                                                                "EnvRunner")
    num_learners: NonNegative = Field(
        0, description="Learner actors (0: the learner runs in the driver process)")
    num_gpus_per_learner: Weight = Field(
        0.0, description="GPUs per Learner (with num_learners 0, the driver's learner)")
    num_cpus: Count | None = Field(
        None, description="CPUs of the local Ray started when address is null; null: what "
                          "the EnvRunners and the driver need")
    runtime_env: dict[str, Any] | None = Field(
        None, description="Ray's runtime_env for the job (working_dir, pip, env_vars...): how "
                          "the package reaches a cluster's workers")
    sample_timeout_s: Positive = Field(600.0, description="how long the driver waits for an "
                                                          "EnvRunner's samples")


#: The sections that are models (a key there in the wrong section is named as such).
SECTIONS = ("selfplay", "training", "evaluation", "pretrain", "rllib")


class Config(_Strict):
    """A training config. Built directly in Python it is checked for types and ranges only;
    :func:`from_dict` (and ``train``) checks the rest."""

    model_config = ConfigDict(title="card-envs training config")

    game: str = Field(description="the game to train", examples=["roy"])
    backend: Literal["sb3", "rllib"] = Field(
        "sb3", description="the trainer: sb3 (MaskablePPO in this process and its self-play "
                           "workers) or rllib (Ray RLlib PPO: the rllib section; pip install "
                           "'card-envs[rllib]')")
    seed: int = Field(0, ge=0, le=2**32 - 1,  # it reaches np.random.seed (through SB3)
                      description="seeds the deals, the opponents' draws, torch and the warm "
                                  "start")
    features: Literal["raw", "derived"] = Field(
        "raw", description="policy input: the raw observation, or derived (the game's "
                           "features.py)")
    env: dict[Any, Any] = Field(default_factory=dict,
                                description="the game's options (its RULES.md)")
    ppo: PPOArguments = Field(default_factory=lambda: copy.deepcopy(PPO_DEFAULTS))
    selfplay: SelfPlayConfig = Field(default_factory=SelfPlayConfig)
    training: TrainingConfig = Field(default_factory=TrainingConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    pretrain: PretrainConfig = Field(default_factory=PretrainConfig)
    rllib: RLlibSettings = Field(default_factory=RLlibSettings)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.model_dump())


def from_dict(data: Any, *, check_cuda: bool = True) -> Config:
    """Validate a config mapping (as loaded from YAML) into a :class:`Config`.

    ``check_cuda=False`` accepts a GPU ``training.device`` (CUDA or MPS, and a CUDA-only
    optimizer setting) on a machine without one: for reading a run's config for anything but
    training it (its game options, to evaluate it)."""
    if data is None:  # an empty file, or only comments
        raise ConfigError("the config is empty: it needs at least 'game' (see configs/)")
    if not isinstance(data, dict):
        raise ConfigError(f"a config must be a mapping of keys to values, got "
                          f"{type(data).__name__} {data!r:.60}")
    # An empty section ("selfplay:" with nothing under it) is YAML's null: the defaults.
    data = {k: {} if v is None and k in ("env", "ppo", *SECTIONS) else v
            for k, v in data.items()}
    try:
        cfg = Config.model_validate(data)
    except ValidationError as err:
        from .config_errors import describe

        raise ConfigError(describe(err, data)) from None
    _check_game(cfg)
    _check_together(cfg)
    if cfg.backend == "rllib":  # before the torch checks: what RLlib refuses, on any machine
        from .rllib_settings import check_rllib

        check_rllib(cfg, check_cuda)
    _check_torch(cfg, check_cuda)
    return cfg


def _check_game(cfg: Config) -> None:
    """What depends on the game: its options, its features, its seats."""
    from card_envs.games import GAMES, get_game, make_engine

    if cfg.game not in GAMES:
        close = difflib.get_close_matches(cfg.game, list(GAMES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"game: unknown game {cfg.game!r}{hint}; installed: "
                          f"{', '.join(GAMES)}")
    for key in cfg.env:
        if not isinstance(key, str):
            raise ConfigError(f"env: option names are words such as num_players, got {key!r}")
    try:
        n = make_engine(cfg.game, **cfg.env).num_players
    except ValueError as err:
        raise ConfigError(f"env: {err}") from None
    if cfg.features == "derived" and get_game(cfg.game).features is None:
        raise ConfigError(f"features: {cfg.game} has no derived features; use 'raw'")
    seat = cfg.selfplay.learner_seat
    if seat != "random" and seat >= n:
        raise ConfigError(f"selfplay.learner_seat: expected 'random' or 0..{n - 1}, "
                          f"got {seat!r}")


def _check_together(cfg: Config) -> None:
    """Settings that are each fine alone but not together."""
    sp, pt, ppo = cfg.selfplay, cfg.pretrain, cfg.ppo
    if sum(sp.opponents.values()) <= 0:
        raise ConfigError("selfplay.opponents: at least one weight must be positive")
    if pt.games and not pt.epochs:
        raise ConfigError("pretrain.epochs: expected >= 1 when pretrain.games > 0 (the games "
                          "would be played and never learned from), got 0")
    if pt.dagger_rounds and not (pt.games and pt.dagger_games and pt.dagger_epochs):
        raise ConfigError("pretrain.dagger_rounds: needs pretrain.games, pretrain.dagger_games "
                          "and pretrain.dagger_epochs above 0")
    _check_search(cfg)
    if sp.workers != "auto" and sp.workers > sp.n_envs:
        raise ConfigError(f"selfplay.workers: {sp.workers} worker processes for "
                          f"selfplay.n_envs {sp.n_envs} games; at most one worker per game")
    rollout, batch = ppo["n_steps"] * sp.n_envs, ppo["batch_size"]
    if rollout % batch and rollout >= batch:
        raise ConfigError(f"ppo.batch_size: {batch} does not divide the rollout of "
                          f"ppo.n_steps * selfplay.n_envs = {rollout} samples")
    # Advantages are normalised per minibatch: one sample's standard deviation is NaN, and the
    # first update would crash MaskablePPO on NaN logits (plain PPO refuses this up front).
    if ppo.get("normalize_advantage", True) and min(rollout, batch) < 2:
        name = "ppo.batch_size" if batch < 2 else "ppo.n_steps"
        raise ConfigError(f"{name}: minibatches of one sample (ppo.batch_size {batch}, a "
                          f"rollout of {rollout}) normalise advantages to NaN; use at least 2, "
                          "or ppo.normalize_advantage: false")


def _check_search(cfg: Config) -> None:
    """The search agents' specs (a teacher, an opponent), checked by the agent's own parser;
    and what a search teacher's options need."""
    from card_envs.agents.search import SearchSettings
    from card_envs.core.config import COMMON_OPTIONS

    pt = cfg.pretrain
    specs = [("pretrain.teacher", pt.teacher)]
    if pt.dagger_teacher is not None:
        specs.append(("pretrain.dagger_teacher", pt.dagger_teacher))
    if cfg.selfplay.opponents.get("search", 0) > 0:
        specs.append(("selfplay.search", cfg.selfplay.search))
    parsed: dict[str, SearchSettings | None] = {}
    for key, spec in specs:
        teaches = key.startswith("pretrain.")
        if teaches and spec == "heuristic":
            parsed[key] = None
            continue
        if not (spec == "search" or spec.startswith("search:")):
            allowed = "'heuristic' or " if teaches else ""
            raise ConfigError(f"{key}: expected {allowed}a search agent spec "
                              f"'search[:<key>=<value>,...]', got {spec!r}")
        try:
            parsed[key] = SearchSettings.parse(spec.partition(":")[2])
        except ValueError as err:
            raise ConfigError(f"{key}: {err}") from None
    reward = cfg.env.get("reward", COMMON_OPTIONS["reward"].default)
    for key, settings in parsed.items():
        if settings is not None and settings.horizon == "deal" and reward == "win":
            raise ConfigError(f"{key}: horizon=deal scores what a deal pays, but env.reward "
                              "is 'win', which pays only at the episode's end: use "
                              "env.reward: score, or horizon=episode")
    if pt.dagger_teacher is not None and not pt.dagger_rounds:
        raise ConfigError("pretrain.dagger_teacher: labels the DAgger rounds: it needs "
                          "pretrain.dagger_rounds >= 1")
    if pt.policy_prior:
        labeller = parsed["pretrain.dagger_teacher" if pt.dagger_teacher is not None
                          else "pretrain.teacher"]
        if labeller is None or not pt.dagger_rounds:
            raise ConfigError("pretrain.policy_prior: the policy becomes the search "
                              "labeller's prior in DAgger rounds: it needs a search labelling "
                              "them (pretrain.teacher or pretrain.dagger_teacher: search:...) "
                              "and pretrain.dagger_rounds >= 1")
        if labeller.method != "ismcts":
            raise ConfigError("pretrain.policy_prior: a method=flat labeller takes no prior "
                              "from it (it gives the tree its PUCT priors); the DAgger rounds' "
                              "search must be the tree (method=ismcts)")


def _check_torch(cfg: Config, check_cuda: bool) -> None:
    """What only torch can say: Adam takes the optimizer's arguments (a bad one failed only at
    the run's first update, after its directory was made), and the device exists here."""
    import torch

    optimizer = cfg.ppo["policy_kwargs"].get("optimizer_kwargs") or {}
    allowed = [k for k in inspect.signature(torch.optim.Adam).parameters
               if k not in ("params", "lr")]
    for key in optimizer:
        if key not in allowed:
            from .config_errors import unknown_key

            raise ConfigError(unknown_key("ppo.policy_kwargs.optimizer_kwargs.", str(key),
                                          allowed))
    if optimizer.get("differentiable"):
        raise ConfigError("ppo.policy_kwargs.optimizer_kwargs.differentiable: PPO's update "
                          "steps Adam outside autograd, which a differentiable Adam refuses; "
                          "leave it out")
    try:  # one step on a CPU tensor (capturable is checked against the device below)
        param = torch.zeros(1, requires_grad=True)
        adam = torch.optim.Adam([param], **{**optimizer, "capturable": False})
        param.grad = torch.ones(1)
        adam.step()
    except Exception as err:  # a betas of one number fails with an IndexError, say
        hint = ("; a number written in quotes is text"
                if any(isinstance(v, str) for v in optimizer.values()) else "")
        raise ConfigError(f"ppo.policy_kwargs.optimizer_kwargs: torch.optim.Adam refuses "
                          f"{optimizer}: {type(err).__name__}: {err}{hint}") from None
    if not check_cuda:
        return
    device = cfg.training.device
    if device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("training.device: 'mps', but this machine has no MPS device "
                          "(torch.backends.mps.is_available() is False); use 'cpu' or 'auto'")
    on_cuda = device.startswith("cuda")
    # SB3 would train on the CPU instead, silently, while config.yaml still said cuda.
    if on_cuda and not torch.cuda.is_available():
        raise ConfigError(f"training.device: {device!r}, but CUDA is not available on this "
                          "machine (torch.cuda.is_available() is False); use 'cpu', or 'auto' "
                          "for CUDA where there is one")
    count, index = torch.cuda.device_count(), torch.device(device).index if on_cuda else None
    if index is not None and index >= count:  # torch fails only at the first use
        raise ConfigError(f"training.device: {device!r}, but this machine has {count} CUDA "
                          f"device(s): cuda:0 to cuda:{count - 1}")
    cuda_here = on_cuda or device == "auto" and torch.cuda.is_available()
    if cfg.training.precision == "bfloat16":
        _check_bfloat16(device, cuda_here)
    if optimizer.get("capturable") and not cuda_here:
        raise ConfigError(f"ppo.policy_kwargs.optimizer_kwargs.capturable: true needs the "
                          f"model on CUDA, but training.device {device!r} is not a CUDA "
                          "device here; leave it out")


def _check_bfloat16(device: str, cuda_here: bool) -> None:
    """bfloat16 where the learner trains must be native: emulated, it made the hidden layers'
    products 5 to 9 times slower than float32's on a CPU (docs/training.md), and older GPUs
    emulate it slowly too. MPS is not checked."""
    import torch

    # CUDA computes it from Ampere (compute capability 8.0) on.
    if cuda_here and not torch.cuda.is_bf16_supported(including_emulation=False):
        raise ConfigError(f"training.precision: bfloat16, but the CUDA device of training."
                          f"device {device!r} has no native bfloat16 (it needs compute "
                          "capability 8.0 or later); use float32")
    if not cuda_here and device != "mps":
        from .precision import cpu_bfloat16_instructions

        if cpu_bfloat16_instructions() == []:
            raise ConfigError(f"training.precision: bfloat16, but training.device {device!r} "
                              "trains on this machine's CPU, which has no native bfloat16 "
                              "(AVX-512 BF16 or AMX-BF16 on x86, BF16 on Arm) and would "
                              "emulate it, slower than float32; use float32 (a run started "
                              "elsewhere resumes with --set training.precision=float32)")


@cache
def config_schema() -> dict[str, Any]:
    """The config's JSON Schema (``configs/config.schema.json``): the models' schema, with the
    installed games' names and, for each game, its ``env`` options, their defaults, documents
    and allowed values (the engines check the values; the schema completes and describes)."""
    from card_envs.games import GAMES

    schema = Config.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["properties"]["game"]["enum"] = list(GAMES)
    schema["allOf"] = []
    for name, game in GAMES.items():
        options = {}
        for key, option in game.engine_class().options().items():
            prop: dict[str, Any] = {"description": option.doc, "default": option.default}
            if option.choices is not None:
                prop["enum"] = list(option.choices)
            options[key] = prop
        schema["allOf"].append({
            "if": {"properties": {"game": {"const": name}}, "required": ["game"]},
            "then": {"properties": {"env": {"properties": options,
                                            "additionalProperties": False}}}})
    return schema


def schema_text() -> str:
    """:func:`config_schema` as the committed file holds it."""
    return json.dumps(config_schema(), indent=2) + "\n"


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
        where += " with " + ", ".join(f"{k}={v!r}" for k, v in overrides.items())
        for dotted, value in overrides.items():
            *sections, key = dotted.split(".")
            node = data
            for depth, section in enumerate(sections):
                if node.get(section) is None:
                    node[section] = {}
                node = node[section]
                if not isinstance(node, dict):  # seed.x, or net_arch.pi over a list: never
                    held = ".".join(sections[:depth + 1])  # dropped without a word
                    raise ConfigError(f"{where}: {held}: expected a mapping to set {dotted} "
                                      f"in, got {node!r}")
            node[key] = value
    try:
        return from_dict(data, check_cuda=check_cuda)
    except ConfigError as err:  # each problem on its own line
        raise ConfigError("\n".join(f"{where}: {problem}"
                                     for problem in str(err).splitlines())) from None


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
    """YAML 1.2 (``1e-4`` is a number, ``010`` is 10); a duplicate key is an error, and so is
    a syntax error, in one line naming ``where`` and the position."""
    try:
        return yaml12.load(text, where)
    except yaml12.YamlError as err:
        raise ConfigError(str(err)) from None


def save_config(cfg: Config, path: str | Path) -> None:
    """Write the resolved config atomically: a kill mid-write leaves the old file whole."""
    from .checkpoint import atomic_write

    text = yaml12.dump(cfg.to_dict())
    Path(path).parent.mkdir(parents=True, exist_ok=True)  # else the error names the temp file
    atomic_write(path, lambda tmp: Path(tmp).write_text(text))


def main() -> None:
    """``python -m training.config > configs/config.schema.json`` regenerates the schema."""
    print(schema_text(), end="")


if __name__ == "__main__":
    main()

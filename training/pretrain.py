"""Behaviour cloning from a teacher (the heuristic, or the search agent): a warm start.

Self-play from scratch spends most of a short budget rediscovering what the rule-based agent
already knows (where remembered cards are, which effects pay). Cloning it first puts the
learner at roughly the heuristic's level in a minute or two; PPO then has to find only what the
heuristic misses. Every seat is played by the heuristic and every decision is kept, from the
deciding seat's own observation: the policy learns the chosen action (cross-entropy over legal
actions), the value head the seat's reward from that decision on, weighted as self-play will
pay it (``selfplay.reward``, ``selfplay.reward_scale``).

With the search agent as the teacher (``teacher="search:<key>=<value>,..."``), the search plays
every seat and each decision's target is its move distribution, the root's visit counts
normalised (:meth:`~card_envs.agents.search.SearchAgent.distribution_in`), learned by soft
cross-entropy over the legal actions (for a one-hot target, the same loss as the heuristic's).
With ``policy_prior`` each DAgger round's search takes the policy trained so far as its PUCT
prior: expert iteration (Anthony, Tian and Barber, "Thinking Fast and Slow with Deep Learning
and Tree Search", NeurIPS 2017), the apprentice playing and the apprentice-guided search
labelling the positions it reaches.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from card_envs.agents import make_agent
from card_envs.agents.search import SearchAgent, SearchSettings
from card_envs.core.engine import check_count
from card_envs.games import make_engine

from .actors import TorchPolicyActor
from .precision import Precision, hidden_layers_in
from .selfplay import check_reward, reward_weights


class WarmStartStopped(Exception):
    """``should_stop`` said so: the warm start ends now, its work unsaved (there is no
    checkpoint before it, and a shorter warm start would not replay an uninterrupted run)."""


def _check_stop(should_stop: Callable[[], bool] | None) -> None:
    if should_stop is not None and should_stop():
        raise WarmStartStopped


@dataclass
class Demonstrations:
    observations: np.ndarray  # float32 (N, obs)
    masks: np.ndarray  # bool (N, actions)
    actions: np.ndarray  # int64 (N,)
    returns: np.ndarray  # float32 (N,): the deciding seat's reward from this decision on
    #: float32 (N, actions): a search teacher's move distributions (None: ``actions`` one-hot)
    targets: np.ndarray | None = None
    #: the rows of each collection joined here, in order (None: one collection, all the rows)
    collections: tuple[int, ...] | None = None

    def __len__(self) -> int:
        return len(self.actions)

    @property
    def collection_sizes(self) -> tuple[int, ...]:
        """The rows of each collection, in order (one collection: all the rows)."""
        return self.collections or (len(self),)

    def held_out(self, share: float) -> tuple[np.ndarray, np.ndarray]:
        """(rows to fit, rows held out): the last ``share`` of each collection's rows, its
        newest games. Per collection, so that a DAgger round is trained on: one tail of
        everything held out the whole of any round smaller than ``share`` of the data."""
        fit, held = [], []
        start = 0
        for size in self.collection_sizes:
            n_held = int(size * share)
            fit.append(np.arange(start, start + size - n_held))
            held.append(np.arange(start + size - n_held, start + size))
            start += size
        return np.concatenate(fit), np.concatenate(held)


@dataclass
class _Game:
    """One game being recorded: its decisions, and every seat's reward so far."""

    engine: Any
    total: np.ndarray
    obs: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)
    earned: list[float] = field(default_factory=list)  # the decider's reward before deciding
    targets: list[np.ndarray] = field(default_factory=list)  # a search teacher's distributions

    def record(self, obs: np.ndarray, mask: np.ndarray, action: int, seat: int,
               target: np.ndarray | None = None) -> None:
        if target is not None:
            self.targets.append(target)
        self.obs.append(obs.copy())
        self.masks.append(mask.copy())
        self.actions.append(action)
        self.seats.append(seat)
        self.earned.append(float(self.total[seat]))

    def returns(self) -> list[float]:
        """Each decision's reward to come, for its decider."""
        return [float(self.total[s]) - e for s, e in zip(self.seats, self.earned, strict=True)]


#: The teachers :func:`collect` takes: the heuristic, or a search agent spec.
TEACHERS = "'heuristic' or 'search[:<key>=<value>,...]'"


def check_teacher(teacher: Any, key: str = "teacher") -> SearchSettings | None:
    """None for the heuristic, a search teacher's settings, or ``ValueError`` naming the
    problem (an unknown teacher, a bad search setting) and ``key``."""
    if teacher == "heuristic":
        return None
    if not isinstance(teacher, str) or not (teacher == "search" or teacher.startswith("search:")):
        raise ValueError(f"{key}: expected {TEACHERS}, got {teacher!r}")
    try:
        return SearchSettings.parse(teacher.partition(":")[2])
    except ValueError as err:
        raise ValueError(f"{key}: {err}") from None


def collect(game: str, env_config: dict, games: int, max_decisions: int,
            seed: int, reward: str = "learner", reward_scale: float = 1.0,
            driver: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
            parallel: int = 64, should_stop: Callable[[], bool] | None = None,
            teacher: str | SearchSettings = "heuristic") -> Demonstrations:
    """Teacher-vs-teacher games; every decision with the decider's reward to come.

    With a ``driver`` (a batched actor: observations and masks of K positions in, K actions
    out), the driver's moves are played in every seat and the heuristic's move in each position
    reached is the label (DAgger): the student learns to recover in the positions its own
    mistakes lead to, which the teacher's games never show it. ``parallel`` games run in
    lockstep so that the driver decides for all of them in one call. Game g is dealt from the
    same seed however many run at once; decisions are stored game by game, so the last rows
    are whole games (the held-out share in :func:`behaviour_clone`). ``should_stop`` is asked
    before each lockstep decision; True raises :class:`WarmStartStopped`.

    ``teacher``: "heuristic" (its move is the label), or a search agent (a spec or its
    settings), whose move distribution is each decision's target (``Demonstrations.targets``)
    and whose most visited move is the label and, without a driver, the move played. Seat i's
    teacher is seeded ``seed + i`` either way."""
    engines = [make_engine(game, **env_config) for _ in range(max(1, min(parallel, games)))]
    n = engines[0].num_players
    size = engines[0].layout.size
    # Row s turns the seats' game rewards into seat s's, as self-play pays them.
    weights = np.stack([reward_weights(n, s, reward, reward_scale) for s in range(n)])
    settings = teacher if isinstance(teacher, SearchSettings) else check_teacher(teacher)
    agents: list[Any]
    if settings is None:
        agents = [make_agent("heuristic", game, engines[0].config, seed=seed + i)
                  for i in range(n)]
    else:
        agents = [SearchAgent(game, engines[0].config, settings, seed=seed + i)
                  for i in range(n)]
    rows: list[_Game] = []  # finished games, in the order they finished
    stored = started = 0

    def start(engine: Any) -> _Game:
        nonlocal started
        engine.reset(seed=seed * 1_000_003 + started)
        started += 1
        return _Game(engine, np.zeros(n))

    live = [start(engine) for engine in engines] if games > 0 else []
    obs = np.empty((len(engines), size), np.float32)
    masks = np.empty((len(engines), engines[0].num_actions), bool)
    while live:
        _check_stop(should_stop)
        labels = []
        for k, g in enumerate(live):
            seat = g.engine.current_player
            g.engine.write_observation(seat, obs[k])
            mask = g.engine.legal_mask()
            masks[k] = mask
            target = None
            if settings is None:
                labels.append(int(agents[seat].act(obs[k], mask)))
            else:
                label, target = agents[seat].distribution_in(g.engine)
                labels.append(int(label))
            g.record(obs[k], masks[k], labels[-1], seat, target)
        played = labels if driver is None else driver(obs[:len(live)], masks[:len(live)])
        still: list[_Game] = []
        for g, action in zip(live, played, strict=True):
            g.engine.step(int(action))
            g.total += weights @ g.engine.rewards
            if not g.engine.done:
                still.append(g)
                continue
            rows.append(g)
            stored += len(g.actions)
            if started < games and stored < max_decisions:
                still.append(start(g.engine))
        live = still
    keep = slice(0, max_decisions)
    return Demonstrations(
        np.asarray([o for g in rows for o in g.obs][keep], np.float32),
        np.asarray([m for g in rows for m in g.masks][keep], bool),
        np.asarray([a for g in rows for a in g.actions][keep], np.int64),
        np.asarray([r for g in rows for r in g.returns()][keep], np.float32),
        None if settings is None
        else np.asarray([t for g in rows for t in g.targets][keep], np.float32).reshape(
            -1, engines[0].num_actions))


def frozen_features(policy: Any, obs: torch.Tensor, chunk: int = 4096) -> torch.Tensor | None:
    """The features extractor's output for every row, when the extractor has no weights (raw
    and derived features both): cloning then computes them once, not in every epoch; the
    derived ones are most of a forward pass. ``None`` when the extractor learns."""
    extractors = (policy.pi_features_extractor, policy.vf_features_extractor)
    if any(True for m in extractors for _ in m.parameters()):
        return None
    with torch.no_grad():
        return torch.cat([policy.pi_features_extractor(obs[s:s + chunk])
                          for s in range(0, len(obs), chunk)])


def _masked_distribution(policy: Any, features: torch.Tensor, masks: torch.Tensor) -> Any:
    """The policy's action distribution from features (the extractor's output), masked."""
    dist = policy._get_action_dist_from_latent(policy.mlp_extractor.forward_actor(features))
    dist.apply_masking(masks)
    return dist


def _evaluate(policy: Any, x: torch.Tensor, masks: torch.Tensor,
              from_features: bool) -> tuple[torch.Tensor, Any]:
    """(values, the masked action distribution) from observations or from their features:
    ``evaluate_actions`` past its log-probability of one action (a search teacher's target is
    a distribution over all of them)."""
    if from_features:
        latent_pi, latent_vf = policy.mlp_extractor(x)
    else:
        features = policy.extract_features(x)
        if policy.share_features_extractor:
            latent_pi, latent_vf = policy.mlp_extractor(features)
        else:
            latent_pi = policy.mlp_extractor.forward_actor(features[0])
            latent_vf = policy.mlp_extractor.forward_critic(features[1])
    dist = policy._get_action_dist_from_latent(latent_pi)
    dist.apply_masking(masks)
    return policy.value_net(latent_vf), dist


def soft_cross_entropy(dist: Any, targets: torch.Tensor) -> torch.Tensor:
    """Per row, the cross-entropy of the masked distribution ``dist`` against ``targets`` (rows
    of probabilities over the legal actions): for a one-hot row, minus the log-probability of
    its action, as cloning the heuristic's moves."""
    return -(targets * dist.distribution.logits).sum(-1)


def _greedy_hits(policy: Any, x: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor,
                 from_features: bool = False) -> int:
    with torch.no_grad():
        if from_features:
            dist = _masked_distribution(policy, x, masks)
        else:
            dist = policy.get_distribution(x, action_masks=masks.cpu().numpy())
        return int((dist.distribution.probs.argmax(-1) == actions).sum())


def behaviour_clone(model: MaskablePPO, data: Demonstrations, epochs: int, batch_size: int,
                    learning_rate: float, seed: int, validation: float = 0.1,
                    should_stop: Callable[[], bool] | None = None,
                    precision: Precision = "float32") -> dict[str, float]:
    """Fit the policy to the demonstrations and keep the epoch that predicts held-out games
    best (the last ``validation`` share of each collection's decisions, i.e. of its games:
    many epochs on few games memorise them; :meth:`Demonstrations.held_out`). Returns the last
    epoch's training loss and accuracy and the kept epoch's held-out accuracy. ``should_stop``
    is asked before each minibatch. ``precision`` is the hidden layers' in the gradient steps;
    the accuracies are measured in float32, as the policy plays."""
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    fit_rows, held_rows = (data.held_out(validation) if epochs and len(data) > 1
                           else (np.arange(len(data)), np.arange(0)))
    n_fit, n_val = len(fit_rows), len(held_rows)
    # Everything on the policy's device; the minibatch order is drawn on the CPU (the same
    # order on every device, and torch's CPU generator is the one seeded here).
    device = policy.device
    obs = torch.as_tensor(data.observations, device=device)
    features = frozen_features(policy, obs) if epochs else None
    x, pre = (obs, False) if features is None else (features, True)
    masks = torch.as_tensor(data.masks, device=device)
    actions = torch.as_tensor(data.actions, device=device)
    returns = torch.as_tensor(data.returns, device=device)
    targets = None if data.targets is None else torch.as_tensor(data.targets, device=device)
    fit = torch.as_tensor(fit_rows, device=device)
    held = torch.as_tensor(held_rows, device=device)
    stats = {"bc_loss": float("nan"), "bc_accuracy": float("nan"),
             "bc_val_accuracy": float("nan"), "bc_best_epoch": 0}
    best_state: dict[str, torch.Tensor] | None = None
    best_val = -1.0
    for epoch in range(1, epochs + 1):
        order = torch.randperm(n_fit, generator=gen)
        losses, hits = [], 0
        for start in range(0, n_fit, batch_size):
            _check_stop(should_stop)
            idx = fit[order[start:start + batch_size].to(device)]
            with hidden_layers_in(precision, policy):
                values, dist = _evaluate(policy, x[idx], masks[idx], pre)
            imitation = (-dist.log_prob(actions[idx]) if targets is None
                         else soft_cross_entropy(dist, targets[idx]))
            loss = imitation.mean() + 0.5 * torch.nn.functional.mse_loss(
                values.flatten(), returns[idx])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())
            if epoch == epochs:  # an extra forward pass: only for the reported last epoch
                hits += _greedy_hits(policy, x[idx], masks[idx], actions[idx], pre)
        stats.update(bc_loss=float(np.mean(losses)), bc_accuracy=hits / n_fit)
        if n_val:
            val = sum(_greedy_hits(policy, x[rows], masks[rows], actions[rows], pre)
                      for rows in held.split(batch_size)) / n_val
            if val > best_val:
                best_val = val
                stats.update(bc_val_accuracy=val, bc_best_epoch=epoch)
                best_state = {k: v.clone() for k, v in policy.state_dict().items()}
    if best_state is not None:
        policy.load_state_dict(best_state)
    policy.set_training_mode(False)
    return stats


def policy_driver(policy: Any, seed: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Batched decisions sampled from ``policy`` (sampling visits more positions)."""
    return TorchPolicyActor(policy, deterministic=False, rng=np.random.default_rng(seed)).act


def _joined(a: Demonstrations, b: Demonstrations) -> Demonstrations:
    """Both collections. Where only one has a search's targets (the heuristic's clone, then
    search-labelled DAgger rounds), the other's labels become one-hot targets: the same loss."""
    targets = None
    if a.targets is not None or b.targets is not None:
        targets = np.concatenate([_targets_of(a), _targets_of(b)])
    return Demonstrations(np.concatenate([a.observations, b.observations]),
                          np.concatenate([a.masks, b.masks]),
                          np.concatenate([a.actions, b.actions]),
                          np.concatenate([a.returns, b.returns]), targets,
                          a.collection_sizes + b.collection_sizes)


def _targets_of(data: Demonstrations) -> np.ndarray:
    """``data``'s targets, or its labels one-hot."""
    if data.targets is not None:
        return data.targets
    one_hot = np.zeros(data.masks.shape, np.float32)
    one_hot[np.arange(len(data)), data.actions] = 1.0
    return one_hot


def _with_policy_prior(settings: SearchSettings, model: MaskablePPO, game: str,
                       env_config: dict, folder: str, r: int) -> SearchSettings:
    """The search teacher's settings with the policy trained so far as its prior (saved to
    ``folder``, with the env it fits, for the search to load; ``prior=heuristic`` gives way)."""
    from card_envs.agents.provenance import record_identity

    path = Path(folder) / f"apprentice-{r}.zip"
    model.save(path)
    record_identity(path, game, env_config)
    return dataclasses.replace(settings, policy=str(path), prior="none")


def _check_arguments(model: MaskablePPO, game: str, env_config: dict, games: Any, epochs: Any,
                     batch_size: Any, learning_rate: Any, max_decisions: Any, reward: Any,
                     reward_scale: Any, dagger_rounds: Any, dagger_games: Any,
                     dagger_epochs: Any, teacher: Any = "heuristic",
                     policy_prior: Any = False, dagger_teacher: Any = None
                     ) -> tuple[SearchSettings | None, SearchSettings | None]:
    """Called directly (a config is checked on load), a model of another game or player count
    failed in torch's matrix product, no games or decisions in torch.cat, a batch size of 0 in
    range(), and an unknown reward mode was paid as "learner" without a word. Returns the
    teacher's and the DAgger labeller's search settings (None: the heuristic)."""
    from card_envs.agents.policy import check_policy_fits

    check_reward(reward, reward_scale)
    check_policy_fits(model, game, env_config, "model")
    settings = check_teacher(teacher)
    labeller = settings
    if dagger_teacher is not None:
        if not dagger_rounds:
            raise ValueError("dagger_teacher: labels the DAgger rounds: it needs "
                             "dagger_rounds >= 1")
        labeller = check_teacher(dagger_teacher, "dagger_teacher")
    if not isinstance(policy_prior, bool):
        raise ValueError(f"policy_prior: expected true or false, got {policy_prior!r}")
    if policy_prior and (labeller is None or not dagger_rounds):
        raise ValueError("policy_prior: the policy becomes the search labeller's prior in "
                         "DAgger rounds: it needs a search labelling them (teacher or "
                         "dagger_teacher) and dagger_rounds >= 1")
    if policy_prior and labeller is not None and labeller.method != "ismcts":
        raise ValueError("policy_prior: a method=flat labeller takes no prior from it (it "
                         "gives the tree its PUCT priors); the DAgger rounds' search must be "
                         "the tree (method=ismcts)")

    counts = {"games": games, "epochs": epochs, "batch_size": batch_size,
              "max_decisions": max_decisions}
    if dagger_rounds:
        counts.update(dagger_games=dagger_games, dagger_epochs=dagger_epochs)
    for name, value in {**counts, "dagger_rounds": dagger_rounds}.items():
        check_count(name, value, low=0 if name == "dagger_rounds" else 1)
    if (isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float))
            or not 0 < learning_rate < np.inf):
        raise ValueError(f"learning_rate: expected a number > 0, got {learning_rate!r}")
    return settings, labeller


def pretrain(model: MaskablePPO, game: str, env_config: dict, games: int, epochs: int,
             batch_size: int, learning_rate: float, max_decisions: int,
             seed: int, reward: str = "learner", reward_scale: float = 1.0,
             dagger_rounds: int = 0, dagger_games: int = 0, dagger_epochs: int = 2,
             should_stop: Callable[[], bool] | None = None, teacher: str = "heuristic",
             policy_prior: bool = False, dagger_teacher: str | None = None,
             precision: Precision = "float32") -> dict[str, float]:
    """Clone the teacher's games (``teacher``: "heuristic" or a search agent spec, see
    :func:`collect`), then ``dagger_rounds`` times add ``dagger_games`` games played by the
    policy so far (labelled by ``dagger_teacher``, by default the teacher; with
    ``policy_prior``, by that search with the policy as its prior: expert iteration) and train
    ``dagger_epochs`` more on everything gathered. The held-out share is each collection's
    newest games (the clone's and each round's). ``should_stop`` (asked often: a few decisions
    or one minibatch apart) returning True raises :class:`WarmStartStopped`, leaving the policy
    part-trained. The stats split the wall time into the teacher's games
    (``teacher_seconds``) and the cloning (``clone_seconds``). ``precision``: the hidden
    layers' in the cloning's gradient steps (:mod:`training.precision`)."""
    settings, dagger_settings = _check_arguments(
        model, game, env_config, games, epochs, batch_size, learning_rate, max_decisions,
        reward, reward_scale, dagger_rounds, dagger_games, dagger_epochs, teacher,
        policy_prior, dagger_teacher)
    start = time.time()
    cloning = 0.0  # of the wall time: the rest is the teacher's games
    with tempfile.TemporaryDirectory(prefix="card-envs-exit-") as folder:
        data = collect(game, env_config, games, max_decisions, seed, reward, reward_scale,
                       should_stop=should_stop,
                       teacher="heuristic" if settings is None else settings)
        labeller: str | SearchSettings = (
            "heuristic" if dagger_settings is None else dagger_settings)
        began = time.time()
        stats = behaviour_clone(model, data, epochs, batch_size, learning_rate, seed,
                                should_stop=should_stop, precision=precision)
        cloning += time.time() - began
        for r in range(1, dagger_rounds + 1):
            model.policy.set_training_mode(False)
            if policy_prior:
                assert dagger_settings is not None  # _check_arguments
                labeller = _with_policy_prior(dagger_settings, model, game, env_config,
                                              folder, r)
            more = collect(game, env_config, dagger_games, max_decisions, seed + r, reward,
                           reward_scale, driver=policy_driver(model.policy, seed + r),
                           should_stop=should_stop, teacher=labeller)
            data = _joined(data, more)
            began = time.time()
            stats = behaviour_clone(model, data, dagger_epochs, batch_size, learning_rate,
                                    seed + r, should_stop=should_stop, precision=precision)
            cloning += time.time() - began
    seconds = time.time() - start
    stats.update(decisions=len(data), seconds=round(seconds, 1),
                 teacher_seconds=round(seconds - cloning, 1), clone_seconds=round(cloning, 1))
    return stats

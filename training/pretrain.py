"""Behaviour cloning from the heuristic: a warm start for self-play.

Self-play from scratch spends most of a short budget rediscovering what the rule-based agent
already knows (where remembered cards are, which effects pay). Cloning it first puts the
learner at roughly the heuristic's level in a minute or two; PPO then has to find only what the
heuristic misses. Every seat is played by the heuristic and every decision is kept, from the
deciding seat's own observation: the policy learns the chosen action (cross-entropy over legal
actions), the value head the seat's reward from that decision on, weighted as self-play will
pay it (``selfplay.reward``, ``selfplay.reward_scale``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import astuple, dataclass, field
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from card_envs.agents import make_agent
from card_envs.core.engine import check_count
from card_envs.games import make_engine

from .actors import TorchPolicyActor
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

    def __len__(self) -> int:
        return len(self.actions)


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

    def record(self, obs: np.ndarray, mask: np.ndarray, action: int, seat: int) -> None:
        self.obs.append(obs.copy())
        self.masks.append(mask.copy())
        self.actions.append(action)
        self.seats.append(seat)
        self.earned.append(float(self.total[seat]))

    def returns(self) -> list[float]:
        """Each decision's reward to come, for its decider."""
        return [float(self.total[s]) - e for s, e in zip(self.seats, self.earned, strict=True)]


def collect(game: str, env_config: dict, games: int, max_decisions: int,
            seed: int, reward: str = "learner", reward_scale: float = 1.0,
            driver: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
            parallel: int = 64, should_stop: Callable[[], bool] | None = None) -> Demonstrations:
    """Heuristic-vs-heuristic games; every decision with the decider's reward to come.

    With a ``driver`` (a batched actor: observations and masks of K positions in, K actions
    out), the driver's moves are played in every seat and the heuristic's move in each position
    reached is the label (DAgger): the student learns to recover in the positions its own
    mistakes lead to, which the teacher's games never show it. ``parallel`` games run in
    lockstep so that the driver decides for all of them in one call. Game g is dealt from the
    same seed however many run at once; decisions are stored game by game, so the last rows
    are whole games (the held-out share in :func:`behaviour_clone`). ``should_stop`` is asked
    before each lockstep decision; True raises :class:`WarmStartStopped`."""
    engines = [make_engine(game, **env_config) for _ in range(max(1, min(parallel, games)))]
    n = engines[0].num_players
    size = engines[0].layout.size
    # Row s turns the seats' game rewards into seat s's, as self-play pays them.
    weights = np.stack([reward_weights(n, s, reward, reward_scale) for s in range(n)])
    agents = [make_agent("heuristic", game, engines[0].config, seed=seed + i) for i in range(n)]
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
            labels.append(int(agents[seat].act(obs[k], mask)))
            g.record(obs[k], masks[k], labels[-1], seat)
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
        np.asarray([r for g in rows for r in g.returns()][keep], np.float32))


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


def _evaluate(policy: Any, x: torch.Tensor, actions: torch.Tensor, masks: torch.Tensor,
              from_features: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(values, log-probabilities of ``actions``) from observations or from their features:
    ``evaluate_actions`` past its features extractor."""
    if not from_features:
        values, log_prob, _ = policy.evaluate_actions(x, actions, action_masks=masks)
        return values, log_prob
    dist = _masked_distribution(policy, x, masks)
    return policy.value_net(policy.mlp_extractor.forward_critic(x)), dist.log_prob(actions)


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
                    should_stop: Callable[[], bool] | None = None) -> dict[str, float]:
    """Fit the policy to the demonstrations and keep the epoch that predicts held-out games
    best (the last ``validation`` share of the decisions, i.e. of the games: many epochs on
    few games memorise them). Returns the last epoch's training loss and accuracy and the
    kept epoch's held-out accuracy. ``should_stop`` is asked before each minibatch."""
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    n_val = int(len(data) * validation) if epochs and len(data) > 1 else 0
    n_fit = len(data) - n_val
    # Everything on the policy's device; the minibatch order is drawn on the CPU (the same
    # order on every device, and torch's CPU generator is the one seeded here).
    device = policy.device
    obs = torch.as_tensor(data.observations, device=device)
    features = frozen_features(policy, obs) if epochs else None
    x, pre = (obs, False) if features is None else (features, True)
    masks = torch.as_tensor(data.masks, device=device)
    actions = torch.as_tensor(data.actions, device=device)
    returns = torch.as_tensor(data.returns, device=device)
    stats = {"bc_loss": float("nan"), "bc_accuracy": float("nan"),
             "bc_val_accuracy": float("nan"), "bc_best_epoch": 0}
    best_state: dict[str, torch.Tensor] | None = None
    best_val = -1.0
    for epoch in range(1, epochs + 1):
        order = torch.randperm(n_fit, generator=gen)
        losses, hits = [], 0
        for start in range(0, n_fit, batch_size):
            _check_stop(should_stop)
            idx = order[start:start + batch_size].to(device)
            values, log_prob = _evaluate(policy, x[idx], actions[idx], masks[idx], pre)
            loss = -log_prob.mean() + 0.5 * torch.nn.functional.mse_loss(
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
            val = sum(_greedy_hits(policy, x[s:s + batch_size], masks[s:s + batch_size],
                                   actions[s:s + batch_size], pre)
                      for s in range(n_fit, len(data), batch_size)) / n_val
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
    return Demonstrations(*(np.concatenate([x, y]) for x, y in
                            zip(astuple(a), astuple(b), strict=True)))


def _check_arguments(model: MaskablePPO, game: str, env_config: dict, games: Any, epochs: Any,
                     batch_size: Any, learning_rate: Any, max_decisions: Any, reward: Any,
                     reward_scale: Any, dagger_rounds: Any, dagger_games: Any,
                     dagger_epochs: Any) -> None:
    """Called directly (a config is checked on load), a model of another game or player count
    failed in torch's matrix product, no games or decisions in torch.cat, a batch size of 0 in
    range(), and an unknown reward mode was paid as "learner" without a word."""
    from card_envs.agents.policy import check_policy_fits

    check_reward(reward, reward_scale)
    check_policy_fits(model, game, env_config, "model")

    counts = {"games": games, "epochs": epochs, "batch_size": batch_size,
              "max_decisions": max_decisions}
    if dagger_rounds:
        counts.update(dagger_games=dagger_games, dagger_epochs=dagger_epochs)
    for name, value in {**counts, "dagger_rounds": dagger_rounds}.items():
        check_count(name, value, low=0 if name == "dagger_rounds" else 1)
    if (isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float))
            or not 0 < learning_rate < np.inf):
        raise ValueError(f"learning_rate: expected a number > 0, got {learning_rate!r}")


def pretrain(model: MaskablePPO, game: str, env_config: dict, games: int, epochs: int,
             batch_size: int, learning_rate: float, max_decisions: int,
             seed: int, reward: str = "learner", reward_scale: float = 1.0,
             dagger_rounds: int = 0, dagger_games: int = 0, dagger_epochs: int = 2,
             should_stop: Callable[[], bool] | None = None) -> dict[str, float]:
    """Clone the heuristic's games, then ``dagger_rounds`` times add ``dagger_games`` games
    played by the policy so far (labelled by the heuristic) and train ``dagger_epochs`` more
    on everything gathered. The held-out share is the newest games: the policy's own.
    ``should_stop`` (asked often: a few decisions or one minibatch apart) returning True
    raises :class:`WarmStartStopped`, leaving the policy part-trained."""
    _check_arguments(model, game, env_config, games, epochs, batch_size, learning_rate,
                     max_decisions, reward, reward_scale, dagger_rounds, dagger_games,
                     dagger_epochs)
    start = time.time()
    data = collect(game, env_config, games, max_decisions, seed, reward, reward_scale,
                   should_stop=should_stop)
    stats = behaviour_clone(model, data, epochs, batch_size, learning_rate, seed,
                            should_stop=should_stop)
    for r in range(1, dagger_rounds + 1):
        model.policy.set_training_mode(False)
        more = collect(game, env_config, dagger_games, max_decisions, seed + r, reward,
                       reward_scale, driver=policy_driver(model.policy, seed + r),
                       should_stop=should_stop)
        data = _joined(data, more)
        stats = behaviour_clone(model, data, dagger_epochs, batch_size, learning_rate, seed + r,
                                should_stop=should_stop)
    stats.update(decisions=len(data), seconds=round(time.time() - start, 1))
    return stats

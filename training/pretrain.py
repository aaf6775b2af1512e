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
from dataclasses import astuple, dataclass
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from card_envs.agents import make_agent
from card_envs.games import make_engine
from training.actors import TorchPolicyActor
from training.selfplay import reward_weights


@dataclass
class Demonstrations:
    observations: np.ndarray  # float32 (N, obs)
    masks: np.ndarray  # bool (N, actions)
    actions: np.ndarray  # int64 (N,)
    returns: np.ndarray  # float32 (N,): the deciding seat's reward from this decision on

    def __len__(self) -> int:
        return len(self.actions)


def collect(game: str, env_config: dict, games: int, max_decisions: int,
            seed: int, reward: str = "learner", reward_scale: float = 1.0,
            driver: Callable[[np.ndarray, np.ndarray], int] | None = None) -> Demonstrations:
    """Heuristic-vs-heuristic games; every decision with the decider's reward to come.

    With a ``driver``, the driver's moves are played in every seat and the heuristic's move in
    each position reached is the label (DAgger): the student learns to recover in the positions
    its own mistakes lead to, which the teacher's games never show it."""
    engine = make_engine(game, **env_config)
    n = engine.num_players
    # Row s turns the seats' game rewards into seat s's, as self-play pays them.
    weights = np.stack([reward_weights(n, s, reward, reward_scale) for s in range(n)])
    agents = [make_agent("heuristic", game, engine.config, seed=seed + i) for i in range(n)]
    obs_rows: list[np.ndarray] = []
    mask_rows: list[np.ndarray] = []
    actions: list[int] = []
    returns: list[float] = []
    obs = np.empty(engine.layout.size, np.float32)
    for g in range(games):
        engine.reset(seed=seed * 1_000_003 + g)
        seats: list[int] = []
        earned: list[float] = []  # the decider's reward before its decision
        total = np.zeros(n)
        while not engine.done:
            seat = engine.current_player
            engine.write_observation(seat, obs)
            mask = engine.legal_mask()
            action = agents[seat].act(obs, mask)
            obs_rows.append(obs.copy())
            mask_rows.append(mask.astype(bool))
            actions.append(int(action))
            seats.append(seat)
            earned.append(float(total[seat]))
            engine.step(int(action) if driver is None else driver(obs, mask))
            total += weights @ engine.rewards
        returns += [float(total[s]) - e for s, e in zip(seats, earned, strict=True)]
        if len(actions) >= max_decisions:
            break
    keep = slice(0, max_decisions)
    return Demonstrations(np.asarray(obs_rows[keep], np.float32),
                          np.asarray(mask_rows[keep], bool),
                          np.asarray(actions[keep], np.int64),
                          np.asarray(returns[keep], np.float32))


def _greedy_hits(policy: torch.nn.Module, obs: torch.Tensor, masks: torch.Tensor,
                 actions: torch.Tensor) -> int:
    with torch.no_grad():
        dist = policy.get_distribution(obs, action_masks=masks.numpy())
        return int((dist.distribution.probs.argmax(-1) == actions).sum())


def behaviour_clone(model: MaskablePPO, data: Demonstrations, epochs: int, batch_size: int,
                    learning_rate: float, seed: int,
                    validation: float = 0.1) -> dict[str, float]:
    """Fit the policy to the demonstrations and keep the epoch that predicts held-out games
    best (the last ``validation`` share of the decisions, i.e. of the games: many epochs on
    few games memorise them). Returns the last epoch's training loss and accuracy and the
    kept epoch's held-out accuracy."""
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    n_val = int(len(data) * validation) if epochs and len(data) > 1 else 0
    n_fit = len(data) - n_val
    obs = torch.as_tensor(data.observations)
    masks = torch.as_tensor(data.masks)
    actions = torch.as_tensor(data.actions)
    returns = torch.as_tensor(data.returns)
    stats = {"bc_loss": float("nan"), "bc_accuracy": float("nan"),
             "bc_val_accuracy": float("nan"), "bc_best_epoch": 0}
    best_state: dict[str, torch.Tensor] | None = None
    best_val = -1.0
    for epoch in range(1, epochs + 1):
        order = torch.randperm(n_fit, generator=gen)
        losses, hits = [], 0
        for start in range(0, n_fit, batch_size):
            idx = order[start:start + batch_size]
            values, log_prob, _ = policy.evaluate_actions(obs[idx], actions[idx],
                                                          action_masks=masks[idx])
            loss = -log_prob.mean() + 0.5 * torch.nn.functional.mse_loss(
                values.flatten(), returns[idx])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())
            if epoch == epochs:  # an extra forward pass: only for the reported last epoch
                hits += _greedy_hits(policy, obs[idx], masks[idx], actions[idx])
        stats.update(bc_loss=float(np.mean(losses)), bc_accuracy=hits / n_fit)
        if n_val:
            val = sum(_greedy_hits(policy, obs[s:s + batch_size], masks[s:s + batch_size],
                                   actions[s:s + batch_size])
                      for s in range(n_fit, len(data), batch_size)) / n_val
            if val > best_val:
                best_val = val
                stats.update(bc_val_accuracy=val, bc_best_epoch=epoch)
                best_state = {k: v.clone() for k, v in policy.state_dict().items()}
    if best_state is not None:
        policy.load_state_dict(best_state)
    policy.set_training_mode(False)
    return stats


def policy_driver(policy: Any, seed: int) -> Callable[[np.ndarray, np.ndarray], int]:
    """One decision at a time, sampled from ``policy`` (sampling visits more positions)."""
    actor = TorchPolicyActor(policy, deterministic=False, rng=np.random.default_rng(seed))
    return lambda obs, mask: int(actor.act(obs[None], mask[None])[0])


def _joined(a: Demonstrations, b: Demonstrations) -> Demonstrations:
    return Demonstrations(*(np.concatenate([x, y]) for x, y in
                            zip(astuple(a), astuple(b), strict=True)))


def pretrain(model: MaskablePPO, game: str, env_config: dict, games: int, epochs: int,
             batch_size: int, learning_rate: float, max_decisions: int,
             seed: int, reward: str = "learner", reward_scale: float = 1.0,
             dagger_rounds: int = 0, dagger_games: int = 0,
             dagger_epochs: int = 2) -> dict[str, float]:
    """Clone the heuristic's games, then ``dagger_rounds`` times add ``dagger_games`` games
    played by the policy so far (labelled by the heuristic) and train ``dagger_epochs`` more
    on everything gathered. The held-out share is the newest games: the policy's own."""
    start = time.time()
    data = collect(game, env_config, games, max_decisions, seed, reward, reward_scale)
    stats = behaviour_clone(model, data, epochs, batch_size, learning_rate, seed)
    for r in range(1, dagger_rounds + 1):
        model.policy.set_training_mode(False)
        more = collect(game, env_config, dagger_games, max_decisions, seed + r, reward,
                       reward_scale, driver=policy_driver(model.policy, seed + r))
        data = _joined(data, more)
        stats = behaviour_clone(model, data, dagger_epochs, batch_size, learning_rate, seed + r)
    stats.update(decisions=len(data), seconds=round(time.time() - start, 1))
    return stats

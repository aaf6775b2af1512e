"""Dogpile's derived features as computed before issue 37 (the oracle of
tests/test_feature_paths.py): every bone's loot was the best three of (batch, n, 4, 14) one-hots,
which cost more than the rest of a PPO update. Kept verbatim but for this docstring.
"""
from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

import torch

from card_envs.games.dogpile.engine import (
    BURY,
    CARD_FEATURES,
    COLLAR_BONUS,
    DIG,
    DOWN,
    JOKER_RANK,
    KEEP,
    NUM_ACTIONS,
    NUM_SLOTS,
    PAWS,
    SLOT_FEATURES,
    STRAIGHT_BONUS,
    UP,
    WAIT,
    DogpileEngine,
)

RANKS, SUITS = 14, 4  # rank one-hot (A..K, joker), suit one-hot
LOOT_SCALE = 50.0  # loot differences are observed as fractions of this
_VALUE = torch.tensor([float(r + 1) for r in range(13)] + [0.0])  # A=1 .. K=13, joker 0
_RANK_NUMBER = torch.arange(RANKS, dtype=torch.float32)
_TRIPLES = list(combinations(range(PAWS + 1), 3))
_SMALL = [c for k in (1, 2) for c in combinations(range(PAWS + 1), k)]
#: Row i keeps every paw bone but bone i (the fourth place, always empty here, stays).
_WITHOUT = (1.0 - torch.eye(PAWS + 1))[:PAWS].unsqueeze(-1)
#: "At most k ticks left" flags, k = 1..6: a dig and a keep take two ticks.
TICK_FLAGS = 6
_TICK_LEVELS = torch.arange(1, TICK_FLAGS + 1, dtype=torch.float32) + 0.5
#: The kinds of action the scored head tells apart (a one-hot per action).
_KINDS = ((DIG, DOWN), (DOWN, UP), (UP, KEEP), (KEEP, BURY), (BURY, WAIT), (WAIT, NUM_ACTIONS))
ACTION_FEATURES = len(_KINDS) + 4
#: Pairs of the four places (three paws and the bone in the paw).
_PAIRS = list(combinations(range(PAWS + 1), 2))


def _on(device: torch.device) -> tuple[torch.Tensor, ...]:
    """The constant tables above on ``device`` (the observations'): a table left on the CPU
    fails a CUDA forward pass. A no-op on the CPU; a few hundred bytes copied per batch on a
    GPU (not cached per device: a cache hides a table made on the wrong device from
    tests/device_guard.py, where both devices are the CPU)."""
    return tuple(t.to(device) for t in (_VALUE, _RANK_NUMBER, _WITHOUT, _TICK_LEVELS))


def _best_three(rank: torch.Tensor, suit: torch.Tensor, ace_high: bool) -> torch.Tensor:
    """Loot of the best three of up to four bones, (..., 4, 14) and (..., 4, 4) one-hots (an
    all-zero row is no bone)."""
    table, numbers, _, _ = _on(rank.device)
    value = rank @ table
    present = rank.sum(-1)
    number = rank @ numbers
    plain = rank[..., :JOKER_RANK]
    best = torch.zeros_like(value[..., 0])
    for combo in _SMALL:
        best = torch.maximum(best, value[..., list(combo)].sum(-1))
    for i, j, k in _TRIPLES:
        loot = value[..., i] + value[..., j] + value[..., k]
        collar = (plain[..., i, :] * plain[..., j, :] * plain[..., k, :]).sum(-1)
        one_suit = (suit[..., i, :] * suit[..., j, :] * suit[..., k, :]).sum(-1)
        ranks = torch.stack([number[..., i], number[..., j], number[..., k]], -1)
        low, high = ranks.min(-1).values, ranks.max(-1).values
        distinct = ((ranks[..., 0] != ranks[..., 1]) & (ranks[..., 1] != ranks[..., 2])
                    & (ranks[..., 0] != ranks[..., 2]))
        run = distinct & (high - low == 2)
        if ace_high:  # Q-K-A: ranks 11, 12 and 0
            run |= distinct & (low == 0) & (high == 12) & ((ranks == 11).any(-1))
        all_there = present[..., i] * present[..., j] * present[..., k]
        loot = loot + all_there * (COLLAR_BONUS * collar + STRAIGHT_BONUS * one_suit * run)
        best = torch.maximum(best, loot)
    return best


def _feat_in_reach(rank: torch.Tensor, suit: torch.Tensor) -> torch.Tensor:
    """1 where two of the bones (..., 4, 14 / 4) share a rank, or a suit two ranks apart at
    most: a collar or a straight fetch is one bone away."""
    plain = rank[..., :JOKER_RANK]
    present = plain.sum(-1)
    number = plain @ _on(rank.device)[1][:JOKER_RANK]
    reach = torch.zeros_like(present[..., 0])
    for i, j in _PAIRS:
        same_rank = (plain[..., i, :] * plain[..., j, :]).sum(-1)
        close = ((number[..., i] - number[..., j]).abs() <= 2).float()
        same_suit = (suit[..., i, :] * suit[..., j, :]).sum(-1) * close
        both = present[..., i] * present[..., j]
        reach = torch.maximum(reach, both * torch.clamp(same_rank + same_suit, max=1.0))
    return reach


def _kind_rows() -> torch.Tensor:
    rows = torch.zeros(NUM_ACTIONS, len(_KINDS))
    for k, (lo, hi) in enumerate(_KINDS):
        rows[lo:hi, k] = 1.0
    return rows


def derived_features(engine: DogpileEngine) -> Callable[
        [torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    slices = engine.layout.slices
    pile_at, paws_at, held_at = slices["pile"], slices["own_paws"], slices["held"]
    ace_high = engine.ace_high
    width = CARD_FEATURES + 1

    time_at, round_at = slices["time_left"], slices["round"]
    round_ticks_host = torch.tensor(engine.round_ticks, dtype=torch.float32)
    max_ticks = float(max(engine.round_ticks))
    kinds_host = _kind_rows()

    def features(obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(global features (batch, 176), per-action features (batch, 167, 10))."""
        batch, device = obs.shape[0], obs.device
        table, _, without_rows, tick_levels = _on(device)
        round_ticks, kinds = round_ticks_host.to(device), kinds_host.to(device)
        pile = obs[:, pile_at].reshape(batch, NUM_SLOTS, SLOT_FEATURES)
        pile_rank, pile_suit = pile[..., 2:2 + RANKS], pile[..., 2 + RANKS:]
        paws = obs[:, paws_at].reshape(batch, PAWS, width)[..., 1:]
        held = obs[:, held_at][:, 1:width]  # the own seat's bone in the paw comes first
        paw_rank, paw_suit = paws[..., :RANKS], paws[..., RANKS:]
        # The paws plus an empty fourth place: the shape _best_three takes.
        hand_rank = torch.cat([paw_rank, torch.zeros(batch, 1, RANKS, device=device)], 1)
        hand_suit = torch.cat([paw_suit, torch.zeros(batch, 1, SUITS, device=device)], 1)
        now = _best_three(hand_rank, hand_suit, ace_high)

        def gain(rank: torch.Tensor, suit: torch.Tensor) -> torch.Tensor:
            """What one more bone per candidate (batch, n, 14 / 4) adds to the paws."""
            n = rank.shape[1]
            ranks = torch.cat([paw_rank.unsqueeze(1).expand(-1, n, -1, -1), rank.unsqueeze(2)], 2)
            suits = torch.cat([paw_suit.unsqueeze(1).expand(-1, n, -1, -1), suit.unsqueeze(2)], 2)
            return (_best_three(ranks, suits, ace_high) - now.unsqueeze(1)) / LOOT_SCALE

        known = pile_rank.sum(-1)
        unknown = (pile[..., 0] - known).clamp(min=0.0)  # a bone this dog has not seen
        slot_gain = gain(pile_rank, pile_suit)
        held_gain = gain(held[:, None, :RANKS], held[:, None, RANKS:])[:, 0:1]
        # What each paw bone is worth to the paws: the loss if it were buried (all three at once).
        without = _best_three(hand_rank.unsqueeze(1) * without_rows,
                              hand_suit.unsqueeze(1) * without_rows, ace_high)
        paw_loss = (now.unsqueeze(1) - without) / LOOT_SCALE
        # The most a bone known for certain (not a sniffed group's belief) would add.
        certain = (pile_rank == 1.0).any(-1)
        certain_gain = slot_gain.masked_fill(~certain, -1.0)
        best_gain, best_slot = certain_gain.max(1)
        is_best = torch.nn.functional.one_hot(best_slot, NUM_SLOTS).float()
        is_best = is_best * (best_gain > 0).float().unsqueeze(1)
        ticks = obs[:, time_at] * (obs[:, round_at] @ round_ticks).unsqueeze(1)
        tick_flags = (ticks <= tick_levels).float()  # (batch, 1) against the six levels
        reach = _feat_in_reach(torch.cat([paw_rank, held[:, None, :RANKS]], 1),
                               torch.cat([paw_suit, held[:, None, RANKS:]], 1)).unsqueeze(1)
        in_paw = paw_rank.sum(-1) > 0
        cheapest = torch.nn.functional.one_hot(paw_loss.masked_fill(~in_paw, 9.0).argmin(1), PAWS)
        cheapest = cheapest.float() * in_paw.any(1, keepdim=True).float()
        global_features = torch.cat([
            unknown, known * (pile_rank @ table) / 13.0, slot_gain, held_gain, paw_loss,
            now.unsqueeze(1) / LOOT_SCALE, ticks / max_ticks, tick_flags,
            best_gain.clamp(min=0.0).unsqueeze(1), reach], dim=1)
        acts = torch.zeros(batch, NUM_ACTIONS, ACTION_FEATURES, device=device)
        acts[..., :len(_KINDS)] = kinds
        base = len(_KINDS)
        digs = slice(DIG, DIG + NUM_SLOTS)
        acts[:, digs, base] = unknown
        acts[:, digs, base + 1] = is_best
        acts[:, digs, base + 2] = slot_gain * 5.0  # in tens of loot points
        acts[:, KEEP, base + 2] = held_gain[:, 0] * 5.0
        acts[:, KEEP, base + 3] = reach[:, 0]
        acts[:, BURY:BURY + PAWS, base + 2] = paw_loss * 5.0
        acts[:, BURY:BURY + PAWS, base + 3] = cheapest
        return global_features, acts

    return features

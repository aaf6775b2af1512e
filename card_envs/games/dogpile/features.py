"""Derived features for Dogpile policies: what each known bone would add to the paws.

A round's loot is the best three bones' values plus feats (three of a rank, a straight of one
suit), a small combinatorial function of the paws and a candidate bone that a plain MLP over
one-hot bones learns poorly. Here it is computed for every pile slot, the bone in the paw and
each paw bone (what burying it would cost), batched in torch, from the seat's own observation.
Cloning the heuristic (one seed, 300 games), the share of decisions that pick an action it
could have chosen rose from 0.89 to 0.91 with these (digs 0.80 to 0.84).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

import torch

from card_envs.games.dogpile.engine import (
    CARD_FEATURES,
    COLLAR_BONUS,
    JOKER_RANK,
    NUM_SLOTS,
    PAWS,
    SLOT_FEATURES,
    STRAIGHT_BONUS,
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


def _best_three(rank: torch.Tensor, suit: torch.Tensor, ace_high: bool) -> torch.Tensor:
    """Loot of the best three of up to four bones, (..., 4, 14) and (..., 4, 4) one-hots (an
    all-zero row is no bone)."""
    value = rank @ _VALUE
    present = rank.sum(-1)
    number = rank @ _RANK_NUMBER
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


def derived_features(engine: DogpileEngine) -> Callable[[torch.Tensor], torch.Tensor]:
    slices = engine.layout.slices
    pile_at, paws_at, held_at = slices["pile"], slices["own_paws"], slices["held"]
    ace_high = engine.ace_high
    width = CARD_FEATURES + 1

    def features(obs: torch.Tensor) -> torch.Tensor:
        batch = obs.shape[0]
        pile = obs[:, pile_at].reshape(batch, NUM_SLOTS, SLOT_FEATURES)
        pile_rank, pile_suit = pile[..., 2:2 + RANKS], pile[..., 2 + RANKS:]
        paws = obs[:, paws_at].reshape(batch, PAWS, width)[..., 1:]
        held = obs[:, held_at][:, 1:width]  # the own seat's bone in the paw comes first
        paw_rank, paw_suit = paws[..., :RANKS], paws[..., RANKS:]
        # The paws plus an empty fourth place: the shape _best_three takes.
        hand_rank = torch.cat([paw_rank, torch.zeros(batch, 1, RANKS)], 1)
        hand_suit = torch.cat([paw_suit, torch.zeros(batch, 1, SUITS)], 1)
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
        without = _best_three(hand_rank.unsqueeze(1) * _WITHOUT, hand_suit.unsqueeze(1) * _WITHOUT,
                              ace_high)
        paw_loss = (now.unsqueeze(1) - without) / LOOT_SCALE
        return torch.cat([unknown, known * (pile_rank @ _VALUE) / 13.0, slot_gain, held_gain,
                          paw_loss, now.unsqueeze(1) / LOOT_SCALE], dim=1)

    return features

"""Derived features for Dogpile policies: what each known bone would add to the paws.

A round's loot is the best three bones' values plus feats (three of a rank, a straight of one
suit), a small combinatorial function of the paws and a candidate bone that a plain MLP over
one-hot bones learns poorly. Here it is computed for every pile slot, the bone in the paw and
each paw bone (what burying it would cost), batched in torch, from the seat's own observation.
The race is counted in ticks, so the ticks left are given as a count, not only as the share
of the round the observation shows.

Per-action features go to the policy's scored-actions head (``card_envs/agents/features.py``):
for ``dig:NN`` whether bone NN is unseen, whether it is the known bone that adds most, and what
it adds; for ``keep`` what the bone in the paw adds and whether a feat is in reach; for
``bury:i`` what paw bone i is worth and whether it is the cheapest. One set of weights scores
all 54 digs alike, which a dense output layer has to learn slot by slot.

Cloning the heuristic (600 games, held-out tenth), the share of decisions that pick an action
it could have chosen: 0.961 with the earlier features, 0.979 with these global ones, 0.985
with the per-action ones too (digs 0.937, 0.930, 0.975; keep-or-put-back 0.90, 0.99, 0.99).
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
#: "At most k ticks left" flags, k = 1..6: a dig and a keep take two ticks.
TICK_FLAGS = 6
_TICK_LEVELS = torch.arange(1, TICK_FLAGS + 1, dtype=torch.float32) + 0.5
#: The kinds of action the scored head tells apart (a one-hot per action).
_KINDS = ((DIG, DOWN), (DOWN, UP), (UP, KEEP), (KEEP, BURY), (BURY, WAIT), (WAIT, NUM_ACTIONS))
ACTION_FEATURES = len(_KINDS) + 4
#: Pairs of the four places (three paws and the bone in the paw).
_PAIRS = list(combinations(range(PAWS + 1), 2))
_PAW_PAIRS = list(combinations(range(PAWS), 2))
#: The pairs' first and second members, as index lists (every pair in one indexing).
_PLACE_FIRST, _PLACE_SECOND = [p[0] for p in _PAIRS], [p[1] for p in _PAIRS]
_PAW_FIRST, _PAW_SECOND = [p[0] for p in _PAW_PAIRS], [p[1] for p in _PAW_PAIRS]


def _on(device: torch.device) -> tuple[torch.Tensor, ...]:
    """The constant tables above on ``device`` (the observations'): a table left on the CPU
    fails a CUDA forward pass. A no-op on the CPU; a few hundred bytes copied per batch on a
    GPU (not cached per device: a cache hides a table made on the wrong device from
    tests/device_guard.py, where both devices are the CPU)."""
    return tuple(t.to(device) for t in (_VALUE, _RANK_NUMBER, _TICK_LEVELS))


def _triple_loot(values: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
                 present: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
                 numbers: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
                 collar: torch.Tensor, one_suit: torch.Tensor, ace_high: bool) -> torch.Tensor:
    """Triples' loot (three bones' values, plus a collar's or a one-suit straight's bonus
    when all three are there) from their bones' values, presences and rank numbers, any
    shapes that broadcast (elementwise: no stacked copy of the ranks)."""
    loot = values[0] + values[1] + values[2]
    a, b, c = numbers
    low = torch.minimum(torch.minimum(a, b), c)
    high = torch.maximum(torch.maximum(a, b), c)
    distinct = (a != b) & (b != c) & (a != c)
    run = distinct & (high - low == 2)
    if ace_high:  # Q-K-A: ranks 11, 12 and 0
        run |= distinct & (low == 0) & (high == 12) & ((a == 11) | (b == 11) | (c == 11))
    all_there = present[0] * present[1] * present[2]
    return loot + all_there * (COLLAR_BONUS * collar + STRAIGHT_BONUS * one_suit * run)


def _paw_loot(paw_rank: torch.Tensor, paw_suit: torch.Tensor, ace_high: bool) -> tuple[
        torch.Tensor, torch.Tensor, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]:
    """The loot of the three paws (batch, 3, 14 / 4): ``(now, without, best)``, where
    ``without[:, i]`` is the loot with paw bone i buried and ``best(rank, suit)`` the loot of the
    best three of the paws and each candidate bone (batch, n, 14 / 4).

    Every bone's value and every bonus is at least 0, so a triple is worth at least any pair or
    single inside it: the best three of four bones is the best of the four triples, and with
    one paw bone buried it is the other two's values. Nothing of shape (batch, n, 4, 14) is
    built (the candidates are every pile slot), and the three paw pairs are one dimension
    (batch, 3, n), so a call costs the same few dozen torch operations at any batch size: at
    self-play's batches of 32 and fewer, the operations' count is the cost."""
    table, numbers, _ = _on(paw_rank.device)
    plain, value = paw_rank[..., :JOKER_RANK], paw_rank @ table
    present, number = paw_rank.sum(-1), paw_rank @ numbers
    i, j = _PAW_FIRST, _PAW_SECOND
    # Per paw pair (batch, 3, 1): broadcast over the candidates.
    v_i, v_j = value[:, i, None], value[:, j, None]
    p_i, p_j = present[:, i, None], present[:, j, None]
    r_i, r_j = number[:, i, None], number[:, j, None]
    both_plain = plain[:, i] * plain[:, j]  # (batch, 3, 13): the pair's shared rank, if any
    both_suit = paw_suit[:, i] * paw_suit[:, j]
    # Per paw bone (batch, 1): the three paws' own triple, and the loot with one buried.
    v, p, r = ((t[:, 0:1], t[:, 1:2], t[:, 2:3]) for t in (value, present, number))
    paws_only = _triple_loot(
        v, p, r, (plain[:, 0] * plain[:, 1] * plain[:, 2]).sum(-1, keepdim=True),
        (paw_suit[:, 0] * paw_suit[:, 1] * paw_suit[:, 2]).sum(-1, keepdim=True), ace_high)

    def best(rank: torch.Tensor, suit: torch.Tensor) -> torch.Tensor:
        value_x, present_x, number_x = rank @ table, rank.sum(-1), rank @ numbers
        # A pair shares at most one rank and one suit, so each sum has one term at most.
        collar = both_plain @ rank[..., :JOKER_RANK].transpose(1, 2)  # (batch, 3, n)
        one_suit = both_suit @ suit.transpose(1, 2)
        with_pairs = _triple_loot(
            (v_i, v_j, value_x[:, None]), (p_i, p_j, present_x[:, None]),
            (r_i, r_j, number_x[:, None]), collar, one_suit, ace_high)
        return torch.maximum(paws_only, with_pairs.amax(1))

    without = torch.cat([v[1] + v[2], v[0] + v[2], v[0] + v[1]], 1)
    return paws_only[:, 0], without, best


def _feat_in_reach(rank: torch.Tensor, suit: torch.Tensor) -> torch.Tensor:
    """1 where two of the bones (..., 4, 14 / 4) share a rank, or a suit two ranks apart at
    most: a collar or a straight fetch is one bone away. The six pairs at once."""
    plain = rank[..., :JOKER_RANK]
    present = plain.sum(-1)
    number = plain @ _on(rank.device)[1][:JOKER_RANK]
    a, b = _PLACE_FIRST, _PLACE_SECOND
    same_rank = (plain[..., a, :] * plain[..., b, :]).sum(-1)
    close = ((number[..., a] - number[..., b]).abs() <= 2).float()
    same_suit = (suit[..., a, :] * suit[..., b, :]).sum(-1) * close
    both = present[..., a] * present[..., b]
    return (both * torch.clamp(same_rank + same_suit, max=1.0)).amax(-1).clamp(min=0.0)


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
        table, _, tick_levels = _on(device)
        round_ticks, kinds = round_ticks_host.to(device), kinds_host.to(device)
        pile = obs[:, pile_at].reshape(batch, NUM_SLOTS, SLOT_FEATURES)
        pile_rank, pile_suit = pile[..., 2:2 + RANKS], pile[..., 2 + RANKS:]
        paws = obs[:, paws_at].reshape(batch, PAWS, width)[..., 1:]
        held = obs[:, held_at][:, 1:width]  # the own seat's bone in the paw comes first
        paw_rank, paw_suit = paws[..., :RANKS], paws[..., RANKS:]
        now, without, best_with = _paw_loot(paw_rank, paw_suit, ace_high)

        def gain(rank: torch.Tensor, suit: torch.Tensor) -> torch.Tensor:
            """What one more bone per candidate (batch, n, 14 / 4) adds to the paws."""
            return (best_with(rank, suit) - now.unsqueeze(1)) / LOOT_SCALE

        known = pile_rank.sum(-1)
        unknown = (pile[..., 0] - known).clamp(min=0.0)  # a bone this dog has not seen
        slot_gain = gain(pile_rank, pile_suit)
        held_gain = gain(held[:, None, :RANKS], held[:, None, RANKS:])
        # What each paw bone is worth to the paws: the loss if it were buried (all three at once).
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

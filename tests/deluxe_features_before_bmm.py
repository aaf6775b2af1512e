"""Deluxe Memory's derived features as computed with ``einsum`` and broadcast sums before they
were rewritten as batched matrix products (issue 37: a call costs its count of torch
operations): the oracle of tests/test_feature_paths.py. Kept verbatim but for this docstring.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from card_envs.games.deluxe_memory.engine import (
    CARD_FEATURES,
    NUM_CELLS,
    NUM_RANKS,
    DeluxeMemoryEngine,
)

#: Per cell: known, still unknown, a known mate, a known mate of its colour, matches the
#: turn's first card (rank; rank and colour), the value of a known pair there (rank / 13),
#: seen by another player, and exposed (another player has seen it and a known mate of it,
#: so could match the pair on its turn).
PER_CELL = 9


def derived_features(engine: DeluxeMemoryEngine) -> Callable[[torch.Tensor], torch.Tensor]:
    slices = engine.layout.slices
    cards_at, present_at = slices["cards"], slices["present"]
    first_at, seen_at = slices["first_pick"], slices["seen_by"]
    n = engine.num_players
    rank_value_host = torch.arange(1, NUM_RANKS + 1, dtype=torch.float32) / 13.0

    def features(obs: torch.Tensor) -> torch.Tensor:
        rank_value = rank_value_host.to(obs.device)  # a no-op when it is there already
        cards = obs[:, cards_at].reshape(-1, NUM_CELLS, CARD_FEATURES)
        rank, colour = cards[..., :NUM_RANKS], cards[..., NUM_RANKS:]
        known = rank.sum(-1)
        unknown = (obs[:, present_at] - known).clamp(min=0.0)
        mates = (rank * rank.sum(1, keepdim=True)).sum(-1) - known
        rank_colour = rank.unsqueeze(-1) * colour.unsqueeze(-2)
        colour_mates = (rank_colour * rank_colour.sum(1, keepdim=True)).sum((-1, -2)) - (
            colour.sum(-1))
        first = obs[:, first_at]
        first_rank = torch.einsum("bn,bnr->br", first, rank).unsqueeze(1)
        first_colour = torch.einsum("bn,bnc->bc", first, colour).unsqueeze(1)
        matches_first = (rank * first_rank).sum(-1) * (1.0 - first)
        same_colour = matches_first * (colour * first_colour).sum(-1)
        has_mate = (mates > 0).float()
        pair_value = has_mate * (rank * rank_value).sum(-1)
        others = obs[:, seen_at].reshape(-1, n, NUM_CELLS)[:, 1:]
        # Per other player and cell: how many known mates of the card there it has seen.
        seen_ranks = torch.einsum("bcr,boc->bor", rank, others)
        seen_mates = torch.einsum("bcr,bor->boc", rank, seen_ranks) - others * known.unsqueeze(1)
        exposed = (others * (seen_mates > 0).float()).amax(1)
        return torch.cat([known, unknown, has_mate, (colour_mates > 0).float(), matches_first,
                          same_colour, pair_value, others.amax(1), exposed], dim=1)

    return features

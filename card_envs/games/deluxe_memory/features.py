"""Derived features for Deluxe Memory policies: which remembered cards pair up.

The observation lists the known card of each of 56 cells. Whether two cells hold a pair is a
comparison between cells, which a plain MLP over that list learns poorly (held-out accuracy
cloning the heuristic: 0.26 raw, 0.55 with these). Every feature is a function of the seat's
own observation, so nothing is added that the seat may not know.
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
        # Batched matrix products where a sum runs over cells or ranks: at self-play's
        # batches of 32 and fewer a call's cost is its count of torch operations.
        rank_value = rank_value_host.to(obs.device)  # a no-op when it is there already
        cards = obs[:, cards_at].reshape(-1, NUM_CELLS, CARD_FEATURES)
        rank, colour = cards[..., :NUM_RANKS], cards[..., NUM_RANKS:]
        known = rank.sum(-1)
        unknown = (obs[:, present_at] - known).clamp(min=0.0)
        mates = (rank @ rank.sum(1).unsqueeze(-1))[..., 0] - known
        rank_colour = (rank.unsqueeze(-1) * colour.unsqueeze(-2)).flatten(2)
        colour_mates = (rank_colour @ rank_colour.sum(1).unsqueeze(-1))[..., 0] - (
            colour.sum(-1))
        first = obs[:, first_at]
        first_card = first.unsqueeze(1) @ cards  # (batch, 1, card): the turn's first card
        matches_first = (rank @ first_card[:, 0, :NUM_RANKS, None])[..., 0] * (1.0 - first)
        same_colour = matches_first * (colour @ first_card[:, 0, NUM_RANKS:, None])[..., 0]
        has_mate = (mates > 0).float()
        pair_value = has_mate * (rank @ rank_value)
        others = obs[:, seen_at].reshape(-1, n, NUM_CELLS)[:, 1:]
        # Per other player and cell: how many known mates of the card there it has seen.
        seen_ranks = others @ rank
        seen_mates = seen_ranks @ rank.transpose(1, 2) - others * known.unsqueeze(1)
        exposed = (others * (seen_mates > 0).float()).amax(1)
        return torch.cat([known, unknown, has_mate, (colour_mates > 0).float(), matches_first,
                          same_colour, pair_value, others.amax(1), exposed], dim=1)

    return features

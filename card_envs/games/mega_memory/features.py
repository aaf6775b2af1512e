"""Derived features for Mega Mem-Ory policies: which known cards group with which.

The observation gives each zone's known cards as 52-card one-hots. A score needs cards that
match (same rank) or run (same suit, next ranks), a relation between zones that a plain MLP
over one-hots learns poorly (held-out accuracy cloning the heuristic: 0.78 raw, 0.90 with
these). Every feature is a function of the seat's own observation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from card_envs.core.cards import RANK_OF, SUIT_OF
from card_envs.games.mega_memory.engine import NUM_PILES, SIDE_SLOTS, MegaMemoryEngine

#: first card, second card, discard top, the card under it, side slots, centre tops
ENTITIES = 4 + SIDE_SLOTS + NUM_PILES


#: same rank; same suit one rank apart; same suit two ranks apart
RELATIONS = 3


def _relations() -> torch.Tensor:
    """(52, 3 * 52): the three relations side by side, card by card."""
    rank, suit = np.array(RANK_OF[:52]), np.array(SUIT_OF[:52])
    same_suit = suit[:, None] == suit[None, :]
    gap = np.abs(rank[:, None] - rank[None, :])
    same_rank = gap == 0
    np.fill_diagonal(same_rank, False)
    return torch.as_tensor(np.concatenate([same_rank, same_suit & (gap == 1),
                                           same_suit & (gap == 2)], 1).astype(np.float32))


def derived_features(engine: MegaMemoryEngine) -> Callable[[torch.Tensor], torch.Tensor]:
    slices = engine.layout.slices
    relations_host = _relations()
    # Where each feature sits in the (entity, relation, E + 1) products below, relation by
    # relation: each pair of entities once, then each entity against this seat's scored cards.
    first, second = torch.triu_indices(ENTITIES, ENTITIES, 1)
    entity = torch.arange(ENTITIES)

    def position(row_entity: torch.Tensor, relation: int, column: torch.Tensor) -> torch.Tensor:
        return (row_entity * RELATIONS + relation) * (ENTITIES + 1) + column

    picked_host = torch.cat([torch.cat([position(first, r, second),
                                        position(entity, r, torch.full_like(entity, ENTITIES))])
                             for r in range(RELATIONS)])
    top_depth, next_depth = 0.5 / 51, 1.5 / 51  # depth is observed as position / 51

    def features(obs: torch.Tensor) -> torch.Tensor:
        # The tables on the observations' device (a no-op when they are there already).
        relations, picked = relations_host.to(obs.device), picked_host.to(obs.device)

        def field(name: str) -> torch.Tensor:
            return obs[:, slices[name]]

        depth, remembered = field("discard_depth"), field("discard_known")
        top = remembered * (depth < top_depth)
        under = remembered * ((depth > top_depth) & (depth < next_depth))
        entities = torch.cat([
            torch.stack([field("first_card"), field("second_card"), top, under], 1),
            field("my_side").reshape(-1, SIDE_SLOTS, 52),
            field("centre").reshape(-1, NUM_PILES, 52),
        ], 1)
        batch = entities.shape[0]
        # All three relations in two batched products: at self-play's batches of 32 and
        # fewer a call's cost is its count of torch operations, not its arithmetic.
        # Per entity and relation (rows in that order): the cards it groups with; then per
        # such row, how many of them each entity holds and how many this seat has scored.
        related = (entities @ relations).reshape(batch, ENTITIES * RELATIONS, 52)
        together = related @ torch.cat([entities, field("my_scored").unsqueeze(1)], 1).mT
        known = entities.sum(-1)  # which entities are known
        return torch.cat([known, together.flatten(1)[:, picked]], dim=1)

    return features

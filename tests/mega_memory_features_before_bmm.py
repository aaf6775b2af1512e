"""Mega Mem-Ory's derived features as computed one relation at a time before the three were
batched into two matrix products (issue 37: a call costs its count of torch operations): the
oracle of tests/test_feature_paths.py. Kept verbatim but for this docstring.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from card_envs.core.cards import RANK_OF, SUIT_OF
from card_envs.games.mega_memory.engine import NUM_PILES, SIDE_SLOTS, MegaMemoryEngine

#: first card, second card, discard top, the card under it, side slots, centre tops
ENTITIES = 4 + SIDE_SLOTS + NUM_PILES


def _relations() -> torch.Tensor:
    """(3, 52, 52): same rank; same suit one rank apart; same suit two ranks apart."""
    rank, suit = np.array(RANK_OF[:52]), np.array(SUIT_OF[:52])
    same_suit = suit[:, None] == suit[None, :]
    gap = np.abs(rank[:, None] - rank[None, :])
    same_rank = gap == 0
    np.fill_diagonal(same_rank, False)
    return torch.as_tensor(np.stack([same_rank, same_suit & (gap == 1),
                                     same_suit & (gap == 2)]).astype(np.float32))


def derived_features(engine: MegaMemoryEngine) -> Callable[[torch.Tensor], torch.Tensor]:
    slices = engine.layout.slices
    relations_host = _relations()
    upper_host = torch.triu_indices(ENTITIES, ENTITIES, 1)
    top_depth, next_depth = 0.5 / 51, 1.5 / 51  # depth is observed as position / 51

    def features(obs: torch.Tensor) -> torch.Tensor:
        # The tables on the observations' device (a no-op when they are there already).
        relations, upper = relations_host.to(obs.device), upper_host.to(obs.device)

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
        scored = field("my_scored").unsqueeze(1)
        out = [entities.sum(-1)]  # which entities are known
        for relation in relations:
            related = entities @ relation  # per entity: the cards it groups with
            pairs = related @ entities.transpose(1, 2)
            out.append(pairs[:, upper[0], upper[1]])
            out.append((related * scored).sum(-1))  # extends what this seat has scored
        return torch.cat(out, dim=1)

    return features

"""Build ROY stacked decks from the hands a scenario needs."""

from __future__ import annotations

from card_envs.core.cards import card_code, card_id
from card_envs.games.roy.engine import RoyEngine


def stacked_deck(hands: list[list[str]], starter: str, draws: list[str] = (),
                 dealer: int | None = None) -> list[str]:
    """A full 52-card deck (top first) that deals ``hands`` (by seat), turns ``starter`` and
    then draws ``draws`` in order; hands shorter than 7 cards are padded from unused cards.
    ``dealer`` is the dealing seat (default: the last seat, so seat 0 plays first)."""
    n = len(hands)
    dealer = n - 1 if dealer is None else dealer
    used = {card_id(c) for h in hands for c in h} | {card_id(starter)} | {card_id(c) for c in draws}
    assert len(used) == sum(map(len, hands)) + 1 + len(draws), "a card is used twice"
    spare = [c for c in range(52) if c not in used]
    full = [list(map(card_id, h)) for h in hands]
    for h in full:
        while len(h) < 7:
            h.append(spare.pop())
    order: list[int] = []
    for i in range(7):
        for k in range(1, n + 1):
            order.append(full[(dealer + k) % n][i])
    order.append(card_id(starter))
    order += [card_id(c) for c in draws]
    order += spare
    return [card_code(c) for c in order]


def roy(hands: list[list[str]], starter: str, draws: list[str] = (), **config) -> RoyEngine:
    """A ROY engine dealt exactly ``hands`` (padded to 7), with seat 0 to play first."""
    n = len(hands)
    engine = RoyEngine(num_players=n, first_dealer=n - 1, **config)
    engine.reset(seed=0, deck=stacked_deck(hands, starter, draws))
    return engine



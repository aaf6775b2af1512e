"""ROY's determinization (``resample_hidden``) reads and writes who remembers each buried card
in one numpy pass, where it once read them card by card: it must redeal exactly as the card by
card version did (kept here as the reference), the same cards in the same places from the
same random draws, with every memory setting, player count and reshuffle."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.knowledge import count_what_anyone_counts
from card_envs.games.roy.engine import RESHUFFLED, RoyEngine


def _deal_counted_first_reference(unseen, counted, also_hidden, deck_size, rng):
    in_deck = [c for c in unseen if counted[c] >= 0]
    rest = [c for c in unseen if counted[c] < 0] + also_hidden
    in_deck = [in_deck[i] for i in rng.permutation(len(in_deck))]
    rest = [rest[i] for i in rng.permutation(len(rest))]
    from_memory = min(deck_size, len(in_deck))
    deck = in_deck[:from_memory] + rest[:deck_size - from_memory]
    deck = [deck[i] for i in rng.permutation(len(deck))]
    return deck, rest[deck_size - from_memory:], in_deck[from_memory:]


def _resample_reference(self, seat, rng) -> None:
    """``RoyEngine._resample_hidden`` as it was, card by card."""
    known = self.tracker.known
    buried = self.discard[:-1]
    hidden_buried = [i for i, c in enumerate(buried) if known[seat, c] < 0]
    remembered_by = [known[:, c] >= 0 for c in buried]
    unseen = [c for s in range(self.num_players) if s != seat for c in self.hands[s]]
    unseen += self.deck
    self.deck, rest, spare = _deal_counted_first_reference(
        unseen, known[seat, RESHUFFLED:], [buried[i] for i in hidden_buried],
        len(self.deck), rng)
    for i in hidden_buried:
        self.discard[i] = rest.pop()
    pool = spare + rest
    pool = [pool[i] for i in rng.permutation(len(pool))]
    k = 0
    for s in range(self.num_players):
        if s == seat:
            continue
        size = len(self.hands[s])
        self.hands[s] = pool[k:k + size]
        k += size
    if max(self.forced_suit) >= 0:  # tested on its own in tests/test_roy_forced_draws.py
        self._honour_forced_draws(seat, hidden_buried, rng)
    for s in range(self.num_players):
        if s != seat:
            self.hand_onehot[s].fill(0.0)
            self.hand_onehot[s, self.hands[s]] = 1.0
    deck_memory = known[:, RESHUFFLED:].copy()
    known.fill(-1)
    self._views_ok = False
    for i, c in enumerate(self.discard[:-1]):
        for holder in np.flatnonzero(remembered_by[i]):
            known[holder, c] = c
    if self._perfect_memory:
        count_what_anyone_counts(deck_memory)
    known[:, RESHUFFLED:] = deck_memory
    for s, hand in enumerate(self.hands):
        known[s, [RESHUFFLED + c for c in hand]] = -1
    known[:, [RESHUFFLED + c for c in self.discard]] = -1
    self._mask_valid = False


@pytest.mark.parametrize("config", [
    {"num_players": 2},
    {"num_players": 2, "draw_when_able": True},  # long hands: reshuffles
    {"num_players": 3, "memory": 0.3, "draw_when_able": True},
    {"num_players": 4, "memory": "none"},
    {"num_players": 2, "episode": "game", "target_score": 25, "memory": 0.1},
])
def test_the_redeal_is_the_card_by_card_ones(config) -> None:
    engine = RoyEngine(**config)
    rng = np.random.default_rng(1)
    compared = reshuffled = 0
    for episode in range(6):
        engine.reset(seed=episode)
        while not engine.done:
            seat = int(rng.integers(engine.num_players))
            ours, theirs = engine.clone(), engine.clone()
            draws = int(rng.integers(2**63))
            mine, reference = np.random.default_rng(draws), np.random.default_rng(draws)
            ours._resample_hidden(seat, mine)
            _resample_reference(theirs, seat, reference)
            assert mine.integers(2**62) == reference.integers(2**62)  # the same draws made
            assert ours.hands == theirs.hands and ours.deck == theirs.deck
            assert ours.discard == theirs.discard
            assert np.array_equal(ours.hand_onehot, theirs.hand_onehot)
            assert np.array_equal(ours.tracker.known, theirs.tracker.known)
            ours.check_invariants()
            compared += 1
            reshuffled += engine.reshuffled
            legal = np.flatnonzero(engine.legal_mask())
            engine.step(int(legal[rng.integers(legal.size)]))
    assert compared > 100 and (reshuffled or not config.get("draw_when_able"))

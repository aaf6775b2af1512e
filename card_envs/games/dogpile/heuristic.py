"""A rule-based Dogpile dog that reads only its own observation.

Plan (it plays for FULLHOUND, the highest total): dig the most valuable bone it can see or
remembers when that improves its paws (feats included); otherwise turn over unknown bones to
learn the pile. A dug bone is kept when it is worth keeping given the time left (picky early,
anything late), else put back face down. With full paws it swaps its weakest bone for a clearly
better known one. Sniffs go to unknown bones; shuffled-back bones go to the first free spots.
"""

from __future__ import annotations

import functools
from itertools import combinations
from typing import Any

import numpy as np

from card_envs.agents.base import Agent
from card_envs.core.cards import FACE_VALUE_OF
from card_envs.games.dogpile.engine import (
    BURY,
    CARD_FEATURES,
    COLLAR_BONUS,
    DIG,
    DOWN,
    KEEP,
    NUM_SLOTS,
    PAWS,
    SLOT_FEATURES,
    STRAIGHT_BONUS,
    WAIT,
    DogpileEngine,
    round_feats,
)

#: A dug bone worth at least this is kept while there is plenty of time.
PICKY_VALUE = 10


def _cards(enc: np.ndarray, present: np.ndarray) -> list[int]:
    """The card of each row's exact rank+suit encoding (rows ``(k, 18)``), else -1: no bone
    (``present`` False), unknown, or only a belief. All rows at once: a decision reads 54."""
    rank_hit, suit_hit = enc[:, :14] == 1.0, enc[:, 14:] == 1.0
    rank, suit = rank_hit.argmax(1), suit_hit.argmax(1)
    joker = rank == 13  # which joker does not matter
    exact = (rank_hit.sum(1) == 1) & (joker | (suit_hit.sum(1) == 1))
    cards = np.where(joker, 52, suit * 13 + rank)
    return np.where(exact & present, cards, -1).tolist()


def paw_value(cards: list[int], ace_high: bool = False) -> int:
    """Round loot of the best three of ``cards`` (bone values plus feats)."""
    return _best_three(tuple(sorted(cards)), ace_high)


@functools.lru_cache(maxsize=65536)
def _best_three(cards: tuple[int, ...], ace_high: bool) -> int:
    best = 0
    for k in range(min(PAWS, len(cards)), -1, -1):
        for combo in combinations(cards, k):
            collar, straight = round_feats(list(combo), ace_high)
            v = sum(FACE_VALUE_OF[c] for c in combo) + COLLAR_BONUS * collar
            best = max(best, v + STRAIGHT_BONUS * straight)
    return best


class DogpileHeuristic(Agent):
    name = "heuristic"

    def __init__(self, **config: Any) -> None:
        engine = DogpileEngine(**config)
        self.layout = engine.layout
        self.ace_high = engine.ace_high
        self.rng = np.random.default_rng()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 1:
            return int(legal[0])
        view = self.layout.decode(observation)
        pile = view["pile"].reshape(NUM_SLOTS, SLOT_FEATURES)
        occupied = pile[:, 0] > 0.5
        known = _cards(pile[:, 2:], occupied)
        empty = np.flatnonzero(~occupied)
        phase = int(np.argmax(view["phase"]))
        if phase == 1:  # sniffing: look at bones nobody has shown us
            unknown = [t for t in range(NUM_SLOTS) if occupied[t] and known[t] < 0]
            pick = unknown if unknown else [int(a - DIG) for a in legal if a < DOWN]
            return DIG + int(self.rng.choice(pick))
        if phase == 2:  # shuffling back face down
            return DOWN + int(empty[0])

        paws_enc = view["own_paws"].reshape(PAWS, CARD_FEATURES + 1)
        paws = _cards(paws_enc[:, 1:], paws_enc[:, 0] > 0.5)
        mine = [c for c in paws if c >= 0]
        state = view["own_state"]
        time_left = float(view["time_left"][0])
        current = paw_value(mine, self.ace_high)

        if state[1] > 0.5:  # holding a dug bone
            held_enc = view["held"][:CARD_FEATURES + 1]
            (card,) = _cards(held_enc[None, 1:], np.ones(1, dtype=bool))
            gain = paw_value(mine + [card], self.ace_high) - current
            late = time_left < 0.2
            if KEEP in legal and gain > 0 and (late or gain >= PICKY_VALUE
                                               or self._feat_hope(mine + [card])):
                return KEEP
            return DOWN + int(self.rng.choice(empty))
        if state[2] > 0.5:  # burying: tuck it away face down
            return DOWN + int(self.rng.choice(empty))

        # Free: the best known bone that would improve the paws.
        best_slot, best_gain = -1, 0
        room = len(mine) < PAWS
        for t in range(NUM_SLOTS):
            c = known[t]
            if c < 0:
                continue
            if room:
                gain = paw_value(mine + [c], self.ace_high) - current
            else:
                gain = max(paw_value([x for x in mine if x != w] + [c], self.ace_high)
                           for w in mine) - current
            if gain > best_gain:
                best_slot, best_gain = t, gain
        if room:
            if best_slot >= 0 and (best_gain >= PICKY_VALUE or time_left < 0.25):
                return DIG + best_slot
            unknown = [t for t in range(NUM_SLOTS) if occupied[t] and known[t] < 0]
            if unknown:
                return DIG + int(self.rng.choice(unknown))
            if best_slot >= 0:
                return DIG + best_slot
            return WAIT
        if best_slot >= 0 and best_gain >= 3 and time_left > 0.1:
            # Swap: bury the bone whose loss costs least (the rest stay worth most), then dig
            # the better one.
            worst = max(range(PAWS), key=lambda i: paw_value(
                [x for j, x in enumerate(paws) if j != i and x >= 0], self.ace_high))
            return BURY + worst
        return WAIT

    @staticmethod
    def _feat_hope(cards: list[int]) -> bool:
        """Two bones of one rank, or two close bones of one suit: a feat may follow."""
        for a, b in combinations(cards, 2):
            if a >= 52 or b >= 52:
                continue
            if a % 13 == b % 13 or (a // 13 == b // 13 and abs(a % 13 - b % 13) <= 2):
                return True
        return False

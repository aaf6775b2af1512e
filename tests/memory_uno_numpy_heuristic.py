"""The Memory-Uno heuristic as it was written in numpy before its decision was compiled
(``card_envs/games/memory_uno/heuristic_rules.py``), kept unchanged as the reference its
moves are compared with (tests/test_memory_uno_heuristic.py).

Plan: keep low cards and swap out the highest known (or an unknown) card; draw from the
graveyard when its top is clearly better than the worst own card; spend effects on learning its
own unknown cards, then opponents'; swap its worst card for an opponent's known low card; throw
only cards it remembers that match the graveyard; call the round when its estimated hand is low
and clearly below every opponent's estimate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import Agent
from card_envs.games.memory_uno.engine import (
    CALL,
    DISCARD,
    DRAW_DECK,
    DRAW_GRAVE,
    DRAWN,
    GIVE,
    KEEP,
    KIND_COPIES,
    KIND_MATCH_KEYS,
    KIND_POINTS,
    LOOK_ANY,
    NUM_KINDS,
    OWN_BASE,
    PASS,
    PEEK_OTHER,
    PEEK_OWN,
    PICK_BASE,
    SLOTS,
    SWAP_FIRST,
    SWAP_SECOND,
    TURN,
    TURN_SCALE,
    WINDOW,
    MemoryUnoEngine,
)

#: Expected points of a card nobody has seen (the deck average).
UNKNOWN_VALUE = sum(p * c for p, c in zip(KIND_POINTS, KIND_COPIES, strict=True)) / sum(KIND_COPIES)
#: Standard deviation of an unknown card's points.
UNKNOWN_SD = (sum(c * (p - UNKNOWN_VALUE) ** 2
                  for p, c in zip(KIND_POINTS, KIND_COPIES, strict=True))
              / sum(KIND_COPIES)) ** 0.5
CALL_Z = 1.2  # call when every opponent's estimate is this many SDs of the difference above ours
CALL_LIMIT = 12.0  # and never with more than this (a failed call costs 30 more)
#: Each kind's points as an array (indexed by the observed kinds).
_POINTS = np.asarray(KIND_POINTS)
PATIENCE = 40  # after this many turns in a round, call whenever not estimated behind


class NumpyMemoryUnoHeuristic(Agent):
    name = "heuristic"
    draws_random = False  # deterministic: a search need not reseed it

    def __init__(self, **config: Any) -> None:
        engine = MemoryUnoEngine(**config)
        self.layout = engine.layout
        self.n = engine.num_players
        self.ns = engine.num_slots
        self.throw_base = engine.throw_base
        self.match_key = KIND_MATCH_KEYS[engine.config["match"]]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 1:
            return int(legal[0])
        view = self.layout.decode(observation)
        occupied = view["occupied"] > 0.5
        known = view["known"] > 0.5
        kinds = view["known_kind"].reshape(self.ns, NUM_KINDS).argmax(axis=1)
        # Value of each position as this seat sees it: known points, or the unknown average.
        value = np.where(known, _POINTS[kinds], UNKNOWN_VALUE)
        value = np.where(occupied, value, 0.0)
        phase = int(view["phase"].argmax())
        own = slice(0, SLOTS)

        if phase in (TURN, WINDOW) and action_mask[CALL] and self._should_call(
                value, occupied, known, float(view["round_turns"][0]) * TURN_SCALE):
            return CALL
        if phase == TURN:
            top = self._kind(view["top_kind"])
            worst = self._worst_own(value, occupied)
            if (action_mask[DRAW_GRAVE] and top >= 0 and worst >= 0
                    and KIND_POINTS[top] <= 4 and value[worst] - KIND_POINTS[top] >= 3):
                return DRAW_GRAVE
            return DRAW_DECK
        if phase == DRAWN:
            drawn = KIND_POINTS[self._kind(view["drawn_kind"])]
            worst = self._worst_own(value, occupied)
            if value[worst] - drawn >= 2 or not action_mask[DISCARD]:
                return OWN_BASE + worst
            return DISCARD
        if phase == PEEK_OWN:
            return PICK_BASE + self._first(occupied[own] & ~known[own], legal, PICK_BASE)
        if phase in (PEEK_OTHER, LOOK_ANY):
            unknown = occupied & ~known
            if phase == LOOK_ANY and unknown[own].any():
                unknown[SLOTS:] = False
            else:
                unknown[own] = False
            return PICK_BASE + self._first(unknown, legal, PICK_BASE)
        if phase == SWAP_FIRST:
            return PICK_BASE + self._swap_first(value, occupied, known, legal)
        if phase == SWAP_SECOND:
            return PICK_BASE + self._swap_second(view, value, occupied, known, legal)
        if phase == GIVE:
            worst = self._worst_own(value, occupied)
            if action_mask[KEEP] and value[worst] <= 0:
                return KEEP
            return OWN_BASE + worst
        return self._react(view, value, occupied, known, action_mask)

    # -- decisions ---------------------------------------------------------------------------
    def _should_call(self, value: np.ndarray, occupied: np.ndarray, known: np.ndarray,
                     turns: float) -> bool:
        mine = float(value[:SLOTS].sum())
        late = turns >= PATIENCE
        if mine > CALL_LIMIT and not late:
            return False
        unsure_mine = int((occupied[:SLOTS] & ~known[:SLOTS]).sum())
        for r in range(1, self.n):
            seat = slice(r * SLOTS, (r + 1) * SLOTS)
            unsure = unsure_mine + int((occupied[seat] & ~known[seat]).sum())
            margin = 0.0 if late else CALL_Z * UNKNOWN_SD * unsure ** 0.5 + 0.5
            if float(value[seat].sum()) - mine < margin:
                return False
        return True

    def _react(self, view: dict[str, np.ndarray], value: np.ndarray, occupied: np.ndarray,
               known: np.ndarray, mask: np.ndarray) -> int:
        """A reaction window: throw a remembered match, own cards first."""
        top = self._kind(view["top_kind"])
        kinds = view["known_kind"].reshape(self.ns, NUM_KINDS).argmax(axis=1)
        key = self.match_key[top]
        best, best_score = PASS, 0.0
        worst_own = self._worst_own(value, occupied)
        give_gain = float(value[worst_own]) if worst_own >= 0 else 0.0
        for slot in np.flatnonzero(known & occupied):
            action = self.throw_base + int(slot)
            if not mask[action] or self.match_key[int(kinds[slot])] != key:
                continue
            # Own card: its points leave our hand. Another's: we shed our worst card into it.
            score = float(value[slot]) + 0.5 if slot < SLOTS else give_gain
            if score > best_score:
                best, best_score = action, score
        return best

    def _swap_first(self, value: np.ndarray, occupied: np.ndarray, known: np.ndarray,
                    legal: np.ndarray) -> int:
        worst = self._worst_own(value, occupied)
        others = occupied.copy()
        others[:SLOTS] = False
        if worst >= 0 and others.any():
            low = self._lowest_known(value, others & known)
            if (low >= 0 and value[worst] - value[low] >= 3) or value[worst] >= 9:
                return worst
        # A swap that changes nobody's points: two cards of the same seat.
        for r in range(1, self.n):
            seat = occupied[r * SLOTS:(r + 1) * SLOTS]
            if seat.sum() >= 2:
                return r * SLOTS + int(np.flatnonzero(seat)[0])
        return int(legal[0]) - PICK_BASE

    def _swap_second(self, view: dict[str, np.ndarray], value: np.ndarray, occupied: np.ndarray,
                     known: np.ndarray, legal: np.ndarray) -> int:
        first = int(np.flatnonzero(view["selected"] > 0.5)[0])
        candidates = occupied.copy()
        candidates[first] = False
        if first < SLOTS:
            # Our worst card goes to an opponent: take their lowest known card, else an unknown.
            others = candidates.copy()
            others[:SLOTS] = False
            low = self._lowest_known(value, others & known)
            if low >= 0 and value[low] < value[first]:
                return low
            unknown = others & ~known
            if unknown.any():
                return int(np.flatnonzero(unknown)[0])
        seat = first // SLOTS
        same = candidates[seat * SLOTS:(seat + 1) * SLOTS]
        if same.any():
            return seat * SLOTS + int(np.flatnonzero(same)[0])
        return int(np.flatnonzero(candidates)[0]) if candidates.any() else int(legal[0]) - PICK_BASE

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _kind(one_hot: np.ndarray) -> int:
        return int(one_hot.argmax()) if one_hot.any() else -1

    @staticmethod
    def _worst_own(value: np.ndarray, occupied: np.ndarray) -> int:
        own = np.flatnonzero(occupied[:SLOTS])
        if own.size == 0:
            return -1
        return int(own[np.argmax(value[own])])

    @staticmethod
    def _lowest_known(value: np.ndarray, where: np.ndarray) -> int:
        idx = np.flatnonzero(where)
        return int(idx[np.argmin(value[idx])]) if idx.size else -1

    @staticmethod
    def _first(where: np.ndarray, legal: np.ndarray, base: int) -> int:
        idx = np.flatnonzero(where)
        return int(idx[0]) if idx.size else int(legal[0]) - base

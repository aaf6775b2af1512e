"""A rule-based Deluxe Memory player that reads only its own observation.

Plan: match a pair it knows of (the most valuable one first), otherwise turn an unknown card
and look for its mate among the cards it remembers, else try another unknown card. Tokens go
to itself, losses to the richest opponent (one without a Nine shield if possible). Chart
effects are used to learn unknown cards; a King takes the effect worth most right now. It hides
an unmatched card when it knows where that card's mate lies (it cannot tell what the next
player knows, so any known mate counts as an easy pair that showing the card would hand over).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import numpy.typing as npt

from card_envs.agents.base import Agent
from card_envs.games.deluxe_memory.engine import (
    ACE_GAIN,
    ACE_LOSE,
    ACE_REVEAL,
    BLACK_TARGET,
    CARD_FEATURES,
    CROSSES,
    EFFECT_BASE,
    FIVE_CROSS,
    FOUR_LOOK,
    FOUR_SQUARE,
    HIDE_BOTH,
    HIDE_FIRST,
    HIDE_SECOND,
    JACK_PLAYER,
    KING_CHOICE,
    NOMATCH,
    NUM_CELLS,
    PAY,
    PICK1,
    PICK2,
    QUEEN_GIVER,
    QUEEN_RECEIVER,
    R_ACE,
    R_FIVE,
    R_JACK,
    R_NINE,
    R_QUEEN,
    R_SEVEN,
    RED_TARGET,
    SEVEN_PAY,
    SHOW_BOTH,
    SIMPLE_GIVER,
    SIMPLE_RECEIVER,
    SQUARES,
    STOP,
    TARGET_BASE,
    THREE_REVEAL,
    THREE_TARGET,
    TWO_LOOK,
    DeluxeMemoryEngine,
)

#: Rough worth of matching a mixed pair of each rank (A..K, joker) to the matcher.
MIXED_VALUE = [2.0, 1.0, 2.0, 1.5, 4.0, 0.5, 4.0, 2.0, 3.0, 2.0, 3.0, 6.0, 6.0, 1.0]
#: Worth of each effect a King can take when no better estimate applies (A..Q).
KING_VALUE = [2.0, 0.5, 2.0, 1.0, 4.0, 0.0, 4.0, 1.5, 3.0, 1.5, 0.0, 0.0]


class DeluxeMemoryHeuristic(Agent):
    name = "heuristic"

    def __init__(self, **config: Any) -> None:
        engine = DeluxeMemoryEngine(**config)
        self.layout = engine.layout
        self.num_players = engine.num_players
        self.simplicity = engine.simplicity
        self.total = float(engine.total_tokens)  # tokens are observed as fractions of this
        self.rng = np.random.default_rng(0)

    # -- reading the observation ---------------------------------------------------------------
    def _read(self, obs: np.ndarray) -> None:
        v = self.layout.decode(obs)
        self.v = v
        cards = v["cards"].reshape(NUM_CELLS, CARD_FEATURES)
        # numpy's stubs type any(axis=...) as a scalar or an array: of a 2-D array, an array.
        self.known = cast("npt.NDArray[np.bool_]", cards.any(axis=1))
        self.rank = np.where(self.known, cards[:, :14].argmax(axis=1), -1)
        self.colour = np.where(cards[:, 14:].any(axis=1), cards[:, 14:].argmax(axis=1), -1)
        self.present = v["present"] > 0.5
        self.face_down = self.present & (v["face_up"] < 0.5)
        self.unknown = self.face_down & ~self.known
        self.tokens = v["tokens"]
        self.shields = v["shields"]

    def _pairs(self, exclude: int = -1) -> list[tuple[float, int, int]]:
        """Known pairs on the grid as (value, cell, cell), best first."""
        by_rank: dict[int, list[int]] = {}
        for c in np.flatnonzero(self.present & self.known):
            if c != exclude:
                by_rank.setdefault(int(self.rank[c]), []).append(int(c))
        out = []
        for r, cells in by_rank.items():
            if len(cells) < 2:
                continue
            a, b = cells[0], cells[1]
            if r == 13:
                value = MIXED_VALUE[13]
            elif self.colour[a] == self.colour[b]:
                value = float(r + 1)
            else:
                value = float(r + 1) / 2 if self.simplicity else MIXED_VALUE[r]
            out.append((value, a, b))
        out.sort(reverse=True)
        return out

    def _random_cell(self, cells: np.ndarray, legal: np.ndarray) -> int | None:
        options = np.flatnonzero(cells & (legal[:NUM_CELLS] > 0))
        if options.size == 0:
            return None
        return int(options[self.rng.integers(options.size)])

    def _richest(self, legal: np.ndarray, avoid_shields: bool = True) -> int:
        """The legal target (relative offset) with the most tokens, unshielded ones first."""
        best, best_key = -1, None
        for k in range(self.num_players):
            if not legal[TARGET_BASE + k]:
                continue
            key = (not (avoid_shields and self.shields[k] > 0), k != 0, self.tokens[k])
            if best_key is None or key > best_key:
                best, best_key = k, key
        return TARGET_BASE + best

    # -- policy ----------------------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 1:
            return int(legal[0])
        self._read(observation)
        phase = int(self.v["phase"].argmax())
        choice = self._decide(phase, action_mask)
        if choice is None or not action_mask[choice]:
            return int(legal[self.rng.integers(legal.size)])
        return int(choice)

    def _decide(self, phase: int, mask: np.ndarray) -> int | None:
        v = self.v
        if phase == PICK1:
            pairs = self._pairs()
            if pairs:
                return pairs[0][1]
            return self._random_cell(self.unknown, mask)
        if phase == PICK2:
            first = int(v["first_pick"].argmax())
            if self.known[first]:
                r = self.rank[first]
                for c in np.flatnonzero(self.present & self.known & (self.rank == r)):
                    if c != first:
                        return int(c)
            pick = self._random_cell(self.unknown, mask)
            return pick if pick is not None else self._random_cell(self.present, mask)
        if phase == NOMATCH:
            return self._put_back(mask)
        if phase in (RED_TARGET, ACE_GAIN, QUEEN_RECEIVER, SIMPLE_RECEIVER):
            return TARGET_BASE if mask[TARGET_BASE] else self._richest(mask)
        if phase in (BLACK_TARGET, ACE_LOSE, THREE_TARGET):
            return self._richest(mask)
        if phase in (QUEEN_GIVER, SIMPLE_GIVER):
            return self._richest(mask)
        if phase in (ACE_REVEAL, THREE_REVEAL, TWO_LOOK, FOUR_LOOK):
            pick = self._random_cell(self.unknown, mask)
            if pick is None and mask[STOP]:
                return STOP
            return pick
        if phase == FOUR_SQUARE:
            return self._best_area(SQUARES, mask)
        if phase == FIVE_CROSS:
            return self._best_area(CROSSES, mask)
        if phase == SEVEN_PAY:
            return PAY if self._pairs() and self.tokens[0] * self.total >= 10 else STOP
        if phase == KING_CHOICE:
            return EFFECT_BASE + self._king_effect()
        if phase == JACK_PLAYER:
            return self._jack(mask)
        return STOP if mask[STOP] else None  # six reveals, joker swaps: keep information private

    def _put_back(self, mask: np.ndarray) -> int:
        first = int(self.v["first_pick"].argmax())
        second = int(self.v["second_pick"].argmax())
        hide = []
        for cell in (first, second):
            r = self.rank[cell]
            mates = self.present & self.known & (self.rank == r)
            mates[first] = mates[second] = False
            face_up = self.v["face_up"][cell] > 0.5
            hide.append(bool(mates.any()) and not face_up)
        action = {(False, False): SHOW_BOTH, (True, False): HIDE_FIRST,
                  (False, True): HIDE_SECOND, (True, True): HIDE_BOTH}[hide[0], hide[1]]
        if mask[action]:
            return action
        if hide[0] and mask[HIDE_FIRST]:
            return HIDE_FIRST
        if hide[1] and mask[HIDE_SECOND]:
            return HIDE_SECOND
        return SHOW_BOTH

    def _best_area(self, areas: dict[int, tuple[int, ...]], mask: np.ndarray) -> int | None:
        best, best_count = None, -1
        for key, cells in areas.items():
            if not mask[key]:
                continue
            count = sum(int(self.unknown[c]) for c in cells)
            if count > best_count:
                best, best_count = key, count
        return best

    def _king_effect(self) -> int:
        t = self.tokens
        me = t[0]
        richest_opp = max(t[1:]) if len(t) > 1 else 0.0
        scale = self.total
        values = list(KING_VALUE)
        values[R_QUEEN] = 2 * min(6.0, richest_opp * scale)
        values[R_JACK] = max(0.0, (richest_opp - me) * scale)
        if self._pairs():
            values[R_SEVEN] += 3.0
            values[R_FIVE] += 3.0
        if self.shields[0] > 0:
            values[R_NINE] = 0.5
        values[R_ACE] = 2.0
        return int(np.argmax(values))

    def _jack(self, mask: np.ndarray) -> int | None:
        t = self.tokens
        chosen = self.v["chosen_players"] > 0.5
        opps = [k for k in range(1, self.num_players) if mask[TARGET_BASE + k] or chosen[k]]
        if not opps:
            return None
        richest = max(opps, key=lambda k: t[k])
        if t[richest] > t[0]:
            plan = [0, richest]  # equalise myself with the richest opponent
        else:
            poorest = min(opps, key=lambda k: t[k])
            plan = [richest, poorest if poorest != richest else next(
                (k for k in opps if k != richest), 0)]
        for k in plan:
            if mask[TARGET_BASE + k] and not chosen[k]:
                return TARGET_BASE + k
        return None

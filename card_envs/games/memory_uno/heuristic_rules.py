"""The Memory-Uno heuristic's decision
(:class:`~card_envs.games.memory_uno.heuristic.MemoryUnoHeuristic`) on plain lists, compiled
with mypyc (``card_envs/compiled.py``).

A search's heuristic rollouts call it at nearly every step, where the numpy version (the
observation decoded field by field, then a dozen small-array calls a move) cost 24 us a move,
80% of a rollout. Here the observation is read with four numpy calls (the positions' two flags,
the remembered kinds' ``argmax`` where any is remembered, and one slice from the phase to the
turn count), then walked as lists. The moves are the numpy version's, bit for bit, on any
observation: the sums of a seat's eight values are added in numpy's pairwise order
(:func:`seat_sum`), so even the float rounding is the same (``tests/test_search_reference.py``
replays the recorded moves; ``tests/test_memory_uno_heuristic.py`` compares the numpy version
on random and heuristic play and on perturbed observations).
"""

from __future__ import annotations

from typing import Any

from card_envs.games.memory_uno.engine import (
    CALL,
    DISCARD,
    DRAW_DECK,
    DRAW_GRAVE,
    DRAWN,
    GIVE,
    KEEP,
    KIND_COPIES,
    KIND_POINTS,
    LOOK_ANY,
    NUM_KINDS,
    NUM_PHASES,
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
)

#: Expected points of a card nobody has seen (the deck average).
UNKNOWN_VALUE = sum(p * c for p, c in zip(KIND_POINTS, KIND_COPIES, strict=True)) / sum(KIND_COPIES)
#: Standard deviation of an unknown card's points.
UNKNOWN_SD = (sum(c * (p - UNKNOWN_VALUE) ** 2
                  for p, c in zip(KIND_POINTS, KIND_COPIES, strict=True))
              / sum(KIND_COPIES)) ** 0.5
CALL_Z = 1.2  # call when every opponent's estimate is this many SDs of the difference above ours
CALL_LIMIT = 12.0  # and never with more than this (a failed call costs 30 more)
PATIENCE = 40  # after this many turns in a round, call whenever not estimated behind
_POINTS: list[int] = list(KIND_POINTS)


class Reading:
    """What the decision needs of one game's setting: where the fields it reads start in an
    observation (the layout's slices), the seats, the first throw action, the match keys."""

    def __init__(self, slices: dict[str, slice], num_players: int, throw_base: int,
                 match_key: list[int]) -> None:
        self.n: int = num_players
        self.ns: int = num_players * SLOTS
        self.throw_base: int = throw_base
        self.match_key: list[int] = list(match_key)
        self.occupied: int = slices["occupied"].start
        if slices["known"].start != self.occupied + self.ns:
            raise ValueError("the heuristic reads 'occupied' and 'known' as one block")
        self.kinds: int = slices["known_kind"].start
        self.selected: int = slices["selected"].start
        #: One slice from the phase to the turn count holds the rest of what is read.
        self.tail: int = slices["phase"].start
        self.tail_end: int = slices["round_turns"].stop
        self.drawn: int = slices["drawn_kind"].start - self.tail
        self.top: int = slices["top_kind"].start - self.tail
        self.turns: int = slices["round_turns"].start - self.tail
        if not (min(self.drawn, self.top, self.turns) > 0
                and self.tail_end - self.tail > max(self.drawn, self.top) + NUM_KINDS - 1):
            raise ValueError("the heuristic reads the phase, the drawn and top kinds and the "
                             "turn count as one slice, in that order")


def argmax(values: list[float], start: int, count: int) -> int:
    """numpy's ``argmax`` of ``values[start:start + count]``: the first greatest, or the
    first NaN."""
    best = start
    for i in range(start, start + count):
        x = values[i]
        if x != x:
            return i - start
        if x > values[best]:
            best = i
    return best - start


def kind_of(values: list[float], start: int) -> int:
    """The kind a one-hot field from ``start`` shows (its ``argmax``), or -1 if it is all
    zeros (numpy's ``any``: NaN counts as set)."""
    for i in range(start, start + NUM_KINDS):
        if values[i] != 0.0:
            return argmax(values, start, NUM_KINDS)
    return -1


def seat_sum(value: list[float], start: int) -> float:
    """``value[start:start + 8].sum()`` as numpy adds eight float64 values (pairwise), so the
    result is the same to the last bit."""
    v = value
    s = start
    return (((v[s] + v[s + 1]) + (v[s + 2] + v[s + 3]))
            + ((v[s + 4] + v[s + 5]) + (v[s + 6] + v[s + 7])))


def worst_own(value: list[float], occupied: list[bool]) -> int:
    """The own position worth most (the first of equals), or -1 if it holds no card."""
    worst = -1
    for i in range(SLOTS):
        if occupied[i] and (worst < 0 or value[i] > value[worst]):
            worst = i
    return worst


def lowest(value: list[float], where: list[bool], start: int, stop: int) -> int:
    """The position in ``start..stop-1`` where ``where`` holds worth least (the first of
    equals), or -1."""
    low = -1
    for i in range(start, stop):
        if where[i] and (low < 0 or value[i] < value[low]):
            low = i
    return low


def first(where: list[bool], start: int, stop: int) -> int:
    """The first position in ``start..stop-1`` where ``where`` holds, or -1."""
    for i in range(start, stop):
        if where[i]:
            return i
    return -1


def decide(observation: Any, action_mask: Any, at: Reading) -> int:
    """The heuristic's move (see its module docstring) from one seat's observation."""
    legal: list[int] = action_mask.nonzero()[0].tolist()
    if len(legal) == 1:
        return legal[0]
    allowed = [False] * int(action_mask.shape[0])
    for a in legal:
        allowed[a] = True
    ns = at.ns
    flags: list[bool] = (observation[at.occupied:at.occupied + 2 * ns] > 0.5).tolist()
    occupied = flags[:ns]
    known = flags[ns:]
    # Value of each position as this seat sees it: known points, or the unknown average.
    value = [0.0] * ns
    kinds: list[int] = []
    if any(known):
        kinds = observation[at.kinds:at.kinds + ns * NUM_KINDS].reshape(
            ns, NUM_KINDS).argmax(axis=1).tolist()
    for i in range(ns):
        if occupied[i]:
            value[i] = float(_POINTS[kinds[i]]) if known[i] else UNKNOWN_VALUE
    tail: list[float] = observation[at.tail:at.tail_end].tolist()
    phase = argmax(tail, 0, NUM_PHASES)

    if phase in (TURN, WINDOW) and allowed[CALL] and should_call(
            value, occupied, known, at.n, tail[at.turns] * TURN_SCALE):
        return CALL
    if phase == TURN:
        top = kind_of(tail, at.top)
        worst = worst_own(value, occupied)
        if (allowed[DRAW_GRAVE] and top >= 0 and worst >= 0
                and KIND_POINTS[top] <= 4 and value[worst] - KIND_POINTS[top] >= 3):
            return DRAW_GRAVE
        return DRAW_DECK
    if phase == DRAWN:
        drawn = _POINTS[kind_of(tail, at.drawn)]
        worst = worst_own(value, occupied)
        if value[worst] - drawn >= 2 or not allowed[DISCARD]:
            return OWN_BASE + worst
        return DISCARD
    if phase == PEEK_OWN:
        unknown = [occupied[i] and not known[i] for i in range(SLOTS)]
        pick = first(unknown, 0, SLOTS)
        return PICK_BASE + pick if pick >= 0 else legal[0]
    if phase in (PEEK_OTHER, LOOK_ANY):
        unknown = [occupied[i] and not known[i] for i in range(ns)]
        pick = first(unknown, 0, SLOTS) if phase == LOOK_ANY else -1
        if pick < 0:
            pick = first(unknown, SLOTS, ns)
        return PICK_BASE + pick if pick >= 0 else legal[0]
    if phase == SWAP_FIRST:
        return swap_first(value, occupied, known, at.n, legal)
    if phase == SWAP_SECOND:
        selected: list[int] = (observation[at.selected:at.selected + ns] > 0.5).nonzero()[
            0].tolist()
        return swap_second(selected[0], value, occupied, known, legal)
    if phase == GIVE:
        worst = worst_own(value, occupied)
        if allowed[KEEP] and value[worst] <= 0:
            return KEEP
        return OWN_BASE + worst
    return react(kind_of(tail, at.top), kinds, value, occupied, known, allowed, at)


def should_call(value: list[float], occupied: list[bool], known: list[bool], n: int,
                turns: float) -> bool:
    mine = seat_sum(value, 0)
    late = turns >= PATIENCE
    if mine > CALL_LIMIT and not late:
        return False
    unsure_mine = 0
    for i in range(SLOTS):
        if occupied[i] and not known[i]:
            unsure_mine += 1
    for r in range(1, n):
        unsure = unsure_mine
        for i in range(r * SLOTS, (r + 1) * SLOTS):
            if occupied[i] and not known[i]:
                unsure += 1
        margin = 0.0 if late else CALL_Z * UNKNOWN_SD * unsure ** 0.5 + 0.5
        if seat_sum(value, r * SLOTS) - mine < margin:
            return False
    return True


def react(top: int, kinds: list[int], value: list[float], occupied: list[bool],
          known: list[bool], allowed: list[bool], at: Reading) -> int:
    """A reaction window: throw a remembered match, own cards first."""
    key = at.match_key[top]  # no top (-1): the last kind's key, as the numpy version read it
    best, best_score = PASS, 0.0
    worst = worst_own(value, occupied)
    give_gain = value[worst] if worst >= 0 else 0.0
    for slot in range(at.ns):
        if not (known[slot] and occupied[slot]):
            continue
        action = at.throw_base + slot
        if not allowed[action] or at.match_key[kinds[slot]] != key:
            continue
        # Own card: its points leave our hand. Another's: we shed our worst card into it.
        score = value[slot] + 0.5 if slot < SLOTS else give_gain
        if score > best_score:
            best, best_score = action, score
    return best


def swap_first(value: list[float], occupied: list[bool], known: list[bool], n: int,
               legal: list[int]) -> int:
    ns = n * SLOTS
    worst = worst_own(value, occupied)
    if worst >= 0 and first(occupied, SLOTS, ns) >= 0:
        low = lowest(value, [occupied[i] and known[i] for i in range(ns)], SLOTS, ns)
        if (low >= 0 and value[worst] - value[low] >= 3) or value[worst] >= 9:
            return PICK_BASE + worst
    # A swap that changes nobody's points: two cards of the same seat.
    for r in range(1, n):
        count = 0
        for i in range(r * SLOTS, (r + 1) * SLOTS):
            if occupied[i]:
                count += 1
        if count >= 2:
            return PICK_BASE + first(occupied, r * SLOTS, (r + 1) * SLOTS)
    return legal[0]


def swap_second(chosen: int, value: list[float], occupied: list[bool], known: list[bool],
                legal: list[int]) -> int:
    ns = len(occupied)
    candidates = list(occupied)
    candidates[chosen] = False
    if chosen < SLOTS:
        # Our worst card goes to an opponent: take their lowest known card, else an unknown.
        low = lowest(value, [candidates[i] and known[i] for i in range(ns)], SLOTS, ns)
        if low >= 0 and value[low] < value[chosen]:
            return PICK_BASE + low
        unknown = first([candidates[i] and not known[i] for i in range(ns)], SLOTS, ns)
        if unknown >= 0:
            return PICK_BASE + unknown
    seat = chosen // SLOTS
    same = first(candidates, seat * SLOTS, (seat + 1) * SLOTS)
    if same >= 0:
        return PICK_BASE + same
    any_card = first(candidates, 0, ns)
    return PICK_BASE + any_card if any_card >= 0 else legal[0]

"""What each seat remembers about face-down cards.

Engines report events (a card in a slot was shown to some seats, a card moved, a slot was
filled unseen) and this tracker keeps, per seat and slot, the card that seat believes is there
(or ``UNKNOWN``). ``known`` is the one store: an engine's hot path may write it in place with
the meaning of an event below, but never replaces the array. Memory modes live here, written
once:

* ``"perfect"``: nothing is forgotten.
* ``"none"``: a seat keeps what it saw only until its next decision is made, so the observation
  for that decision shows it and the one after does not.
* ``p`` (float): after each of the seat's own decisions, each remembered card is forgotten
  independently with probability ``p`` (``0`` equals perfect, ``1`` equals none).

A "slot" is any stable place a hidden card can sit (a grid position, a side slot, a seat's
hand position); games number their slots ``0..num_slots-1``. Forgetting draws from its own RNG
so that memory settings never change the deal.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from mypy_extensions import mypyc_attr

from card_envs.core.copying import attribute_state, uninitialised

UNKNOWN = -1


def forget_probability(memory: str | float) -> float:
    if memory == "perfect":
        return 0.0
    if memory == "none":
        return 1.0
    return float(memory)


# Copied with the engines. (Interpreted subclasses allowed: with serializable alone, mypyc 2.4
# skips __init__ when the class is called from Python.)
@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class KnowledgeTracker:
    """``known[seat, slot]``: the card ``seat`` remembers at ``slot``, or ``UNKNOWN``."""

    def __init__(self, num_players: int, num_slots: int, memory: str | float = "perfect") -> None:
        self.num_players = num_players
        self.num_slots = num_slots
        self.forget_p = forget_probability(memory)
        self.known = np.full((num_players, num_slots), UNKNOWN, dtype=np.int8)
        self._seed = 0
        self._rng: np.random.Generator | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return uninitialised, (type(self),), attribute_state(self)

    def reset(self, seed: int) -> None:
        self.known.fill(UNKNOWN)
        # Building a Generator costs more than dealing a short round, and perfect memory never
        # draws from it: create it on first use (the stream is the seed's either way).
        self._seed = seed
        self._rng = None

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = np.random.default_rng(self._seed)
        return self._rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self._rng = value

    # -- events reported by engines ---------------------------------------------------------
    def show(self, slot: int, card: int, seats: Iterable[int]) -> None:
        """``seats`` saw ``card`` at ``slot``."""
        for seat in seats:
            self.known[seat, slot] = card

    def show_all(self, slot: int, card: int) -> None:
        self.known[:, slot] = card

    def conceal(self, slot: int) -> None:
        """The card at ``slot`` was replaced unseen (or removed): nobody knows it now."""
        self.known[:, slot] = UNKNOWN

    def move(self, src: int, dst: int) -> None:
        """A card moved in plain view from ``src`` to ``dst``; ``src`` is now empty or unseen."""
        self.known[:, dst] = self.known[:, src]
        self.known[:, src] = UNKNOWN

    def swap(self, a: int, b: int) -> None:
        """Two cards swapped places in plain view: every seat's memory follows its card."""
        col = self.known[:, a].copy()
        self.known[:, a] = self.known[:, b]
        self.known[:, b] = col

    def relabel(self, slot: int, card: int) -> None:
        """A determinization put ``card`` at ``slot``: every seat that remembered the slot
        remembers the card there now."""
        col = self.known[:, slot]
        col[col != UNKNOWN] = card

    def forget_seat_slot(self, seat: int, slot: int) -> None:
        self.known[seat, slot] = UNKNOWN

    # -- memory decay ----------------------------------------------------------------------
    def after_decision(self, seat: int) -> None:
        """Apply the memory mode once ``seat`` has made a decision."""
        p = self.forget_p
        if p <= 0.0:
            return
        row = self.known[seat]
        if p >= 1.0:
            row.fill(UNKNOWN)
            return
        held = row != UNKNOWN
        if held.any():
            row[held & (self.rng.random(self.num_slots) < p)] = UNKNOWN

    # -- queries -----------------------------------------------------------------------------
    def known_by(self, seat: int) -> np.ndarray:
        return self.known[seat]

    def knows(self, seat: int, slot: int) -> bool:
        return bool(self.known[seat, slot] != UNKNOWN)

    # -- snapshot ----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"known": self.known.tolist(), "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        known = np.asarray(state["known"], dtype=np.int8)
        if known.shape != self.known.shape:
            raise ValueError(
                f"knowledge snapshot has shape {known.shape}, this game needs {self.known.shape}"
            )
        self.known[...] = known
        self.rng = np.random.default_rng()
        self.rng.bit_generator.state = state["rng"]


# -- determinization of a reshuffled deck -----------------------------------------------------
def deal_counted_first(unseen: list[int], counted: np.ndarray, also_hidden: list[int],
                       deck_size: int, rng: np.random.Generator
                       ) -> tuple[list[int], list[int], list[int]]:
    """A redeal's deck when the seat counts some cards in it (``counted[c] >= 0``: card c went
    into the deck at a reshuffle and the seat has not seen it leave). The counted cards among
    ``unseen`` are dealt to the deck first (under perfect memory the deck holds only them);
    the other unseen cards and ``also_hidden`` (places a counted card cannot be, such as
    buried discards) fill the rest, and the deck is then shuffled: the seat counts the cards,
    not where they lie. Returns the deck, the uncounted cards left over (for those places
    first) and the counted cards left over."""
    is_counted: list[bool] = (counted >= 0).tolist()  # one pass, not one numpy read a card
    in_deck = [c for c in unseen if is_counted[c]]
    rest = [c for c in unseen if not is_counted[c]] + also_hidden
    in_deck = [in_deck[i] for i in rng.permutation(len(in_deck))]
    rest = [rest[i] for i in rng.permutation(len(rest))]
    from_memory = min(deck_size, len(in_deck))
    deck = in_deck[:from_memory] + rest[:deck_size - from_memory]
    deck = [deck[i] for i in rng.permutation(len(deck))]
    return deck, rest[deck_size - from_memory:], in_deck[from_memory:]


def count_what_anyone_counts(deck_memory: np.ndarray) -> None:
    """Under perfect memory a seat counts every reshuffled card it has not seen leave: after a
    redeal, each seat's row (seats x cards, card id or UNKNOWN) becomes every card any seat
    counts; the caller then strikes what the seat would have seen elsewhere."""
    deck_memory[:] = np.where((deck_memory != UNKNOWN).any(axis=0),
                              np.arange(deck_memory.shape[1]), UNKNOWN)

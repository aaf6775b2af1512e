"""Memory-Uno rules engine (see RULES.md beside this file for every rule and choice).

The table: each seat owns ``SLOTS`` = 8 card positions: 0 and 1 (top row), 2 and 3 (bottom row,
peeked at the start of a round), 4..7 (room for penalty cards, which fill the first empty
position). Position ``p`` of seat ``s`` is slot ``s * 8 + p``; the slot is also the card's
KnowledgeTracker slot. Tracker slot ``8n + card`` means "``card`` lies buried in the
graveyard", and ``8n + 54 + card`` "``card`` went into the deck at the round's last reshuffle
and was not seen to leave it". Positions never change: a card leaves a position only by being
swapped, thrown or given, and the position stays empty.

Actions (``14 + 16n``): ``call``, ``draw_deck``, ``draw_grave``, ``discard``, ``pass``,
``keep``, ``own:<pos>`` (swap the drawn card in / give a card after a throw),
``pick:<offset>.<pos>`` (the target of an effect) and ``throw:<offset>.<pos>`` (quick-play),
where ``offset`` counts seats clockwise from the acting seat (0 = its own cards).

Speed: every piece of the observation lives in one flat float32 "source" vector kept up to date
by the few methods that change the position; a seat's observation is one ``np.take`` through a
per-seat index that turns absolute seats and slots into that seat's relative view.
"""

from __future__ import annotations

import math
import struct
from typing import Any, ClassVar

import numpy as np
from mypy_extensions import mypyc_attr

from card_envs.core.buffers import float_items, int_items
from card_envs.core.cards import KING, NUM_CARDS, RANK_OF, SUIT_OF, card_code
from card_envs.core.config import Option, seat_or_random
from card_envs.core.engine import Engine
from card_envs.core.knowledge import (
    KnowledgeTracker,
    count_what_anyone_counts,
    deal_counted_first,
)
from card_envs.core.obs_layout import ObsLayout

SLOTS = 8  # positions per seat: 4 dealt + room for penalty cards
NO_SLOTS = bytes(SLOTS)  # one seat's positions masked out
ALL_CARDS = tuple(range(NUM_CARDS))
DEALT = 4
BOTTOM = (2, 3)  # the two positions peeked at before each round
CALL_PENALTY = 30
ELIMINATION = 100  # "Whoever exceeds 100 points has lost the game"
DROPS = {50: 0, 100: 50}  # "Directly hitting 50 ... to 0 ..., directly hitting 100 ... to 50"

# -- card kinds: what a card is worth and matches, suits aside ------------------------------
#: Kind 0..14: A, 2..10, J, Q, black K, red K, joker.
KIND_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "Kr", "X")
NUM_KINDS = 15
BLACK_KING, RED_KING, JOKER_KIND = 12, 13, 14
KIND_POINTS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, -1, 0)
KIND_COPIES = (4,) * 12 + (2, 2, 2)


def _kind(card: int) -> int:
    if card >= 52:
        return JOKER_KIND
    rank = RANK_OF[card]
    if rank == KING:
        return BLACK_KING if SUIT_OF[card] in (0, 3) else RED_KING
    return rank


KIND_OF: list[int] = [_kind(c) for c in range(NUM_CARDS)]
KIND_NP = np.array(KIND_OF, dtype=np.int64)
POINTS_OF: list[int] = [KIND_POINTS[k] for k in KIND_OF]
#: The 16 source values of a remembered card of each kind: [known, one-hot kind].
KNOWN_ROW = np.zeros((NUM_KINDS, 16), dtype=np.float32)
KNOWN_ROW[:, 0] = 1.0
KNOWN_ROW[np.arange(NUM_KINDS), 1 + np.arange(NUM_KINDS)] = 1.0
KNOWN_ROW_OF: list[np.ndarray] = [KNOWN_ROW[k] for k in KIND_OF]
INV_COPIES = np.array([1.0 / c for c in KIND_COPIES], dtype=np.float32)
INV_COPIES_OF: list[float] = [1.0 / KIND_COPIES[k] for k in KIND_OF]
#: Quick-play matching keys, one per ``match`` option. "rank_kings_by_colour" (the text's
#: tables keep red and black Kings apart): by kind, so by rank with the two Kings' colours
#: apart; "rank": by rank (a red K matches a black K); "points": by points (10 J Q black K).
#: Two cards match when their kinds' keys are equal.
KIND_MATCH_KEYS: dict[str, list[int]] = {
    "rank_kings_by_colour": list(range(NUM_KINDS)),
    "rank": [BLACK_KING if k == RED_KING else k for k in range(NUM_KINDS)],
    "points": list(KIND_POINTS),
}
#: The same keys by card id (what the engine compares).
MATCH_KEYS: dict[str, list[int]] = {
    option: [keys[k] for k in KIND_OF] for option, keys in KIND_MATCH_KEYS.items()}

# -- actions -----------------------------------------------------------------------------------
CALL, DRAW_DECK, DRAW_GRAVE, DISCARD, PASS, KEEP = range(6)
OWN_BASE = 6
PICK_BASE = OWN_BASE + SLOTS

# -- phases (the pending decision) ---------------------------------------------------------
TURN, DRAWN, PEEK_OWN, PEEK_OTHER, LOOK_ANY, SWAP_FIRST, SWAP_SECOND, GIVE, WINDOW = range(9)
NUM_PHASES = 9
PHASE_NAMES = ("turn", "drawn", "peek_own", "peek_other", "look_any", "swap_first",
               "swap_second", "give", "window")
#: The effect a card discarded from the deck starts (-1: none).
EFFECT_OF_KIND: list[int] = [
    {6: PEEK_OWN, 7: PEEK_OWN, 8: PEEK_OTHER, 9: PEEK_OTHER, 10: SWAP_FIRST, 11: SWAP_FIRST,
     BLACK_KING: LOOK_ANY}.get(k, -1)
    for k in range(NUM_KINDS)
]

TOTAL_SCALE = 100.0
TURN_SCALE = 100.0
TOTAL_LOW, TOTAL_HIGH = -1.0, 2.5
ROUND_LOW, ROUND_HIGH = -0.5, 1.5


class _ScaledPoints(dict[int, float]):
    """``points / TOTAL_SCALE`` exactly as the float32 source holds it (a float32 multiply),
    as a Python float clipped to ``[low, high]``; filled on first use, since scores take few
    distinct values."""

    def __init__(self, low: float, high: float) -> None:
        super().__init__()
        self.low, self.high = low, high

    def __missing__(self, points: int) -> float:
        a = np.array([points], dtype=np.float32)
        a *= 1.0 / TOTAL_SCALE
        value = self[points] = min(max(float(a[0]), self.low), self.high)
        return value


# Totals stay within [-100, 210] and round points within [-2, 110] in any real game; the clip
# of the totals only guards the bounds of the observation space.
SCALED_TOTAL = _ScaledPoints(TOTAL_LOW, TOTAL_HIGH)
SCALED_ROUND = _ScaledPoints(-math.inf, math.inf)

# The source vector opens with the blocks whose size does not depend on the number of seats,
# so hot paths address them by these constants rather than through the per-config offsets.
PHASE_AT = 0
FROMG_AT = PHASE_AT + NUM_PHASES
TOP_AT = FROMG_AT + 1
DECK_AT = TOP_AT + NUM_KINDS
GRAVE_AT = DECK_AT + 1
TURNS_AT = GRAVE_AT + 1
FIXED_HEAD = (("phase", NUM_PHASES), ("fromg", 1), ("top", NUM_KINDS), ("deck", 1),
              ("grave", 1), ("turns", 1))


@mypyc_attr(allow_interpreted_subclasses=True)  # a rule variant may subclass it
class MemoryUnoEngine(Engine):
    name = "memory_uno"
    # Views into ``_src``, the tracker's memory, ``_mask``, ``_occ2``, the round template, the
    # zero scores and a full window queue: rebound rather than copied or pickled (memoryviews
    # cannot be either).
    # Fixed tables, never written after construction: clones share them.
    CLONE_SHARED = ("_off", "_peeks", "_rel_slot", "_deal_order", "_gidx", "_seat_rows",
                    "_deck_rows", "_window_order", "_round_template", "_match")
    BOUND_VIEWS = ("witnessed", "_kk", "_gmem", "_dmem", "_drawn_v", "_kcol", "_wcol", "_kkcol",
                   "_sv", "_known_v", "_mask_v", "_occ2_v", "_rel_occ_v", "_template_v",
                   "_no_scores_v", "_whole_queue_v")
    OPTIONS: ClassVar[dict[str, Option]] = {
        "num_players": Option(4, "Players.", choices=(2, 3, 4, 5, 6)),
        "episode": Option("round", "'round': one round per episode; 'game': rounds until a "
                          "total exceeds 100.", choices=("round", "game")),
        "match": Option("rank_kings_by_colour",
                        "What a quick-play throw must match on the graveyard's top: "
                        "'rank_kings_by_colour' (the same rank, but a red King never matches a "
                        "black King), 'rank' (any King matches any King) or 'points' (the same "
                        "points: 10 J Q and black K match).",
                        choices=("rank_kings_by_colour", "rank", "points")),
        "failed_call": Option("on_top", "A caller without the strictly lowest hand scores "
                              "'on_top' (hand + 30) or 'instead' (30, hand ignored).",
                              choices=("on_top", "instead")),
        "give_after_throw": Option("optional", "After throwing another seat's card correctly, "
                                   "giving one of your own cards into its place is 'optional' "
                                   "or 'required'.", choices=("optional", "required")),
        "call_timing": Option("any", "When a round may be called: 'any' (at the start of your "
                              "turn and at each of your reaction-window decisions) or 'turn' "
                              "(only at the start of your turn).", choices=("any", "turn")),
        "first_player": Option("random", "Who starts the first round: a seat or 'random' "
                               "(later rounds: the next seat clockwise).",
                               check=seat_or_random),
    }
    #: What each STATE_FIELDS entry of a snapshot holds (docs/observations.md; tested).
    STATE_DOCS: ClassVar[dict[str, str]] = {
        "slots": "card id at each position, seat * 8 + position (0..7); -1 empty",
        "hand_count": "per seat, its cards",
        "deck": "card ids; the top (next drawn) is the END of the list",
        "grave": "the graveyard's card ids; the face-up top is the END of the list",
        "drawn": "the card drawn this turn, -1 none",
        "drawn_from_grave": "it was taken from the graveyard",
        "phase": "the decision: index into PHASE_NAMES (0 turn, 1 drawn, 2 peek_own, "
                 "3 peek_other, 4 look_any, 5 swap_first, 6 swap_second, 7 give, 8 window)",
        "turn_player": "whose turn it is",
        "round_start": "the seat that started this round",
        "round_turns": "turns begun this round",
        "selected": "the first slot of a swap, or the emptied slot awaiting a give; -1 none",
        "locked": "the seat whose stack nobody may throw from, -1 none",
        "queue": "the seats this reaction window has still to reach, in order",
        "totals": "per seat, its game total",
        "last_round": "per seat, the points added in the last finished round",
        "last_caller": "the seat that called the last finished round, -1 none",
        "round_number": "rounds dealt this episode (1 in the first)",
        "reshuffled": "the graveyard has been turned into the deck this round",
        "witnessed": "float32 (seat, slot): 1 where the seat has seen the card now at the slot "
                     "(the public record of looks)",
        "tracker": "memory slots: 0..8n-1 positions (seat * 8 + position); 8n + c card c "
                   "buried in the graveyard; 8n + 54 + c card c went into the deck at the "
                   "last reshuffle and was not seen to leave",
    }
    STATE_FIELDS = (
        "slots", "hand_count", "deck", "grave", "drawn", "drawn_from_grave", "phase",
        "turn_player", "round_start", "round_turns", "selected", "locked", "queue", "totals",
        "last_round",
        "last_caller", "round_number", "reshuffled", "witnessed", "tracker",
    )
    TEST_VARIANTS: ClassVar[tuple[dict[str, Any], ...]] = (
        {"memory": "none"},
        {"memory": 0.3, "num_players": 3},
        {"episode": "game", "num_players": 3},
        {"match": "points", "failed_call": "instead", "give_after_throw": "required",
         "call_timing": "turn"},
    )

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        n = self.num_players
        fp = self.config["first_player"]
        if fp != "random" and fp >= n:
            raise ValueError(f"invalid value {fp!r} for 'first_player': allowed values are "
                             f"0..{n - 1} or 'random'")
        ns = n * SLOTS
        self.num_slots = ns
        self.grave_base = ns  # tracker slot of "card c is buried in the graveyard": ns + c
        self.deck_base = ns + NUM_CARDS  # ... of "card c went into the deck at the reshuffle"
        self.throw_base = PICK_BASE + ns
        self.num_actions = PICK_BASE + 2 * ns
        names = ["call", "draw_deck", "draw_grave", "discard", "pass", "keep"]
        names += [f"own:{p}" for p in range(SLOTS)]
        names += [f"pick:{r}.{p}" for r in range(n) for p in range(SLOTS)]
        names += [f"throw:{r}.{p}" for r in range(n) for p in range(SLOTS)]
        self.action_names = names
        self._match = MATCH_KEYS[self.config["match"]]
        self._call_any = self.config["call_timing"] == "any"
        self._give_optional = self.config["give_after_throw"] == "optional"
        self._on_top = self.config["failed_call"] == "on_top"
        self._round_episode = self.config["episode"] == "round"

        # Source vector segments (absolute seats and slots); the scores must come last.
        offsets: dict[str, int] = {}
        size = 0
        for key, length in (*FIXED_HEAD, ("occ", ns), ("seen", n * ns), ("kk", n * ns * 16),
                            ("gmem", n * NUM_KINDS), ("dmem", n * NUM_KINDS), ("sel", ns),
                            ("turn", n), ("drawn", n * NUM_KINDS), ("lock", n), ("queue", n),
                            ("totals", n), ("last", n)):
            offsets[key] = size
            size += length
        assert offsets["turns"] == TURNS_AT
        self._off = offsets
        self._occ_at, self._sel_at = offsets["occ"], offsets["sel"]
        self._seen_at, self._kk_at = offsets["seen"], offsets["kk"]
        self._turn_at, self._lock_at = offsets["turn"], offsets["lock"]
        self._queue_at = offsets["queue"]
        self._scores_at = offsets["totals"]
        self._scores_format = f"={2 * n}f"  # native float32, no padding
        self._src = np.zeros(size, dtype=np.float32)

        layout = ObsLayout()
        # Positions by seat offset (own first), then position 0..7.
        layout.add("occupied", (n, SLOTS), "a card lies at this position")
        layout.add("known", (n, SLOTS), "this seat remembers the card there")
        layout.add("known_kind", (n, SLOTS, NUM_KINDS),
                   "its kind: A 2 3 4 5 6 7 8 9 10 J Q blackK redK joker")
        layout.add("seen_by", (n, n, SLOTS), "public record: seat (offset) has seen the card "
                   "now at each position (offset, position)")
        layout.add("selected", (n, SLOTS),
                   "the first card of a swap / the emptied position awaiting a give")
        layout.add("grave_memory", NUM_KINDS,
                   "remembered buried graveyard cards per kind / copies of that kind")
        layout.add("deck_memory", NUM_KINDS, "cards remembered going into the deck at this "
                   "round's last reshuffle and not seen to leave it, per kind / copies")
        layout.add("phase", NUM_PHASES, "the decision: " + ", ".join(PHASE_NAMES))
        layout.add("turn_player", n, "whose turn it is (offset)")
        layout.add("drawn_kind", NUM_KINDS,
                   "the drawn card, for the drawer (everyone if from the graveyard)")
        layout.add("drawn_from_grave", 1, "the drawn card came from the graveyard")
        layout.add("top_kind", NUM_KINDS, "the graveyard's face-up top")
        layout.add("locked_stack", n, "the stack nobody may throw from (offset)")
        layout.add("window_queue", n, "the seats this reaction window has still to reach")
        layout.add("deck_size", 1, "cards in the deck / 54")
        layout.add("grave_size", 1, "cards in the graveyard / 54")
        layout.add("round_turns", 1, "turns begun this round / 100, at most 1")
        layout.add("totals", n, "totals / 100, own first", low=TOTAL_LOW, high=TOTAL_HIGH)
        layout.add("last_round", n, "points added last round / 100, own first",
                   low=ROUND_LOW, high=ROUND_HIGH)
        self.layout = layout
        self._gidx = [self._gather_index(seat) for seat in range(n)]
        # A just-dealt round before the deal's kinds are known: every seat holds positions
        # 0..3 and has seen (and knows) its bottom two.
        # (slot, flat tracker index, source index of kind 0) of each seat's bottom two.
        # Per seat: where its row starts in the flat tracker memory and in the graveyard memory.
        self._seat_rows = [(s * (ns + 2 * NUM_CARDS), offsets["gmem"] + s * NUM_KINDS)
                           for s in range(n)]
        # Per seat: where its deck memory starts in the flat tracker memory and the source.
        self._deck_rows = [(s * (ns + 2 * NUM_CARDS) + self.deck_base,
                            offsets["dmem"] + s * NUM_KINDS) for s in range(n)]
        self._peeks = [(s * SLOTS + p, self._seat_rows[s][0] + s * SLOTS + p,
                        offsets["kk"] + (s * ns + s * SLOTS + p) * 16 + 1)
                       for s in range(n) for p in BOTTOM]
        self._window_order = [[(placer + k) % n for k in range(1, n + 1)] for placer in range(n)]
        self._deal_order = [[((start + k) % n) * SLOTS + pos for pos in range(DEALT)
                             for k in range(n)] for start in range(n)]
        template = np.zeros(offsets["totals"], dtype=np.float32)
        for s in range(n):
            template[[offsets["occ"] + s * SLOTS + p for p in range(DEALT)]] = 1.0
            for p in BOTTOM:
                template[offsets["seen"] + s * ns + s * SLOTS + p] = 1.0
                template[offsets["kk"] + (s * ns + s * SLOTS + p) * 16] = 1.0
        self._round_template = template
        self._round_occ2 = bytes(([1] * DEALT + [0] * (SLOTS - DEALT)) * 2 * n)
        assert all(len(g) == layout.size for g in self._gidx)
        self._rel_slot = [[((s + a // SLOTS) % n) * SLOTS + a % SLOTS for a in range(ns)]
                          for s in range(n)]

        state = ObsLayout()
        # Seats in absolute order.
        state.add("cards", (n, SLOTS, NUM_KINDS), "every position's true kind")
        state.add("occupied", (n, SLOTS), "a card lies at this position")
        state.add("known", (n, n, SLOTS), "seat remembers the card at (seat, position)")
        state.add("drawn_kind", NUM_KINDS, "the drawn card")
        state.add("top_kind", NUM_KINDS, "the graveyard's face-up top")
        state.add("deck_kinds", NUM_KINDS, "the deck's cards per kind / copies of that kind")
        state.add("grave_kinds", NUM_KINDS, "the graveyard's cards per kind / copies")
        state.add("phase", NUM_PHASES, "the decision: " + ", ".join(PHASE_NAMES))
        state.add("current_player", n, "the seat to act")
        state.add("turn_player", n, "whose turn it is")
        state.add("locked_stack", n, "the stack nobody may throw from")
        state.add("window_queue", n, "the seats this reaction window has still to reach")
        state.add("totals", n, "totals / 100", low=TOTAL_LOW, high=TOTAL_HIGH)
        self.state_layout = state

        self.tracker = KnowledgeTracker(n, ns + 2 * NUM_CARDS, self.memory)
        self._perfect_memory = self.tracker.forget_p == 0.0
        self.slots: list[int] = [-1] * ns
        self.hand_count = [0] * n
        self.deck: list[int] = []  # top of the deck is the END of the list
        self.grave: list[int] = []  # top of the graveyard is the END of the list
        self.drawn = -1
        self.drawn_from_grave = False
        self.phase = TURN
        self.turn_player = 0
        self.round_start = 0
        self.round_turns = 0
        self.selected = -1
        self.locked = -1
        self.queue: list[int] = []
        self.totals = [0] * n
        self.last_round = [0] * n
        self.last_caller = -1
        self.round_number = 0
        self.reshuffled = False  # this round's deck is a reshuffled graveyard
        # Occupancy (0/1 bytes) written twice over, so that every seat's relative order (own
        # positions first) is one slice: a legal mask copies it in a single memoryview move.
        self._occ2 = bytearray(2 * ns)
        self._no_actions = bytes(self.num_actions)
        self._mask = np.zeros(self.num_actions, dtype=np.int8)
        self._mask_valid = False
        self._mask_count = 0
        self._bind_views()

    def _bind_views(self) -> None:
        n, ns, o, src = self.num_players, self.num_slots, self._off, self._src
        # Single entries are written through memoryviews: half the cost of numpy's setitem.
        self._sv = float_items(src)
        self._template_v = float_items(self._round_template)
        self._no_scores_v = float_items(np.zeros(2 * n, dtype=np.float32))
        self._whole_queue_v = float_items(np.ones(n, dtype=np.float32))
        known = self.tracker.known  # written in place only (reset, load), never replaced
        self._known_v = int_items(known.reshape(-1))
        self._mask_v = int_items(self._mask).cast("B")  # byte format, as ``_occ2``
        self._occ2_v = memoryview(self._occ2)
        self._rel_occ_v = [self._occ2_v[s * SLOTS:s * SLOTS + ns] for s in range(n)]
        # Who has seen the card now at each slot (the public record; a state field).
        self.witnessed = src[o["seen"]:o["seen"] + n * ns].reshape(n, ns)
        self._kk = src[o["kk"]:o["kk"] + n * ns * 16].reshape(n, ns, 16)
        self._gmem = src[o["gmem"]:o["gmem"] + n * NUM_KINDS].reshape(n, NUM_KINDS)
        self._dmem = src[o["dmem"]:o["dmem"] + n * NUM_KINDS].reshape(n, NUM_KINDS)
        self._drawn_v = src[o["drawn"]:o["drawn"] + n * NUM_KINDS].reshape(n, NUM_KINDS)
        # Per-slot columns (every seat's entry for one slot), prebuilt: filling a ready view
        # costs a third of indexing ``[:, slot]`` each time.
        self._wcol = [self.witnessed[:, x] for x in range(ns)]
        self._kkcol = [self._kk[:, x] for x in range(ns)]
        self._kcol = [known[:, x] for x in range(ns)]

    def _gather_index(self, seat: int) -> np.ndarray:
        """Source positions of each observation entry for ``seat`` (relative seats)."""
        n, ns, o = self.num_players, self.num_slots, self._off
        rel_seats = [(seat + r) % n for r in range(n)]
        perm = [s * SLOTS + p for s in rel_seats for p in range(SLOTS)]
        idx: list[int] = [o["occ"] + a for a in perm]
        idx += [o["kk"] + (seat * ns + a) * 16 for a in perm]
        idx += [o["kk"] + (seat * ns + a) * 16 + 1 + k for a in perm for k in range(NUM_KINDS)]
        idx += [o["seen"] + v * ns + a for v in rel_seats for a in perm]
        idx += [o["sel"] + a for a in perm]
        idx += [o["gmem"] + seat * NUM_KINDS + k for k in range(NUM_KINDS)]
        idx += [o["dmem"] + seat * NUM_KINDS + k for k in range(NUM_KINDS)]
        idx += [o["phase"] + k for k in range(NUM_PHASES)]
        idx += [o["turn"] + s for s in rel_seats]
        idx += [o["drawn"] + seat * NUM_KINDS + k for k in range(NUM_KINDS)]
        idx += [o["fromg"]]
        idx += [o["top"] + k for k in range(NUM_KINDS)]
        idx += [o["lock"] + s for s in rel_seats]
        idx += [o["queue"] + s for s in rel_seats]
        idx += [o["deck"], o["grave"], o["turns"]]
        idx += [o["totals"] + s for s in rel_seats]
        idx += [o["last"] + s for s in rel_seats]
        return np.array(idx, dtype=np.intp)

    def deck_cards(self) -> list[int]:
        return list(range(NUM_CARDS))

    def all_cards(self) -> list[int]:
        cards = [c for c in self.slots if c >= 0] + self.deck + self.grave
        return cards + ([self.drawn] if self.drawn >= 0 else [])

    # -- dealing -------------------------------------------------------------------------------
    def later_deals(self) -> bool:
        return self.config["episode"] == "game"

    @property
    def deal_number(self) -> int:
        return self.round_number

    def _deal(self, deck: list[int] | None) -> None:
        n = self.num_players
        fp = self.config["first_player"]
        self.round_start = self.random_below(n) if fp == "random" else fp
        self.totals = [0] * n
        self.last_round = [0] * n
        self.last_caller = -1
        self.round_number = 0
        # Totals and last round, the source's tail, zeroed by a memoryview copy (a third of
        # numpy's slice assignment).
        self._sv[self._scores_at:] = self._no_scores_v
        self._start_round(deck)

    def _start_round(self, stacked: list[int] | None) -> None:
        n = self.num_players
        if stacked is None:
            order = list(ALL_CARDS)
            # The same draws and order as ``permutation(NUM_CARDS).tolist()``, at half the cost.
            self.rng.shuffle(order)
        else:
            order = list(stacked)
        self.deck = order[::-1]
        slots = self.slots = [-1] * self.num_slots
        # One card at a time to positions 0, 1, 2, 3, starting with the round's first player.
        pop = self.deck.pop
        for x in self._deal_order[self.round_start]:
            slots[x] = pop()
        self._occ2_v[:] = self._round_occ2
        self.hand_count = [DEALT] * n
        self.grave = []
        self.drawn = -1
        self.drawn_from_grave = False
        self.selected = -1
        self.locked = -1
        self.queue = []
        self.reshuffled = False
        self.phase = TURN
        self.turn_player = self.round_start
        self.round_turns = 0
        self.tracker.known.fill(-1)
        self.round_number += 1
        self._mask_valid = False
        self._fresh_round_src()
        # "look at the bottom two cards": each seat sees its own. The template already holds
        # the "seen" and "known" flags; only the kinds depend on the deal.
        known, sv = self._known_v, self._sv
        for x, k, kind_base in self._peeks:
            card = slots[x]
            known[k] = card
            sv[kind_base + KIND_OF[card]] = 1.0
        self._begin_turn(self.round_start)

    # -- knowledge and source-vector bookkeeping -------------------------------------------
    def _see(self, slot: int, card: int, seat: int) -> None:
        """``seat`` sees ``card`` at hand ``slot``. Its row of ``_kk`` there is all zeros or
        already this card's (memory is the card at the slot or nothing), so setting the known
        flag and the kind flag is the whole update."""
        self._known_v[self._seat_rows[seat][0] + slot] = card
        x = seat * self.num_slots + slot
        sv = self._sv
        sv[self._seen_at + x] = 1.0
        kk = self._kk_at + 16 * x
        sv[kk] = 1.0
        sv[kk + 1 + KIND_OF[card]] = 1.0
        if self.reshuffled:
            self._seen_out_of_deck(seat, card)

    def _see_all(self, slot: int, card: int) -> None:
        self._kcol[slot].fill(card)  # tracker.known[:, slot]
        self._wcol[slot].fill(1.0)  # witnessed[:, slot]
        self._kkcol[slot][...] = KNOWN_ROW_OF[card]  # _kk[:, slot]
        if self.reshuffled:
            self._seen_out_of_deck_by_all(card)

    def _seen_out_of_deck(self, seat: int, card: int) -> None:
        """``seat`` saw ``card`` outside the deck: it no longer counts it in the deck."""
        known_at, dmem_at = self._deck_rows[seat]
        if self._known_v[known_at + card] >= 0:
            self._known_v[known_at + card] = -1
            self._sv[dmem_at + KIND_OF[card]] -= INV_COPIES_OF[card]

    def _seen_out_of_deck_by_all(self, card: int) -> None:
        known, sv = self._known_v, self._sv
        kind, share = KIND_OF[card], INV_COPIES_OF[card]
        for known_at, dmem_at in self._deck_rows:
            if known[known_at + card] >= 0:
                known[known_at + card] = -1
                sv[dmem_at + kind] -= share

    def _conceal(self, slot: int) -> None:
        """The card at ``slot`` left, or was replaced unseen: nobody knows what is there."""
        self._kcol[slot].fill(-1)
        self._wcol[slot].fill(0.0)
        self._kkcol[slot].fill(0.0)

    def _swap_cards(self, a: int, b: int) -> None:
        """Swap two cards in plain view: every seat's memory follows its card."""
        slots = self.slots
        slots[a], slots[b] = slots[b], slots[a]
        self.tracker.swap(a, b)
        pair, rev = [a, b], [b, a]
        self.witnessed[:, pair] = self.witnessed[:, rev]
        self._kk[:, pair] = self._kk[:, rev]

    def _move_card(self, src: int, dst: int) -> None:
        """Move a card in plain view from ``src`` to the empty ``dst``."""
        card = self.slots[src]
        self.slots[dst] = card
        self.slots[src] = -1
        self.hand_count[src // SLOTS] -= 1
        self.hand_count[dst // SLOTS] += 1
        self._set_occupied(src, 0)
        self._set_occupied(dst, 1)
        self.tracker.move(src, dst)
        self.witnessed[:, dst] = self.witnessed[:, src]
        self.witnessed[:, src] = 0.0
        self._kk[:, dst] = self._kk[:, src]
        self._kk[:, src] = 0.0

    def _remove_card(self, slot: int) -> int:
        card = self.slots[slot]
        self.slots[slot] = -1
        self.hand_count[slot // SLOTS] -= 1
        self._set_occupied(slot, 0)
        self._conceal(slot)
        return card

    def _add_card(self, seat: int, card: int) -> int:
        """A hidden card into ``seat``'s first empty position; returns the slot."""
        base = seat * SLOTS
        slot = base + self.slots[base:base + SLOTS].index(-1)
        self.slots[slot] = card  # an empty position holds no knowledge: nothing to conceal
        self.hand_count[seat] += 1
        self._set_occupied(slot, 1)
        return slot

    def _set_occupied(self, slot: int, flag: int) -> None:
        """Occupancy lives in the observation source and, for the masks, twice in ``_occ2``."""
        self._sv[self._occ_at + slot] = flag
        occ2 = self._occ2
        occ2[slot] = occ2[slot + self.num_slots] = flag

    # Burying and unburying touch one entry per seat: single writes through the memoryviews
    # cost a fraction of numpy's column and boolean indexing. The memory shares are multiples
    # of 1/4, exact in float32 either way.
    def _bury(self, card: int) -> None:
        """``card`` was covered on the graveyard: from now on it is memory, not table."""
        known, sv = self._known_v, self._sv
        k, g, share = self.grave_base + card, KIND_OF[card], INV_COPIES_OF[card]
        for known_row, gmem_row in self._seat_rows:
            known[known_row + k] = card
            sv[gmem_row + g] += share

    def _unbury(self, card: int) -> None:
        """``card`` is the graveyard's top again (the card above it was drawn)."""
        known, sv = self._known_v, self._sv
        k, g, share = self.grave_base + card, KIND_OF[card], INV_COPIES_OF[card]
        for known_row, gmem_row in self._seat_rows:
            if known[known_row + k] >= 0:
                known[known_row + k] = -1
                sv[gmem_row + g] -= share

    def _land(self, card: int) -> None:
        # The top card's kind flag moves by single writes; the deck size does not change here.
        grave, sv = self.grave, self._sv
        if grave:
            covered = grave[-1]
            self._bury(covered)
            sv[TOP_AT + KIND_OF[covered]] = 0.0
        grave.append(card)
        sv[TOP_AT + KIND_OF[card]] = 1.0
        sv[GRAVE_AT] = len(grave) / NUM_CARDS
        if self.reshuffled:  # face up: everyone sees it has left the deck
            self._seen_out_of_deck_by_all(card)

    def _take_top(self) -> int:
        grave, sv = self.grave, self._sv
        card = grave.pop()
        sv[TOP_AT + KIND_OF[card]] = 0.0
        if grave:
            self._unbury(grave[-1])
            sv[TOP_AT + KIND_OF[grave[-1]]] = 1.0
        sv[GRAVE_AT] = len(grave) / NUM_CARDS
        return card

    def _draw_card(self) -> int:
        """The deck's top card, seen by nobody yet (the caller says who looks at it)."""
        if not self.deck:
            # The graveyard but its top is shuffled into a new deck (not in the text). What
            # each seat remembered buried there it now remembers in the deck; the last
            # reshuffle's cards left the deck before this one, so their records go.
            buried = self.grave[:-1]
            self.grave = self.grave[-1:]
            self.rng.shuffle(buried)
            self.deck = buried
            known, g, d = self.tracker.known, self.grave_base, self.deck_base
            known[:, d:] = known[:, g:d]
            known[:, g:d] = -1
            self._dmem[...] = self._gmem
            self._gmem.fill(0.0)
            self.reshuffled = True
            self._sv[GRAVE_AT] = 1 / NUM_CARDS
        card = self.deck.pop()
        self._sv[DECK_AT] = len(self.deck) / NUM_CARDS
        return card

    def _set_phase(self, phase: int) -> None:
        sv = self._sv
        sv[PHASE_AT + self.phase] = 0.0
        sv[PHASE_AT + phase] = 1.0
        self.phase = phase

    def _set_turn(self, seat: int) -> None:
        sv, base = self._sv, self._turn_at
        sv[base + self.turn_player] = 0.0
        sv[base + seat] = 1.0
        self.turn_player = seat

    def _move_flag(self, base: int, old: int, new: int) -> None:
        """Move the one-hot flag of the block at ``base`` from ``old`` to ``new`` (-1: none)."""
        if old >= 0:
            self._sv[base + old] = 0.0
        if new >= 0:
            self._sv[base + new] = 1.0

    def _select(self, slot: int) -> None:
        self._move_flag(self._sel_at, self.selected, slot)
        self.selected = slot

    def _lock(self, seat: int) -> None:
        self._move_flag(self._lock_at, self.locked, seat)
        self.locked = seat

    def _set_drawn(self, card: int, from_grave: bool) -> None:
        self.drawn = card
        self.drawn_from_grave = from_grave
        if from_grave:
            self._drawn_v[:, KIND_OF[card]] = 1.0
            self._sv[FROMG_AT] = 1.0
        else:
            self._drawn_v[self.turn_player, KIND_OF[card]] = 1.0

    def _clear_drawn(self) -> int:
        card = self.drawn
        self.drawn = -1
        self.drawn_from_grave = False
        self._drawn_v.fill(0.0)
        self._sv[FROMG_AT] = 0.0
        return card

    def _sync_seat(self, seat: int) -> None:
        """Re-read ``seat``'s memory from the tracker (after forgetting)."""
        row = self.tracker.known[seat]
        kk = self._kk[seat]
        kk.fill(0.0)
        hand = row[:self.num_slots]
        idx = np.flatnonzero(hand >= 0)
        if idx.size:
            kk[idx, 0] = 1.0
            kk[idx, 1 + KIND_NP[hand[idx]]] = 1.0
        g, d = self.grave_base, self.deck_base
        buried = np.flatnonzero(row[g:d] >= 0)
        self._gmem[seat] = np.bincount(KIND_NP[buried], minlength=NUM_KINDS) * INV_COPIES
        in_deck = np.flatnonzero(row[d:] >= 0)
        self._dmem[seat] = np.bincount(KIND_NP[in_deck], minlength=NUM_KINDS) * INV_COPIES

    def _compose_src(self, out: np.ndarray) -> None:
        """Build the whole source vector from the position (reference for the incremental one)."""
        n, ns, o = self.num_players, self.num_slots, self._off
        witnessed = self.witnessed.reshape(-1).copy()  # state, and a view into _src
        out.fill(0.0)
        out[o["occ"]:o["occ"] + ns] = np.asarray(self.slots) >= 0
        out[o["seen"]:o["seen"] + n * ns] = witnessed
        kk = out[o["kk"]:o["kk"] + n * ns * 16].reshape(n, ns, 16)
        known = self.tracker.known
        seats, slots = np.nonzero(known[:, :ns] >= 0)
        kk[seats, slots, 0] = 1.0
        kk[seats, slots, 1 + KIND_NP[known[seats, slots]]] = 1.0
        for key, start, stop in (("gmem", self.grave_base, self.deck_base),
                                 ("dmem", self.deck_base, None)):
            counts = out[o[key]:o[key] + n * NUM_KINDS].reshape(n, NUM_KINDS)
            seats, cards = np.nonzero(known[:, start:stop] >= 0)
            kinds = KIND_NP[cards]
            np.add.at(counts, (seats, kinds), INV_COPIES[kinds])
        if self.selected >= 0:
            out[o["sel"] + self.selected] = 1.0
        out[o["phase"] + self.phase] = 1.0
        out[o["turn"] + self.turn_player] = 1.0
        if self.drawn >= 0:
            drawn = out[o["drawn"]:o["drawn"] + n * NUM_KINDS].reshape(n, NUM_KINDS)
            if self.drawn_from_grave:
                drawn[:, KIND_OF[self.drawn]] = 1.0
                out[o["fromg"]] = 1.0
            else:
                drawn[self.turn_player, KIND_OF[self.drawn]] = 1.0
        if self.grave:
            out[o["top"] + KIND_OF[self.grave[-1]]] = 1.0
        if self.locked >= 0:
            out[o["lock"] + self.locked] = 1.0
        for seat in self.queue:
            out[o["queue"] + seat] = 1.0
        out[o["deck"]] = len(self.deck) / NUM_CARDS
        out[o["grave"]] = len(self.grave) / NUM_CARDS
        out[o["turns"]] = min(self.round_turns / TURN_SCALE, 1.0)
        self._write_scores(out)

    def _write_scores(self, out: np.ndarray) -> None:
        # One packed write costs two thirds of numpy's conversion of a short list. (An ndarray
        # is a writable buffer; numpy's stubs say so for Python >= 3.12 only.)
        struct.pack_into(self._scores_format, out,  # type: ignore[arg-type]
                         out.itemsize * self._scores_at,
                         *map(SCALED_TOTAL.__getitem__, self.totals),
                         *map(SCALED_ROUND.__getitem__, self.last_round))

    def _fresh_round_src(self) -> None:
        """The source vector of a just-dealt round before the peeks, but for the phase and
        turn flags, which the first ``_begin_turn`` sets: cheap, no loops."""
        # All but the scores (``witnessed`` too), as one memoryview copy: a third of numpy's
        # slice assignment.
        self._sv[:self._scores_at] = self._template_v
        self._sv[DECK_AT] = len(self.deck) / NUM_CARDS

    # -- turn structure ------------------------------------------------------------------------
    def _after_forgetting(self, seat: int) -> None:
        self._sync_seat(seat)  # the observation cache mirrors the tracker's memory

    def _apply(self, action: int) -> None:
        self._dispatch(action)
        # Decisions with a single legal action are formalities: play them without asking.
        while not self.terminated:
            self.legal_mask()
            if self._mask_count != 1:
                break
            self._dispatch(int(np.flatnonzero(self._mask)[0]))

    def _dispatch(self, action: int) -> None:
        self._mask_valid = False
        seat = self.current_player
        phase = self.phase
        if action >= self.throw_base:
            self._throw(seat, self._rel_slot[seat][action - self.throw_base])
        elif action >= PICK_BASE:
            self._pick(seat, self._rel_slot[seat][action - PICK_BASE])
        elif action >= OWN_BASE:
            slot = seat * SLOTS + action - OWN_BASE
            if phase == DRAWN:
                self._swap_in(seat, slot)
            else:  # GIVE
                target = self.selected
                self._select(-1)
                self._move_card(slot, target)
                self._open_window(seat)
        elif action == PASS:
            self._advance_window()
        elif action == CALL:
            self._end_round(seat)
        elif action == DRAW_DECK:
            self._lock(-1)  # "until ... a new card has been drawn"
            card = self._draw_card()
            if self.reshuffled:  # the drawer alone sees which card left the deck
                self._seen_out_of_deck(seat, card)
            self._set_drawn(card, False)
            self._set_phase(DRAWN)
        elif action == DRAW_GRAVE:
            self._lock(-1)
            self._set_drawn(self._take_top(), True)
            self._set_phase(DRAWN)
        elif action == DISCARD:
            card = self._clear_drawn()
            self._land(card)
            self._effect_step(seat, EFFECT_OF_KIND[KIND_OF[card]])
        else:  # KEEP
            self._select(-1)
            self._open_window(seat)

    def _begin_turn(self, seat: int) -> None:
        self._set_turn(seat)
        self.round_turns += 1
        self._sv[TURNS_AT] = min(self.round_turns / TURN_SCALE, 1.0)
        if self.hand_count[seat] == 0:
            # "having no cards ... the game immediately stops once the player is reached"
            self._end_round(seat)
            return
        self._set_phase(TURN)
        self.current_player = seat

    def _swap_in(self, seat: int, slot: int) -> None:
        """Put the drawn card at ``slot``; the card there goes face up onto the graveyard."""
        from_grave = self.drawn_from_grave
        card = self._clear_drawn()
        old = self.slots[slot]
        self.slots[slot] = card
        if from_grave:
            self._see_all(slot, card)  # everyone saw which card was taken
        else:
            self._conceal(slot)
            self._see(slot, card, seat)
        self._land(old)
        self._open_window(seat)

    def _effect_step(self, seat: int, phase: int) -> None:
        """Enter the effect ``phase`` (or the next step) if it has a target; else the turn's
        discard is final and the reaction window opens."""
        total = sum(self.hand_count)
        if phase == LOOK_ANY and total == 0:
            phase = SWAP_FIRST
        if (phase < 0 or (phase == PEEK_OWN and self.hand_count[seat] == 0)
                or (phase == PEEK_OTHER and total == self.hand_count[seat])
                or (phase == SWAP_FIRST and total < 2)):
            self._open_window(seat)
            return
        self._set_phase(phase)

    def _pick(self, seat: int, slot: int) -> None:
        phase = self.phase
        if phase == SWAP_FIRST:
            self._select(slot)
            self._set_phase(SWAP_SECOND)
        elif phase == SWAP_SECOND:
            first = self.selected
            self._select(-1)
            self._swap_cards(first, slot)
            self._open_window(seat)
        else:  # a look: 7/8 own card, 9/10 another's card, black K any card
            self._see(slot, self.slots[slot], seat)
            if phase == LOOK_ANY:
                self._effect_step(seat, SWAP_FIRST)
            else:
                self._open_window(seat)

    # -- quick-play reaction windows -------------------------------------------------------
    def _open_window(self, placer: int) -> None:
        """A card landed on the graveyard: every seat, starting left of ``placer`` and ending
        with ``placer``, may throw a matching card (or pass, or call)."""
        self.queue = self._window_order[placer][:]
        qa = self._queue_at
        self._sv[qa:qa + self.num_players] = self._whole_queue_v  # every seat is to be asked
        self._set_phase(WINDOW)
        self._advance_window()

    def _advance_window(self) -> None:
        queue = self.queue
        sv, qa = self._sv, self._queue_at
        while queue:
            seat = queue.pop(0)
            sv[qa + seat] = 0.0
            if self._call_any or self._may_throw(seat):  # else the seat has nothing to decide
                self.current_player = seat
                return
        self._begin_turn((self.turn_player + 1) % self.num_players)

    def _close_window(self) -> None:
        sv, qa = self._sv, self._queue_at
        for seat in self.queue:
            sv[qa + seat] = 0.0
        self.queue.clear()

    def _may_throw(self, seat: int) -> bool:
        if self.hand_count[seat] >= SLOTS:
            return False  # no room for a penalty card: may not throw
        total = sum(self.hand_count)
        if self.locked >= 0:
            total -= self.hand_count[self.locked]
        return total > 0

    def _throw(self, seat: int, slot: int) -> None:
        card = self.slots[slot]
        if self._match[card] == self._match[self.grave[-1]]:
            owner = slot // SLOTS
            self._remove_card(slot)
            self._land(card)
            self._lock(owner)  # nobody fires from this stack again until a draw or another stack
            if owner != seat and self.hand_count[seat] > 0:
                self._close_window()  # the landed card opens a new one after the give
                self._select(slot)
                self._set_phase(GIVE)
                return
            self._open_window(seat)
            return
        # A wrong throw: the card is shown to everyone and goes back; the thrower takes a
        # hidden penalty card into its first empty position.
        self._see_all(slot, card)
        self._add_card(seat, self._draw_card())
        self._advance_window()

    # -- round and game end ----------------------------------------------------------------
    def hand_points(self, seat: Any) -> int:
        """The points of ``seat``'s hand (what the round would add to its total)."""
        if type(seat) is not int or not self._dealt:
            seat = self._int_arg(seat, "hand_points")
        base = seat * SLOTS
        return sum(POINTS_OF[c] for c in self.slots[base:base + SLOTS] if c >= 0)

    def _end_round(self, caller: int) -> None:
        n = self.num_players
        points = [0] * n
        for x, card in enumerate(self.slots):
            if card >= 0:
                points[x >> 3] += POINTS_OF[card]  # x // SLOTS
        gains = list(points)
        if points[caller] >= min(points[:caller] + points[caller + 1:]):
            gains[caller] = CALL_PENALTY + (points[caller] if self._on_top else 0)
        totals = self.totals
        score = self.reward_mode == "score"
        for s in range(n):
            old = totals[s]
            new = old + gains[s]
            new = DROPS.get(new, new)
            totals[s] = new
            if score:
                self.rewards[s] -= new - old
        self.last_round = gains
        self.last_caller = caller
        self._write_scores(self._src)
        if self._round_episode or max(totals) > ELIMINATION:
            best = min(totals)
            self.finish([s for s in range(n) if totals[s] == best])
            return
        self.round_start = (self.round_start + 1) % n
        self._start_round(self.next_stacked_deck())

    def result(self) -> dict[str, Any]:
        out = super().result()
        out.update(totals=list(self.totals), last_round=list(self.last_round),
                   last_caller=self.last_caller, rounds=self.round_number)
        return out

    # -- legality ------------------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        if self._mask_valid:
            return self._mask
        if not self._dealt:
            self._not_dealt("legal_mask")
        # Written through a byte memoryview: single entries and the occupancy slices from
        # ``_occ2`` cost a fraction of numpy's indexing.
        mask = self._mask_v
        mask[:] = self._no_actions
        seat = self.current_player
        phase = self.phase
        ns = self.num_slots
        count = 2  # turn starts and windows always offer at least two actions
        if phase == WINDOW:
            mask[PASS] = 1
            if self._call_any:
                mask[CALL] = 1
            if self.hand_count[seat] < SLOTS:
                tb = self.throw_base
                mask[tb:tb + ns] = self._rel_occ_v[seat]
                if self.locked >= 0:
                    r = (self.locked - seat) % self.num_players * SLOTS + tb
                    mask[r:r + SLOTS] = NO_SLOTS
        elif phase == TURN:
            mask[CALL] = 1
            mask[DRAW_DECK] = 1
            if self.grave:
                mask[DRAW_GRAVE] = 1
        elif phase in (DRAWN, GIVE):
            base = seat * SLOTS
            mask[OWN_BASE:OWN_BASE + SLOTS] = self._occ2_v[base:base + SLOTS]
            if phase == DRAWN and not self.drawn_from_grave:
                mask[DISCARD] = 1
            elif phase == GIVE and self._give_optional:
                mask[KEEP] = 1
        else:
            occ = self._rel_occ_v[seat]
            if phase == PEEK_OWN:
                mask[PICK_BASE:PICK_BASE + SLOTS] = occ[:SLOTS]
            elif phase == PEEK_OTHER:
                mask[PICK_BASE + SLOTS:PICK_BASE + ns] = occ[SLOTS:]
            else:
                mask[PICK_BASE:PICK_BASE + ns] = occ
                if phase == SWAP_SECOND:
                    mask[PICK_BASE + self._rel_index(seat, self.selected)] = 0
        if phase != WINDOW and phase != TURN:
            count = int(np.count_nonzero(self._mask))
        self._mask_count = count
        self._mask_valid = True
        return self._mask

    def _rel_index(self, seat: int, slot: int) -> int:
        return ((slot // SLOTS - seat) % self.num_players) * SLOTS + slot % SLOTS

    # -- observations --------------------------------------------------------------------------
    # The gather indices are always in range; of ``take``'s modes "wrap" is the cheapest (a
    # fifth less than "clip"), and "raise" would buffer ``out``.
    def write_observation(self, seat: Any, out: np.ndarray) -> None:
        if type(seat) is not int or not self._dealt:
            seat = self._int_arg(seat, "write_observation")
        self._src.take(self._gidx[seat], out=out, mode="wrap")

    def observation(self, seat: Any) -> np.ndarray:
        if type(seat) is not int or not self._dealt:
            seat = self._int_arg(seat, "observation")
        return self._src.take(self._gidx[seat], mode="wrap")

    def write_state(self, out: np.ndarray) -> None:
        if not self._dealt:
            self._not_dealt("write_state")
        n, ns = self.num_players, self.num_slots
        out.fill(0.0)
        view = self.state_layout.decode(out)
        cards = view["cards"]
        for slot, card in enumerate(self.slots):
            if card >= 0:
                cards[slot * NUM_KINDS + KIND_OF[card]] = 1.0
                view["occupied"][slot] = 1.0
        view["known"][:] = (self.tracker.known[:, :ns] >= 0).reshape(-1)
        if self.drawn >= 0:
            view["drawn_kind"][KIND_OF[self.drawn]] = 1.0
        if self.grave:
            view["top_kind"][KIND_OF[self.grave[-1]]] = 1.0
        for card in self.deck:
            view["deck_kinds"][KIND_OF[card]] += INV_COPIES_OF[card]
        for card in self.grave:
            view["grave_kinds"][KIND_OF[card]] += INV_COPIES_OF[card]
        view["phase"][self.phase] = 1.0
        view["current_player"][self.current_player] = 1.0
        view["turn_player"][self.turn_player] = 1.0
        if self.locked >= 0:
            view["locked_stack"][self.locked] = 1.0
        view["window_queue"][self.queue] = 1.0
        for s in range(n):
            view["totals"][s] = min(max(self.totals[s] / TOTAL_SCALE, TOTAL_LOW), TOTAL_HIGH)

    # -- determinization -----------------------------------------------------------------------
    def _resample_hidden(self, seat: int, rng: np.random.Generator) -> None:
        """Redeal what ``seat`` cannot know: face-down cards it does not remember, the deck,
        buried graveyard cards it does not remember, and a card another seat drew from the
        deck. Other seats keep remembering positions; what they remember follows the redeal.

        Cards the seat counts in a reshuffled deck stay in the deck, a hidden position or the
        drawn card, the deck taking them first: under perfect memory the deck holds nothing
        else, and it gets a uniform draw of them. They are never buried: everyone saw each
        buried card land. Memory holds which cards are buried, not their order, so the buried
        cards are shuffled too (the order says which card a graveyard draw uncovers)."""
        known = self.tracker.known
        g, d = self.grave_base, self.deck_base
        hidden_slots = [x for x, c in enumerate(self.slots) if c >= 0 and known[seat, x] < 0]
        buried = self.grave[:-1]
        hidden_buried = [i for i, c in enumerate(buried) if known[seat, g + c] < 0]
        buried_memory = [known[:, g + buried[i]].copy() for i in hidden_buried]
        drawn_hidden = (self.drawn >= 0 and not self.drawn_from_grave
                        and self.turn_player != seat)
        unseen = [self.slots[x] for x in hidden_slots] + self.deck
        if drawn_hidden:
            unseen.append(self.drawn)
        self.deck, rest, spare = deal_counted_first(
            unseen, known[seat, d:], [buried[i] for i in hidden_buried], len(self.deck), rng)
        for i in hidden_buried:
            known[:, g + buried[i]] = -1
        for i, memory in zip(hidden_buried, buried_memory, strict=True):
            card = rest.pop()
            self.grave[i] = card
            known[:, g + card] = np.where(memory >= 0, card, -1)
        order = rng.permutation(len(buried))
        self.grave[:-1] = [self.grave[int(i)] for i in order]
        pool = spare + rest
        pool = [pool[i] for i in rng.permutation(len(pool))]
        if drawn_hidden:
            self.drawn = pool.pop()
        for x, card in zip(hidden_slots, pool, strict=True):
            self.slots[x] = card
            self.tracker.relabel(x, card)
        if self.reshuffled:
            self._redeal_deck_memory(seat)
        self._compose_src(self._src)
        self._mask_valid = False

    def _redeal_deck_memory(self, seat: int) -> None:
        """Other seats' deck memories after a redeal for ``seat`` (whose own stays as it is).
        They keep their records by card, less the cards the redeal put where they would have
        seen them: on the graveyard, at a position they know, in their own hand as the drawn
        card. Without forgetting a seat counts every reshuffled card it has not seen leave: the
        cards any seat counts, less those."""
        known, d, ns = self.tracker.known, self.deck_base, self.num_slots
        memory = known[:, d:]
        own = memory[seat].copy()
        if self._perfect_memory:
            count_what_anyone_counts(memory)
        memory[:, self.grave] = -1
        for s in range(self.num_players):
            row = known[s, :ns]
            memory[s, row[row >= 0]] = -1
        if self.drawn >= 0 and not self.drawn_from_grave:
            memory[self.turn_player, self.drawn] = -1
        memory[seat] = own

    def _after_load(self) -> None:
        self._compose_src(self._src)
        self._occ2[:] = self._compose_occ2()
        self._mask_valid = False

    def _compose_occ2(self) -> bytes:
        """``_occ2`` from the position (the incremental one's reference)."""
        return bytes(card >= 0 for card in self.slots) * 2

    def check_invariants(self) -> None:
        super().check_invariants()
        n, g = self.num_players, self.grave_base
        assert 0 <= self.phase < NUM_PHASES and all(0 <= s < n for s in self.queue)
        assert not self.queue or self.phase == WINDOW or self.done, "a queue outside a window"
        known = self.tracker.known
        for s in range(n):
            assert self.hand_count[s] == sum(
                1 for c in self.slots[s * SLOTS:(s + 1) * SLOTS] if c >= 0), s
        for x, card in enumerate(self.slots):
            col = known[:, x]
            if card < 0:
                assert (col < 0).all() and not self.witnessed[:, x].any(), x
            else:
                assert ((col < 0) | (col == card)).all(), (x, card, col)
                assert (self.witnessed[:, x] >= (col >= 0)).all(), x
        buried = set(self.grave[:-1])
        for c in range(NUM_CARDS):
            col = known[:, g + c]
            assert ((col < 0) | ((col == c) & (c in buried))).all(), c
            if self._perfect_memory:
                assert c not in buried or (col == c).all(), f"buried {c} forgotten"
        # A seat counts a card in the deck only after a reshuffle, never once it has placed
        # the card (on the graveyard, at a position it knows, as the card it drew), and,
        # without forgetting, every card in the deck.
        counted = known[:, self.deck_base:] >= 0
        assert self.reshuffled or not counted.any(), "deck memory without a reshuffle"
        assert (known[:, self.deck_base:][counted] == np.nonzero(counted)[1]).all()
        assert not counted[:, self.grave].any(), "a graveyard card counted in the deck"
        for s in range(n):
            row = known[s, :self.num_slots]
            assert not counted[s, row[row >= 0]].any(), f"seat {s} counts a card it has placed"
        if self.drawn >= 0 and not self.drawn_from_grave:
            assert not counted[self.turn_player, self.drawn], "the drawer counts its card"
        if self.reshuffled and self._perfect_memory:
            assert counted[:, self.deck].all(), "a reshuffled card is missing from memory"
        assert (self.drawn >= 0) == (self.phase == DRAWN), self.phase
        assert (self.selected >= 0) == (self.phase in (SWAP_SECOND, GIVE)), self.phase
        reference = np.empty_like(self._src)
        self._compose_src(reference)
        np.testing.assert_array_equal(self._src, reference, err_msg="observation source stale")
        assert self._occ2 == self._compose_occ2(), "occupancy bytes stale"

    # -- rendering -----------------------------------------------------------------------------
    def render_text(self) -> str:
        if not self._dealt:
            self._not_dealt("render_text")
        lines = [f"Memory-Uno round {self.round_number}, totals {self.totals}, "
                 f"phase {PHASE_NAMES[self.phase]}, turn of player_{self.turn_player}"]
        top = card_code(self.grave[-1]) if self.grave else "--"
        lock = f", stack of player_{self.locked} locked" if self.locked >= 0 else ""
        lines.append(f"graveyard top {top} ({len(self.grave)} cards), deck {len(self.deck)}{lock}")
        if self.drawn >= 0:
            src = "graveyard" if self.drawn_from_grave else "deck"
            lines.append(f"drawn from the {src}: {card_code(self.drawn)}")
        for s in range(self.num_players):
            marker = "*" if s == self.current_player and not self.done else " "
            cells = []
            for p in range(SLOTS):
                c = self.slots[s * SLOTS + p]
                if c >= 0:
                    cells.append(f"{p}:{card_code(c)}")
            lines.append(f"{marker} player_{s} ({self.hand_points(s):>3} pts): {' '.join(cells)}")
        if self.done:
            lines.append(f"{self.ending_text()}, last round {self.last_round}")
        return "\n".join(lines)

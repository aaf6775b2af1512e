"""Dogpile rules engine (see RULES.md beside this file for every rule and choice).

Real time is discretised into ticks: in every tick each dog makes exactly one decision, in an
order drawn per tick (or, as an option, rotating), and every decision costs that tick. Between
rounds the untimed SNIFF happens as ordinary sequential decisions.

Actions (167): ``dig:NN`` (0..53) turns over the bone at pile slot NN (in the sniff phase: picks
it up to sniff); ``down:NN`` (54..107) / ``up:NN`` (108..161) puts the bone in the paw in motion
(a dug bone, a bone being buried, or a sniffed bone being shuffled back) on empty slot NN face
down / face up; ``keep`` (162) keeps the dug bone in a paw; ``bury:i`` (163..165) starts burying
paw bone i; ``wait`` (166) lets the tick pass.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from mypy_extensions import mypyc_attr

from card_envs.core.buffers import bool_items, float_items, int_items
from card_envs.core.cards import (
    ACE,
    FACE_VALUE_OF,
    NUM_CARDS,
    QUEEN,
    RANK,
    RANK_OF,
    SUIT,
    SUIT_OF,
    card_code,
)
from card_envs.core.config import Option, int_range
from card_envs.core.engine import CachedViewsEngine, clone_sharing
from card_envs.core.knowledge import KnowledgeTracker
from card_envs.core.obs_layout import ObsLayout

NUM_SLOTS = 54
PAWS = 3
SNIFF_BONES = 3
NUM_ROUNDS = 3
FULL_LOOT = PAWS * NUM_ROUNDS  # nine bones
BLACKJAW_LIMIT = 21  # "under 21 points in total"
COLLAR_BONUS, STRAIGHT_BONUS, BONEATHON_BONUS = 10, 15, 50
TWO = 1  # rank index of the Twos
JOKER_RANK = 13

DIG = 0
DOWN = 54
UP = 108
KEEP = 162
BURY = 163
WAIT = 166
NUM_ACTIONS = 167
FULL_PAWS = (1 << 3) - 1

#: A dog's own state during play.
FREE, HOLDING, BURYING = 0, 1, 2
#: The game's phase.
PLAY, SNIFF, SHUFFLE, OVER = 0, 1, 2, 3
#: How much of a dog's cached observation is out of date: nothing, the table (pile, sniffed
#: flags and the phase-to-sniff-bag tail, all a sniff or a sniffed group's change touches), all.
FRESH, STALE_TABLE, STALE = 0, 1, 2

#: Card encoding used everywhere a bone is shown: rank one-hot (A..K, joker) + suit one-hot.
#: Row -1 (index 54) is all zeros, so ``ENC[card_or_minus_one]`` encodes "nothing known".
CARD_FEATURES = 18
ENC = np.zeros((NUM_CARDS + 1, CARD_FEATURES), dtype=np.float32)
for _c in range(NUM_CARDS):
    ENC[_c, int(RANK[_c])] = 1.0
    if SUIT[_c] >= 0:
        ENC[_c, 14 + int(SUIT[_c])] = 1.0
#: The same with a leading "there is a bone here" flag.
ENC_OCC = np.zeros((NUM_CARDS + 1, CARD_FEATURES + 1), dtype=np.float32)
ENC_OCC[:NUM_CARDS, 0] = 1.0
ENC_OCC[:, 1:] = ENC
SLOT_FEATURES = 2 + CARD_FEATURES  # occupied, face up, card
#: A face-up slot: occupied, face up, card.
ENC_UP = np.ones((NUM_CARDS + 1, SLOT_FEATURES), dtype=np.float32)
ENC_UP[:, 2:] = ENC
#: own_state rows: free, holding, burying paw 0 / 1 / 2.
OWN_STATE = np.zeros((3 + PAWS, 3 + PAWS), dtype=np.float32)
for _k in range(3):
    OWN_STATE[_k, _k] = 1.0
for _i in range(PAWS):
    OWN_STATE[3 + _i, BURYING] = 1.0
    OWN_STATE[3 + _i, 3 + _i] = 1.0
#: which paw bone a dog is burying (row PAWS: none).
BURY_FLAGS = np.eye(PAWS + 1, PAWS, dtype=np.float32)
#: A pile slot's observation row by "slot code" (see ``DogpileEngine._code``): rows 0..53 a
#: face-down bone remembered as that card, 54..107 a face-up bone (card + 54), row 108 an
#: empty slot, row 109 (= index -1) a face-down bone nobody remembers. The index of a slot is
#: ``max(code, known)`` with code -1 face down, card + 54 face up and 108 empty.
UP_CODE, EMPTY_CODE = NUM_CARDS, 2 * NUM_CARDS
PILE_ROWS = np.zeros((2 * NUM_CARDS + 2, SLOT_FEATURES), dtype=np.float32)
PILE_ROWS[:NUM_CARDS, 0] = 1.0
PILE_ROWS[:NUM_CARDS, 2:] = ENC[:NUM_CARDS]
PILE_ROWS[UP_CODE:EMPTY_CODE] = ENC_UP[:NUM_CARDS]
PILE_ROWS[-1, 0] = 1.0
#: An opponent's paw bone by ``max(code, known)``, code -1 occupied and 54 empty: rows 0..53
#: a remembered bone, row 54 an empty paw, row 55 (= index -1) an unremembered bone.
PAW_EMPTY_CODE = NUM_CARDS
PAW_ROWS = np.zeros((NUM_CARDS + 2, CARD_FEATURES + 1), dtype=np.float32)
PAW_ROWS[:NUM_CARDS] = ENC_OCC[:NUM_CARDS]
PAW_ROWS[-1, 0] = 1.0
#: The same tables as lists of rows: a list lookup beats indexing an array on hot paths.
PILE_ROW = list(PILE_ROWS)
#: Rows as memoryviews: copied into memoryview slices of the observation cache, a row costs
#: about two thirds of a numpy slice assignment.
ENC_OCC_MV = [float_items(row) for row in ENC_OCC]
OWN_STATE_MV = [float_items(row) for row in OWN_STATE]
#: bury:0..2 flags of a free dog by its paw bits (bit i: paw i holds a bone).
PAW_BIT_MV = [int_items(np.array([(bits >> i) & 1 for i in range(PAWS)], dtype=np.int8))
              for bits in range(1 << PAWS)]
#: Whole masks copied in by one memoryview move (a third of ``mask[:] = row``).
NO_ACTIONS_MV = int_items(np.zeros(NUM_ACTIONS, dtype=np.int8))
WAIT_ONLY_MV = int_items(np.eye(1, NUM_ACTIONS, WAIT, dtype=np.int8)[0])


#: Views into the observation cache, the position's arrays, the mask templates and the
#: tracker's memory: never copied (memoryviews cannot be), rebuilt on the copy.
_VIEWS = ("occupied", "empty", "_row_views", "_block_views", "_slot_views", "_held_views",
          "_own_paw_views", "_opp_paw_views", "_state_views", "_obs_v", "_pile_v", "_face_v",
          "_code_v", "_held_v", "_paws_v", "_paw_code_v", "_dig_mask_v", "_place_mask_v",
          "_mask_v", "_order_col", "_order_rows", "_known_cols", "_card_cols", "_seat_rows")
#: Attributes that never change after construction: clones share them.
_SHARED_ON_CLONE = (
    "config", "layout", "state_layout", "action_names", "_action_index", "_alias_index",
    "round_ticks",
    "seat_order", "opp_paw_slots", "rotations", "_all_rows", "_held_cols", "_paw_rows",
    "_paw_cols", "_bury_cols", "_held_starts", "_paw_starts", "_order_idx", "_opp_paw_idx",
    "_pub_idx", "_order_scaled", "_order_table", "_time_at", "_order_at", "_obs0",
)


def _check_round_seconds(value: Any) -> str | None:
    ok = (
        isinstance(value, (tuple, list))
        and len(value) == NUM_ROUNDS
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)
    )
    return None if ok else "three positive integers (seconds of rounds 1, 2, 3), e.g. (30, 20, 10)"


@functools.lru_cache(maxsize=8)
def _card_columns(num_players: int) -> tuple[memoryview, ...]:
    """Per card (index -1: none), ``num_players`` copies of it: one memoryview move sets a
    tracker column to it (read-only: shared by every engine)."""
    columns = []
    for card in [*range(NUM_CARDS), -1]:
        column = np.full(num_players, card, dtype=np.int8)
        column.flags.writeable = False
        columns.append(int_items(column))
    return tuple(columns)


@functools.lru_cache(maxsize=8192)
def _belief(remembered: tuple[int, ...], live: int) -> np.ndarray:
    """The rank/suit belief over a sniffed slot: the remembered candidates' encodings summed,
    over the live candidates (read-only: shared by every engine)."""
    belief = ENC[remembered[0]]
    for c in remembered[1:]:
        belief = belief + ENC[c]
    belief = belief / live
    belief.flags.writeable = False
    return belief


def round_feats(cards: Sequence[int], ace_high: bool = False) -> tuple[bool, bool]:
    """(three of a collar, straight fetch) for one round's loot."""
    if len(cards) != 3:
        return False, False
    r0, r1, r2 = (RANK_OF[c] for c in cards)
    if r0 == r1 == r2 and r0 != JOKER_RANK:
        return True, False
    s0 = SUIT_OF[cards[0]]
    if s0 < 0 or SUIT_OF[cards[1]] != s0 or SUIT_OF[cards[2]] != s0:
        return False, False
    lo, mid, hi = sorted((r0, r1, r2))
    straight = (mid == lo + 1 and hi == lo + 2) or (ace_high and (lo, mid, hi) == (ACE, QUEEN, 12))
    return False, straight


@mypyc_attr(allow_interpreted_subclasses=True)  # a rule variant may subclass it
class DogpileEngine(CachedViewsEngine):
    name = "dogpile"
    BOUND_VIEWS = _VIEWS
    OPTIONS: ClassVar[dict[str, Option]] = {
        "num_players": Option(3, "Dogs at the table.", choices=(2, 3, 4, 5, 6)),
        "ticks_per_second": Option(
            2, "Ticks per second of the round timer; each dog makes one decision per tick "
            "(2: about the time it takes to turn a card over or put one down).",
            check=int_range(1, 20)),
        "round_seconds": Option((30, 20, 10), "Timer of rounds 1, 2 and 3 in seconds.",
                                check=_check_round_seconds),
        "tick_order": Option("random", "Order the dogs act in within a tick: 'random' (drawn "
                             "uniformly per tick: any dog acts before any other in half the "
                             "ticks) or 'rotate' (tick t starts with seat t mod n and goes round "
                             "the table: with 3 or more dogs seat s acts before seat s+1 in "
                             "(n-1)/n of the ticks).", choices=("random", "rotate")),
        "shuffler_sees_bones": Option(
            False, "Whether the dog left of a sniffer sees the bones it shuffles back "
            "(the text has it shuffle them face down: False).", choices=(False, True)),
        "ace_high_straight": Option(False, "Also count Q-K-A of one suit as a straight fetch.",
                                    choices=(False, True)),
        "sniff": Option("optional", "The lowest dogs 'may' sniff: 'optional' (a sniffer may "
                        "decline with wait before its first pick) or 'required'.",
                        choices=("optional", "required")),
    }
    TEST_VARIANTS: ClassVar[tuple[dict[str, Any], ...]] = (
        {"memory": "none", "round_seconds": (3, 2, 1)},
        {"memory": 0.25, "tick_order": "rotate", "shuffler_sees_bones": True,
         "round_seconds": (4, 3, 2)},
        {"reward": "score", "ticks_per_second": 1, "num_players": 6, "ace_high_straight": True},
    )
    #: What each STATE_FIELDS entry of a snapshot holds (docs/observations.md; tested).
    STATE_DOCS: ClassVar[dict[str, str]] = {
        "pile": "int16, the bone (card id) on each of the 54 pile slots, -1 empty",
        "face_up": "bool per slot: its bone lies face up",
        "occupied": "int8 per slot: a bone lies there (mirrors pile >= 0)",
        "empty": "int8 per slot: no bone (1 - occupied)",
        "paws": "int16 (dog, paw): the bone in each of its 3 paws, -1 empty",
        "held": "int16 per dog: the bone it has dug and holds, -1 none",
        "dog_phase": "per dog: 0 free, 1 holding a dug bone, 2 burying",
        "bury_paw": "per dog: the paw whose bone it is burying, -1 none",
        "phase": "0 play, 1 sniff, 2 shuffle, 3 over",
        "round_index": "the round, 0..2",
        "ticks_left": "ticks left in the round",
        "tick_count": "ticks played this game",
        "order": "this tick's order of the dogs (the first acts first)",
        "order_pos": "how many dogs of this tick's order have acted",
        "sniffers": "the dogs still to sniff before the next round, in order",
        "bag": "the bones a sniffer holds, in order",
        "active_group": "index into groups of the sniff being put back, -1 none",
        "groups": "sniffed groups: {'slots', 'members', 'vbase', ...}: where a sniff put its "
                  "bones back, and which bones they may be",
        "group_flag": "float32 per slot: 1 where the bone was put back by a sniff",
        "looted": "per dog, the bones it has looted this game (they are out of the game)",
        "looted_mask": "float32 per card: 1 where the bone is out of the game",
        "totals": "per dog, its game total",
        "round_loot": "per dog, its loot (points) in the last finished round",
        "round_history": "per finished round, each dog's loot (points)",
        "bones": "per dog, the number of bones it has looted this game",
        "aces_free": "per dog, its non-collar Aces (A boneathon)",
        "twos_free": "per dog, its Twos (2 boneathon)",
        "boneathon_by": "the dog that won the A and the 2 boneathon, -1 none",
        "tracker": "memory slots: 0..53 pile slots, then 3 paw slots per dog, then 3 sniffed "
                   "bone slots",
    }
    STATE_FIELDS = (
        "pile", "face_up", "occupied", "empty", "paws", "held", "dog_phase", "bury_paw",
        "phase", "round_index", "ticks_left", "tick_count", "order", "order_pos", "sniffers",
        "bag", "active_group", "groups", "group_flag", "looted", "looted_mask", "totals",
        "round_loot", "round_history", "bones", "aces_free", "twos_free", "boneathon_by",
        "tracker",
    )

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        n = self.num_players
        cfg = self.config
        self.round_ticks = [s * cfg["ticks_per_second"] for s in cfg["round_seconds"]]
        self.random_order = cfg["tick_order"] == "random"
        self.shuffler_sees = cfg["shuffler_sees_bones"]
        self.ace_high = cfg["ace_high_straight"]
        self.sniff_optional = cfg["sniff"] == "optional"
        self.num_actions = NUM_ACTIONS
        names = [f"dig:{s:02d}" for s in range(NUM_SLOTS)]
        names += [f"down:{s:02d}" for s in range(NUM_SLOTS)]
        names += [f"up:{s:02d}" for s in range(NUM_SLOTS)]
        names += ["keep"] + [f"bury:{i}" for i in range(PAWS)] + ["wait"]
        self.action_names = names

        bone = CARD_FEATURES + 1  # occupied, then rank (A..K, joker) + suit
        lay = ObsLayout()
        # Dogs from the observer on (own seat first, then the next seats).
        self.s_pile = lay.add("pile", (NUM_SLOTS, SLOT_FEATURES), "per slot: occupied, face "
                              "up, rank (A..K, joker) + suit of the face-up or remembered bone, "
                              "or the sniff-group probabilities")
        self.s_sniffed = lay.add("pile_sniffed", NUM_SLOTS, "slot holds a bone put back by a "
                                 "sniff")
        self.s_own_paws = lay.add("own_paws", (PAWS, bone), "occupied + bone")
        self.s_own_state = lay.add("own_state", 3 + PAWS,
                                   "free / digging / burying, and which paw bone")
        self.s_held = lay.add("held", (n, bone), "the bone each dog is digging (public)")
        self.s_opp_paws = lay.add("opponent_paws", (n - 1, PAWS, bone),
                                  "occupied + remembered bone")
        self.s_opp_bury = lay.add("opponent_burying", (n - 1, PAWS),
                                  "which paw bone each opponent is burying")
        self.s_looted = lay.add("looted", NUM_CARDS, "bones out of the game")
        self.s_totals = lay.add("totals", n, "game totals / 100", high=3.0)
        self.s_last = lay.add("last_round_loot", n, "last round's loot / 100", high=2.0)
        self.s_bones = lay.add("bones", n, "bones looted this game / 9")
        self.s_bone = lay.add("boneathon", (n, 4), "non-collar Aces / 4, Twos / 4, won the A / "
                              "2 boneathon")
        self.s_round = lay.add("round", NUM_ROUNDS, "the round (one-hot)")
        self.s_time = lay.add("time_left", 1, "ticks left / the round's ticks")
        self.s_phase = lay.add("phase", 4, "play, sniff, shuffle, over")
        self.s_order = lay.add("order_position", 1, "own place in this tick's order / (n-1)")
        self.s_actor = lay.add("sniff_actor", n, "who is sniffing or shuffling")
        self.s_bag = lay.add("sniff_bag", (SNIFF_BONES, bone),
                             "bones in the sniff: faces for the sniffer while it holds them")
        self.layout = lay

        st = ObsLayout()
        # Dogs in seat order; every bone shown.
        st.add("pile", (NUM_SLOTS, SLOT_FEATURES), "per slot: occupied, face up, bone")
        st.add("pile_sniffed", NUM_SLOTS, "slot holds a bone put back by a sniff")
        st.add("paws", (n, PAWS, bone), "each dog's paws: occupied + bone")
        st.add("held", (n, bone), "the bone each dog is digging")
        st.add("dog_state", (n, 3 + PAWS), "free / digging / burying, and which paw bone")
        st.add("sniff_bag", (SNIFF_BONES, bone), "bones in the sniff")
        st.add("looted", NUM_CARDS, "bones out of the game")
        st.add("totals", n, "game totals / 100", high=3.0)
        st.add("last_round_loot", n, "last round's loot / 100", high=2.0)
        st.add("bones", n, "bones looted this game / 9")
        st.add("boneathon", (n, 4), "non-collar Aces / 4, Twos / 4, won the A / 2 boneathon")
        st.add("round", NUM_ROUNDS, "the round (one-hot)")
        st.add("time_left", 1, "ticks left / the round's ticks")
        st.add("phase", 4, "play, sniff, shuffle, over")
        st.add("current_player", n, "the dog to act")
        self.state_layout = st

        # Tracker slots: 54 pile slots, then 3 paw slots per dog, then 3 "sniffed bone" slots
        # per (sniff round, sniffer): which bones a dog knows went back in a sniffed group.
        self.paw_base = NUM_SLOTS
        self.virtual_base = NUM_SLOTS + PAWS * n
        num_virtual = (NUM_ROUNDS - 1) * n * SNIFF_BONES
        self.tracker = KnowledgeTracker(n, self.virtual_base + num_virtual, self.memory)
        self.seat_order = [[(s + k) % n for k in range(n)] for s in range(n)]
        self.opp_paw_slots = [
            np.array([self.paw_base + PAWS * o + i for o in self.seat_order[s][1:]
                      for i in range(PAWS)], dtype=np.int64) for s in range(n)]
        self.rotations = [[(t + k) % n for k in range(n)] for t in range(n)]

        self.pile = np.full(NUM_SLOTS, -1, dtype=np.int16)
        self.face_up = np.zeros(NUM_SLOTS, dtype=bool)
        #: Mask templates kept current as slots fill and empty: a free dog's digs (+ wait)
        #: and the spots of a dog with a bone in motion (+ wait; a digging dog adds keep).
        #: ``occupied`` and ``empty`` are views into them (``_bind_views``), so one write
        #: updates both. Every slot starts empty.
        self._dig_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._place_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._dig_mask[WAIT] = self._place_mask[WAIT] = 1
        self._place_mask[DOWN:UP] = 1
        self.paws = np.full((n, PAWS), -1, dtype=np.int16)
        self.held = np.full(n, -1, dtype=np.int16)
        self.group_flag = np.zeros(NUM_SLOTS, dtype=np.float32)
        self.looted_mask = np.zeros(NUM_CARDS, dtype=np.float32)
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._mask_valid = False
        #: (tracker slot, card) the acting dog saw during the current decision.
        self._seen_by_actor: list[tuple[int, int]] = []
        #: Set by the parallel env for one tick: every dog's memory already decayed at its start.
        self._decayed_for_tick = False
        self._build_obs_cache()
        self._reset_fields()

    def _build_obs_cache(self) -> None:
        """Per-dog observation buffers, patched in place by the frequent moves (a dig touches
        one slot, one paw and one dog) and rebuilt in full after rare events (round end,
        sniffs, forgetting; only the table after sniff moves and sniffed-group changes).
        ``write_observation`` then costs one copy."""
        n = self.num_players
        width = CARD_FEATURES + 1
        self._obs = np.zeros((n, self.layout.size), dtype=np.float32)
        self._obs0: np.ndarray | None = None
        self._dirty = [STALE] * n
        self._all_rows = np.arange(n)[:, None]
        self._held_cols = []
        self._paw_rows = []
        self._paw_cols = []
        self._bury_cols = []
        for o in range(n):
            self._held_cols.append(np.array(
                [np.arange(width) + self.s_held.start + ((o - s) % n) * width for s in range(n)]))
            others = [s for s in range(n) if s != o]
            self._paw_rows.append(np.array(others)[:, None])
            self._paw_cols.append([np.array(
                [np.arange(width) + self.s_opp_paws.start + ((o - s) % n - 1) * PAWS * width
                 + i * width for s in others]) for i in range(PAWS)])
            self._bury_cols.append(np.array(
                [np.arange(PAWS) + self.s_opp_bury.start + ((o - s) % n - 1) * PAWS
                 for s in others]))
        # Full rebuilds gather rows of PILE_ROWS / PAW_ROWS / ENC_OCC by these indices.
        self._order_idx = [np.array(self.seat_order[s], dtype=np.intp) for s in range(n)]
        self._opp_paw_idx = [np.array([PAWS * o + i for o in self.seat_order[s][1:]
                                       for i in range(PAWS)], dtype=np.intp) for s in range(n)]
        pub_idx = []
        for s in range(n):
            idx = [k * n + o for k in range(3) for o in self.seat_order[s]]
            idx += [3 * n + 4 * o + j for o in self.seat_order[s] for j in range(4)]
            pub_idx.append(np.array(idx, dtype=np.intp))
        self._pub_idx = pub_idx
        #: Public scores etc. in seat order (totals, last loot, bones, boneathon x4), or None.
        self._pub: np.ndarray | None = None
        #: Per pile slot: -1 face down, card + 54 face up, 108 empty (see PILE_ROWS).
        self._code = np.full(NUM_SLOTS, EMPTY_CODE, dtype=np.int16)
        #: Per paw (dog * 3 + i): -1 holds a bone, 54 empty (see PAW_ROWS).
        self._paw_code = np.full(n * PAWS, PAW_EMPTY_CODE, dtype=np.int16)
        #: Per dog: bit i set while paw i holds a bone (legal_mask reads it).
        self._paw_bits = [0] * n
        #: order_position by place in the tick's order, and by dog for each rotation.
        scale = 1.0 / max(1, n - 1)
        self._order_scaled = [k * scale for k in range(n)]
        self._order_table = np.zeros((n, n), dtype=np.float32)
        for r, rotation in enumerate(self.rotations):
            self._order_table[r, rotation] = self._order_scaled
        #: Each dog's time_left and order_position entries in the flattened cache.
        size = self.layout.size
        self._time_at = [s * size + self.s_time.start for s in range(n)]
        self._order_at = [s * size + self.s_order.start for s in range(n)]
        self._held_starts = [[int(c[0]) for c in cols] for cols in self._held_cols]
        self._paw_starts = [
            [[(int(r), int(c[0])) for r, c in zip(self._paw_rows[o][:, 0], cols, strict=True)]
             for cols in self._paw_cols[o]] for o in range(n)]
        self._bind_views()

    def _bind_views(self) -> None:
        """Views the hot paths read and write through (see ``_VIEWS``). Single entries and
        rows go through memoryviews: about two thirds of numpy's cost for a row, half for
        an entry, a quarter for a tracker column."""
        n = self.num_players
        # The mask templates hold the position's occupancy; these are its views.
        self.occupied = self._dig_mask[DIG:DOWN]
        self.empty = self._place_mask[DOWN:UP]
        obs = self._obs
        size = self.layout.size
        width = CARD_FEATURES + 1
        p0 = self.s_pile.start
        self._slot_views = [obs[:, p0 + t * SLOT_FEATURES:p0 + (t + 1) * SLOT_FEATURES]
                            for t in range(NUM_SLOTS)]
        obs_v = self._obs_v = float_items(obs.reshape(-1))
        self._held_views = [[obs_v[s * size + c:s * size + c + width]
                             for s, c in enumerate(starts)] for starts in self._held_starts]
        own = self.s_own_paws.start
        self._own_paw_views = [[obs_v[s * size + own + i * width:s * size + own + (i + 1) * width]
                                for i in range(PAWS)] for s in range(n)]
        self._opp_paw_views = [[[obs_v[r * size + c:r * size + c + width]
                                 for r, c in self._paw_starts[o][i]]
                                for i in range(PAWS)] for o in range(n)]
        st = self.s_own_state.start
        self._state_views = [obs_v[s * size + st:s * size + st + 3 + PAWS] for s in range(n)]
        self._order_col = obs_v[self.s_order.start::size]
        self._order_rows = [float_items(row) for row in self._order_table]
        self._row_views = list(obs)
        self._block_views = [self._blocks(row) for row in self._row_views]
        self._pile_v = int_items(self.pile)
        self._face_v = bool_items(self.face_up)
        self._code_v = int_items(self._code)
        self._held_v = int_items(self.held)
        self._paws_v = int_items(self.paws.reshape(-1))
        self._paw_code_v = int_items(self._paw_code)
        self._dig_mask_v = int_items(self._dig_mask)
        self._place_mask_v = int_items(self._place_mask)
        self._mask_v = int_items(self._mask)
        # The tracker's memory is written in place only, never replaced. Columns of the pile
        # and paw slots (the hot paths' tracker events) as memoryviews.
        num_slots = self.tracker.num_slots
        known_v = int_items(self.tracker.known.reshape(-1))
        self._known_cols = [known_v[x::num_slots] for x in range(self.virtual_base)]
        known = self.tracker.known
        #: Per dog: what it remembers of the pile and of the paws, and its own paws.
        self._seat_rows = [(known[s, :NUM_SLOTS], known[s, self.paw_base:self.virtual_base],
                            self.paws[s]) for s in range(n)]
        self._card_cols = _card_columns(n)

    def _blocks(self, out: np.ndarray) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """The blocks of ``out`` that ``_write_full`` fills whole: the table's (the pile as a
        row table, pile_sniffed, the tail from phase on), then the others' (own paws, held and
        opponents' paws as row tables, looted, the public scores)."""
        width = CARD_FEATURES + 1
        table = (out[self.s_pile].reshape(NUM_SLOTS, SLOT_FEATURES), out[self.s_sniffed],
                 out[self.s_phase.start:])
        others = (out[self.s_own_paws].reshape(PAWS, width),
                  out[self.s_held].reshape(self.num_players, width),
                  out[self.s_opp_paws].reshape(-1, width),
                  out[self.s_looted], out[self.s_totals.start:self.s_round.start])
        return table, others

    def _reset_fields(self) -> None:
        n = self.num_players
        self.pile.fill(-1)
        self.face_up.fill(False)
        self.occupied.fill(0)
        self.empty.fill(1)
        self.paws.fill(-1)
        self.held.fill(-1)
        self.group_flag.fill(0.0)
        self.looted_mask.fill(0.0)
        self.dog_phase = [FREE] * n
        self.bury_paw = [-1] * n
        self._dirty = [STALE] * n
        self._pub = None
        # _recompute_codes() for an empty table, written out (it runs on every reset).
        self._code.fill(EMPTY_CODE)
        self._paw_code.fill(PAW_EMPTY_CODE)
        self._paw_bits = [0] * n
        self._place_mask[UP:KEEP] = 1
        self._was_burying = [True] * n
        self.phase = PLAY
        self.round_index = 0
        self.ticks_left = self.round_ticks[0]
        self.tick_count = 0
        self.order = list(range(n))
        self.order_pos = 0
        self.sniffers: list[int] = []
        self.bag: list[int] = []
        self.active_group = -1
        #: Sniffed groups: bones a shuffler put back, each {"slots", "members", "vbase"}.
        #: ``members`` (3 entries, -1 once ruled out) always includes every card in ``slots``.
        self.groups: list[dict[str, Any]] = []
        self.looted: list[list[int]] = [[] for _ in range(n)]
        self.totals = [0] * n
        self.round_loot = [0] * n
        self.round_history: list[list[int]] = []
        self.bones = [0] * n
        self.aces_free = [0] * n
        self.twos_free = [0] * n
        self.boneathon_by = [-1, -1]  # seat that won the Aces / Twos boneathon

    def deck_cards(self) -> list[int]:
        return list(range(NUM_CARDS))

    def all_cards(self) -> list[int]:
        cards = [int(c) for c in self.pile if c >= 0]
        cards += [int(c) for c in self.paws.ravel() if c >= 0]
        cards += [int(c) for c in self.held if c >= 0]
        cards += list(self.bag)
        for loot in self.looted:
            cards += loot
        return cards

    # -- dealing -------------------------------------------------------------------------------
    def _deal(self, deck: list[int] | None) -> None:
        """Slot i of the dogpile gets the i-th card of the deck (top card first)."""
        self._reset_fields()
        order = self.rng.permutation(NUM_CARDS).tolist() if deck is None else list(deck)
        self.pile[:] = order
        self.occupied.fill(1)
        self.empty.fill(0)
        # _recompute_codes() for a full pile, written out.
        self._code.fill(-1)
        self._place_mask[UP:KEEP] = 0
        # Every deal looks the same to every dog (all bones face down, nothing known): the
        # first one's observations serve all later ones (_start_tick adds time and order).
        if self._obs0 is None:
            for s in range(self.num_players):
                self._write_full(s, self._obs[s])
            self._obs0 = self._obs.copy()
        else:
            np.copyto(self._obs, self._obs0)
        self._dirty = [FRESH] * self.num_players
        self._start_tick()

    # -- ticks and rounds ----------------------------------------------------------------------
    def _start_tick(self) -> None:
        # Columns of the cache go in through memoryviews: a half to a third of numpy's cost.
        obs_v = self._obs_v
        if self.random_order:
            order = self.rng.permutation(self.num_players).tolist()
            order_at = self._order_at
            for seat, position in zip(order, self._order_scaled, strict=True):
                obs_v[order_at[seat]] = position
        else:
            rotation = self.tick_count % self.num_players
            order = self.rotations[rotation]  # shared, not copied: ``order`` is never modified
            self._order_col[:] = self._order_rows[rotation]
        self.order = order
        self.order_pos = 0
        self.current_player = order[0]
        self._mask_valid = False
        time_left = self.ticks_left / self.round_ticks[self.round_index]
        for at in self._time_at:
            obs_v[at] = time_left

    def _end_tick(self) -> None:
        self.tick_count += 1
        self.ticks_left -= 1
        if self.ticks_left > 0:
            self._start_tick()
        else:
            self._end_round()

    def _end_round(self) -> None:
        """Timer at 0: bones in motion stay in the paw, paws are shown and looted."""
        n = self.num_players
        self._dirty = [STALE] * n
        self._pub = None
        tracker = self.tracker
        for seat in range(n):
            card = int(self.held[seat])
            if card >= 0:  # a dug bone still in the paw at the buzzer is a pawed bone
                self._to_paw(seat, card)
                self.held[seat] = -1
            self.dog_phase[seat] = FREE
            self.bury_paw[seat] = -1
        loot = [0] * n
        for seat in range(n):
            cards = [int(c) for c in self.paws[seat] if c >= 0]
            loot[seat] = self._score_round(seat, cards)
            self.looted[seat] += cards
            for c in cards:
                self.looted_mask[c] = 1.0
            self.bones[seat] += len(cards)
            self.paws[seat] = -1
            self._paw_code[PAWS * seat:PAWS * seat + PAWS] = PAW_EMPTY_CODE
            self._paw_bits[seat] = 0
            for i in range(PAWS):
                tracker.conceal(self.paw_base + PAWS * seat + i)
        self.round_loot = loot
        self.round_history.append(list(loot))
        for seat in range(n):
            self.totals[seat] += loot[seat]
        if self.reward_mode == "score":
            self.rewards += np.asarray(loot, dtype=np.float64)
        if self.round_index == NUM_ROUNDS - 1:
            self.phase = OVER
            self.finish(self._winners())
            return
        low = min(loot)
        self.sniffers = [s for s in range(n) if loot[s] == low]
        self._start_sniff()

    def _score_round(self, seat: int, cards: list[int]) -> int:
        collar, straight = round_feats(cards, self.ace_high)
        points = sum(FACE_VALUE_OF[c] for c in cards)
        points += COLLAR_BONUS * collar + STRAIGHT_BONUS * straight
        if not collar:  # bones of a 3-of-a-collar never count towards a boneathon
            self.aces_free[seat] += sum(1 for c in cards if RANK_OF[c] == ACE)
            self.twos_free[seat] += sum(1 for c in cards if RANK_OF[c] == TWO)
        for kind, count in ((0, self.aces_free[seat]), (1, self.twos_free[seat])):
            if count >= 3 and self.boneathon_by[kind] < 0:
                self.boneathon_by[kind] = seat
                points += BONEATHON_BONUS
        return points

    def _blackjaw_seats(self) -> list[int]:
        """Dogs with BLACKJAW: "a full loot (9 bones)" and a total "under 21 points" (one rule
        for the winners and for ``result()``)."""
        return [s for s in range(self.num_players)
                if self.bones[s] == FULL_LOOT and self.totals[s] < BLACKJAW_LIMIT]

    def _winners(self) -> list[int]:
        n = self.num_players
        blackjaw = self._blackjaw_seats()
        if blackjaw:
            best = min(self.totals[s] for s in blackjaw)
            return [s for s in blackjaw if self.totals[s] == best]
        best = max(self.totals)
        return [s for s in range(n) if self.totals[s] == best]

    def _next_round(self) -> None:
        self._dirty = [STALE] * self.num_players
        self.phase = PLAY
        self.round_index += 1
        self.ticks_left = self.round_ticks[self.round_index]
        self._start_tick()

    # -- sniff -----------------------------------------------------------------------------
    def _start_sniff(self) -> None:
        if not self.sniffers:
            self._next_round()
            return
        sniffer = self.sniffers[0]
        self.phase = SNIFF
        self.current_player = sniffer
        vbase = self.virtual_base + (self.round_index * self.num_players + sniffer) * SNIFF_BONES
        # "unseen": per dog, candidates that left the group unseen and were later dug up
        # elsewhere without the dog knowing them as candidates: to it they are still live.
        self.groups.append({"slots": [], "members": [], "vbase": vbase,
                            "unseen": [0] * self.num_players})
        self.active_group = len(self.groups) - 1
        self.bag = []
        self._mask_valid = False
        self._table_changed()

    def _decline_sniff(self) -> None:
        """The sniffer passes ("may pick up"): its empty group goes; the next sniffer is up."""
        self.groups.pop(self.active_group)  # the last group, opened by _start_sniff
        self.active_group = -1
        self.sniffers.pop(0)
        self._mask_valid = False
        self._table_changed()
        self._start_sniff()

    def _sniff_pick(self, slot: int) -> None:
        sniffer = self.current_player
        card = int(self.pile[slot])
        known = self.tracker.known
        knew = known[:, slot] == card
        if self.face_up[slot]:
            knew[:] = True
        self._lift(slot)
        self.tracker.conceal(slot)
        self._slot_left_groups(slot)
        group = self.groups[self.active_group]
        v = group["vbase"] + len(group["members"])
        group["members"].append(card)
        known[knew, v] = card
        known[sniffer, v] = card
        # The sniffer keeps all it has sniffed so far until its next decision after the sniff.
        if self._forgets:
            self._seen_by_actor.extend(
                (group["vbase"] + j, c) for j, c in enumerate(group["members"]))
        self.bag.append(card)
        if len(self.bag) == SNIFF_BONES:
            # Handed to the dog on the left, who shuffles them unseen.
            self.bag = [self.bag[i] for i in self.rng.permutation(SNIFF_BONES)]
            self.phase = SHUFFLE
            self.current_player = (sniffer + 1) % self.num_players
        self._mask_valid = False
        self._table_changed()

    def _shuffle_place(self, slot: int) -> None:
        card = self.bag.pop(0)
        self._put(slot, card, False)
        self.tracker.conceal(slot)
        if self.shuffler_sees:
            self.tracker.known[self.current_player, slot] = card
            if self._forgets:
                self._seen_by_actor.append((slot, card))
        group = self.groups[self.active_group]
        group["slots"].append(slot)
        self.group_flag[slot] = 1.0
        self._mask_valid = False
        self._table_changed()
        if self.bag:
            return
        self.active_group = -1
        self._tidy_groups()
        self.sniffers.pop(0)
        self._start_sniff()

    # -- pile and paw moves --------------------------------------------------------------------
    def _lift(self, slot: int) -> None:
        self._pile_v[slot] = -1
        self._face_v[slot] = False
        self._dig_mask_v[DIG + slot] = 0  # (``occupied`` too)
        place = self._place_mask_v
        place[DOWN + slot] = place[UP + slot] = 1  # (``empty`` too)
        self._code_v[slot] = EMPTY_CODE

    def _put(self, slot: int, card: int, up: bool) -> None:
        self._pile_v[slot] = card
        self._face_v[slot] = up
        self._dig_mask_v[DIG + slot] = 1  # (``occupied`` too)
        place = self._place_mask_v
        place[DOWN + slot] = place[UP + slot] = 0  # (``empty`` too)
        self._code_v[slot] = card + UP_CODE if up else -1

    def _to_paw(self, seat: int, card: int) -> int:
        paws = self._paws_v
        for k in range(PAWS * seat, PAWS * seat + PAWS):
            if paws[k] < 0:
                paws[k] = card
                self._paw_code_v[k] = -1
                i = k - PAWS * seat
                self._paw_bits[seat] |= 1 << i
                self._known_cols[self.paw_base + k][:] = self._card_cols[card]  # show_all
                return i
        raise AssertionError("no free paw")  # digging needs a free paw, so never reached

    def _leave_group(self, slot: int) -> dict[str, Any] | None:
        """``slot`` (in plain view) leaves the sniffed group holding it: that group, or None."""
        if not self.group_flag[slot]:
            return None
        self._table_changed()
        self.group_flag[slot] = 0.0
        group = next(g for g in self.groups if slot in g["slots"])
        group["slots"].remove(slot)
        return group

    def _slot_left_groups(self, slot: int) -> None:
        if self._leave_group(slot) is not None:
            self._tidy_groups()

    def _revealed(self, card: int, source: dict[str, Any] | None) -> None:
        """Everyone saw ``card`` dug up from a spot of group ``source`` (None: of no group): it
        is no longer a candidate of any sniffed group. From its own group's spot, everyone
        learns that. Elsewhere, it had left the group unseen (sniffed again), and only the dogs
        that remember it as a candidate can strike it; the others still count a live one."""
        changed = source is not None
        for g in self.groups:
            members = g["members"]
            if card in members:
                j = members.index(card)
                if g is not source:
                    unseen = g["unseen"]
                    for s in np.flatnonzero(self.tracker.known[:, g["vbase"] + j] < 0):
                        unseen[s] += 1
                members[j] = -1
                self.tracker.conceal(g["vbase"] + j)
                changed = True
        if changed:
            self._table_changed()
            self._tidy_groups()

    def _tidy_groups(self) -> None:
        """Drop groups with no spot left. A group down to one spot and one candidate is known
        exactly by each dog that remembers that candidate and knows of no other. The group
        itself (and its public flag) lasts until its last spot is dug or sniffed again: when a
        dog can deduce the bone is not public."""
        keep = []
        known = self.tracker.known
        for idx, g in enumerate(self.groups):
            if idx == self.active_group:
                keep.append(g)
                continue
            slots, members, vbase = g["slots"], g["members"], g["vbase"]
            live = [j for j in range(len(members)) if members[j] >= 0]
            if len(slots) == 1 and len(live) == 1:
                j = live[0]
                knowers = (known[:, vbase + j] >= 0) & (np.asarray(g["unseen"]) == 0)
                known[knowers, slots[0]] = members[j]
            if not slots:
                known[:, vbase:vbase + SNIFF_BONES] = -1
                continue
            keep.append(g)
        if len(keep) != len(self.groups):
            active = self.groups[self.active_group] if self.active_group >= 0 else None
            self.groups = keep
            self.active_group = keep.index(active) if active is not None else -1

    # -- actions -----------------------------------------------------------------------------
    def _apply(self, action: int) -> None:
        seat = self.current_player
        phase = self.phase
        if phase == PLAY:
            if action < DOWN:
                self._dig(seat, action)
            elif action < UP:
                self._place(seat, action - DOWN, False)
            elif action < KEEP:
                self._place(seat, action - UP, True)
            elif action == KEEP:
                card = self._held_v[seat]
                self._held_v[seat] = -1
                self.dog_phase[seat] = FREE
                self._patch_held(seat)
                self._patch_paw(seat, self._to_paw(seat, card))
                self._patch_dog(seat)
            elif action < WAIT:
                self.dog_phase[seat] = BURYING
                self.bury_paw[seat] = action - BURY
                self._patch_dog(seat)
            # The next dog in the tick's order, or the tick's end.
            pos = self.order_pos + 1
            self.order_pos = pos
            if pos < self.num_players:
                self.current_player = self.order[pos]
                self._mask_valid = False
                return
            self._end_tick()
        elif phase == SNIFF:
            if action == WAIT:
                self._decline_sniff()
            else:
                self._sniff_pick(action)
        else:
            self._shuffle_place(action - DOWN)

    def _dig(self, seat: int, slot: int) -> None:
        card = self._pile_v[slot]
        self._lift(slot)
        self._known_cols[slot][:] = self._card_cols[-1]  # tracker.conceal(slot)
        self._held_v[seat] = card
        self.dog_phase[seat] = HOLDING
        # The observation patches: the slot is empty for all, the dog digs ``card``.
        self._slot_views[slot].fill(0.0)
        enc = ENC_OCC_MV[card]
        for view in self._held_views[seat]:
            view[:] = enc
        self._state_views[seat][:] = OWN_STATE_MV[HOLDING]
        if self._was_burying[seat]:
            self._patch_dog(seat)
        if self.groups:
            self._revealed(card, self._leave_group(slot))

    def _place(self, seat: int, slot: int, up: bool) -> None:
        if self.dog_phase[seat] == HOLDING:
            held = self._held_v
            card = held[seat]
            held[seat] = -1
            self._put(slot, card, up)
            # It was face up in the paw for all to see: tracker.show_all(slot, card).
            self._known_cols[slot][:] = self._card_cols[card]
            if self._forgets:
                self._seen_by_actor.append((slot, card))
            enc = ENC_OCC_MV[-1]
            for view in self._held_views[seat]:
                view[:] = enc
            # Everyone knows the bone: one row for all (what _patch_slot would write).
            self._slot_views[slot][...] = PILE_ROW[card + UP_CODE if up else card]
        else:
            i = self.bury_paw[seat]
            k = PAWS * seat + i
            card = self._paws_v[k]
            self._paws_v[k] = -1
            self._paw_code_v[k] = PAW_EMPTY_CODE
            self._paw_bits[seat] &= ~(1 << i)
            self._put(slot, card, up)
            tracker = self.tracker
            paw_slot = self.paw_base + k
            if up:
                tracker.show_all(slot, card)
                tracker.conceal(paw_slot)
            else:  # whoever remembered that paw bone now remembers where it went
                tracker.move(paw_slot, slot)
                tracker.known[seat, slot] = card
                if self._forgets:
                    self._seen_by_actor.append((slot, card))
            self.bury_paw[seat] = -1
            self._patch_paw(seat, i)
            self._patch_slot(slot)
        self.dog_phase[seat] = FREE
        self._state_views[seat][:] = OWN_STATE_MV[FREE]
        if self._was_burying[seat]:
            self._patch_dog(seat)

    # -- observation patches (see _build_obs_cache) --------------------------------------------
    def _patch_slot(self, slot: int) -> None:
        cols = self._slot_views[slot]
        code = self._code_v[slot]
        if code >= 0:  # empty (nobody remembers anything there) or face up: the same for all
            cols[...] = PILE_ROW[code]
        else:
            cols[...] = PILE_ROWS[self.tracker.known[:, slot]]

    def _patch_held(self, seat: int) -> None:
        # A few row writes beat one fancy-indexed write at these sizes.
        enc = ENC_OCC_MV[self._held_v[seat]]
        for view in self._held_views[seat]:
            view[:] = enc

    def _patch_paw(self, seat: int, i: int) -> None:
        """Paw ``i`` of ``seat`` was just filled in plain view (``_to_paw`` shows the bone to
        all) or emptied (nobody remembers an empty paw): every dog sees the same row."""
        enc = ENC_OCC_MV[self._paws_v[PAWS * seat + i]]
        self._own_paw_views[seat][i][:] = enc
        for view in self._opp_paw_views[seat][i]:
            view[:] = enc

    def _patch_dog(self, seat: int) -> None:
        dog = self.dog_phase[seat]
        self._state_views[seat][:] = OWN_STATE_MV[3 + self.bury_paw[seat]] if dog == BURYING \
            else OWN_STATE_MV[dog]
        # Opponents see which paw bone a dog is burying: update only when that changes.
        if dog == BURYING or self._was_burying[seat]:
            self._was_burying[seat] = dog == BURYING
            flags = BURY_FLAGS[self.bury_paw[seat] if dog == BURYING else PAWS]
            self._obs[self._paw_rows[seat], self._bury_cols[seat]] = flags

    # -- legality ------------------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        if not self._mask_valid:
            if not self._dealt:
                self._not_dealt("legal_mask")
            self._write_mask(self.current_player, self._mask_v)
            self._mask_valid = True
        return self._mask

    def mask_for(self, seat: Any, out: np.ndarray) -> np.ndarray:
        """Legal actions of ``seat`` were it to act now (the Parallel env asks every dog), into
        ``out``: an int8 array of ``num_actions``."""
        if type(seat) is not int or not self._dealt:
            seat = self._int_arg(seat, "mask_for")
        self._write_mask(seat, out.data)  # ``memoryview(out)``, typed (core.buffers)
        return out

    def _write_mask(self, seat: int, out: memoryview) -> None:
        # Whole masks move as memoryview copies of the templates: a third of ``out[:] = row``.
        phase = self.phase
        if phase == PLAY:
            dog = self.dog_phase[seat]
            if dog == FREE:
                bits = self._paw_bits[seat]
                out[:] = WAIT_ONLY_MV if bits == FULL_PAWS else self._dig_mask_v
                if bits:
                    out[BURY:WAIT] = PAW_BIT_MV[bits]
            else:
                out[:] = self._place_mask_v
                if dog == HOLDING:
                    out[KEEP] = 1
            return
        out[:] = NO_ACTIONS_MV
        if seat == self.current_player:
            if phase == SNIFF:
                out[DIG:DOWN] = self._dig_mask_v[DIG:DOWN]  # ``occupied``
                if self.sniff_optional and not self.bag:
                    out[WAIT] = 1  # decline, before the first pick only
            elif phase == SHUFFLE:
                out[DOWN:UP] = self._place_mask_v[DOWN:UP]  # ``empty``

    # -- observations --------------------------------------------------------------------------
    def _pile_view(self, seat: int) -> np.ndarray:
        """Per slot, the card ``seat`` sees (face up) or remembers there, else -1."""
        return np.where(self.face_up, self.pile, self.tracker.known[seat, :NUM_SLOTS])

    def decay_all_for_tick(self) -> None:
        """Parallel play: every dog decided on the tick's first observation, so every dog's
        memory decays now, before any move of the tick plays out. (In the AEC order each dog
        decays as it decides, after the earlier dogs' moves, which its observation showed.)
        :meth:`end_tick_decay` ends the tick."""
        if not self._forgets:
            return
        for seat in range(self.num_players):
            self.tracker.after_decision(seat)
            self._after_forgetting(seat)
            self._dirty[seat] = STALE
        self._decayed_for_tick = True

    def end_tick_decay(self) -> None:
        self._decayed_for_tick = False

    def _apply_forgetting(self, action: int) -> None:
        seat = self.current_player
        self._seen_by_actor.clear()
        if self._decayed_for_tick:
            self._apply(action)
            return
        super()._apply_forgetting(action)
        # The tracker may have dropped some of this dog's memories, but what the dog saw in
        # this very decision lasts until its next one.
        known = self.tracker.known[seat]
        for idx, card in self._seen_by_actor:
            if self._still_true(idx, card):
                known[idx] = card
        self._dirty[seat] = STALE

    def _still_true(self, idx: int, card: int) -> bool:
        if idx < NUM_SLOTS:
            return int(self.pile[idx]) == card
        if idx < self.virtual_base:
            k = idx - self.paw_base
            return int(self.paws[k // PAWS, k % PAWS]) == card
        return any(g["vbase"] <= idx < g["vbase"] + SNIFF_BONES
                   and idx - g["vbase"] < len(g["members"])
                   and g["members"][idx - g["vbase"]] == card for g in self.groups)

    def _view(self, seat: int) -> np.ndarray:
        row = self._row_views[seat]
        stale = self._dirty[seat]
        if stale:
            if stale == STALE:
                self._write_full(seat, row)
            else:
                self._write_table(seat, row, self._block_views[seat][0])
            self._dirty[seat] = FRESH
        return row

    def _table_changed(self) -> None:
        """The pile, the sniffed groups or the sniff changed: every dog's table is stale."""
        self._dirty = [stale or STALE_TABLE for stale in self._dirty]

    def _recompute_codes(self) -> None:
        """Derive the slot and paw codes and the mask templates from the position (after
        bulk changes)."""
        np.copyto(self._code, np.where(self.face_up, self.pile + UP_CODE,
                                       np.where(self.pile >= 0, -1, EMPTY_CODE)))
        np.copyto(self._paw_code, np.where(self.paws.reshape(-1) >= 0, -1, PAW_EMPTY_CODE))
        self._paw_bits = [sum(1 << i for i, c in enumerate(paw) if c >= 0)
                          for paw in self.paws.tolist()]
        self._place_mask[UP:KEEP] = self.empty

    def _public(self) -> np.ndarray:
        """Totals, last round's loot, bones and boneathon progress of each dog in seat order
        (cached until a round ends)."""
        pub = self._pub
        if pub is None:
            n = self.num_players
            pub = np.zeros(7 * n, dtype=np.float32)
            self._write_public(pub, range(n), 0, n, 2 * n, 3 * n)
            self._pub = pub
        return pub

    def _write_full(self, seat: int, out: np.ndarray) -> None:
        """The observation of ``seat`` computed from scratch (the reference for the cache)."""
        n = self.num_players
        out.fill(0.0)
        blocks = self._block_views[seat] if out is self._row_views[seat] else self._blocks(out)
        table, (own_paws, held, opp_paws, looted, public) = blocks
        self._write_table(seat, out, table)
        _, known_paws, paws = self._seat_rows[seat]
        ENC_OCC.take(paws, axis=0, out=own_paws, mode="wrap")
        base = self.s_own_state.start
        dog = self.dog_phase[seat]
        out[base + dog] = 1.0
        if dog == BURYING:
            out[base + 3 + self.bury_paw[seat]] = 1.0
        ordered = self.seat_order[seat]
        ENC_OCC.take(self.held.take(self._order_idx[seat]), axis=0, out=held, mode="wrap")
        paw_idx = np.maximum(self._paw_code, known_paws)
        PAW_ROWS.take(paw_idx.take(self._opp_paw_idx[seat]), axis=0, out=opp_paws, mode="wrap")
        base = self.s_opp_bury.start
        for k in range(1, n):
            o = ordered[k]
            if self.dog_phase[o] == BURYING:
                out[base + (k - 1) * PAWS + self.bury_paw[o]] = 1.0
        looted[:] = self.looted_mask
        self._public().take(self._pub_idx[seat], out=public)
        out[self.s_round.start + self.round_index] = 1.0
        out[self.s_time.start] = self.ticks_left / self.round_ticks[self.round_index]

    def _write_table(self, seat: int, out: np.ndarray, table: tuple[np.ndarray, ...]) -> None:
        """``seat``'s pile, pile_sniffed and the blocks from phase on (``table``: their views
        in ``out``), overwritten whole."""
        n = self.num_players
        pile, sniffed, tail = table
        known_pile = self._seat_rows[seat][0]
        PILE_ROWS.take(np.maximum(self._code, known_pile), axis=0, out=pile, mode="wrap")
        if self.groups:
            self._write_beliefs(seat, pile)
        sniffed[:] = self.group_flag
        tail.fill(0.0)
        out[self.s_phase.start + self.phase] = 1.0
        if self.phase == PLAY:
            out[self.s_order.start] = self.order.index(seat) / max(1, n - 1)
        elif self.phase != OVER:
            out[self.s_actor.start + (self.current_player - seat) % n] = 1.0
        if self.bag:
            see = self.phase == SNIFF and seat == self.current_player
            base = self.s_bag.start
            for card in self.bag:
                if see:
                    out[base:base + CARD_FEATURES + 1] = ENC_OCC[card]
                else:
                    out[base] = 1.0
                base += CARD_FEATURES + 1

    def _write_beliefs(self, seat: int, pile: np.ndarray) -> None:
        """Sniffed groups: each remembered candidate is in a given slot with chance 1/m."""
        known = self.tracker.known[seat].tolist()
        for g in self.groups:
            slots = g["slots"]
            if not slots:
                continue
            members = g["members"]
            live = sum(1 for c in members if c >= 0) + g["unseen"][seat]
            if not live:
                continue
            vbase = g["vbase"]
            remembered = tuple(c for j, c in enumerate(members) if c >= 0 and known[vbase + j] >= 0)
            if not remembered:
                continue
            belief = _belief(remembered, live)
            for t in slots:
                # Group slots are face down, so the seat sees only what it remembers there.
                if known[t] < 0:
                    pile[t, 2:] = belief

    def _write_public(self, out: np.ndarray, ordered: Sequence[int], totals: int, last: int,
                      bones: int, bone: int) -> None:
        for k, s in enumerate(ordered):
            out[totals + k] = self.totals[s] / 100.0
            out[last + k] = self.round_loot[s] / 100.0
            out[bones + k] = self.bones[s] / FULL_LOOT
            b = bone + 4 * k
            out[b] = min(self.aces_free[s], 4) / 4.0
            out[b + 1] = min(self.twos_free[s], 4) / 4.0
            out[b + 2] = float(self.boneathon_by[0] == s)
            out[b + 3] = float(self.boneathon_by[1] == s)

    def write_state(self, out: np.ndarray) -> None:
        if not self._dealt:
            self._not_dealt("write_state")
        n = self.num_players
        out.fill(0.0)
        sl = self.state_layout.slices
        pile = out[sl["pile"]].reshape(NUM_SLOTS, SLOT_FEATURES)
        pile[:, 0] = self.occupied
        pile[:, 1] = self.face_up
        pile[:, 2:] = ENC[self.pile]
        out[sl["pile_sniffed"]] = self.group_flag
        out[sl["paws"]] = ENC_OCC[self.paws].ravel()
        out[sl["held"]] = ENC_OCC[self.held].ravel()
        base = sl["dog_state"].start
        for s in range(n):
            out[base + self.dog_phase[s]] = 1.0
            if self.dog_phase[s] == BURYING:
                out[base + 3 + self.bury_paw[s]] = 1.0
            base += 3 + PAWS
        base = sl["sniff_bag"].start
        for card in self.bag:
            out[base:base + CARD_FEATURES + 1] = ENC_OCC[card]
            base += CARD_FEATURES + 1
        out[sl["looted"]] = self.looted_mask
        self._write_public(out, range(n), sl["totals"].start, sl["last_round_loot"].start,
                           sl["bones"].start, sl["boneathon"].start)
        out[sl["round"].start + self.round_index] = 1.0
        out[sl["time_left"].start] = self.ticks_left / self.round_ticks[self.round_index]
        out[sl["phase"].start + self.phase] = 1.0
        if not self.done:
            out[sl["current_player"].start + self.current_player] = 1.0

    # -- determinization -----------------------------------------------------------------------
    def _resample_hidden(self, seat: int, rng: np.random.Generator) -> None:
        """Redraw every bone ``seat`` cannot place: face-down bones it does not remember,
        opponents' paw bones it does not remember, sniffed bones in flight.

        First every such bone that is not a sniffed-group candidate the seat remembers is
        redrawn over those positions; a group's candidates follow their positions. Then each
        sniffed group's spots that the seat cannot see into are shuffled, so the candidates it
        remembers land on any of them (its observation gives each the same chance). A
        remembered candidate that left its group unseen (sniffed again) keeps to the spots of
        the group it went to. Other dogs' memories follow the spots they remember (the seat
        remembers none of the redrawn spots and candidates)."""
        known = self.tracker.known
        sees_bag = self.phase == SNIFF and seat == self.current_player
        # A position is ("s", slot) on the pile, ("p", o, i) in a paw, or ("b", k) in the bag.
        remembered: set[int] = set()  # candidates the seat knows to be in some sniffed group
        member_of: dict[int, list[tuple[int, int]]] = {}  # card -> (group, index) it is in
        blocks: list[list[tuple]] = []  # per group: the spots the seat cannot see into
        for gi, g in enumerate(self.groups):
            for j, c in enumerate(g["members"]):
                if c >= 0:
                    member_of.setdefault(c, []).append((gi, j))
                    if known[seat, g["vbase"] + j] >= 0:
                        remembered.add(c)
            block: list[tuple] = [("s", t) for t in g["slots"] if known[seat, t] < 0]
            if gi == self.active_group and not sees_bag:
                block += [("b", k) for k in range(len(self.bag))]
            blocks.append(block)
        hidden: list[tuple] = [("s", t) for t in range(NUM_SLOTS) if self.pile[t] >= 0
                               and not self.face_up[t] and known[seat, t] < 0]
        for o in range(self.num_players):
            if o != seat:
                hidden += [("p", o, i) for i in range(PAWS) if self.paws[o, i] >= 0
                           and known[seat, self.paw_base + PAWS * o + i] < 0]
        if not sees_bag:
            hidden += [("b", k) for k in range(len(self.bag))]
        pool = [p for p in hidden if self._card_at(p) not in remembered]
        cards = [self._card_at(p) for p in pool]
        moved: dict[tuple, int] = {}  # position -> the card there before the redraw
        for p, i in zip(pool, rng.permutation(len(pool)), strict=True):
            moved[p] = self._card_at(p)
            self._set_card_at(p, cards[int(i)])
        # A candidate the seat does not remember is whatever bone now lies where it lay.
        for p, old in moved.items():
            for gi, j in member_of.get(old, ()):
                g = self.groups[gi]
                g["members"][j] = self._card_at(p)
                self.tracker.relabel(g["vbase"] + j, g["members"][j])
        for block in blocks:
            if len(block) > 1:
                ks = [self._card_at(p) for p in block]
                for p, i in zip(block, rng.permutation(len(ks)), strict=True):
                    moved.setdefault(p, self._card_at(p))
                    self._set_card_at(p, ks[int(i)])
        for p in moved:
            idx = self._tracker_index(p)
            if idx is not None:
                self.tracker.relabel(idx, self._card_at(p))
        self._recompute_codes()
        self._mask_valid = False
        self._dirty = [STALE] * self.num_players

    def _card_at(self, p: tuple) -> int:
        if p[0] == "s":
            return int(self.pile[p[1]])
        if p[0] == "p":
            return int(self.paws[p[1], p[2]])
        return self.bag[p[1]]

    def _set_card_at(self, p: tuple, card: int) -> None:
        if p[0] == "s":
            self.pile[p[1]] = card
        elif p[0] == "p":
            self.paws[p[1], p[2]] = card
        else:
            self.bag[p[1]] = card

    def _tracker_index(self, p: tuple) -> int | None:
        if p[0] == "s":
            return p[1]
        if p[0] == "p":
            return self.paw_base + PAWS * p[1] + p[2]
        return None

    def clone(self) -> DogpileEngine:
        """An independent copy; the read-only tables built once per config are shared."""
        clone: DogpileEngine = clone_sharing(self, _SHARED_ON_CLONE)
        return clone

    def _after_load(self) -> None:
        self._recompute_codes()
        self._pub = None
        self._mask_valid = False
        self._dirty = [STALE] * self.num_players
        self._was_burying = [True] * self.num_players

    # -- checks --------------------------------------------------------------------------------
    def check_invariants(self) -> None:
        super().check_invariants()
        assert 0 <= self.round_index < NUM_ROUNDS, f"round_index {self.round_index!r}"
        # The round's clock, the sniff after a round, the scores: as the rounds went.
        assert self.ticks_left <= self.round_ticks[self.round_index], (
            f"ticks_left {self.ticks_left} past round {self.round_index + 1}'s "
            f"{self.round_ticks[self.round_index]}")
        scored = self.round_index + (self.phase != PLAY)  # rounds whose loot is counted
        assert len(self.round_history) == scored, (
            f"round_history holds {len(self.round_history)} rounds, {scored} were scored")
        assert self.totals == [sum(r[s] for r in self.round_history)
                               for s in range(self.num_players)], "totals differ from the rounds"
        assert self.round_loot == (self.round_history[-1] if self.round_history
                                   else [0] * self.num_players), "round_loot is not the last"
        assert (self.phase == OVER) == self.terminated, f"phase {self.phase} vs terminated"
        sniffing = self.phase in (SNIFF, SHUFFLE)
        assert sniffing == (self.active_group >= 0) and (not sniffing or self.sniffers), (
            f"phase {self.phase} with active_group {self.active_group}, sniffers "
            f"{self.sniffers}")
        assert sniffing or not self.bag, f"a bag {self.bag} outside a sniff"
        assert self.active_group < len(self.groups), f"active_group {self.active_group}"
        if self.phase == SNIFF and not self.done:
            assert self.current_player == self.sniffers[0] and len(self.bag) < SNIFF_BONES
        if self.phase == SHUFFLE and not self.done:
            assert self.current_player == (self.sniffers[0] + 1) % self.num_players
            assert self.bag, "a shuffle with an empty bag"
        known = self.tracker.known
        assert np.array_equal(self.occupied, (self.pile >= 0).astype(np.int8))
        assert np.array_equal(self.empty, 1 - self.occupied)
        assert not (self.face_up & (self.pile < 0)).any()
        # Memory is never wrong, only missing.
        pile_known = known[:, :NUM_SLOTS]
        assert ((pile_known == -1) | (pile_known == self.pile[None, :])).all(), "stale memory"
        paw_known = known[:, self.paw_base:self.virtual_base]
        assert ((paw_known == -1) | (paw_known == self.paws.reshape(1, -1))).all(), "stale paw"
        for s in range(self.num_players):
            assert (self.dog_phase[s] == HOLDING) == (self.held[s] >= 0)
            if self.dog_phase[s] == BURYING:
                assert self.paws[s, self.bury_paw[s]] >= 0
            if self.dog_phase[s] == HOLDING:
                assert (self.paws[s] < 0).any()
        flags = np.zeros(NUM_SLOTS, dtype=np.float32)
        used = set()
        for gi, g in enumerate(self.groups):
            members = g["members"]
            live = [c for c in members if c >= 0]
            assert len(live) == len(set(live))
            here = [int(self.pile[t]) for t in g["slots"]]
            if gi == self.active_group:
                here += self.bag
            assert set(here) <= set(live), "a sniffed group holds a bone that is not a candidate"
            for t in g["slots"]:
                assert self.pile[t] >= 0 and not self.face_up[t]
                flags[t] = 1.0
            for j in range(SNIFF_BONES):
                col = known[:, g["vbase"] + j]
                c = members[j] if j < len(members) else -1
                assert ((col == -1) | (col == c)).all(), "stale sniff memory"
            used.add(g["vbase"])
        assert np.array_equal(flags, self.group_flag)
        for v in range(self.virtual_base, self.tracker.num_slots, SNIFF_BONES):
            if v not in used:
                assert (known[:, v:v + SNIFF_BONES] == -1).all()

    def result(self) -> dict[str, Any]:
        out = super().result()
        out.update(
            totals=list(self.totals), bones=list(self.bones),
            round_loot=[list(r) for r in self.round_history],
            blackjaw=self._blackjaw_seats(),
            boneathon_by=list(self.boneathon_by),
        )
        return out

    # -- rendering -----------------------------------------------------------------------------
    def render_text(self) -> str:
        if not self._dealt:
            self._not_dealt("render_text")
        phase = ("play", "sniff", "shuffle", "over")[self.phase]
        lines = [f"Dogpile round {self.round_index + 1}/{NUM_ROUNDS}, {phase}, "
                 f"{self.ticks_left} ticks left; totals {self.totals}"]
        for row in range(6):
            cells = []
            for t in range(row * 9, row * 9 + 9):
                c = int(self.pile[t])
                if c < 0:
                    cell = ".."
                elif self.face_up[t]:
                    cell = card_code(c)
                else:
                    cell = card_code(c).lower()
                mark = "*" if self.group_flag[t] else " "
                cells.append(f"{t:02d}:{cell}{mark}")
            lines.append(" ".join(cells))
        lines.append("(UPPER face up, lower face down, * put back by a sniff)")
        for s in range(self.num_players):
            marker = ">" if s == self.current_player and not self.done else " "
            paws = " ".join(card_code(int(c)) if c >= 0 else "--" for c in self.paws[s])
            extra = ""
            if self.held[s] >= 0:
                extra = f" digging {card_code(int(self.held[s]))}"
            elif self.dog_phase[s] == BURYING:
                extra = f" burying paw {self.bury_paw[s]}"
            loot = " ".join(card_code(c) for c in self.looted[s])
            lines.append(f"{marker} player_{s}: paws [{paws}]{extra}; loot {loot or '-'}; "
                         f"total {self.totals[s]}")
        if self.bag:
            lines.append("sniff bag: " + " ".join(card_code(c) for c in self.bag))
        if self.done:
            lines.append(self.ending_text())
        return "\n".join(lines)

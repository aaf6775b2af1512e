"""Deluxe Memory rules engine (see RULES.md beside this file for every rule and choice).

The grid has 7 rows (``a``..``g``) of 8 columns (``1``..``8``); cell ``row * 8 + col``. The four
corners are empty, except that with Jokin' Around the two jokers' extra places are the top-left
(``a1``) and bottom-right (``g8``) corners.

Actions (80), one flat space whose meaning depends on the pending decision (shown in the
observation):

* ``cell:<r><c>`` (0..55): pick a card for the turn, or the cell an effect asks for (reveal,
  look, swap, the top-left corner of a 2 by 2 square, the centre of a 3 by 3 cross);
* ``target:+k`` (56..61): the player ``k`` seats to the left of the deciding seat (``+0`` is
  the deciding seat itself);
* ``effect:<rank>`` (62..73): the Mixed Chart effect a King pair takes (Ace..Queen);
* ``nomatch:show|hide_first|hide_second|hide_both`` (74..77): how an unmatched pair goes back;
* ``stop`` (78): end an optional series (reveals, targets, joker swaps) or decline to pay;
* ``pay_for_turn`` (79): spend 5 tokens for yet another turn after a 7's extra turn.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np
from mypy_extensions import mypyc_attr

from card_envs.core.buffers import float_items, int_items
from card_envs.core.cards import COLOUR_OF, RANK_OF, RANKS, card_code
from card_envs.core.config import Option, int_range, seat_or_random
from card_envs.core.copying import copy_generator
from card_envs.core.engine import CachedViewsEngine
from card_envs.core.knowledge import KnowledgeTracker
from card_envs.core.obs_layout import ObsLayout

ROWS, COLS = 7, 8
NUM_CELLS = ROWS * COLS
ROW_NAMES = "abcdefg"
CORNERS = (0, COLS - 1, (ROWS - 1) * COLS, NUM_CELLS - 1)
JOKER_CORNERS = (0, NUM_CELLS - 1)  # a1 and g8 hold the jokers' extra places
MAX_PLAYERS = 6

CELL_BASE = 0
TARGET_BASE = NUM_CELLS  # 56..61
EFFECT_BASE = TARGET_BASE + MAX_PLAYERS  # 62..73 (Ace..Queen)
NOMATCH_BASE = EFFECT_BASE + 12  # 74..77
SHOW_BOTH, HIDE_FIRST, HIDE_SECOND, HIDE_BOTH = range(NOMATCH_BASE, NOMATCH_BASE + 4)
STOP = NOMATCH_BASE + 4  # 78
PAY = STOP + 1  # 79
NUM_ACTIONS = PAY + 1

# Rank indexes (cards.RANK_OF): A=0, 2..10 = 1..9, J=10, Q=11, K=12, joker=13.
R_ACE, R_TWO, R_THREE, R_FOUR, R_FIVE, R_SIX, R_SEVEN, R_EIGHT, R_NINE, R_TEN = range(10)
R_JACK, R_QUEEN, R_KING, R_JOKER = 10, 11, 12, 13
NUM_RANKS = 14
RANK_LABELS = [*RANKS, "X"]

# Pending decisions. The observation one-hots this, so a policy always knows what it is asked.
(PICK1, PICK2, NOMATCH, BLACK_TARGET, RED_TARGET, KING_CHOICE, ACE_GAIN, ACE_LOSE, ACE_REVEAL,
 TWO_LOOK, THREE_REVEAL, THREE_TARGET, FOUR_SQUARE, FOUR_LOOK, FIVE_CROSS, SIX_REVEAL,
 SEVEN_PAY, JACK_PLAYER, QUEEN_GIVER, QUEEN_RECEIVER, SIMPLE_GIVER, SIMPLE_RECEIVER,
 JOKER_SWAP) = range(23)
NUM_PHASES = 23
PHASE_NAMES = (
    "pick first card", "pick second card", "unmatched pair: show or hide",
    "black pair: who returns tokens", "red pair: who gains tokens", "King: choose an effect",
    "Ace: who gains 1", "Ace: who loses 1", "Ace: reveal a card", "2: look at two cards to swap",
    "3: reveal up to four cards", "3: up to three players lose 3", "4: choose a 2x2 square",
    "4: choose two cards to look at", "5: choose a cross centre", "6: reveal cards face up",
    "7: pay 5 for another turn?", "Jack: choose two players", "Queen: who gives six",
    "Queen: who receives six", "Simplicity: who gives", "Simplicity: who receives",
    "Jokers: rearrange cards",
)

SHIELD, TEN_PAIR = 0, 1  # roles of a kept pair

CELL_ROW = [c // COLS for c in range(NUM_CELLS)]
CELL_COL = [c % COLS for c in range(NUM_CELLS)]
#: 2 by 2 squares by top-left cell.
SQUARES: dict[int, tuple[int, ...]] = {
    r * COLS + c: (r * COLS + c, r * COLS + c + 1, (r + 1) * COLS + c, (r + 1) * COLS + c + 1)
    for r in range(ROWS - 1) for c in range(COLS - 1)
}
#: Plus-shaped 3 by 3 crosses by centre cell (the whole cross inside the grid).
CROSSES: dict[int, tuple[int, ...]] = {
    r * COLS + c: (r * COLS + c, (r - 1) * COLS + c, (r + 1) * COLS + c, r * COLS + c - 1,
                   r * COLS + c + 1)
    for r in range(1, ROWS - 1) for c in range(1, COLS - 1)
}

#: What a seat's observation shows of a card: rank one-hot (14, jokers last), black, red.
CARD_FEATURES = 16
_FEAT = np.zeros((55, CARD_FEATURES), dtype=np.float32)  # row 54 (index -1): unknown, all zero
for _c in range(54):
    _FEAT[_c, RANK_OF[_c]] = 1.0
    if COLOUR_OF[_c] >= 0:
        _FEAT[_c, 14 + COLOUR_OF[_c]] = 1.0
CARD_FEAT = _FEAT
#: The same rows as a list (index -1: unknown), for cheap per-cell writes.
FEAT_ROWS = list(CARD_FEAT)
#: The NOMATCH masks by how many cards the player can afford to hide (0, 1, 2).
NOMATCH_MASKS = [np.zeros(NUM_ACTIONS, dtype=np.int8) for _ in range(3)]
for _k, _m in enumerate(NOMATCH_MASKS):
    _m[SHOW_BOTH] = 1
    if _k >= 1:
        _m[HIDE_FIRST] = _m[HIDE_SECOND] = 1
    if _k >= 2:
        _m[HIDE_BOTH] = 1
#: Index of a card in the public "off the grid" counts: 13 ranks x (black, red), then jokers.
REMOVED_INDEX = [RANK_OF[c] * 2 + COLOUR_OF[c] if c < 52 else 26 for c in range(54)]


def cell_name(cell: int | np.integer[Any]) -> str:
    return f"{ROW_NAMES[CELL_ROW[cell]]}{CELL_COL[cell] + 1}"


@mypyc_attr(allow_interpreted_subclasses=True)  # a rule variant may subclass it
class DeluxeMemoryEngine(CachedViewsEngine):
    BOUND_VIEWS = ("_known_cols", "_face_cols", "_card_blocks", "_seen_cols", "_seen_view_cols",
                   "_seen_items", "_views_items")
    name = "deluxe_memory"
    CARD_ACTION_FAMILIES = ("effect",)
    OPTIONS: ClassVar[dict[str, Option]] = {
        "num_players": Option(3, "Players.", choices=(2, 3, 4, 5, 6)),
        "starting_tokens": Option(20, "Tokens each player starts with (the text: 20).",
                                  check=int_range(1, 1000)),
        "tokens_per_player": Option(30, "Token supply per player; the bank starts with the rest "
                                        "(the text: 'about 30').", check=int_range(1, 1000)),
        "simplicity": Option(False, "Simplicity variant: a mixed pair makes one player give its "
                                    "value to another instead of the Mixed Chart.",
                             choices=(False, True)),
        "jokin_around": Option(False, "Jokin' Around variant: the two jokers are in the grid; "
                                      "matching them lets the matcher rearrange cards.",
                               choices=(False, True)),
        "joker_swaps": Option(10, "Jokin' Around: the 'one minute' of rearranging, as at most "
                                  "this many swaps of two cards.", check=int_range(0, 100),
                              needs=("jokin_around", True)),
        "underdogs": Option(False, "Underdogs variant: a player at 0 tokens stays in the game.",
                            choices=(False, True)),
        "underdogs_end": Option(
            "one_with_tokens",
            "Underdogs: when the game ends besides 'no match left': 'one_with_tokens' (the "
            "text: also as soon as only one player has tokens) or 'no_match_left' (the reading "
            "before issue 38: only when no match is left).",
            choices=("one_with_tokens", "no_match_left"), needs=("underdogs", True)),
        "peek_first": Option(True, "See the first card of a turn before picking the second "
                                   "(as in Memory); False: pick both, then look.",
                             choices=(True, False)),
        "first_player": Option("random", "Who goes first: a seat or 'random'.",
                               check=seat_or_random),
    }
    TEST_VARIANTS: ClassVar[tuple[dict[str, Any], ...]] = (
        {"simplicity": True},
        {"jokin_around": True, "num_players": 4},
        {"underdogs": True, "num_players": 2},
        {"memory": "none", "peek_first": False},
        {"memory": 0.3, "reward": "score"},
    )
    #: What each STATE_FIELDS entry of a snapshot holds (docs/observations.md; tested).
    STATE_DOCS: ClassVar[dict[str, str]] = {
        "grid": "card id on each of the 56 cells (row a..g, column 1..8), -1 empty or unused",
        "face_up": "per cell, its card lies face up",
        "discard": "card ids of discarded pairs, in order",
        "kept": "per seat, its kept pairs: [role (0 Nine shield, 1 Ten pair), card, card]",
        "tokens": "per seat, its tokens",
        "bank": "tokens in the bank",
        "active": "per seat, still in the game",
        "skips": "per seat, its turns still to be skipped",
        "extra_turns": "queued extra turns, next first: [seat, 1 if a Seven's (offers to buy "
                       "another) else 0]",
        "rotation": "the seat of the last regular turn (play resumes to its left)",
        "turn_owner": "whose turn it is",
        "turn_offer": "this turn is a Seven's extra turn (an offer to buy another at its end)",
        "phase": "the pending decision: index into PHASE_NAMES",
        "effect_owner": "the seat that takes the pending effect, -1 none",
        "effect_rank": "the rank (0..12 = A..K) of the effect being resolved, -1 none",
        "amount": "tokens the pending pair or Queen moves, 0 otherwise",
        "picks": "this turn's picked cells, in order",
        "sel_cells": "cells the pending effect has chosen so far",
        "sel_players": "players the pending effect has chosen so far",
        "area": "the top-left cell of the square a Four looks at, -1 none",
        "counter": "reveals used (Three) or swaps used (jokers)",
        "tracker": "memory slots: the 56 cells",
        "seen": "int8 (seat, cell): 1 where the seat has seen the card now on the cell",
    }
    STATE_FIELDS = (
        "grid", "face_up", "discard", "kept", "tokens", "bank", "active", "skips",
        "extra_turns", "rotation", "turn_owner", "turn_offer", "phase", "effect_owner",
        "effect_rank", "amount", "picks", "sel_cells", "sel_players", "area", "counter",
        "tracker", "seen",
    )

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        n = self.num_players
        cfg = self.config
        fp = cfg["first_player"]
        if fp != "random" and fp >= n:
            raise ValueError(f"invalid value {fp!r} for 'first_player': allowed values are "
                             f"0..{n - 1} or 'random'")
        if cfg["tokens_per_player"] < cfg["starting_tokens"]:
            raise ValueError(f"invalid value {cfg['tokens_per_player']!r} for "
                             f"'tokens_per_player': must be >= starting_tokens "
                             f"({cfg['starting_tokens']})")
        self.simplicity = bool(cfg["simplicity"])
        self.jokers = bool(cfg["jokin_around"])
        self.underdogs = bool(cfg["underdogs"])
        self.underdogs_end_by_tokens = cfg["underdogs_end"] == "one_with_tokens"
        self.peek_first = bool(cfg["peek_first"])
        self.max_swaps = int(cfg["joker_swaps"])
        self.total_tokens = cfg["tokens_per_player"] * n
        self.used_cells = [c for c in range(NUM_CELLS)
                           if c not in CORNERS or (self.jokers and c in JOKER_CORNERS)]

        self.num_actions = NUM_ACTIONS
        names = [f"cell:{cell_name(c)}" for c in range(NUM_CELLS)]
        names += [f"target:+{k}" for k in range(MAX_PLAYERS)]
        names += [f"effect:{RANKS[r]}" for r in range(12)]
        names += ["nomatch:show", "nomatch:hide_first", "nomatch:hide_second",
                  "nomatch:hide_both", "stop", "pay_for_turn"]
        self.action_names = names

        self.layout = self._make_layout()
        self.state_layout = self._make_layout()
        sl = self.layout.slices
        self._sl = sl
        self._cards_sl = sl["cards"]
        self._off = {name: part.start for name, part in sl.items()}
        assert self._off["face_up"] == NUM_CELLS and self._off["present"] == 0

        self.tracker = KnowledgeTracker(n, NUM_CELLS, self.memory)
        # seen[seat, cell]: seat has looked at the card now on cell. Public (every look is
        # chosen in view) and never forgotten, unlike the tracker's memory of the card itself.
        self.seen = np.zeros((n, NUM_CELLS), dtype=np.int8)
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._mask_valid = False
        self._present = np.zeros(NUM_CELLS, dtype=np.int8)
        self._pick_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)  # PICK1's mask: _present
        self._facedown = np.zeros(NUM_CELLS, dtype=np.int8)
        self._public = np.full(NUM_CELLS, -1, dtype=np.int8)  # face-up card per cell
        self._faceup = np.zeros(NUM_CELLS, dtype=np.int8)
        self._removed = np.zeros(27, dtype=np.float32)
        self._rank_left = [0] * NUM_RANKS
        # Each seat's observation without the fields that change every decision (picks,
        # phase, effect, actor, turn owner), kept current by the events that change it, so
        # observing is one copy plus a few scalars. The card block follows every memory event
        # (show, conceal, swap) and tokens follow every payment; a seat's status block (active
        # .. offer_pay) is rewritten when ``_ver`` moved since it was last written. Bulk
        # changes (deal, snapshot load, resampling) set ``_views_ok = False`` and every view
        # is rebuilt on next use; a seat's forgetting marks its card block stale.
        self._views = np.zeros((n, self.layout.size), dtype=np.float32)
        self._views_ok = False
        self._cards_stale = [False] * n  # a seat forgot: rebuild its card block
        self._ver = 0
        self._seat_ver = [-1] * n
        o = self._off
        self._c0 = o["cards"]
        self._fp0, self._sp0 = o["first_pick"], o["second_pick"]
        self._ph0, self._actor0, self._owner0 = o["phase"], o["actor"], o["turn_owner"]
        self._rotation0 = o["rotation"]
        self._t0, self._r0 = o["tokens"], o["removed"]
        self._seen0 = o["seen_by"]
        # Where a look by ``seat`` shows in each seat's view (its block is relative to the
        # viewer): flat offsets into ``_views``, cell 0.
        size = self.layout.size
        self._seen_offsets = [[v * size + self._seen0 + (seat - v) % n * NUM_CELLS
                               for v in range(n)] for seat in range(n)]
        assert (o["bank"], o["active"], o["shields"], o["ten_pairs"], o["skips"],
                o["extra_turns"], o["offer_pay"], o["removed"]) == tuple(
            self._t0 + k for k in (n, n + 1, 2 * n + 1, 3 * n + 1, 4 * n + 1, 5 * n + 1,
                                   6 * n + 1, 6 * n + 2))
        self._bind_views()
        self._reset_position()

    def _bind_views(self) -> None:
        # Every seat's entries for one cell, prebuilt: filling a ready view costs a fraction
        # of slicing ``[:, cell]`` at each card event.
        known, views, c0 = self.tracker.known, self._views, self._c0
        # Single entries through memoryviews: a third of numpy's cost per item.
        self._views_items = float_items(views.reshape(-1))  # _views is contiguous
        self._seen_items = int_items(self.seen.reshape(-1))
        self._known_cols = [known[:, c] for c in range(NUM_CELLS)]
        self._face_cols = [views[:, NUM_CELLS + c] for c in range(NUM_CELLS)]
        self._card_blocks = [views[:, c0 + c * CARD_FEATURES:c0 + (c + 1) * CARD_FEATURES]
                             for c in range(NUM_CELLS)]
        s0, end = self._seen0, self._seen0 + self.num_players * NUM_CELLS
        self._seen_cols = [self.seen[:, c] for c in range(NUM_CELLS)]
        # Every viewer's entries for every looker at one cell: (viewers, lookers), strided.
        self._seen_view_cols = [views[:, s0 + c:end:NUM_CELLS] for c in range(NUM_CELLS)]

    def _make_layout(self) -> ObsLayout:
        n = self.num_players
        lay = ObsLayout()
        # Cells a1..g8 row by row; players from the observer to its left (state(): seat order).
        lay.add("present", NUM_CELLS, "a card lies on the cell")
        lay.add("face_up", NUM_CELLS, "it is face up")
        lay.add("cards", (NUM_CELLS, CARD_FEATURES), "the card seen or remembered there: rank "
                "one-hot (A..K, joker), black, red (state(): every card)")
        lay.add("first_pick", NUM_CELLS, "this turn's first pick")
        lay.add("second_pick", NUM_CELLS, "this turn's second pick")
        lay.add("effect_cells", NUM_CELLS, "cells the pending effect has chosen so far")
        lay.add("effect_area", NUM_CELLS, "the square whose cards are being chosen (Four)")
        lay.add("phase", NUM_PHASES, "the pending decision (PHASE_NAMES)")
        lay.add("effect_rank", NUM_RANKS, "the effect being resolved (King until it chooses)")
        lay.add("amount", 1, "tokens the pending black or red pair, Simplicity pair or Queen "
                "moves / 13")
        lay.add("counter", 1, "reveals used / 4 (Three) or swaps used / joker_swaps")
        lay.add("actor", n, "who decides now")
        lay.add("turn_owner", n, "whose turn it is")
        lay.add("rotation", n, "whose regular turn was last: play resumes to its left")
        lay.add("effect_owner", n, "who takes the effect")
        lay.add("chosen_players", n, "players chosen so far")
        lay.add("tokens", n, "tokens / the token supply")
        lay.add("bank", 1, "the bank / the token supply")
        lay.add("active", n, "still in the game")
        lay.add("shields", n, "kept Nine pairs / 4")
        lay.add("ten_pairs", n, "kept Ten pairs / 4")
        lay.add("skips", n, "pending skipped turns / 4")
        lay.add("extra_turns", n, "queued extra turns / 4")
        lay.add("offer_pay", 1, "this is a Seven's extra turn (an offer to buy another)")
        lay.add("removed", 27, "cards off the grid per rank x (black, red), then jokers; / 2")
        lay.add("seen_by", (n, NUM_CELLS), "per player: has seen the card now on the cell")
        return lay

    def deck_cards(self) -> list[int]:
        return list(range(54 if self.jokers else 52))

    def all_cards(self) -> list[int]:
        cards = [c for c in self.grid if c >= 0] + list(self.discard)
        for pairs in self.kept:
            for _, a, b in pairs:
                cards += [a, b]
        return cards

    # -- dealing -------------------------------------------------------------------------------
    def _reset_position(self) -> None:
        n = self.num_players
        self.grid = [-1] * NUM_CELLS
        self.face_up = [False] * NUM_CELLS
        self.discard: list[int] = []
        self.kept: list[list[list[int]]] = [[] for _ in range(n)]  # per seat: [role, card, card]
        self.tokens = [self.config["starting_tokens"]] * n
        self.bank = self.total_tokens - sum(self.tokens)
        self.active = [True] * n
        self.skips = [0] * n
        self.extra_turns: list[list[int]] = []  # [seat, offer_pay] in the order they are taken
        self.rotation = 0  # seat of the last regular (not extra) turn
        self.turn_owner = 0
        self.turn_offer = False
        self.phase = PICK1
        self._clear_effect()

    def _clear_effect(self) -> None:
        self.effect_owner = -1
        self.effect_rank = -1
        self.amount = 0
        self.picks: list[int] = []
        self.sel_cells: list[int] = []
        self.sel_players: list[int] = []
        self.area = -1
        self.counter = 0

    def _deal(self, deck: list[int] | None) -> None:
        n = self.num_players
        fp = self.config["first_player"]
        first = self.random_below(n) if fp == "random" else fp
        cards = self.deck_cards()
        order = [cards[i] for i in self.rng.permutation(len(cards))] if deck is None else deck
        self._reset_position()
        for cell, card in zip(self.used_cells, order, strict=True):
            self.grid[cell] = card
        self.tracker.known.fill(-1)
        self.seen.fill(0)
        self._rebuild_caches()
        self.rotation = first
        self._start_turn(first, False)
        self._advance()

    def _rebuild_caches(self) -> None:
        self._present.fill(0)
        self._facedown.fill(0)
        self._public.fill(-1)
        self._faceup.fill(0)
        self._removed.fill(0.0)
        self._rank_left = [0] * NUM_RANKS
        for cell, card in enumerate(self.grid):
            if card < 0:
                continue
            self._present[cell] = 1
            self._rank_left[RANK_OF[card]] += 1
            if self.face_up[cell]:
                self._public[cell] = card
                self._faceup[cell] = 1
            else:
                self._facedown[cell] = 1
        for card in self.all_cards():
            if card not in self.grid:
                self._removed[REMOVED_INDEX[card]] += 0.5
        self._num_present = int(self._present.sum())
        self._pick_mask[:NUM_CELLS] = self._present
        self._mask_valid = False
        self._views_ok = False

    def _after_load(self) -> None:
        self._rebuild_caches()

    # -- the driver ------------------------------------------------------------------------
    def _after_forgetting(self, seat: int) -> None:
        # A card lying face up on the table is in plain view: it cannot be forgotten.
        np.copyto(self.tracker.known[seat], self._public, where=self._faceup.astype(bool))
        self._cards_stale[seat] = True

    def _apply(self, action: int) -> None:
        before = self.tokens[:] if self.pays_every_step else None
        self._dispatch(action)
        self._advance()
        if before is not None:
            for s in range(self.num_players):
                self.rewards[s] += self.tokens[s] - before[s]

    def _advance(self) -> None:
        """Resolve decisions that have exactly one legal action: they are formalities."""
        while not self.terminated:
            # The common decisions have several legal actions whenever these hold (PICK1: all
            # cards on the grid; PICK2: all but the first pick; NOMATCH: show or hide first).
            ph = self.phase
            if ph == PICK1:
                if self._num_present >= 2:
                    return
            elif ph == PICK2:
                if self._num_present >= 3:
                    return
            elif ph == NOMATCH and self.tokens[self.current_player] >= 2 - self.underdogs:
                return
            mask = self.legal_mask()
            count = np.count_nonzero(mask)
            if count != 1:
                assert count > 0, f"no legal action in phase {PHASE_NAMES[self.phase]}"
                return
            self._dispatch(int(mask.argmax()))

    def _set_phase(self, phase: int) -> None:
        self.phase = phase
        self._mask_valid = False

    def _dispatch(self, action: int) -> None:
        self._mask_valid = False
        ph = self.phase
        actor = self.current_player
        if ph == PICK1:
            self.picks = [action]
            if self.peek_first:
                self._show(action, actor)
            self._set_phase(PICK2)
        elif ph == PICK2:
            self._second_pick(action)
        elif ph == NOMATCH:
            self._put_back(action)
        elif ph == BLACK_TARGET:
            self._lose(self._seat(action), self.amount)
            self._effect_done()
        elif ph == RED_TARGET:
            self._gain(self._seat(action), self.amount)
            self._effect_done()
        elif ph == KING_CHOICE:
            self._start_chart(action - EFFECT_BASE)
        elif ph == ACE_GAIN:
            self._gain(self._seat(action), 1)
            self._set_phase(ACE_LOSE)
            if not self._has_target(others=True):
                self._ace_reveal_or_done()
        elif ph == ACE_LOSE:
            self._lose(self._seat(action), 1)
            self._ace_reveal_or_done()
        elif ph == ACE_REVEAL:
            self._reveal(action)
            self._effect_done()
        elif ph == TWO_LOOK:
            self.sel_cells.append(action)
            if len(self.sel_cells) == 2:
                a, b = self.sel_cells
                self._show(a, actor)
                self._show(b, actor)
                self._swap_cells(a, b)
                self._effect_done()
        elif ph == THREE_REVEAL:
            if action == STOP:
                self._three_check()
            else:
                self.sel_cells.append(action)
                self._reveal(action)
                self.counter += 1
                if self.counter == 4 or not self._facedown.any():
                    self._three_check()
        elif ph == THREE_TARGET:
            if action == STOP:
                self._effect_done()
            else:
                seat = self._seat(action)
                self.sel_players.append(seat)
                self._lose(seat, 3)
                if not self.terminated and len(self.sel_players) == 3:
                    self._effect_done()
        elif ph == FOUR_SQUARE:
            self.area = action
            down = [c for c in SQUARES[action] if self._facedown[c]]
            if len(down) <= 2:
                self._four_look(down)
            else:
                self._set_phase(FOUR_LOOK)
        elif ph == FOUR_LOOK:
            self.sel_cells.append(action)
            if len(self.sel_cells) == 2:
                self._four_look(self.sel_cells)
        elif ph == FIVE_CROSS:
            self.area = action
            for c in CROSSES[action]:
                if self._facedown[c]:
                    self.sel_cells.append(c)
                    self._reveal(c)
            self._effect_done()
        elif ph == SIX_REVEAL:
            if action == STOP:
                self._effect_done()
            else:
                self.sel_cells.append(action)
                self._turn_face(action, True)
                if not self._facedown.any():
                    self._effect_done()
        elif ph == SEVEN_PAY:
            if action == PAY:
                self._pay(actor, 5)
                self.extra_turns.insert(0, [actor, 0])
                self._ver += 1
            self._next_turn()
        elif ph == JACK_PLAYER:
            self.sel_players.append(self._seat(action))
            if len(self.sel_players) == 2:
                self._equalise(*self.sel_players)
                self._effect_done()
        elif ph in (QUEEN_GIVER, SIMPLE_GIVER):
            self.sel_players = [self._seat(action)]
            self._set_phase(QUEEN_RECEIVER if ph == QUEEN_GIVER else SIMPLE_RECEIVER)
        elif ph in (QUEEN_RECEIVER, SIMPLE_RECEIVER):
            receiver = self._seat(action)
            self.sel_players.append(receiver)
            self._transfer(self.sel_players[0], receiver, self.amount)
            self._effect_done()
        elif ph == JOKER_SWAP:
            if action == STOP:
                self._effect_done()
                return
            self.sel_cells.append(action)
            if len(self.sel_cells) == 2:
                self._swap_cells(*self.sel_cells)
                self.sel_cells = []
                self.counter += 1
                if self.counter >= self.max_swaps:
                    self._effect_done()
        else:  # pragma: no cover - phases are exhaustive
            raise AssertionError(f"unknown phase {ph}")

    def _seat(self, action: int) -> int:
        return (self.current_player + action - TARGET_BASE) % self.num_players

    # -- turns -----------------------------------------------------------------------------
    def _start_turn(self, seat: int, offer_pay: bool) -> None:
        self.turn_owner = seat
        if offer_pay != self.turn_offer:
            self.turn_offer = offer_pay
            self._ver += 1
        self.current_player = seat
        self._clear_effect()
        self._set_phase(PICK1)

    def _end_turn(self) -> None:
        if self.terminated:
            return
        if max(self._rank_left) < 2:
            self._clear_effect()
            self._finish_by_tokens()
            return
        owner = self.turn_owner
        if self.turn_offer:
            self.turn_offer = False
            self._ver += 1
            floor = 5 if self.underdogs else 6  # paying must not put the payer out
            if self.active[owner] and self.tokens[owner] >= floor:
                self._clear_effect()
                self.current_player = owner
                self._set_phase(SEVEN_PAY)
                return
        self._next_turn()

    def _next_turn(self) -> None:
        n = self.num_players
        while self.extra_turns:
            seat, offer = self.extra_turns.pop(0)
            self._ver += 1
            if self.active[seat]:
                self._start_turn(seat, bool(offer))
                return
        seat = self.rotation
        while True:
            seat = (seat + 1) % n
            if not self.active[seat]:
                continue
            if self.skips[seat]:
                self.skips[seat] -= 1
                self._ver += 1
                continue
            break
        self.rotation = seat
        self._start_turn(seat, False)

    def _finish_by_tokens(self) -> None:
        best = max(self.tokens)
        self.finish([s for s in range(self.num_players) if self.tokens[s] == best])

    # -- a turn's two cards ---------------------------------------------------------------------
    def _second_pick(self, cell: int) -> None:
        actor = self.current_player
        a = self.picks[0]
        self.picks.append(cell)
        ca, cb = self.grid[a], self.grid[cell]
        if self.tracker.known[actor, a] != ca:  # usually still known from the peek
            self._show(a, actor)
        self._show(cell, actor)
        if RANK_OF[ca] != RANK_OF[cb]:
            self._set_phase(NOMATCH)
            return
        # A match: shown to everyone and taken off the grid.
        self._take(a)
        self._take(cell)
        rank = RANK_OF[ca]
        owner = actor
        for k in range(1, self.num_players):  # a Ten pair held by another player steals it
            seat = (actor + k) % self.num_players
            if self.active[seat] and self._drop_kept(seat, TEN_PAIR):
                owner = seat
                break
        self.discard += [ca, cb]  # last in the discard: a Nine or Ten effect keeps them
        self.picks = []
        self.effect_owner = owner
        self.effect_rank = rank
        self.current_player = owner
        if rank == R_JOKER:
            if self.max_swaps:
                self._set_phase(JOKER_SWAP)
            else:  # joker_swaps=0: matching the jokers rearranges nothing
                self._effect_done()
        elif COLOUR_OF[ca] == COLOUR_OF[cb]:
            self.amount = rank + 1
            if COLOUR_OF[ca] == 1:
                self._set_phase(RED_TARGET)
            else:
                self._set_phase(BLACK_TARGET)
                if not self._has_target(others=True):
                    self._effect_done()
        elif self.simplicity:
            self.amount = rank + 1
            self._set_phase(SIMPLE_GIVER)
        else:
            self._start_chart(rank)

    def _put_back(self, action: int) -> None:
        if action == SHOW_BOTH:
            a, b = self.picks
            self._turn_face(a, True)
            self._turn_face(b, True)
            self._end_turn()
            return
        hide = (action in (HIDE_FIRST, HIDE_BOTH), action in (HIDE_SECOND, HIDE_BOTH))
        for cell, hidden in zip(self.picks, hide, strict=True):
            if hidden:
                self._pay(self.current_player, 1)
            self._turn_face(cell, not hidden)
        self._end_turn()

    # -- the Mixed Chart -----------------------------------------------------------------------
    def _start_chart(self, effect: int) -> None:
        owner = self.effect_owner
        self.effect_rank = effect  # a King pair shows the effect it took from here on
        if effect == R_ACE:
            self._set_phase(ACE_GAIN)
        elif effect == R_TWO:
            if int(self._present.sum()) >= 2:
                self._set_phase(TWO_LOOK)
            else:
                self._effect_done()
        elif effect == R_THREE:
            self._set_phase(THREE_REVEAL)
            if not self._facedown.any():
                self._effect_done()
        elif effect == R_FOUR:
            self._set_phase(FOUR_SQUARE)
            if not any(self._facedown[c] for sq in SQUARES.values() for c in sq):
                self._effect_done()
        elif effect == R_FIVE:
            self.extra_turns.append([owner, 0])
            self._ver += 1
            self._set_phase(FIVE_CROSS)
            if not any(self._facedown[c] for cr in CROSSES.values() for c in cr):
                self._effect_done()
        elif effect == R_SIX:
            self._set_phase(SIX_REVEAL)
            if not self._facedown.any():
                self._effect_done()
        elif effect == R_SEVEN:
            self.extra_turns.append([owner, 1])
            self._ver += 1
            self._effect_done()
        elif effect == R_EIGHT:
            nxt = self._next_active(owner)
            if nxt != owner:
                self.skips[nxt] += 1
                self._ver += 1
            self._effect_done()
        elif effect in (R_NINE, R_TEN):
            b, a = self.discard.pop(), self.discard.pop()
            self.kept[owner].append([SHIELD if effect == R_NINE else TEN_PAIR, a, b])
            self._ver += 1
            self._effect_done()
        elif effect == R_JACK:
            self._set_phase(JACK_PLAYER)
        elif effect == R_QUEEN:
            self.amount = 6
            self._set_phase(QUEEN_GIVER)
        else:
            self._set_phase(KING_CHOICE)

    def _ace_reveal_or_done(self) -> None:
        if self._facedown.any() and not self.terminated:
            self._set_phase(ACE_REVEAL)
        else:
            self._effect_done()

    def _three_check(self) -> None:
        ranks = [RANK_OF[self.grid[c]] for c in self.sel_cells]
        hit = R_THREE in ranks or any(ranks.count(r) >= 3 for r in set(ranks))
        if hit and self._has_target(others=True):
            self._set_phase(THREE_TARGET)
        else:
            self._effect_done()

    def _four_look(self, cells: list[int]) -> None:
        owner = self.effect_owner
        self.sel_cells = list(cells)
        for c in cells:
            self._show(c, owner)
        for c in SQUARES[self.area]:
            if self._facedown[c] and c not in cells:
                self._reveal(c)
        self._effect_done()

    def _effect_done(self) -> None:
        self._end_turn()

    # -- cards -----------------------------------------------------------------------------------
    def _take(self, cell: int) -> None:
        card = self.grid[cell]
        self.grid[cell] = -1
        self.face_up[cell] = False
        self._present[cell] = 0
        self._pick_mask[cell] = 0
        self._facedown[cell] = 0
        self._public[cell] = -1
        self._faceup[cell] = 0
        self._rank_left[RANK_OF[card]] -= 1
        self._num_present -= 1
        idx = REMOVED_INDEX[card]
        self._removed[idx] += 0.5
        self.tracker.conceal(cell)
        self._seen_cols[cell].fill(0)
        if self._views_ok:
            self._seen_view_cols[cell].fill(0.0)
            views = self._views
            views[:, cell] = 0.0  # present
            views[:, NUM_CELLS + cell] = 0.0  # face_up
            c = self._c0 + cell * CARD_FEATURES
            views[:, c:c + CARD_FEATURES] = 0.0
            views[:, self._r0 + idx] = self._removed[idx]

    def _show(self, cell: int, seat: int) -> None:
        """``seat`` alone looks at the card at ``cell``."""
        card = self.grid[cell]
        self.tracker.known[seat, cell] = card  # tracker.show(cell, card, (seat,)), inlined
        at = seat * NUM_CELLS + cell
        first_look = not self._seen_items[at]
        if first_look:
            self._seen_items[at] = 1
        if self._views_ok:
            c = self._c0 + cell * CARD_FEATURES
            self._views[seat, c:c + CARD_FEATURES] = FEAT_ROWS[card]
            if first_look:
                items = self._views_items
                for offset in self._seen_offsets[seat]:
                    items[offset + cell] = 1.0

    def _show_all(self, cell: int, card: int) -> None:
        self._known_cols[cell].fill(card)  # tracker.show_all(cell, card), inlined
        self._seen_cols[cell].fill(1)
        if self._views_ok:
            self._card_blocks[cell][...] = FEAT_ROWS[card]
            self._seen_view_cols[cell].fill(1.0)

    def _reveal(self, cell: int) -> None:
        """Flip face up for everyone to see, then face down again."""
        self._show_all(cell, self.grid[cell])

    def _turn_face(self, cell: int, up: bool) -> None:
        if not up and not self.face_up[cell]:
            return  # a face-down card stays face down: nothing changes, nobody sees anything
        card = self.grid[cell]
        # Everyone sees a card turned face up. A card already face up needs nothing: every seat
        # has seen it and, face-up cards being exempt from forgetting, remembers it.
        if not self.face_up[cell]:
            self._show_all(cell, card)
        self.face_up[cell] = up
        self._facedown[cell] = 0 if up else 1
        self._public[cell] = card if up else -1
        self._faceup[cell] = up
        if self._views_ok:
            self._face_cols[cell].fill(1.0 if up else 0.0)

    def _swap_cells(self, a: int, b: int) -> None:
        """Swap two cards in plain view: faces stay as they were, knowledge follows the cards."""
        g, f = self.grid, self.face_up
        g[a], g[b] = g[b], g[a]
        f[a], f[b] = f[b], f[a]
        self.tracker.swap(a, b)
        seen_a = self._seen_cols[a].copy()
        self._seen_cols[a][...] = self._seen_cols[b]
        self._seen_cols[b][...] = seen_a
        for c in (a, b):
            self._facedown[c] = 0 if f[c] else 1
            self._public[c] = g[c] if f[c] else -1
            self._faceup[c] = f[c]
        if self._views_ok:
            views = self._views
            ca, cb = self._c0 + a * CARD_FEATURES, self._c0 + b * CARD_FEATURES
            block = views[:, ca:ca + CARD_FEATURES].copy()
            views[:, ca:ca + CARD_FEATURES] = views[:, cb:cb + CARD_FEATURES]
            views[:, cb:cb + CARD_FEATURES] = block
            block = self._seen_view_cols[a].copy()
            self._seen_view_cols[a][...] = self._seen_view_cols[b]
            self._seen_view_cols[b][...] = block
            for c in (a, b):
                views[:, c] = 1.0 if g[c] >= 0 else 0.0
                views[:, NUM_CELLS + c] = 1.0 if f[c] else 0.0

    # -- tokens ----------------------------------------------------------------------------------
    def _gain(self, seat: int, amount: int) -> None:
        """From the bank, which pays what it has."""
        got = min(amount, self.bank)
        self.bank -= got
        self.tokens[seat] += got
        if self._views_ok:
            self._tokens_changed(seat)

    def _pay(self, seat: int, amount: int) -> None:
        """A voluntary payment to the bank (no shield: nothing is being lost to an effect)."""
        paid = min(amount, self.tokens[seat])
        self.tokens[seat] -= paid
        self.bank += paid
        if self._views_ok:
            self._tokens_changed(seat)
        self._check_out(seat)

    def _shielded(self, seat: int) -> bool:
        """A kept Nine pair is discarded instead of losing tokens (only when tokens would go)."""
        return self.tokens[seat] > 0 and self._drop_kept(seat, SHIELD)

    def _lose(self, seat: int, amount: int) -> None:
        if self._shielded(seat):
            return
        self._pay(seat, amount)

    def _transfer(self, giver: int, receiver: int, amount: int) -> None:
        if self._shielded(giver):
            return
        moved = min(amount, self.tokens[giver])
        self.tokens[giver] -= moved
        self.tokens[receiver] += moved
        if self._views_ok:
            self._tokens_changed(giver)
            self._tokens_changed(receiver)
        self._check_out(giver)

    def _equalise(self, a: int, b: int) -> None:
        richer = a if self.tokens[a] > self.tokens[b] else b
        if self.tokens[a] == self.tokens[b] or self._shielded(richer):
            return
        total = self.tokens[a] + self.tokens[b]
        self.tokens[a] = self.tokens[b] = total // 2
        self.bank += total % 2
        if self._views_ok:
            self._tokens_changed(a)
            self._tokens_changed(b)
        self._check_out(a)  # 1 and 0 tokens (Underdogs) equalise to 0 and 0
        self._check_out(b)

    def _tokens_changed(self, seat: int) -> None:
        """Write ``seat``'s tokens and the bank into every view."""
        views, n, total = self._views, self.num_players, self.total_tokens
        value = self.tokens[seat] / total
        base = self._t0 + seat
        for s in range(n):
            views[s, base - s if s <= seat else base - s + n] = value
        views[:, self._t0 + n] = self.bank / total

    def _drop_kept(self, seat: int, role: int) -> bool:
        for i, (r, a, b) in enumerate(self.kept[seat]):
            if r == role:
                del self.kept[seat][i]
                self.discard += [a, b]
                self._ver += 1
                return True
        return False

    def _check_out(self, seat: int) -> None:
        if self.tokens[seat] > 0:
            return
        if self.underdogs:
            # Nobody goes out, but "the game ends when only one player has tokens left" still
            # holds (the variant changes only what running out means): at once, as below.
            if (self.underdogs_end_by_tokens and not self.terminated
                    and sum(1 for t in self.tokens if t > 0) <= 1):
                self._finish_by_tokens()
            return
        if not self.active[seat]:
            return
        self.active[seat] = False
        self.skips[seat] = 0
        self.extra_turns = [e for e in self.extra_turns if e[0] != seat]
        self._ver += 1
        alive = [s for s in range(self.num_players) if self.active[s]]
        if len(alive) <= 1:
            self._finish_by_tokens()

    def _next_active(self, seat: int) -> int:
        n = self.num_players
        for k in range(1, n + 1):
            s = (seat + k) % n
            if self.active[s]:
                return s
        return seat

    def _has_target(self, others: bool) -> bool:
        me = self.current_player
        return any(self.active[s] and not (others and s == me) for s in range(self.num_players))

    # -- legality ------------------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        if self._mask_valid:
            return self._mask
        if not self._dealt:
            self._not_dealt("legal_mask")
        m = self._mask
        ph = self.phase
        me = self.current_player
        if ph == PICK1:
            m[:] = self._pick_mask
            self._mask_valid = True
            return m
        if ph == PICK2:
            m[:] = self._pick_mask
            m[self.picks[0]] = 0
            self._mask_valid = True
            return m
        if ph == NOMATCH:
            budget = self.tokens[me] - (0 if self.underdogs else 1)
            m[:] = NOMATCH_MASKS[min(max(budget, 0), 2)]
            self._mask_valid = True
            return m
        m.fill(0)
        cells = m[:NUM_CELLS]
        if ph in (BLACK_TARGET, ACE_LOSE):
            self._targets(m, exclude=(me,))
        elif ph in (RED_TARGET, ACE_GAIN, QUEEN_GIVER, SIMPLE_GIVER):
            self._targets(m, exclude=())
        elif ph in (JACK_PLAYER, QUEEN_RECEIVER, SIMPLE_RECEIVER):
            self._targets(m, exclude=self.sel_players)
        elif ph == THREE_TARGET:
            self._targets(m, exclude=(me, *self.sel_players))
            m[STOP] = 1
        elif ph == KING_CHOICE:
            m[EFFECT_BASE:EFFECT_BASE + 12] = 1
        elif ph in (ACE_REVEAL, SIX_REVEAL):
            cells[:] = self._facedown
            if ph == SIX_REVEAL:
                m[STOP] = 1
        elif ph == THREE_REVEAL:
            cells[:] = self._facedown
            cells[self.sel_cells] = 0
            m[STOP] = 1
        elif ph == TWO_LOOK:
            cells[:] = self._present
            cells[self.sel_cells] = 0
        elif ph == FOUR_SQUARE:
            fd = self._facedown
            for tl, sq in SQUARES.items():
                if fd[sq[0]] or fd[sq[1]] or fd[sq[2]] or fd[sq[3]]:
                    cells[tl] = 1
        elif ph == FOUR_LOOK:
            for c in SQUARES[self.area]:
                if self._facedown[c] and c not in self.sel_cells:
                    cells[c] = 1
        elif ph == FIVE_CROSS:
            fd = self._facedown
            for centre, cr in CROSSES.items():
                if any(fd[c] for c in cr):
                    cells[centre] = 1
        elif ph == SEVEN_PAY:
            m[PAY] = m[STOP] = 1
        elif ph == JOKER_SWAP:
            cells[:] = self._present
            if self.sel_cells:
                cells[self.sel_cells[0]] = 0
            else:
                m[STOP] = 1
        self._mask_valid = True
        return m

    def _targets(self, m: np.ndarray, exclude: Any) -> None:
        me = self.current_player
        n = self.num_players
        for k in range(n):
            s = (me + k) % n
            if self.active[s] and s not in exclude:
                m[TARGET_BASE + k] = 1

    # -- observations --------------------------------------------------------------------------
    def _held_cells(self, seat: int) -> list[int]:
        """The turn's picks the picker is holding and looking at right now."""
        if seat != self.current_player or seat != self.turn_owner:
            return []
        if self.phase == NOMATCH or (self.phase == PICK2 and self.peek_first):
            return self.picks
        return []

    def _view(self, seat: int) -> np.ndarray:
        if not self._views_ok:
            self._rebuild_views()
        if self._cards_stale[seat]:
            self._write_cards(seat)
        if self._seat_ver[seat] != self._ver:
            self._write_status(seat)
        return self._views[seat]

    def _finish_view(self, seat: int, out: np.ndarray) -> None:
        picks = self.picks
        if picks:
            out[self._fp0 + picks[0]] = 1.0
            if len(picks) == 2:
                out[self._sp0 + picks[1]] = 1.0
        # The cards the seat is holding right now (_held_cells) need no patching: the holder
        # was shown them after its last forgetting (the peek, then both in _second_pick), so
        # they are in its tracker row and its view (check_invariants asserts this).
        ph = self.phase
        if ph > NOMATCH:
            self._write_effect(out, seat)
        n = self.num_players
        if not (self.terminated or self.truncated):
            out[self._ph0 + ph] = 1.0
        out[self._actor0 + (self.current_player - seat) % n] = 1.0
        out[self._owner0 + (self.turn_owner - seat) % n] = 1.0
        out[self._rotation0 + (self.rotation - seat) % n] = 1.0

    def _rebuild_views(self) -> None:
        views = self._views
        views.fill(0.0)
        views[:, :NUM_CELLS] = self._present
        views[:, NUM_CELLS:2 * NUM_CELLS] = self._faceup
        views[:, self._r0:self._r0 + 27] = self._removed
        for s in range(self.num_players):
            self._write_cards(s)
            self._write_tokens(s)
            self._write_status(s)
            self._write_seen(views[s], s)
        self._views_ok = True

    def _write_cards(self, seat: int) -> None:
        """Encode ``seat``'s tracker row into its card block. Face-up cells are always in
        every seat's row (see step), so the row is the whole picture."""
        block = self._views[seat, self._cards_sl].reshape(NUM_CELLS, CARD_FEATURES)
        CARD_FEAT.take(self.tracker.known[seat], axis=0, out=block)
        self._cards_stale[seat] = False

    def _write_seen(self, out: np.ndarray, base: int) -> None:
        """The ``seen_by`` block, players from ``base`` on."""
        s0, n = self._seen0, self.num_players
        blocks = out[s0:s0 + n * NUM_CELLS].reshape(n, NUM_CELLS)
        blocks[:n - base] = self.seen[base:]
        blocks[n - base:] = self.seen[:base]

    def _write_tokens(self, seat: int) -> None:
        """Tokens (own seat first) and the bank, as fractions of the supply."""
        total = self.total_tokens
        tokens = self.tokens
        vals = [t / total for t in tokens[seat:]]
        vals += [t / total for t in tokens[:seat]]
        vals.append(self.bank / total)
        t0 = self._t0
        self._views[seat, t0:t0 + len(vals)] = vals

    def _write_status(self, seat: int) -> None:
        """The status block (active .. offer_pay) of ``seat``'s view."""
        n = self.num_players
        active = self.active
        flags = active[seat:] + active[:seat]
        shields = [0.0] * n
        tens = [0.0] * n
        skips = [0.0] * n
        extra = [0.0] * n
        kept = self.kept
        for s in range(n):
            if kept[s]:
                k = (s - seat) % n
                for role, _, _ in kept[s]:
                    if role == SHIELD:
                        shields[k] += 0.25
                    else:
                        tens[k] += 0.25
            if self.skips[s]:
                skips[(s - seat) % n] = min(self.skips[s], 4) / 4.0
        for s, _ in self.extra_turns:
            k = (s - seat) % n
            extra[k] = min(extra[k] + 0.25, 1.0)
        vals = flags + shields + tens + skips + extra  # bools among floats: 1.0 / 0.0
        vals.append(self.turn_offer)
        self._views[seat, self._t0 + n + 1:self._r0] = vals
        self._seat_ver[seat] = self._ver

    def reference_observation(self, seat: Any, out: np.ndarray) -> None:
        """The observation encoded from scratch (what write_observation's views must equal)."""
        if type(seat) is not int or not self._dealt:
            seat = self._int_arg(seat, "reference_observation")
        view = self.tracker.known[seat]
        held = self._held_cells(seat)
        if held:
            view = view.copy()
            for c in held:
                view[c] = self.grid[c]
        self._write(out, seat, view)

    def write_state(self, out: np.ndarray) -> None:
        if not self._dealt:
            self._not_dealt("write_state")
        self._write(out, 0, np.asarray(self.grid, dtype=np.int8))

    def _write(self, out: np.ndarray, base: int, view: np.ndarray) -> None:
        o = self._off
        n = self.num_players
        out.fill(0.0)
        out[:NUM_CELLS] = self._present  # present, then face_up: the layout's first fields
        out[NUM_CELLS:2 * NUM_CELLS] = self._faceup
        CARD_FEAT.take(view, axis=0, out=out[self._cards_sl].reshape(NUM_CELLS, CARD_FEATURES))
        picks = self.picks
        if picks:
            out[o["first_pick"] + picks[0]] = 1.0
            if len(picks) == 2:
                out[o["second_pick"] + picks[1]] = 1.0
        ph = self.phase
        if ph > NOMATCH:
            self._write_effect(out, base)
        if not self.done:
            out[o["phase"] + ph] = 1.0
        out[o["actor"] + (self.current_player - base) % n] = 1.0
        out[o["turn_owner"] + (self.turn_owner - base) % n] = 1.0
        out[o["rotation"] + (self.rotation - base) % n] = 1.0
        total = self.total_tokens
        t0 = o["tokens"]
        tokens = self.tokens
        out[t0:t0 + n] = [tokens[(base + k) % n] / total for k in range(n)]
        a0 = o["active"]
        active = self.active
        out[a0:a0 + n] = active[base:] + active[:base]
        for s in range(n):
            if self.kept[s]:
                for role, _, _ in self.kept[s]:
                    key = "shields" if role == SHIELD else "ten_pairs"
                    out[o[key] + (s - base) % n] += 0.25
            if self.skips[s]:
                out[o["skips"] + (s - base) % n] = min(self.skips[s], 4) / 4.0
        e0 = o["extra_turns"]
        for s, _ in self.extra_turns:
            i = e0 + (s - base) % n
            out[i] = min(out[i] + 0.25, 1.0)
        out[o["bank"]] = self.bank / total
        out[o["offer_pay"]] = self.turn_offer
        out[o["removed"]:o["removed"] + 27] = self._removed
        self._write_seen(out, base)

    def _write_effect(self, out: np.ndarray, base: int) -> None:
        o = self._off
        n = self.num_players
        ph = self.phase
        start = o["effect_cells"]
        for c in self.sel_cells:
            out[start + c] = 1.0
        if ph == FOUR_LOOK:
            start = o["effect_area"]
            for c in SQUARES[self.area]:
                out[start + c] = 1.0
        if self.effect_rank >= 0:
            out[o["effect_rank"] + self.effect_rank] = 1.0
        out[o["amount"]] = self.amount / 13.0
        if ph == THREE_REVEAL:
            out[o["counter"]] = self.counter / 4.0
        elif ph == JOKER_SWAP and self.max_swaps:
            out[o["counter"]] = self.counter / self.max_swaps
        if self.effect_owner >= 0:
            out[o["effect_owner"] + (self.effect_owner - base) % n] = 1.0
        for s in self.sel_players:
            out[o["chosen_players"] + (s - base) % n] = 1.0

    # -- determinization -----------------------------------------------------------------------
    def _resample_hidden(self, seat: int, rng: np.random.Generator) -> None:
        """Redeal the face-down cards ``seat`` neither remembers nor holds. Other seats keep
        remembering the positions they knew (now with whatever card lies there). An unmatched
        pair being put back stays unmatched: that much is public."""
        known = self.tracker.known
        held = self._held_cells(seat)
        cells = [c for c in range(NUM_CELLS) if self.grid[c] >= 0 and not self.face_up[c]
                 and known[seat, c] < 0 and c not in held]
        cards = [self.grid[c] for c in cells]
        pair = self.picks if self.phase == NOMATCH else []
        for _ in range(200):
            order = rng.permutation(len(cards))
            for c, i in zip(cells, order, strict=True):
                self.grid[c] = cards[i]
            if not pair or RANK_OF[self.grid[pair[0]]] != RANK_OF[self.grid[pair[1]]]:
                break
        else:  # pragma: no cover - astronomically unlikely; the original deal is consistent
            for c, card in zip(cells, cards, strict=True):
                self.grid[c] = card
        for c in cells:
            self.tracker.relabel(c, self.grid[c])
        self._mask_valid = False
        self._views_ok = False

    # -- checks ---------------------------------------------------------------------------------
    def check_invariants(self) -> None:
        super().check_invariants()
        assert sum(self.tokens) + self.bank == self.total_tokens, "tokens not conserved"
        # The turn's picks: none before the first, one before the second, two while an
        # unmatched pair is shown; an effect starts with none. Each on a card of the grid.
        picks = {PICK1: 0, PICK2: 1, NOMATCH: 2}.get(self.phase, 0)
        if not self.done:
            assert len(self.picks) == picks, (
                f"phase {PHASE_NAMES[self.phase]!r} with picks {self.picks}")
        assert all(self.grid[c] >= 0 for c in self.picks), f"picks {self.picks} of empty cells"
        assert self.bank >= 0 and min(self.tokens) >= 0
        for s in range(self.num_players):
            if not self.underdogs and not self.active[s]:
                assert self.tokens[s] == 0
            if not self.underdogs and self.active[s] and not self.terminated:
                assert self.tokens[s] > 0
        ranks = [0] * NUM_RANKS
        present, facedown = self._present.tolist(), self._facedown.tolist()
        public, faceup = self._public.tolist(), self._faceup.tolist()
        used = set(self.used_cells)
        for cell, card in enumerate(self.grid):
            up = self.face_up[cell]
            assert (card >= 0) == bool(present[cell])
            assert facedown[cell] == (card >= 0 and not up)
            assert public[cell] == (card if card >= 0 and up else -1)
            assert faceup[cell] == up
            if card >= 0:
                assert cell in used
                ranks[RANK_OF[card]] += 1
            else:
                assert not up
        assert ranks == self._rank_left
        known = self.tracker.known
        grid = np.asarray(self.grid, dtype=np.int8)
        wrong = (known >= 0) & (known != grid)
        assert not (known[:, self._faceup.astype(bool)] < 0).any(), "a face-up card is unseen"
        assert not wrong.any(), f"memory of {[cell_name(c) for c in np.flatnonzero(wrong.any(0))]}"
        seen, present = self.seen.astype(bool), self._present.astype(bool)
        assert not ((known >= 0) & ~seen).any(), "a remembered card was never seen"
        assert not seen[:, ~present].any(), "an empty cell was seen"
        assert seen[:, self._faceup.astype(bool)].all(), "a face-up card is unseen"
        if self.tracker.forget_p == 0.0:
            assert (seen == (known >= 0)).all(), "perfect memory differs from what was seen"
        for pairs in self.kept:
            for role, a, b in pairs:
                assert role in (SHIELD, TEN_PAIR) and RANK_OF[a] == RANK_OF[b]
        if not self.done:
            assert self.active[self.current_player]
            seat = self.current_player
            for c in self._held_cells(seat):
                assert known[seat, c] == self.grid[c], "a held card is not in its holder's memory"

    def clone(self) -> DeluxeMemoryEngine:
        """An independent copy (much cheaper than the base class's deep copy)."""
        new = copy.copy(self)
        new.rng = copy_generator(self.rng)
        tracker = copy.copy(self.tracker)
        tracker.known = self.tracker.known.copy()
        tracker.rng = copy_generator(self.tracker.rng)
        new.tracker = tracker
        for name in ("grid", "face_up", "discard", "tokens", "active", "skips", "picks",
                     "sel_cells", "sel_players", "winners", "_rank_left"):
            setattr(new, name, getattr(self, name)[:])
        new.kept = [[p[:] for p in pairs] for pairs in self.kept]
        new.extra_turns = [e[:] for e in self.extra_turns]
        for name in ("rewards", "_mask", "_present", "_facedown", "_public", "_faceup",
                     "_removed", "_views", "_pick_mask", "seen"):
            setattr(new, name, getattr(self, name).copy())
        new._cards_stale = self._cards_stale[:]
        new._seat_ver = self._seat_ver[:]
        new._bind_views()
        return new

    def result(self) -> dict[str, Any]:
        out = super().result()
        out.update(tokens=list(self.tokens), bank=self.bank,
                   cards_left=int(self._present.sum()),
                   kept=[[card_code(a) + card_code(b) for _, a, b in p] for p in self.kept])
        return out

    # -- rendering -------------------------------------------------------------------------------
    def render_text(self) -> str:
        if not self._dealt:
            self._not_dealt("render_text")
        lines = [f"Deluxe Memory: tokens {self.tokens}, bank {self.bank}; turn of "
                 f"player_{self.turn_owner}, player_{self.current_player} decides: "
                 f"{PHASE_NAMES[self.phase] if not self.done else 'game over'}"]
        lines.append("    " + " ".join(f" {c + 1}  " for c in range(COLS)))
        for r in range(ROWS):
            row = []
            for c in range(COLS):
                cell = r * COLS + c
                card = self.grid[cell]
                if card < 0:
                    row.append(" .. ")
                elif self.face_up[cell]:
                    row.append(f" {card_code(card)}^")
                else:
                    row.append(f"[{card_code(card)}]")
            lines.append(f" {ROW_NAMES[r]}  " + " ".join(row))
        for s in range(self.num_players):
            kept = " ".join(("shield " if role == SHIELD else "ten ") + card_code(a) + card_code(b)
                            for role, a, b in self.kept[s])
            status = "" if self.active[s] else " (out)"
            lines.append(f"  player_{s}: {self.tokens[s]} tokens{status} {kept}".rstrip())
        if self.done:
            lines.append(self.ending_text())
        return "\n".join(lines)

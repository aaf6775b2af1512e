"""Mega Mem-Ory Ultima-Ory rules engine (see RULES.md beside this file for every rule and choice).

Two players, one 52-card deck: four centre piles of five (top card face up), four face-down
cards on each player's side, a 24-card deck and a face-down discard pile. A turn reveals a first
card (deck or discard pile), then either scores it with the centre or reveals a second card
(own side or discard pile) that any score must now involve; with no score, one revealed card
goes back face down where the second came from and the other onto the discard pile.

Actions (43), legal only where the mask says so:

* ``0 reveal:deck``, ``1 reveal:discard``: the first card of the turn.
* ``2..16 score:<piles>``: score the last revealed card with the face-up cards of those centre
  piles (``score:1+3``): the first card before a second is revealed, the side card after.
* ``17..32 multiscore:<piles>``: score both revealed cards with those centre piles (side
  multiscore; ``multiscore:-`` uses no centre card, only with ``side_pair_without_centre``).
* ``33..36 flip:side1..4``, ``37 flip:discard``: reveal the second card.
* ``38 take``: score the revealed cards from the discard pile (top down, no side, no centre);
  ``39 dig``: reveal the next discard card to extend that score.
* ``40 keep:first``, ``41 keep:second``: no score; that card goes back face down where the
  second card came from, the other goes face down on top of the discard pile.
* ``42 discard:first``: discard the first card without revealing a second
  (option ``discard_without_second``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from mypy_extensions import mypyc_attr

from card_envs.core.buffers import float_items, int_items
from card_envs.core.cards import RANK_OF, SUIT_OF, card_code
from card_envs.core.config import Option, int_range
from card_envs.core.engine import CachedViewsEngine
from card_envs.core.knowledge import KnowledgeTracker
from card_envs.core.obs_layout import ObsLayout
from card_envs.games.mega_memory.grouping import (
    best_grouping,
    index_tops,
    is_group,
    is_pair,
    scoring_piles,
)

NUM_PILES = 4
PILE_DEPTH = 5
SIDE_SLOTS = 4
CENTRE_CARDS = NUM_PILES * PILE_DEPTH

# Phases: what the player to act is deciding.
START, FIRST, SIDE, DISCARD, DIG = range(5)
PHASE_NAMES = ("start", "first", "side", "discard", "dig")

REVEAL_DECK, REVEAL_DISCARD = 0, 1
SCORE_BASE = 2  # + pile mask - 1 (masks 1..15)
MULTI_BASE = 17  # + pile mask (0..15)
FLIP_SIDE_BASE = 33  # + slot
FLIP_DISCARD = 37
TAKE = 38
DIG_MORE = 39
KEEP_FIRST, KEEP_SECOND = 40, 41
DISCARD_FIRST = 42
NUM_ACTIONS = 43

FROM_DECK, FROM_DISCARD = 0, 1
#: ``second_src`` value for a second card from the discard pile (0..3 are side slots).
SECOND_FROM_DISCARD = 4

# Knowledge-tracker slots: every place a face-down card can be remembered by position.
SIDE_SLOT_BASE = 0  # + seat * 4 + slot
DISCARD_SLOT_BASE = 8  # + position from the bottom of the discard pile
DECK_SLOT_BASE = 60  # + position from the bottom of the deck
NUM_SLOTS = 112

#: Upper bound of one player's round points (all 52 cards in four 13-card runs).
MAX_ROUND_POINTS = 128
POINTS_SCALE = 32.0
#: ``_depth_stale`` with both seats' depth blocks out of date.
BOTH_SEATS = 0b11


def _pile_label(mask: int) -> str:
    return "+".join(str(p + 1) for p in range(NUM_PILES) if mask >> p & 1) or "-"


@mypyc_attr(allow_interpreted_subclasses=True)  # a rule variant may subclass it
class MegaMemoryEngine(CachedViewsEngine):
    name = "mega_memory"
    CLONE_SHARED = ("_flag_off", "_at")  # fixed tables: clones share them
    BOUND_VIEWS = ("_view_rows", "_depth_rows", "_disc_depth", "_deck_depth",
                   "_disc_remembered", "_deck_remembered", "_mask_items", "_base_items",
                   "_row_items", "_known_items", "_depth_items", "_remembered_items")
    OPTIONS: ClassVar[dict[str, Option]] = {
        "num_players": Option(2, "Players (the game is for two).", choices=(2,)),
        "episode": Option("round", "'round': one round per episode; 'game': play to the target.",
                          choices=("round", "game")),
        "target_score": Option(20, "Mega-points that win the game (episode='game').",
                               check=int_range(1), needs=("episode", "game")),
        "first_dealer": Option("random", "Dealer of the first round: 0, 1 or 'random'.",
                               choices=("random", 0, 1)),
        "side_pair_without_centre": Option(
            False, "Let the two revealed cards (second from the side) score as a pair or run "
                   "with no centre card.", choices=(False, True)),
        "stall_turns": Option(
            48, "Not in the text: the round also ends after this many turns in a row without a "
                "score (the deck can cycle forever once nothing scores).", check=int_range(1)),
        "round_end": Option(
            "ran_out_this_turn",
            "When the deck and discard pile both depleted end the round: 'ran_out_this_turn' "
            "(the text: at the end of any turn in which both were empty at some moment) or "
            "'empty_at_turn_end' (the old reading: only if both are still empty when the turn "
            "ends, so a last card can cycle between deck and player).",
            choices=("ran_out_this_turn", "empty_at_turn_end")),
        "discard_without_second": Option(
            False, "Let a player discard the first card without revealing a second one.",
            choices=(False, True)),
    }
    #: What each STATE_FIELDS entry of a snapshot holds (docs/observations.md; tested).
    STATE_DOCS: ClassVar[dict[str, str]] = {
        "centre": "four piles of card ids, bottom first: the face-up top is the END of a list",
        "sides": "per seat, its 4 side slots: card id, -1 for the slot whose card is revealed",
        "deck": "card ids; the top is the END of the list",
        "discard": "card ids; the top is the END of the list",
        "scored": "per seat, its scored cards in the order taken",
        "scored_mask": "per seat, the scored cards as a bit mask (bit c for card id c)",
        "round_points": "per seat, the best regrouping of its scored cards",
        "mega_points": "per seat, its mega-points this game",
        "dealer": "the round's dealer (the other seat starts)",
        "phase": "the decision: 0 start, 1 first, 2 side, 3 discard, 4 dig",
        "first_card": "this turn's first revealed card, -1 none",
        "first_src": "where it came from: 0 deck, 1 discard pile",
        "second_card": "the second revealed card, -1 none",
        "second_src": "where it came from: side slot 0..3, 4 the discard pile, -1 none",
        "dug": "cards dug into a pending discard-pile score, in order",
        "round_number": "rounds dealt this episode (1 in the first)",
        "last_round_points": "per seat, the round points of the last finished round",
        "scoreless_turns": "turns in a row without a score",
        "piles_ran_out": "the deck and discard pile were both depleted during this turn",
        "tracker": "memory slots: 0..7 side slots (seat * 4 + slot), 8 + i discard position i "
                   "from the bottom, 60 + i deck position i from the bottom",
    }
    STATE_FIELDS = (
        "centre", "sides", "deck", "discard", "scored", "scored_mask", "round_points",
        "mega_points", "dealer", "phase", "first_card", "first_src", "second_card",
        "second_src", "dug", "round_number", "last_round_points", "scoreless_turns",
        "piles_ran_out", "tracker",
    )
    TEST_VARIANTS = (
        {"memory": "none"},
        {"memory": 0.3, "first_dealer": 0},
        {"episode": "game", "target_score": 8},
        {"reward": "score", "side_pair_without_centre": True, "discard_without_second": True},
    )

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        self.num_actions = NUM_ACTIONS
        names = ["reveal:deck", "reveal:discard"]
        names += [f"score:{_pile_label(m)}" for m in range(1, 16)]
        names += [f"multiscore:{_pile_label(m)}" for m in range(16)]
        names += [f"flip:side{k + 1}" for k in range(SIDE_SLOTS)]
        names += ["flip:discard", "take", "dig", "keep:first", "keep:second", "discard:first"]
        self.action_names = names
        self.target = self.config["target_score"]
        self.side_pair_ok = self.config["side_pair_without_centre"]
        self.plain_discard_ok = self.config["discard_without_second"]
        mega_high = float(1 + MAX_ROUND_POINTS / self.target)
        points_high = MAX_ROUND_POINTS / POINTS_SCALE

        self.tracker = KnowledgeTracker(2, NUM_SLOTS, self.memory)
        layout = ObsLayout()
        # Card-indexed blocks of 52: a 1 at card c says where this seat sees / remembers c.
        # Public table first (cached between scores), then memory, then this turn's cards.
        self.s_centre = layout.add("centre", (NUM_PILES, 52), "the face-up card of each pile")
        self.s_my_scored = layout.add("my_scored", 52, "cards this seat scored")
        self.s_opp_scored = layout.add("opp_scored", 52, "cards the opponent scored")
        self.s_my_side = layout.add("my_side", (SIDE_SLOTS, 52),
                                   "the card this seat remembers in each own side slot")
        self.s_opp_side = layout.add("opp_side", (SIDE_SLOTS, 52),
                                    "the card it remembers in each opponent side slot")
        self.s_disc_known = layout.add("discard_known", 52, "discard cards this seat remembers")
        self.s_deck_known = layout.add("deck_known", 52,
                                       "deck cards it remembers (after a slide)")
        self.s_disc_depth = layout.add("discard_depth", 52,
                                       "those discard cards' depth from the top / 51")
        self.s_deck_depth = layout.add("deck_depth", 52,
                                       "those deck cards' depth from the top / 51")
        self.s_first = layout.add("first_card", 52, "this turn's first revealed card")
        self.s_second = layout.add("second_card", 52, "this turn's second revealed card")
        self.s_dug = layout.add("dug", 52, "cards dug into a pending discard-pile score")
        self.s_phase = layout.add("phase", 5, "the decision: start, first, side, discard, dig")
        self.s_first_src = layout.add("first_source", 2, "the first card came from: deck, discard")
        self.s_second_src = layout.add("second_source", 5,
                                       "the second card came from: side slot 1-4, discard")
        self.s_piles = layout.add("pile_sizes", NUM_PILES, "cards in each centre pile / 5")
        self.s_deck = layout.add("deck_size", 1, "cards in the deck / 52")
        self.s_disc = layout.add("discard_size", 1, "cards in the discard pile / 52")
        self.s_points = layout.add("round_points", 2,
                                   "round points (best regrouping) / 32, own first",
                                   high=points_high)
        self.s_mega = layout.add("mega_points", 2, "mega-points / target, own first",
                                 high=mega_high)
        self.s_dealer = layout.add("is_dealer", 1, "this seat dealt the round")
        self.s_stall = layout.add("scoreless_turns", 1,
                                  "turns in a row without a score / stall_turns")
        self.layout = layout
        self._at = {name: sl.start for name, sl in layout.slices.items()}
        self._know_start = self.s_my_side.start
        self._know_stop = self.s_deck_depth.stop
        # Per seat and tracker slot (plain lists: hot path): where a remembered card's flag
        # goes in that seat's view.
        flag_off = [[0] * NUM_SLOTS for _ in range(2)]
        for seat in range(2):
            for owner in range(2):
                start = (self.s_my_side if owner == seat else self.s_opp_side).start
                for k in range(SIDE_SLOTS):
                    flag_off[seat][SIDE_SLOT_BASE + owner * SIDE_SLOTS + k] = start + k * 52
            flag_off[seat][DISCARD_SLOT_BASE:DECK_SLOT_BASE] = (
                [self.s_disc_known.start] * (DECK_SLOT_BASE - DISCARD_SLOT_BASE))
            flag_off[seat][DECK_SLOT_BASE:] = (
                [self.s_deck_known.start] * (NUM_SLOTS - DECK_SLOT_BASE))
        self._flag_off = flag_off
        # Perfect memory: both seats remember the same pile positions; ``_depth`` holds each
        # remembered card's depth from the top (discard cards at [0, 52), deck cards at
        # [52, 104)) as exact integers, shifted by one array operation when a pile grows or
        # shrinks. ``_mem_count`` counts remembered cards per pile (discard, deck).
        self._depth = np.zeros(104, dtype=np.float32)
        self._remembered = np.zeros(104, dtype=np.float32)  # 1 where ``_depth`` is meaningful
        self._mem_count = [0, 0]
        self._centre_indexed = False
        self._relevant = [False] * 52
        self._rank_piles: list[int] = []
        self._pile_of: dict[int, int] = {}
        # Each seat's observation minus the per-decision fields and pile depths, kept up to date
        # event by event (rebuilt from scratch when ``_views_ok`` is False).
        self._views = np.zeros((2, layout.size), dtype=np.float32)
        self._views_ok = False
        # Perfect memory: the views also hold the pile depths (``_depth`` / 51), refreshed in
        # a seat's row at its next observation after ``_depth`` changed (bit ``seat`` set).
        self._depth_stale = BOTH_SEATS
        self._f51 = np.array(51.0, dtype=np.float32)  # a float32 divisor: no scalar conversion
        #: Other memory modes: per seat, tracker slot -> the card that seat remembers there
        #: (a plain-dict mirror of ``tracker.known``; forgetting is applied by
        #: ``_after_forgetting``).
        self._held: list[dict[int, int]] = [{}, {}]
        self._o_first = self.s_first.start
        self._o_second = self.s_second.start
        self._o_dug = self.s_dug.start
        self._o_phase = self.s_phase.start
        self._o_first_src = self.s_first_src.start
        self._o_second_src = self.s_second_src.start
        self._o_deck = self.s_deck.start
        self._o_disc = self.s_disc.start
        self._o_stall = self.s_stall.start
        self._o_disc_depth = self.s_disc_depth.start
        self._o_deck_depth = self.s_deck_depth.start
        #: Pile slot -> card, for the pile positions both seats remember (perfect memory).
        self._pile_memory: dict[int, int] = {}
        self._perfect_memory = self.tracker.forget_p == 0.0

        state = ObsLayout()
        self.t_centre = state.add("centre", (NUM_PILES, 52), "every card in each centre pile")
        self.t_centre_depth = state.add("centre_depth", 52, "centre cards' depth from the top / 4")
        self.t_sides = state.add("sides", (2, SIDE_SLOTS, 52), "each seat's side slots")
        self.t_scored = state.add("scored", (2, 52), "each seat's scored cards")
        self.t_first = state.add("first_card", 52, "this turn's first revealed card")
        self.t_second = state.add("second_card", 52, "this turn's second revealed card")
        self.t_dug = state.add("dug", 52, "cards dug into a pending discard-pile score")
        self.t_disc = state.add("discard", 52, "cards in the discard pile")
        self.t_disc_depth = state.add("discard_depth", 52, "their depth from the top / 51")
        self.t_deck = state.add("deck", 52, "cards in the deck")
        self.t_deck_depth = state.add("deck_depth", 52, "their depth from the top / 51")
        self.t_phase = state.add("phase", 5, "the decision: start, first, side, discard, dig")
        self.t_first_src = state.add("first_source", 2, "the first card came from: deck, discard")
        self.t_second_src = state.add("second_source", 5, "side slot 1-4, discard")
        self.t_points = state.add("round_points", 2, "round points / 32, seat order",
                                  high=points_high)
        self.t_mega = state.add("mega_points", 2, "mega-points / target, seat order",
                                high=mega_high)
        self.t_player = state.add("current_player", 2, "the seat to act")
        self.t_dealer = state.add("dealer", 2, "the round's dealer")
        self.state_layout = state

        self.centre: list[list[int]] = [[] for _ in range(NUM_PILES)]  # bottom .. top
        self.sides: list[list[int]] = [[-1] * SIDE_SLOTS for _ in range(2)]
        self.deck: list[int] = []  # top of the deck is the END of the list
        self.discard: list[int] = []  # top of the pile is the END of the list
        self.scored: list[list[int]] = [[], []]
        self.scored_mask = [0, 0]
        self.round_points = [0, 0]
        self.mega_points = [0, 0]
        self.last_round_points = [0, 0]
        self.dealer = 0
        self.phase = START
        self.first_card = -1
        self.first_src = FROM_DECK
        self.second_card = -1
        self.second_src = -1
        self.dug: list[int] = []
        self.round_number = 0
        self.scoreless_turns = 0
        self.stall_turns = self.config["stall_turns"]
        #: The deck and discard pile were both empty at some moment of this turn.
        self.piles_ran_out = False
        self._end_when_ran_out = self.config["round_end"] == "ran_out_this_turn"
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        base = np.zeros((5, NUM_ACTIONS), dtype=np.int8)
        base[START, [REVEAL_DECK, REVEAL_DISCARD]] = 1  # START is only a decision with a pile
        base[FIRST, FLIP_SIDE_BASE:FLIP_SIDE_BASE + SIDE_SLOTS] = 1  # slots are full at FIRST
        base[FIRST, DISCARD_FIRST] = 1 if self.plain_discard_ok else 0
        base[SIDE, [KEEP_FIRST, KEEP_SECOND]] = 1
        base[DISCARD, [KEEP_FIRST, KEEP_SECOND]] = 1
        self._base_masks = base
        self._bind_views()
        self._mask_valid = False

    def _bind_views(self) -> None:
        views = self._views
        self._view_rows = (views[0], views[1])
        start = self.s_disc_depth.start
        # discard_depth, then deck_depth, in each seat's row
        self._depth_rows = (views[0, start:start + 104], views[1, start:start + 104])
        self._disc_depth, self._deck_depth = self._depth[:52], self._depth[52:]
        self._disc_remembered, self._deck_remembered = (self._remembered[:52],
                                                        self._remembered[52:])
        # Scalar reads and writes through memoryviews: a third of numpy's cost per item.
        self._row_items = (float_items(views[0]), float_items(views[1]))
        self._known_items = int_items(self.tracker.known).cast("B").cast("b")  # flat
        self._depth_items = float_items(self._depth)
        self._remembered_items = float_items(self._remembered)
        self._mask_items = int_items(self._mask)
        self._base_items = [int_items(row) for row in self._base_masks]

    def deck_cards(self) -> list[int]:
        return list(range(52))

    def all_cards(self) -> list[int]:
        cards = [c for pile in self.centre for c in pile]
        cards += [c for side in self.sides for c in side if c >= 0]
        cards += self.deck + self.discard + self.scored[0] + self.scored[1] + self.dug
        cards += [c for c in (self.first_card, self.second_card) if c >= 0]
        return cards

    # -- dealing -------------------------------------------------------------------------------
    def later_deals(self) -> bool:
        return self.config["episode"] == "game"

    @property
    def deal_number(self) -> int:
        return self.round_number

    def _deal(self, deck: list[int] | None) -> None:
        fd = self.config["first_dealer"]
        self.dealer = self.random_below(2) if fd == "random" else fd
        self.mega_points = [0, 0]
        self.last_round_points = [0, 0]
        self.round_number = 0
        self._start_round(deck)

    def _start_round(self, stacked: list[int] | None) -> None:
        """Deal order (top card first): cards 1-20 build the centre in a cascade (card i goes
        on pile i mod 4, so cards 17-20 are the face-up tops), cards 21-24 the non-dealer's side
        slots 1-4, cards 25-28 the dealer's, and cards 29-52 are the deck (29 on top)."""
        order = self.rng.permutation(52).tolist() if stacked is None else list(stacked)
        self.centre = [order[p:CENTRE_CARDS:NUM_PILES] for p in range(NUM_PILES)]
        non_dealer = 1 - self.dealer
        self.sides = [[-1] * SIDE_SLOTS for _ in range(2)]
        self.sides[non_dealer] = order[20:24]
        self.sides[self.dealer] = order[24:28]
        self.deck = order[28:][::-1]
        self.discard = []
        self.scored = [[], []]
        self.scored_mask = [0, 0]
        self.round_points = [0, 0]
        self.dug = []
        self.scoreless_turns = 0
        self._views_ok = False
        self._centre_indexed = False
        self.tracker.known.fill(-1)
        self._sync_pile_memory()
        self.round_number += 1
        self._begin_turn(non_dealer)

    # -- turn structure ------------------------------------------------------------------------
    def _begin_turn(self, seat: int) -> None:
        self.current_player = seat
        self.phase = START
        self.first_card = -1
        self.second_card = -1
        self.second_src = -1
        self.dug = []
        self.piles_ran_out = False
        self._mask_valid = False
        if not self.discard:
            self._reveal_first(FROM_DECK)  # the only place to start from: no decision

    def _end_turn(self, scored: bool) -> None:
        self.scoreless_turns = 0 if scored else self.scoreless_turns + 1
        self.first_card = -1
        self.second_card = -1
        self.second_src = -1
        self.dug = []
        self._settle()
        # "The round is over when ... the DECK and DISCARD PILE are both depleted": a turn in
        # which they were is the round's last, though its discard has slid over since.
        if (not self.deck or (self.piles_ran_out and self._end_when_ran_out)
                or self.scoreless_turns >= self.stall_turns
                or (scored and not all(self.centre))):  # only a score empties a centre pile
            self._end_round()
        else:
            self._begin_turn(1 - self.current_player)

    def _settle(self) -> None:
        """"If the DECK runs out ... the DISCARD PILE slides over and becomes THE DECK, without
        changing its order": at once, so the deck is only ever empty when both are. Pile
        position ``i`` keeps its depth, so every memory of it moves across unchanged."""
        if self.deck or not self.discard:
            return
        n = len(self.discard)
        shift = DECK_SLOT_BASE - DISCARD_SLOT_BASE
        known = self.tracker.known
        discard_slots = slice(DISCARD_SLOT_BASE, DISCARD_SLOT_BASE + n)
        known[:, DECK_SLOT_BASE:DECK_SLOT_BASE + n] = known[:, discard_slots]
        known[:, discard_slots] = -1
        disc, deck = self.s_disc_known, self.s_deck_known
        for row in self._view_rows:  # the deck's blocks are empty while the deck is
            row[deck] = row[disc]
            row[disc] = 0.0
        if self._perfect_memory:
            self._pile_memory = {slot + shift: card for slot, card in self._pile_memory.items()}
            for half in (self._depth, self._remembered):
                half[52:] = half[:52]
                half[:52] = 0.0
            self._mem_count = [0, self._mem_count[0]]
            self._depth_stale = BOTH_SEATS
        else:
            self._held = [{slot + shift if slot >= DISCARD_SLOT_BASE else slot: card
                           for slot, card in held.items()} for held in self._held]
        self.deck = self.discard
        self.discard = []

    def _pop_deck(self, to_slot: int = -1) -> int:
        """Take the deck's top card: turned face up (``to_slot`` -1), or moved unseen to a
        side slot (whoever remembered it there still does). Then settle the deck."""
        slot = DECK_SLOT_BASE + len(self.deck) - 1
        if to_slot < 0:
            self._forget_slot(slot)
        else:
            self._move_slot(slot, to_slot)
        card = self.deck.pop()
        if self._perfect_memory and self._mem_count[1]:
            self._deck_depth -= self._deck_remembered
            self._depth_stale = BOTH_SEATS
        self._settle()
        if not self.deck:  # the deck is empty only when the discard pile is too
            self.piles_ran_out = True
        return card

    def _pop_discard(self) -> int:
        self._forget_slot(DISCARD_SLOT_BASE + len(self.discard) - 1)  # face up now: not memory
        card = self.discard.pop()
        if self._perfect_memory and self._mem_count[0]:
            self._disc_depth -= self._disc_remembered
            self._depth_stale = BOTH_SEATS
        return card

    def _push_discard(self, card: int) -> None:
        """Face down on the discard pile; both players watched it go there."""
        if self._perfect_memory and self._mem_count[0]:
            self._disc_depth += self._disc_remembered
            self._depth_stale = BOTH_SEATS
        self._show_slot(DISCARD_SLOT_BASE + len(self.discard), card)  # at depth 0
        self.discard.append(card)

    def _put_side(self, seat: int, slot: int, card: int) -> None:
        self.sides[seat][slot] = card
        self._show_slot(SIDE_SLOT_BASE + seat * SIDE_SLOTS + slot, card)

    # -- memory events: the tracker, and each seat's view kept in step with it ----------------
    def _show_slot(self, slot: int, card: int) -> None:
        """Both seats saw ``card`` go face down at ``slot``."""
        self._forget_slot(slot)
        known = self._known_items
        known[slot] = known[NUM_SLOTS + slot] = card  # tracker.show_all
        rows = self._row_items
        rows[0][self._flag_off[0][slot] + card] = 1.0
        rows[1][self._flag_off[1][slot] + card] = 1.0
        if not self._perfect_memory:
            self._held[0][slot] = card
            self._held[1][slot] = card
        elif slot >= DISCARD_SLOT_BASE:
            self._depth_stale = BOTH_SEATS
            in_deck = slot >= DECK_SLOT_BASE
            top = DECK_SLOT_BASE + len(self.deck) - 1 if in_deck else (
                DISCARD_SLOT_BASE + len(self.discard))  # a discard push lands on the new top
            self._pile_memory[slot] = card
            self._mem_count[in_deck] += 1
            self._remembered_items[52 * in_deck + card] = 1.0
            self._depth_items[52 * in_deck + card] = top - slot

    def _forget_slot(self, slot: int) -> None:
        """The card at ``slot`` left it (or was replaced unseen): nobody remembers it there."""
        if self._perfect_memory:  # both seats remember the same
            if slot >= DISCARD_SLOT_BASE:
                card = self._drop_pile_memory(slot)
                if card < 0:
                    return  # nobody remembers this pile position: nothing to forget
            else:
                card = self._known_items[slot]
                if card < 0:
                    return
            known = self._known_items
            known[slot] = known[NUM_SLOTS + slot] = -1
            rows = self._row_items
            rows[0][self._flag_off[0][slot] + card] = 0.0
            rows[1][self._flag_off[1][slot] + card] = 0.0
            return
        # Other memory modes: the pile bookkeeping above is perfect memory's alone.
        for seat in (0, 1):
            card = self._held[seat].pop(slot, -1)
            if card >= 0:
                self._row_items[seat][self._flag_off[seat][slot] + card] = 0.0
        self.tracker.conceal(slot)

    def _drop_pile_memory(self, slot: int) -> int:
        """Perfect memory: the card both seats remembered at pile ``slot`` is no longer there;
        its depth bookkeeping goes with it. Returns the card (-1: nobody remembered one)."""
        card = self._pile_memory.pop(slot, -1)
        if card >= 0:
            in_deck = slot >= DECK_SLOT_BASE
            self._depth_items[52 * in_deck + card] = 0.0
            self._remembered_items[52 * in_deck + card] = 0.0
            self._mem_count[in_deck] -= 1
            self._depth_stale = BOTH_SEATS
        return card

    def _move_slot(self, src: int, dst: int) -> None:
        """A face-down card moved unseen: whoever remembered it at ``src`` knows it at ``dst``."""
        # Only deck -> side moves happen (refills), so pile memory only ever loses the card.
        assert src >= DECK_SLOT_BASE and dst < DISCARD_SLOT_BASE
        self._forget_slot(dst)
        rows = self._row_items
        if self._perfect_memory:  # both seats remember the same
            card = self._drop_pile_memory(src)
            if card >= 0:
                for seat in (0, 1):
                    flag_off = self._flag_off[seat]
                    rows[seat][flag_off[src] + card] = 0.0
                    rows[seat][flag_off[dst] + card] = 1.0
        else:
            for seat in (0, 1):
                held = self._held[seat]
                card = held.pop(src, -1)
                if card >= 0:
                    held[dst] = card
                    flag_off = self._flag_off[seat]
                    rows[seat][flag_off[src] + card] = 0.0
                    rows[seat][flag_off[dst] + card] = 1.0
        self.tracker.move(src, dst)

    def _after_forgetting(self, seat: int) -> None:
        """The tracker just forgot some of ``seat``'s memories: drop them from its view."""
        held = self._held[seat]
        if not held:
            return
        row = self._view_rows[seat]
        flag_off = self._flag_off[seat]
        if self.tracker.forget_p >= 1.0:  # everything is forgotten
            for slot, card in held.items():
                row[flag_off[slot] + card] = 0.0
            held.clear()
            return
        known = self.tracker.known[seat].tolist()
        for slot in [slot for slot in held if known[slot] < 0]:
            row[flag_off[slot] + held.pop(slot)] = 0.0

    def _reveal_first(self, source: int) -> None:
        card = self._pop_deck() if source == FROM_DECK else self._pop_discard()
        self.first_card = card
        self.first_src = source
        self.phase = FIRST
        self._mask_valid = False

    def _index_centre(self) -> None:
        """Index the face-up centre cards for :func:`scoring_piles`, and mark which cards could
        possibly group with them (same rank, or same suit and one rank away). Valid until a
        centre pile changes."""
        tops = tuple([pile[-1] if pile else -1 for pile in self.centre])
        self._rank_piles, self._pile_of = index_tops(tops)
        relevant = [False] * 52
        for t in tops:
            if t >= 0:
                rank = RANK_OF[t]
                for c in range(rank, 52, 13):
                    relevant[c] = True
                if rank > 0:
                    relevant[t - 1] = True
                if rank < 12:
                    relevant[t + 1] = True
        self._relevant = relevant
        self._centre_indexed = True

    def _score(self, cards: list[int], piles: int) -> None:
        """Put a scored group in front of the current player; each centre pile taken from turns
        its next card face up (by popping the taken top)."""
        seat = self.current_player
        views = self._views
        self._centre_indexed = False
        for p in range(NUM_PILES):
            if piles >> p & 1:
                pile = self.centre[p]
                base = self.s_centre.start + p * 52
                views[:, base + pile[-1]] = 0.0
                cards.append(pile.pop())
                if pile:
                    views[:, base + pile[-1]] = 1.0
                views[:, self.s_piles.start + p] = len(pile) / PILE_DEPTH
        mask = self.scored_mask[seat]
        mine, theirs = self.s_my_scored.start, self.s_opp_scored.start
        for c in cards:
            mask |= 1 << c
            views[seat, mine + c] = 1.0
            views[1 - seat, theirs + c] = 1.0
        self.scored[seat].extend(cards)
        self.scored_mask[seat] = mask
        self.round_points[seat] = value = best_grouping(mask)
        points = value / POINTS_SCALE
        views[seat, self.s_points.start] = points
        views[1 - seat, self.s_points.start + 1] = points

    def _apply(self, action: int) -> None:
        seat = self.current_player
        phase = self.phase
        self._mask_valid = False
        if phase == START:
            self._reveal_first(FROM_DECK if action == REVEAL_DECK else FROM_DISCARD)
        elif action < MULTI_BASE:  # score: the last revealed card with centre piles
            piles = action - SCORE_BASE + 1
            if phase == FIRST:
                self._score([self.first_card], piles)
            else:  # SIDE: the first card takes the scored side card's slot
                self._score([self.second_card], piles)
                self._put_side(seat, self.second_src, self.first_card)
            self._end_turn(scored=True)
        elif action < FLIP_SIDE_BASE:  # side multiscore
            self._score([self.first_card, self.second_card], action - MULTI_BASE)
            slot = self.second_src
            if self.deck:  # refill face down, unseen (a remembered deck position stays known)
                self.sides[seat][slot] = self._pop_deck(SIDE_SLOT_BASE + seat * SIDE_SLOTS + slot)
            self._end_turn(scored=True)
        elif action < FLIP_DISCARD:
            slot = action - FLIP_SIDE_BASE
            self.second_card = self.sides[seat][slot]
            self.sides[seat][slot] = -1
            self._forget_slot(SIDE_SLOT_BASE + seat * SIDE_SLOTS + slot)
            self.second_src = slot
            self.phase = SIDE
        elif action == FLIP_DISCARD:
            self.second_card = self._pop_discard()
            self.second_src = SECOND_FROM_DISCARD
            self.phase = DISCARD
        elif action == TAKE:
            self._score([self.first_card, self.second_card] + self.dug, 0)
            self._end_turn(scored=True)
        elif action == DIG_MORE:
            self._dig()
        elif action == DISCARD_FIRST:
            self._push_discard(self.first_card)
            self._end_turn(scored=False)
        else:  # keep:first / keep:second
            keep, other = self.first_card, self.second_card
            if action == KEEP_SECOND:
                keep, other = other, keep
            if self.second_src == SECOND_FROM_DISCARD:
                self._push_discard(keep)
            else:
                self._put_side(seat, self.second_src, keep)
            self._push_discard(other)
            self._end_turn(scored=False)

    def _dig(self) -> None:
        """Reveal the next discard card: it joins the pending score if the group stays one match
        or run; otherwise it goes back face down on top and the score is made without it."""
        card = self._pop_discard()
        group = [self.first_card, self.second_card, *self.dug, card]
        if is_group(group):
            self.dug.append(card)
            self.phase = DIG
            if self.discard:
                return
        else:
            self._push_discard(card)
        self._score([self.first_card, self.second_card] + self.dug, 0)
        self._end_turn(scored=True)

    # -- round and game end --------------------------------------------------------------------
    def _end_round(self) -> None:
        p0, p1 = self.round_points
        self.last_round_points = [p0, p1]
        winner = 0 if p0 > p1 else 1 if p1 > p0 else -1
        diff = abs(p0 - p1)
        self._views_ok = False
        if winner >= 0:
            self.mega_points[winner] += diff
            if self.reward_mode == "score":
                self.rewards[winner] += diff
                self.rewards[1 - winner] -= diff
        if self.config["episode"] == "round":
            self.finish([winner] if winner >= 0 else [])
        elif winner >= 0 and self.mega_points[winner] >= self.target:
            self.finish([winner])
        else:
            self.dealer = 1 - self.dealer
            self._start_round(self.next_stacked_deck())

    def result(self) -> dict[str, Any]:
        out = super().result()
        out.update(round_points=list(self.last_round_points), mega_points=list(self.mega_points),
                   rounds=self.round_number)
        return out

    # -- legality ------------------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        if self._mask_valid:
            return self._mask
        if not self._dealt:
            self._not_dealt("legal_mask")
        # Written through memoryviews: a third of numpy's cost per item on a 43-byte mask.
        mask = self._mask_items
        phase = self.phase
        # Each phase starts from its fixed part (one copy), then adds what depends on cards.
        mask[:] = self._base_items[phase]
        if phase == FIRST:
            if not self._centre_indexed:
                self._index_centre()
            if self._relevant[self.first_card]:
                for piles in scoring_piles((self.first_card,), self._rank_piles, self._pile_of):
                    mask[SCORE_BASE + piles - 1] = 1
            if self.discard:
                mask[FLIP_DISCARD] = 1
        elif phase == SIDE:
            if not self._centre_indexed:
                self._index_centre()
            first, second = self.first_card, self.second_card
            relevant = self._relevant
            if relevant[second]:
                for piles in scoring_piles((second,), self._rank_piles, self._pile_of):
                    mask[SCORE_BASE + piles - 1] = 1
            # A group of both cards with centre cards has a centre card next to one of them.
            if relevant[first] or relevant[second]:
                for piles in scoring_piles((first, second), self._rank_piles, self._pile_of):
                    if piles:
                        mask[MULTI_BASE + piles] = 1
            if self.side_pair_ok and is_pair(first, second):
                mask[MULTI_BASE] = 1
        elif phase == DISCARD:
            if is_pair(self.first_card, self.second_card):
                mask[TAKE] = 1
                if self.discard:
                    mask[DIG_MORE] = 1
        elif phase == DIG:  # committed to a discard-pile score
            mask[TAKE] = 1
            if self.discard:
                mask[DIG_MORE] = 1
        self._mask_valid = True
        return self._mask

    # -- observations --------------------------------------------------------------------------
    def _view(self, seat: int) -> np.ndarray:
        if not self._views_ok:
            self._rebuild_views()
        if self._perfect_memory and self._depth_stale >> seat & 1:
            # Only the seat asked for: the other's row waits until it is observed (a 2-D
            # broadcast costs three times one row's divide).
            np.divide(self._depth, self._f51, out=self._depth_rows[seat])
            self._depth_stale ^= 1 << seat
        return self._view_rows[seat]  # (other memory modes: remembered-card flags only)

    def _finish_view(self, seat: int, out: np.ndarray) -> None:
        n_disc, n_deck = len(self.discard), len(self.deck)
        if not self._perfect_memory:  # depths of the cards this seat still remembers
            held = self._held[seat]
            if held:
                top_disc = DISCARD_SLOT_BASE + n_disc - 1
                top_deck = DECK_SLOT_BASE + n_deck - 1
                disc_at, deck_at = self._o_disc_depth, self._o_deck_depth
                for slot, card in held.items():
                    if slot >= DECK_SLOT_BASE:
                        out[deck_at + card] = (top_deck - slot) / 51.0
                    elif slot >= DISCARD_SLOT_BASE:
                        out[disc_at + card] = (top_disc - slot) / 51.0
        first = self.first_card
        if first >= 0:
            out[self._o_first + first] = 1.0
            out[self._o_first_src + self.first_src] = 1.0
            second = self.second_card
            if second >= 0:
                out[self._o_second + second] = 1.0
                out[self._o_second_src + self.second_src] = 1.0
                if self.dug:
                    base = self._o_dug
                    for c in self.dug:
                        out[base + c] = 1.0
        out[self._o_phase + self.phase] = 1.0
        out[self._o_deck] = n_deck / 52.0
        out[self._o_disc] = n_disc / 52.0
        if self.scoreless_turns:
            out[self._o_stall] = self.scoreless_turns / self.stall_turns

    def _rebuild_views(self) -> None:
        for s in (0, 1):
            self._view_from_scratch(s, self._views[s])
        self._views_ok = True
        self._depth_stale = BOTH_SEATS  # the depth blocks were cleared
        self._sync_held()

    def _sync_held(self) -> None:
        """Rebuild the per-seat memory mirror from the tracker (other memory modes)."""
        if not self._perfect_memory:
            known = self.tracker.known
            for seat in (0, 1):
                row = known[seat].tolist()
                self._held[seat] = {slot: card for slot, card in enumerate(row) if card >= 0}

    def _sync_pile_memory(self) -> None:
        """Rebuild the pile-position memory from the tracker (after a load, redraw or slide)."""
        row = self.tracker.known[0].tolist()
        self._pile_memory = {slot: row[slot] for slot in range(DISCARD_SLOT_BASE, NUM_SLOTS)
                             if row[slot] >= 0}
        self._depth.fill(0.0)
        self._remembered.fill(0.0)
        self._mem_count = [0, 0]
        top_disc = DISCARD_SLOT_BASE + len(self.discard) - 1
        top_deck = DECK_SLOT_BASE + len(self.deck) - 1
        for slot, card in self._pile_memory.items():
            in_deck = slot >= DECK_SLOT_BASE
            self._depth[52 * in_deck + card] = (top_deck if in_deck else top_disc) - slot
            self._remembered[52 * in_deck + card] = 1.0
            self._mem_count[in_deck] += 1
        self._depth_stale = BOTH_SEATS
        self._sync_held()

    def _write_knowledge(self, seat: int, out: np.ndarray, depths: bool) -> None:
        """Remembered cards from the tracker: flags, and (``depths``) pile depths from the top."""
        row = self.tracker.known[seat].tolist()
        flag_off = self._flag_off[seat]
        top = {False: DISCARD_SLOT_BASE + len(self.discard) - 1,
               True: DECK_SLOT_BASE + len(self.deck) - 1}
        at = {False: self._at["discard_depth"], True: self._at["deck_depth"]}
        for slot, card in enumerate(row):
            if card >= 0:
                out[flag_off[slot] + card] = 1.0
                if depths and slot >= DISCARD_SLOT_BASE:
                    in_deck = slot >= DECK_SLOT_BASE
                    out[at[in_deck] + card] = (top[in_deck] - slot) / 51.0

    def _view_from_scratch(self, seat: int, out: np.ndarray) -> None:
        """The reference encoding of a seat's view (tests check the incremental views)."""
        out.fill(0.0)
        opp = 1 - seat
        for p, pile in enumerate(self.centre):
            if pile:
                out[self.s_centre.start + p * 52 + pile[-1]] = 1.0
            out[self.s_piles.start + p] = len(pile) / PILE_DEPTH
        for c in self.scored[seat]:
            out[self.s_my_scored.start + c] = 1.0
        for c in self.scored[opp]:
            out[self.s_opp_scored.start + c] = 1.0
        self._write_knowledge(seat, out, depths=False)
        base = self.s_points.start
        out[base] = self.round_points[seat] / POINTS_SCALE
        out[base + 1] = self.round_points[opp] / POINTS_SCALE
        base = self.s_mega.start
        out[base] = self.mega_points[seat] / self.target
        out[base + 1] = self.mega_points[opp] / self.target
        out[self.s_dealer.start] = 1.0 if self.dealer == seat else 0.0

    def write_state(self, out: np.ndarray) -> None:
        if not self._dealt:
            self._not_dealt("write_state")
        out.fill(0.0)
        base, dbase = self.t_centre.start, self.t_centre_depth.start
        for p, pile in enumerate(self.centre):
            top = len(pile) - 1
            for i, c in enumerate(pile):
                out[base + p * 52 + c] = 1.0
                out[dbase + c] = (top - i) / (PILE_DEPTH - 1)
        base = self.t_sides.start
        for s in range(2):
            for k, c in enumerate(self.sides[s]):
                if c >= 0:
                    out[base + (s * SIDE_SLOTS + k) * 52 + c] = 1.0
        base = self.t_scored.start
        for s in range(2):
            for c in self.scored[s]:
                out[base + s * 52 + c] = 1.0
        if self.first_card >= 0:
            out[self.t_first.start + self.first_card] = 1.0
            out[self.t_first_src.start + self.first_src] = 1.0
        if self.second_card >= 0:
            out[self.t_second.start + self.second_card] = 1.0
            out[self.t_second_src.start + self.second_src] = 1.0
        for c in self.dug:
            out[self.t_dug.start + c] = 1.0
        for pile, kb, db in ((self.discard, self.t_disc.start, self.t_disc_depth.start),
                             (self.deck, self.t_deck.start, self.t_deck_depth.start)):
            n = len(pile)
            for i, c in enumerate(pile):
                out[kb + c] = 1.0
                out[db + c] = (n - 1 - i) / 51.0
        out[self.t_phase.start + self.phase] = 1.0
        for s in range(2):
            out[self.t_points.start + s] = self.round_points[s] / POINTS_SCALE
            out[self.t_mega.start + s] = self.mega_points[s] / self.target
        out[self.t_player.start + self.current_player] = 1.0
        out[self.t_dealer.start + self.dealer] = 1.0

    # -- determinization -----------------------------------------------------------------------
    def _resample_hidden(self, seat: int, rng: np.random.Generator) -> None:
        """Redeal every face-down card ``seat`` does not remember: centre cards under the tops,
        unremembered side, deck and discard positions. Zone sizes stay; the other seat keeps
        remembering the positions it remembered (now holding the redrawn card)."""
        known = self.tracker.known
        places: list[tuple[list[int], int, int]] = []  # (container, index, tracker slot or -1)
        for pile in self.centre:
            for i in range(len(pile) - 1):
                places.append((pile, i, -1))
        for s in range(2):
            side = self.sides[s]
            for k in range(SIDE_SLOTS):
                slot = SIDE_SLOT_BASE + s * SIDE_SLOTS + k
                if side[k] >= 0 and known[seat, slot] < 0:
                    places.append((side, k, slot))
        for pile, slot_base in ((self.discard, DISCARD_SLOT_BASE), (self.deck, DECK_SLOT_BASE)):
            for i in range(len(pile)):
                if known[seat, slot_base + i] < 0:
                    places.append((pile, i, slot_base + i))
        pool = [container[i] for container, i, _ in places]
        order = rng.permutation(len(pool)).tolist()
        for (container, i, slot), j in zip(places, order, strict=True):
            card = pool[j]
            container[i] = card
            if slot >= 0:
                for other in range(2):
                    if other != seat and known[other, slot] >= 0:
                        known[other, slot] = card
        self._mask_valid = False
        self._views_ok = False
        self._sync_pile_memory()

    def _after_load(self) -> None:
        self._mask_valid = False
        self._centre_indexed = False
        self._views_ok = False
        self._sync_pile_memory()

    def check_invariants(self) -> None:
        super().check_invariants()
        assert self.dealer in (0, 1), f"dealer {self.dealer!r}"
        if not self.done and self.config["episode"] == "game":
            assert max(self.mega_points) < self.target, "a live game at its target"
        assert not (not self.deck and self.discard), "the discard pile should have slid over"
        known = self.tracker.known
        where = [-1] * NUM_SLOTS
        for s in range(2):
            for k, c in enumerate(self.sides[s]):
                where[SIDE_SLOT_BASE + s * SIDE_SLOTS + k] = c
        for i, c in enumerate(self.discard):
            where[DISCARD_SLOT_BASE + i] = c
        for i, c in enumerate(self.deck):
            where[DECK_SLOT_BASE + i] = c
        for s in range(2):
            for slot in range(NUM_SLOTS):
                k = int(known[s, slot])
                assert k < 0 or k == where[slot], f"seat {s} remembers {k} at slot {slot}"
        if self._perfect_memory:
            assert (known[0] == known[1]).all(), "perfect memory is symmetric"
            row = known[0].tolist()
            assert self._pile_memory == {slot: row[slot] for slot in range(DISCARD_SLOT_BASE,
                                         NUM_SLOTS) if row[slot] >= 0}
            depth, flags, count = self._depth.copy(), self._remembered.copy(), list(self._mem_count)
            self._sync_pile_memory()
            assert np.array_equal(depth, self._depth) and count == self._mem_count, "depths"
            assert np.array_equal(flags, self._remembered), "remembered pile cards"
        for s in range(2):
            assert self.scored_mask[s] == sum(1 << c for c in self.scored[s])
            assert self.round_points[s] == best_grouping(self.scored_mask[s])
        if not self.done:
            for s in range(2):
                for k, c in enumerate(self.sides[s]):
                    flipped = (self.phase == SIDE and s == self.current_player
                               and k == self.second_src)
                    assert (c < 0) == flipped, f"side slot {k + 1} of seat {s}"
            assert all(self.centre), "a centre pile is empty in a live round"
            # Mid-turn the deck may be empty (its last card is the first card); a turn only
            # starts with a choice when both the deck and the discard pile hold cards.
            assert self.phase != START or (self.deck and self.discard)
            assert (self.first_card >= 0) == (self.phase != START)
            assert (self.second_card >= 0) == (self.phase in (SIDE, DISCARD, DIG))

    # -- rendering -----------------------------------------------------------------------------
    def render_text(self) -> str:
        if not self._dealt:
            self._not_dealt("render_text")

        def codes(cards: list[int]) -> str:
            return " ".join(card_code(c) for c in cards) or "-"

        lines = [f"Mega Mem-Ory round {self.round_number}, dealer player_{self.dealer}, "
                 f"mega-points {self.mega_points} (target {self.target})"]
        centre = []
        for p, pile in enumerate(self.centre):
            top = card_code(pile[-1]) if pile else "--"
            centre.append(f"{p + 1}:{top}[{codes(pile[:-1])}]")
        lines.append("centre (top[face down, bottom first]): " + "  ".join(centre))
        lines.append(f"deck ({len(self.deck)}, top last): {codes(self.deck)}")
        lines.append(f"discard ({len(self.discard)}, top last): {codes(self.discard)}")
        for s in range(2):
            marker = "*" if s == self.current_player and not self.done else " "
            side = " ".join(card_code(c) if c >= 0 else "--" for c in self.sides[s])
            by_suit = sorted(self.scored[s], key=lambda c: (SUIT_OF[c], RANK_OF[c]))
            lines.append(f"{marker} player_{s}: side [{side}]  scored {codes(by_suit)} "
                         f"({self.round_points[s]} pts)")
        if not self.done:
            src = "deck" if self.first_src == FROM_DECK else "discard"
            turn = f"phase {PHASE_NAMES[self.phase]}"
            if self.first_card >= 0:
                turn += f", first {card_code(self.first_card)} (from {src})"
            if self.second_card >= 0:
                where = ("discard" if self.second_src == SECOND_FROM_DISCARD
                         else f"side{self.second_src + 1}")
                turn += f", second {card_code(self.second_card)} (from {where})"
            if self.dug:
                turn += f", dug {codes(self.dug)}"
            lines.append(turn)
        else:
            lines.append(f"{self.ending_text()}, last round {self.last_round_points}")
        return "\n".join(lines)

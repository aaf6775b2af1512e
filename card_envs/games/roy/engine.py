"""ROY rules engine (see RULES.md beside this file for every rule and choice).

Actions (70): ``play:<card>`` (0..51) discards that card as an ordinary card; ``wild:<J><suit>``
(52..67) discards a Jack as a wild card announcing a suit; ``draw`` (68) draws (1 card, or the
pending Ace penalty) and ends the turn; ``end`` (69) ends a turn after at least one discard.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from mypy_extensions import mypyc_attr

from card_envs.core.cards import (
    ACE,
    JACK,
    KING,
    RANK_OF,
    SPADES,
    SUIT_OF,
    SUITS,
    card_code,
    make_card,
)
from card_envs.core.config import Option, int_range, seat_or_random
from card_envs.core.engine import CachedViewsEngine
from card_envs.core.knowledge import (
    KnowledgeTracker,
    count_what_anyone_counts,
    deal_counted_first,
)
from card_envs.core.obs_layout import ObsLayout

HAND_SIZE = 7
NUM_CARD_ACTIONS = 52
WILD_BASE = 52  # + jack_suit * 4 + announced_suit
DRAW = 68
END = 69
NUM_ACTIONS = 70
KING_OF_SPADES = make_card(KING, SPADES)
KING_DRAW = 7
FIRST, CONTINUE = 0, 1
#: Tracker slot ``RESHUFFLED + c``: card c went into the deck at the hand's last reshuffle and
#: the seat has not seen it leave (slot ``c`` alone: card c lies buried in the discard pile).
RESHUFFLED = 52
#: Per opponent, what its last forced draw showed: the suit and the rank of the top card it
#: could not match (one-hot 4 + 13), then the cards it has gained since / 52.
FORCED_RANK, FORCED_GAINED, FORCED_SIZE = 4, 17, 18
MAX_GAINED = 52  # the count stops there, so the observation stays within [0, 1]


def _limited_hypergeometric(total: int, marked: int, drawn: int, limit: int,
                            rng: np.random.Generator) -> int:
    """The number of marked items among ``drawn`` taken uniformly from ``total`` items of
    which ``marked`` are marked, conditioned on being at most ``limit``."""
    weights = [math.comb(marked, k) * math.comb(total - marked, drawn - k)
               for k in range(min(limit, drawn, marked) + 1)]
    point = rng.random() * float(sum(weights))
    for k in range(len(weights) - 1):
        point -= float(weights[k])
        if point < 0:
            return k
    return len(weights) - 1


#: "Aces are always considered high": order 2 < 3 < ... < K < A.
HIGH_OF: list[int] = [13 if RANK_OF[c] == ACE else RANK_OF[c] for c in range(52)]
#: The card that follows ``c`` in a same-suit run (-1 after an Ace).
NEXT_HIGHER: list[int] = [
    -1 if RANK_OF[c] == ACE else (c - 12 if RANK_OF[c] == KING else c + 1) for c in range(52)
]
JACKS: tuple[int, ...] = tuple(make_card(JACK, s) for s in range(4))


@mypyc_attr(allow_interpreted_subclasses=True)  # a rule variant may subclass it
class RoyEngine(CachedViewsEngine):
    name = "roy"
    CARD_ACTION_FAMILIES = ("play", "wild")
    OPTIONS: ClassVar[dict[str, Option]] = {
        "num_players": Option(2, "Players (the text: best for 2 or 3).", choices=(2, 3, 4)),
        "episode": Option("hand", "'hand': one hand per episode; 'game': play to the target.",
                          choices=("hand", "game")),
        "target_score": Option(100, "Points that win the game (episode='game').",
                               check=int_range(1), needs=("episode", "game")),
        "draw_when_able": Option(False, "Allow drawing even when a discard is possible.",
                                 choices=(False, True)),
        "first_dealer": Option("random", "Dealer of the first hand: a seat or 'random'.",
                               check=seat_or_random),
    }
    TEST_VARIANTS: ClassVar[tuple[dict[str, Any], ...]] = (
        {"memory": "none"},
        {"memory": 0.3, "num_players": 3},
        {"episode": "game", "reward": "score", "target_score": 30},
        {"draw_when_able": True},
    )
    #: What each STATE_FIELDS entry of a snapshot holds (docs/observations.md; tested).
    STATE_DOCS: ClassVar[dict[str, str]] = {
        "hands": "per seat, its cards (card ids, in the order gained)",
        "hand_onehot": "float32 (seat, card): 1 where the seat holds the card (mirrors hands)",
        "deck": "card ids; the top (next drawn) is the END of the list",
        "discard": "card ids; the top card (to match) is the END of the list",
        "dealer": "the hand's dealer (its left deals first and starts)",
        "phase": "0 first card of the turn, 1 continuing (may discard more or end)",
        "announced_suit": "suit a wild Jack announced (0..3 = C D H S), -1 none",
        "ace_chain": "Aces stacked on the pile that the next player faces (2 cards each), 0 none",
        "aces_this_turn": "Aces discarded this turn",
        "king_this_turn": "this turn discarded the King of Spades",
        "king_pending": "the King of Spades' seven cards and skip are still to be applied",
        "scores": "per seat, its game score",
        "hand_number": "hands dealt this episode (1 in the first)",
        "stalled_turns": "draws in a row that found no card (deck and discard pile empty)",
        "last_hand_winner": "the seat that went out in the last finished hand, -1 none",
        "reshuffled": "the discard pile has been turned into the deck this hand",
        "forced_suit": "per seat, the suit (0..3) its last forced draw failed to match, -1 none",
        "forced_rank": "per seat, the rank (0..12) of that top card, -1 none",
        "forced_gained": "per seat, the cards gained since that forced draw",
        "tracker": "memory slots: c (0..51) card c buried in the discard pile; 52 + c card c "
                   "went into the deck at the last reshuffle and was not seen to leave",
    }
    CLONE_SHARED = ("_watchers",)  # a fixed table: clones share it
    STATE_FIELDS = (
        "hands", "hand_onehot", "deck", "discard", "dealer", "phase", "announced_suit",
        "ace_chain", "aces_this_turn", "king_this_turn", "king_pending", "scores",
        "hand_number", "stalled_turns", "last_hand_winner", "reshuffled", "forced_suit",
        "forced_rank", "forced_gained", "tracker",
    )

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        n = self.num_players
        if self.config["first_dealer"] != "random" and self.config["first_dealer"] >= n:
            raise ValueError(f"invalid value {self.config['first_dealer']!r} for 'first_dealer': "
                             f"allowed values are 0..{n - 1} or 'random'")
        self.num_actions = NUM_ACTIONS
        names = [f"play:{card_code(c)}" for c in range(52)]
        names += [f"wild:{card_code(j)}>{SUITS[s]}" for j in JACKS for s in range(4)]
        self.action_names = names + ["draw", "end"]
        self.target = self.config["target_score"]
        score_high = float(1 + 52 / self.target)

        layout = ObsLayout()
        self.s_hand = layout.add("hand", 52, "own cards (card id one-hot)")
        self.s_top = layout.add("top_card", 52, "the discard pile's top card")
        self.s_suit = layout.add("announced_suit", 4, "the suit a wild Jack announced (C D H S)")
        self.s_penalty = layout.add(
            "ace_penalty", 1, "the Ace penalty / 8: facing it, what a draw takes; after this "
            "turn's Aces, what the next player faces")
        self.s_king = layout.add(
            "king_of_spades_played", 1, "this turn discarded the King of Spades: the next "
            "player draws seven and is skipped")
        self.s_phase = layout.add("phase", 2, "first card of the turn / continuing")
        self.s_opp = layout.add("opponent_hand_sizes", n - 1,
                                "opponents' hand sizes / 52, next seat first")
        self.s_forced = layout.add(
            "forced_draws", (n - 1, FORCED_SIZE), "per opponent (next seat first), its last "
            "forced draw this hand: the top card's suit (4) and rank (13) it could not match, "
            "and the cards it has gained since / 52")
        self.s_memory = layout.add("discard_memory", 52,
                                   "buried discards this seat remembers")
        # Remembered cards of the reshuffled deck; right after discard_memory, as their tracker
        # slots follow the discards', so one comparison writes both.
        self.s_reshuffled = layout.add(
            "reshuffled_into_deck", 52, "cards this seat remembers going into the deck at this "
            "hand's last reshuffle, less those it has seen leave")
        self.s_deck = layout.add("deck_size", 1, "cards in the deck / 52")
        self.s_scores = layout.add("scores", n, "scores / target, own first", high=score_high)
        self.layout = layout

        state = ObsLayout()
        state.add("hands", (n, 52), "every seat's hand (seat order)")
        state.add("top_card", 52, "the discard pile's top card")
        state.add("announced_suit", 4, "the suit a wild Jack announced")
        state.add("ace_penalty", 1, "the Ace penalty / 8")
        state.add("king_of_spades_played", 1, "this turn discarded the King of Spades")
        state.add("phase", 2, "first card of the turn / continuing")
        state.add("deck", 52, "cards in the deck")
        state.add("discard", 52, "cards in the discard pile (the top card included)")
        state.add("scores", n, "scores / target, seat order", high=score_high)
        state.add("current_player", n, "the seat to act")
        self.state_layout = state

        # Slot c of the tracker means "card c lies buried in the discard pile"; slot
        # RESHUFFLED + c "card c went into the deck at the last reshuffle, not seen to leave".
        self.tracker = KnowledgeTracker(n, 2 * 52, self.memory)
        self.hands: list[list[int]] = [[] for _ in range(n)]
        self.hand_onehot = np.zeros((n, 52), dtype=np.float32)
        self.deck: list[int] = []  # top of the deck is the END of the list
        self.discard: list[int] = []  # top of the pile is the END of the list
        self.scores = [0] * n
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._mask_valid = False
        # Each seat's observation, kept current by the events that change it, so observing is
        # one copy plus a few scalars. Bulk changes (new hand, reshuffle, snapshot load) just
        # mark it stale and it is rebuilt from scratch on the next observation.
        self._views = np.zeros((n, layout.size), dtype=np.float32)
        self._views_ok = False
        self._perfect_memory = self.tracker.forget_p == 0.0
        self._hand0, self._top0 = self.s_hand.start, self.s_top.start
        self._suit0, self._opp0 = self.s_suit.start, self.s_opp.start
        self._forced0 = self.s_forced.start
        # A draw shows the table that the drawer could not discard only when drawing is not
        # a choice: without draw_when_able, and not an Ace penalty (always drawable).
        self._draws_are_forced = not self.config["draw_when_able"]
        self.forced_suit = [-1] * n  # per seat: its last forced draw's suit to match, or -1
        self.forced_rank = [-1] * n
        self.forced_gained = [0] * n  # cards it has gained since
        # Per seat: (other seat, where other's view holds this seat's hand size, where it holds
        # this seat's forced-draw block), for the writes that follow each card it gains.
        self._watchers = [[(other, self._opp0 - 1 + (seat - other) % n,
                            self._forced0 + ((seat - other) % n - 1) * FORCED_SIZE)
                           for other in range(n) if other != seat] for seat in range(n)]
        self._mem0 = self.s_memory.start
        self._reshuffled0 = self.s_reshuffled.start
        self._memory_planes = slice(self._mem0, self._mem0 + 2 * 52)
        assert self._reshuffled0 == self._mem0 + RESHUFFLED  # one write fills both planes
        self.reshuffled = False

    def deck_cards(self) -> list[int]:
        return list(range(52))

    def all_cards(self) -> list[int]:
        return [c for h in self.hands for c in h] + self.deck + self.discard

    # -- dealing -------------------------------------------------------------------------------
    def later_deals(self) -> bool:
        return self.config["episode"] == "game"

    @property
    def deal_number(self) -> int:
        return self.hand_number

    def _deal(self, deck: list[int] | None) -> None:
        n = self.num_players
        fd = self.config["first_dealer"]
        self.dealer = self.random_below(n) if fd == "random" else fd
        self.scores = [0] * n
        self.hand_number = 0
        self.last_hand_winner = -1
        self._start_hand(deck)

    def _start_hand(self, stacked: list[int] | None) -> None:
        n = self.num_players
        order = self.rng.permutation(52).tolist() if stacked is None else list(stacked)
        self.deck = order[::-1]
        self.hands = [[] for _ in range(n)]
        self.hand_onehot.fill(0.0)
        self.forced_suit = [-1] * n  # before the deal, which gains nobody anything
        self.forced_rank = [-1] * n
        self.forced_gained = [0] * n
        # One card at a time, starting left of the dealer (stacked decks rely on this order).
        for _ in range(HAND_SIZE):
            for k in range(1, n + 1):
                self._give((self.dealer + k) % n, self.deck.pop())
        self.discard = [self.deck.pop()]
        self.announced_suit = -1
        self.ace_chain = 0
        self.aces_this_turn = 0
        self.king_this_turn = False
        self.king_pending = False
        self.stalled_turns = 0
        self.reshuffled = False
        self.tracker.known.fill(-1)
        self._views_ok = False
        self.hand_number += 1
        self._begin_turn((self.dealer + 1) % n)

    def _give(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        hand.append(card)
        self.hand_onehot[seat, card] = 1.0
        recorded = self.forced_suit[seat] >= 0
        if recorded and self.forced_gained[seat] < MAX_GAINED:
            self.forced_gained[seat] += 1
        if self._views_ok:
            views = self._views
            views[seat, self._hand0 + card] = 1.0
            size, gained = len(hand) / 52.0, self.forced_gained[seat] / 52.0
            for other, size_at, forced_at in self._watchers[seat]:
                views[other, size_at] = size
                if recorded:
                    views[other, forced_at + FORCED_GAINED] = gained

    def _update_hand_size(self, seat: int, size: int) -> None:
        views = self._views
        for other, size_at, _ in self._watchers[seat]:
            views[other, size_at] = size / 52.0

    def _forced_draw(self, seat: int) -> int:
        """``seat`` draws one card because it cannot discard: the table learns it held no card
        of the suit to match, none of the top card's rank, and no Jack. Returns the number
        drawn. (The record replaces the seat's last one once the draw is done: a reshuffle
        keeps the top card, so the suit and rank to match stay as they were.)"""
        old_suit, old_rank = self.forced_suit[seat], self.forced_rank[seat]
        self.forced_suit[seat] = -1  # the old record gains nothing more
        drawn = self._draw(seat, 1)
        top = self.discard[-1]
        suit = self.announced_suit if self.announced_suit >= 0 else SUIT_OF[top]
        rank = RANK_OF[top]
        self.forced_suit[seat], self.forced_rank[seat] = suit, rank
        self.forced_gained[seat] = drawn
        if self._views_ok:
            views, gained = self._views, drawn / 52.0
            for other, _, start in self._watchers[seat]:
                if old_suit >= 0:
                    views[other, start + old_suit] = 0.0
                    views[other, start + FORCED_RANK + old_rank] = 0.0
                views[other, start + suit] = 1.0
                views[other, start + FORCED_RANK + rank] = 1.0
                views[other, start + FORCED_GAINED] = gained
        return drawn

    def _draw(self, seat: int, count: int) -> int:
        """Draw up to ``count`` cards, reshuffling the discard pile (all but its top) into a
        new deck when the deck runs out; returns how many were drawn."""
        drawn = 0
        for _ in range(count):
            if not self.deck:
                if len(self.discard) <= 1:
                    break  # nothing left anywhere: the rest of the draw is forgiven
                buried = self.discard[:-1]
                self.discard = self.discard[-1:]
                self.rng.shuffle(buried)
                self.deck = buried
                # Whoever remembered a buried card now knows it is in the deck. Only buried
                # cards are marked, and the last reshuffle's cards have all been drawn since.
                known = self.tracker.known
                known[:, RESHUFFLED:] = known[:, :RESHUFFLED]
                known[:, :RESHUFFLED] = -1
                self.reshuffled = True
                self._views_ok = False
            card = self.deck.pop()
            if self.reshuffled:  # the drawer alone sees which card left the deck
                self.tracker.forget_seat_slot(seat, RESHUFFLED + card)
                if self._views_ok:
                    self._views[seat, self._reshuffled0 + card] = 0.0
            self._give(seat, card)
            drawn += 1
        return drawn

    # -- turn structure ------------------------------------------------------------------------
    def _begin_turn(self, seat: int) -> None:
        n = self.num_players
        # A King of Spades makes its victim draw seven (plus any Ace penalty it cannot answer)
        # and lose the turn; that happens without a decision.
        while self.king_pending:
            self.king_pending = False
            penalty = KING_DRAW + 2 * self.ace_chain
            self.ace_chain = 0
            self._draw(seat, penalty)
            seat = (seat + 1) % n
        self.current_player = seat
        self.phase = FIRST
        self.aces_this_turn = 0
        self.king_this_turn = False
        self._mask_valid = False

    def _end_turn(self) -> None:
        if self.aces_this_turn:
            self.ace_chain += self.aces_this_turn
        if self.king_this_turn:
            self.king_pending = True
        self._begin_turn((self.current_player + 1) % self.num_players)

    def _apply(self, action: int) -> None:
        seat = self.current_player
        if action < NUM_CARD_ACTIONS:
            self._discard(seat, action)
            self.stalled_turns = 0
            if not self.hands[seat]:
                self._win_hand(seat)
                return
            self.phase = CONTINUE
            self._mask_valid = False
            # Only "end" would be left: end the turn without asking for a pointless decision.
            if not self._can_continue(seat):
                self._end_turn()
        elif action < DRAW:
            offset = action - WILD_BASE
            self._discard(seat, JACKS[offset // 4])
            self.stalled_turns = 0
            if not self.hands[seat]:
                self._win_hand(seat)
                return
            self.announced_suit = offset % 4
            if self._views_ok:
                self._views[:, self._suit0 + self.announced_suit] = 1.0
            self._end_turn()
        elif action == DRAW:
            if self.ace_chain:
                drawn = self._draw(seat, 2 * self.ace_chain)
                self.ace_chain = 0
            elif self._draws_are_forced or not (self.deck or len(self.discard) > 1):
                # With draw_when_able a draw is a choice, but one that finds nothing is
                # offered only to a seat that cannot discard.
                drawn = self._forced_draw(seat)
            else:
                drawn = self._draw(seat, 1)
            self.stalled_turns = 0 if drawn else self.stalled_turns + 1
            if self.stalled_turns >= self.num_players:
                self._blocked_hand()
                return
            self._end_turn()
        else:  # END
            self._end_turn()

    def _discard(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        hand.remove(card)
        self.hand_onehot[seat, card] = 0.0
        under = self.discard[-1]
        self.discard.append(card)
        self.tracker.show_all(under, under)
        if self.reshuffled:  # played in view: nobody counts it in the deck any more
            self.tracker.conceal(RESHUFFLED + card)
            if self._views_ok:
                self._views[:, self._reshuffled0 + card] = 0.0
        if self._views_ok:
            views = self._views
            views[seat, self._hand0 + card] = 0.0
            self._update_hand_size(seat, len(hand))
            if self._perfect_memory:
                views[:, self._mem0 + under] = 1.0
            if self.announced_suit >= 0:
                views[:, self._suit0 + self.announced_suit] = 0.0
        self.announced_suit = -1
        if RANK_OF[card] == ACE:
            self.aces_this_turn += 1
        elif card == KING_OF_SPADES:
            self.king_this_turn = True

    def _can_continue(self, seat: int) -> bool:
        top = self.discard[-1]
        rank = RANK_OF[top]
        nxt = NEXT_HIGHER[top]
        return any(RANK_OF[c] == rank or c == nxt for c in self.hands[seat])

    # -- hand and game end ------------------------------------------------------------------
    def _win_hand(self, seat: int) -> None:
        points = sum(len(h) for h in self.hands)
        self.scores[seat] += points
        self._views_ok = False
        self.last_hand_winner = seat
        if self.reward_mode == "score":
            self.rewards[seat] += points
        if self.config["episode"] == "hand" or self.scores[seat] >= self.target:
            self.finish([seat])
        else:
            self._next_hand()

    def _blocked_hand(self) -> None:
        """A full round of seats could neither discard nor draw: the hand scores nothing.

        A guard against a hand that never ends, which the rules never reach: a draw finds
        nothing only when every card but the top is in a hand, so some seat holds a Jack and
        can always discard (and an Ace penalty always finds the cards under its Ace). The
        mutation audit records this (``roy-blocked-hand-late``), so RULES.md has no rule for it.
        """
        self.last_hand_winner = -1
        if self.config["episode"] == "hand":
            self.finish([])
        else:
            self._next_hand()

    def _next_hand(self) -> None:
        self.dealer = (self.dealer + 1) % self.num_players
        self._start_hand(self.next_stacked_deck())

    def result(self) -> dict[str, Any]:
        out = super().result()
        out.update(scores=list(self.scores), hands=self.hand_number,
                   cards_left=[len(h) for h in self.hands])
        return out

    # -- legality ------------------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        if self._mask_valid:
            return self._mask
        if not self._dealt:
            self._not_dealt("legal_mask")
        mask = self._mask
        mask.fill(0)
        hand = self.hands[self.current_player]
        top = self.discard[-1]
        if self.phase == FIRST:
            playable = False
            if self.ace_chain:
                # "must either play an ace or draw": drawing the penalty is always allowed.
                for c in hand:
                    if RANK_OF[c] == ACE:
                        mask[c] = 1
                mask[DRAW] = 1
            else:
                suit = self.announced_suit if self.announced_suit >= 0 else SUIT_OF[top]
                rank = RANK_OF[top]
                for c in hand:
                    r = RANK_OF[c]
                    if r == JACK:
                        j = SUIT_OF[c] * 4 + WILD_BASE
                        mask[j:j + 4] = 1
                        playable = True
                        # A Jack also goes down as an ordinary card when it matches.
                        if SUIT_OF[c] == suit or r == rank:
                            mask[c] = 1
                    elif SUIT_OF[c] == suit or r == rank:
                        mask[c] = 1
                        playable = True
                if not playable or (self.config["draw_when_able"]
                                    and (self.deck or len(self.discard) > 1)):
                    mask[DRAW] = 1
        else:
            rank = RANK_OF[top]
            nxt = NEXT_HIGHER[top]
            for c in hand:
                if RANK_OF[c] == rank or c == nxt:
                    mask[c] = 1
            mask[END] = 1
        self._mask_valid = True
        return mask

    # -- observations --------------------------------------------------------------------------
    def _view(self, seat: int) -> np.ndarray:
        if not self._views_ok:
            for s in range(self.num_players):
                self._observation_from_scratch(s, self._views[s])
                self._views[s, self.s_phase] = 0.0
                self._views[s, self.s_penalty] = 0.0
                self._views[s, self.s_king] = 0.0
                self._views[s, self.s_deck] = 0.0
                self._views[s, self.s_top] = 0.0
            self._views_ok = True
        return self._views[seat]

    def _finish_view(self, seat: int, out: np.ndarray) -> None:
        out[self._top0 + self.discard[-1]] = 1.0
        out[self.s_phase.start + self.phase] = 1.0
        if self.ace_chain or self.aces_this_turn:
            out[self.s_penalty.start] = self._pile_penalty()
        if self.king_this_turn:
            out[self.s_king.start] = 1.0
        out[self.s_deck.start] = len(self.deck) / 52.0
        if not self._perfect_memory:
            np.greater_equal(self.tracker.known[seat], 0, out=out[self._memory_planes])

    def _pile_penalty(self) -> float:
        """The Ace penalty the pile holds now (/ 8): the chain the turn began facing plus the
        Aces discarded this turn, which is what the next player faces if the turn ends here."""
        return min(2 * (self.ace_chain + self.aces_this_turn), 8) / 8.0

    def _observation_from_scratch(self, seat: int, out: np.ndarray) -> None:
        """The reference encoding; tests check the incremental views against it."""
        n = self.num_players
        out.fill(0.0)
        out[self.s_hand] = self.hand_onehot[seat]
        out[self.s_top.start + self.discard[-1]] = 1.0
        if self.announced_suit >= 0:
            out[self.s_suit.start + self.announced_suit] = 1.0
        if self.ace_chain or self.aces_this_turn:
            out[self.s_penalty.start] = self._pile_penalty()
        if self.king_this_turn:
            out[self.s_king.start] = 1.0
        out[self.s_phase.start + self.phase] = 1.0
        hands = self.hands
        base = self.s_opp.start - 1
        for k in range(1, n):
            out[base + k] = len(hands[(seat + k) % n]) / 52.0
            other = (seat + k) % n
            if self.forced_suit[other] >= 0:
                start = self._forced0 + (k - 1) * FORCED_SIZE
                out[start + self.forced_suit[other]] = 1.0
                out[start + FORCED_RANK + self.forced_rank[other]] = 1.0
                out[start + FORCED_GAINED] = self.forced_gained[other] / 52.0
        np.greater_equal(self.tracker.known[seat], 0, out=out[self._memory_planes])
        out[self.s_deck.start] = len(self.deck) / 52.0
        base = self.s_scores.start
        scores = self.scores
        for k in range(n):
            if scores[(seat + k) % n]:
                out[base + k] = scores[(seat + k) % n] / self.target

    def write_state(self, out: np.ndarray) -> None:
        if not self._dealt:
            self._not_dealt("write_state")
        n = self.num_players
        out.fill(0.0)
        out[: n * 52] = self.hand_onehot.reshape(-1)
        i = n * 52
        out[i + self.discard[-1]] = 1.0
        i += 52
        if self.announced_suit >= 0:
            out[i + self.announced_suit] = 1.0
        i += 4
        out[i] = self._pile_penalty()
        out[i + 1] = float(self.king_this_turn)
        i += 2
        out[i + self.phase] = 1.0
        i += 2
        for c in self.deck:
            out[i + c] = 1.0
        i += 52
        for c in self.discard:
            out[i + c] = 1.0
        i += 52
        for k in range(n):
            out[i + k] = self.scores[k] / self.target
        i += n
        out[i + self.current_player] = 1.0

    # -- determinization -----------------------------------------------------------------------
    def _resample_hidden(self, seat: int, rng: np.random.Generator) -> None:
        """Redeal what ``seat`` cannot know: opponents' hands, the deck, and buried discards it
        does not remember. Zone sizes stay; other seats keep remembering discard positions.

        Cards the seat remembers going into the deck at a reshuffle stay in the deck or an
        opponent's hand, the deck taking them first: under perfect memory the deck holds
        nothing else, and it gets a uniform draw of them."""
        known = self.tracker.known
        buried = self.discard[:-1]
        # Who remembers each buried card, read in one pass (per card, these were most of a
        # resample's cost); the redeal below writes them back in one pass too.
        remembered_by = known[:, buried] >= 0
        seat_remembers: list[bool] = remembered_by[seat].tolist()
        hidden_buried = [i for i in range(len(buried)) if not seat_remembers[i]]
        unseen = [c for s in range(self.num_players) if s != seat for c in self.hands[s]]
        unseen += self.deck
        self.deck, rest, spare = deal_counted_first(
            unseen, known[seat, RESHUFFLED:], [buried[i] for i in hidden_buried],
            len(self.deck), rng)
        for i in hidden_buried:  # the remembered deck cards are never buried: seen played
            self.discard[i] = rest.pop()
        pool = spare + rest
        pool = [pool[i] for i in rng.permutation(len(pool)).tolist()]
        k = 0
        for s in range(self.num_players):
            if s == seat:
                continue
            size = len(self.hands[s])
            self.hands[s] = pool[k:k + size]
            k += size
        if max(self.forced_suit) >= 0:
            self._honour_forced_draws(seat, hidden_buried, rng)
        for s in range(self.num_players):
            if s != seat:
                self.hand_onehot[s].fill(0.0)
                self.hand_onehot[s, self.hands[s]] = 1.0
        deck_memory = known[:, RESHUFFLED:].copy()
        known.fill(-1)
        self._views_ok = False
        if buried:  # each buried card (now) is remembered by whoever remembered its place
            now_buried = self.discard[:-1]
            known[:, now_buried] = np.where(remembered_by, np.array(now_buried), -1)
        # Other seats keep their deck memories by card, except where the redeal put the card
        # in their own hand or on the pile, which they would have seen. Without forgetting a
        # seat counts every reshuffled card it has not seen leave: the cards any seat counts
        # (each card is missing only from its drawer's row) less its own hand.
        if self._perfect_memory:
            count_what_anyone_counts(deck_memory)
        known[:, RESHUFFLED:] = deck_memory
        for s, hand in enumerate(self.hands):
            known[s, [RESHUFFLED + c for c in hand]] = -1
        known[:, [RESHUFFLED + c for c in self.discard]] = -1
        self._mask_valid = False

    def _could_answer(self, seat: int, card: int) -> bool:
        """``card`` would have been a discard at ``seat``'s last forced draw (of the suit to
        match, of the top card's rank, or a Jack), so ``seat`` did not hold it then."""
        return (SUIT_OF[card] == self.forced_suit[seat] or RANK_OF[card] == JACK
                or RANK_OF[card] == self.forced_rank[seat])

    def _honour_forced_draws(self, seat: int, hidden_buried: list[int],
                             rng: np.random.Generator) -> None:
        """Make each redealt opponent's hand agree with its last forced draw: it held no card
        that could answer it then, so at most ``forced_gained`` of its cards (those gained
        since) can. An opponent dealt more is dealt k such cards instead, k drawn from the
        hypergeometric law of the deal limited to 0..forced_gained, so that k is distributed
        as in a uniform deal conditioned on the fact (exactly so before a reshuffle); the
        excess is swapped, one card at a time, with a uniformly chosen card that could not
        answer, from the deck, a buried place ``seat`` forgot, or another opponent's hand
        whose own record the swap keeps. A swap with the deck or the pile keeps memory's
        rules: a card ``seat`` counts in the deck is swapped there only with another it
        counts (so never into a buried place)."""
        counted: list[bool] = (self.tracker.known[seat, RESHUFFLED:] >= 0).tolist()
        for o in range(self.num_players):
            if o == seat or self.forced_suit[o] < 0:
                continue
            hand = self.hands[o]
            free = self.forced_gained[o]
            answering = [i for i in range(len(hand)) if self._could_answer(o, hand[i])]
            if len(answering) <= free:
                continue
            elsewhere = list(self.deck) + [self.discard[i] for i in hidden_buried]
            for other in range(self.num_players):
                if other not in (seat, o):
                    elsewhere += self.hands[other]
            total = len(hand) + len(elsewhere)
            can = len(answering) + sum(1 for c in elsewhere if self._could_answer(o, c))
            keep = _limited_hypergeometric(total, can, len(hand), free, rng)
            excess = len(answering) - keep
            for j in rng.permutation(len(answering)).tolist():
                if excess == 0:
                    break
                excess -= self._swap_out(o, seat, answering[j], hidden_buried, counted, rng)

    def _swap_out(self, o: int, seat: int, i: int, hidden_buried: list[int],
                  counted: list[bool], rng: np.random.Generator) -> bool:
        """Swap card ``hands[o][i]`` with a uniformly chosen card that could not answer
        ``o``'s forced draw, from a place ``o``'s cards could be (from the deck or the pile,
        one of the same memory class; see :meth:`_honour_forced_draws`); False if none."""
        card = self.hands[o][i]
        places: list[tuple[int, int]] = []  # (-1: the deck, -2: the discard pile, or a seat)
        for zone, spots, cards in ((-1, range(len(self.deck)), self.deck),
                                   (-2, hidden_buried, self.discard)):
            for d in spots:
                other_card = cards[d]
                if counted[other_card] == counted[card] \
                        and not self._could_answer(o, other_card):
                    places.append((zone, d))
        for other in range(self.num_players):
            if other in (seat, o):
                continue
            unrecorded = self.forced_suit[other] < 0
            for d in range(len(self.hands[other])):
                other_card = self.hands[other][d]
                if self._could_answer(o, other_card):
                    continue  # (a hand may hold any card, counted or not)
                if unrecorded or not self._could_answer(other, card) \
                        or self._could_answer(other, other_card):
                    places.append((other, d))
        if not places:
            return False
        zone, d = places[int(rng.integers(len(places)))]
        if zone == -1:
            self.hands[o][i], self.deck[d] = self.deck[d], card
        elif zone == -2:
            self.hands[o][i], self.discard[d] = self.discard[d], card
        else:
            self.hands[o][i], self.hands[zone][d] = self.hands[zone][d], card
        return True

    def _after_load(self) -> None:
        self._mask_valid = False
        self._views_ok = False

    def check_invariants(self) -> None:
        super().check_invariants()
        n = self.num_players
        top = self.discard[-1]
        # How a hand ends: a seat that empties its hand wins it; a hand that no seat could
        # move in for a full round (stalled_turns reaching n) is blocked.
        game = self.config["episode"] == "game"
        if self.terminated:
            if self.winners:
                w = self.winners[0]
                assert len(self.winners) == 1 and not self.hands[w], (
                    f"winners {self.winners}: a ROY winner is the one seat whose hand is empty")
                assert self.last_hand_winner == w, "last_hand_winner is not the winner"
                assert not game or self.scores[w] >= self.target, (
                    f"winner player_{w} has {self.scores[w]} points, short of target "
                    f"{self.target}")
            else:
                assert not game and self.stalled_turns >= n, (
                    "terminated without winners, yet the hand is not blocked")
        elif not self.truncated:
            assert all(self.hands), "a seat's hand is empty in a live hand (it won the hand)"
            assert self.stalled_turns < n, "a live hand stalled for a full round"
            assert not game or max(self.scores) < self.target, "a live game past its target"
            if self.phase == FIRST:
                assert not self.aces_this_turn and not self.king_this_turn, (
                    "Aces or a King of Spades counted this turn before its first discard")
        assert self.ace_chain + self.aces_this_turn <= 4, "more than four Aces in the chain"
        assert not (self.ace_chain or self.aces_this_turn) or RANK_OF[top] == ACE, (
            "an Ace penalty without an Ace on top of the pile")
        assert self.last_hand_winner < 0 or self.hand_number > 1 or self.terminated, (
            "a last hand's winner in the first hand")
        for s, hand in enumerate(self.hands):
            assert np.array_equal(np.flatnonzero(self.hand_onehot[s]), sorted(hand)), s
        assert self.announced_suit == -1 or RANK_OF[self.discard[-1]] == JACK
        for s in range(self.num_players):  # a forced draw is recorded whole, or not at all
            recorded = self.forced_suit[s] >= 0
            assert -1 <= self.forced_suit[s] < 4 and -1 <= self.forced_rank[s] < 13, s
            assert recorded == (self.forced_rank[s] >= 0), s
            assert 0 <= self.forced_gained[s] <= MAX_GAINED, s
            assert recorded or self.forced_gained[s] == 0, s
        assert 0 <= self.ace_chain <= 4 and 0 <= self.aces_this_turn <= 4
        # Memory: only buried cards count as buried, a card counted in the deck is not in the
        # seat's hand or on the pile, and without forgetting every deck card is counted.
        known = self.tracker.known
        buried = np.zeros(52, dtype=bool)
        buried[self.discard[:-1]] = True
        remembered = known[:, :RESHUFFLED] >= 0
        assert not remembered[:, ~buried].any(), "a card not buried remembered as buried"
        if self._perfect_memory:
            assert remembered[:, buried].all(), "a buried card forgotten under perfect memory"
        marked = known[:, RESHUFFLED:] >= 0
        assert self.reshuffled or not marked.any(), "deck memory without a reshuffle"
        assert not marked[:, self.discard].any(), "a card on the pile counted in the deck"
        for s, hand in enumerate(self.hands):
            assert not marked[s, hand].any(), f"seat {s} counts its own card in the deck"
        if self.reshuffled and self._perfect_memory:
            assert marked[:, self.deck].all(), "a reshuffled card is missing from memory"

    # -- rendering -----------------------------------------------------------------------------
    def render_text(self) -> str:
        if not self._dealt:
            self._not_dealt("render_text")
        lines = [f"ROY hand {self.hand_number}, dealer player_{self.dealer}, "
                 f"scores {self.scores} (target {self.target})"]
        top = card_code(self.discard[-1])
        extra = f", announced suit {SUITS[self.announced_suit]}" if self.announced_suit >= 0 else ""
        if self.ace_chain:
            extra += f", Ace penalty: draw {2 * self.ace_chain}"
        lines.append(f"top {top}{extra}; deck {len(self.deck)}, discard {len(self.discard)}")
        for s, hand in enumerate(self.hands):
            marker = "*" if s == self.current_player and not self.done else " "
            in_order = sorted(hand, key=lambda c: (SUIT_OF[c], HIGH_OF[c]))
            cards = " ".join(card_code(c) for c in in_order)
            lines.append(f"{marker} player_{s}: {cards}")
        if self.done:
            lines.append(self.ending_text())
        return "\n".join(lines)

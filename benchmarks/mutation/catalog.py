"""The mutants of the mutation audit (``run.py``), as data.

Each :class:`Mutant` is one small, plausible bug in a real rule or contract: a comparison off
by one, the wrong seat charged or shown something, a config option ignored, memory that does
not follow a card, a resume that forgets part of its state. ``old`` is an exact snippet of the
file at ``path`` that must occur there exactly once (the runner refuses a catalog that no
longer fits the code, naming the entry); ``new`` replaces it. ``tests`` are the pytest files or
node ids that catch it, the narrowest that do, so that the whole audit stays a few minutes:
rules files that run in a second or two are named whole, slower files by test function.

An ``equivalent`` mutant is known not to change behaviour (its reason says why); it is kept,
run and reported apart, so the reasoning stays checked as the code changes.

To add a mutant: pick the rule (RULES.md beside each engine), write the entry, and find the
tests that catch it with ``python benchmarks/mutation/run.py --id <id>`` (start from the
area's rules file). A mutant no test catches is a gap: write the test, then the entry.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The catalog's grouping (``run.py --area``).
AREAS = ("roy", "memory_uno", "mega_memory", "deluxe_memory", "dogpile", "core", "training",
         "docs", "adapters", "agents")


@dataclass(frozen=True)
class Mutant:
    id: str
    area: str
    path: str  # repository-relative
    old: str  # occurs exactly once in ``path``
    new: str
    tests: tuple[str, ...]  # pytest files or node ids
    why: str  # the plausible bug it models
    equivalent: str | None = None  # why it cannot change behaviour, if it cannot


ROY = "card_envs/games/roy/engine.py"
MEMORY_UNO = "card_envs/games/memory_uno/engine.py"
MEGA = "card_envs/games/mega_memory/engine.py"
GROUPING = "card_envs/games/mega_memory/grouping.py"
DELUXE = "card_envs/games/deluxe_memory/engine.py"
DOGPILE = "card_envs/games/dogpile/engine.py"
ENGINE = "card_envs/core/engine.py"
COMPILED = "card_envs/compiled.py"
COPYING = "card_envs/core/copying.py"
KNOWLEDGE = "card_envs/core/knowledge.py"
CONFIG = "card_envs/core/config.py"
AEC_ENV = "card_envs/core/aec_env.py"
GYM_ENV = "card_envs/core/gym_env.py"
CONVENTIONS = "card_envs/core/conventions.py"
DOGPILE_PARALLEL = "card_envs/games/dogpile/parallel.py"
DOGPILE_HEURISTIC_RULES = "card_envs/games/dogpile/heuristic_rules.py"
MEMORY_UNO_HEURISTIC_RULES = "card_envs/games/memory_uno/heuristic_rules.py"
MEGA_HEURISTIC_RULES = "card_envs/games/mega_memory/heuristic_rules.py"
ROY_HEURISTIC_RULES = "card_envs/games/roy/heuristic_rules.py"
SELFPLAY = "training/selfplay.py"
EVALUATE = "training/evaluate.py"
TRAIN = "training/train.py"
CHECKPOINT = "training/checkpoint.py"
LEAGUE = "card_envs/adapters/rllib_league.py"
RLLIB_SETTINGS = "training/rllib_settings.py"
RLLIB_BACKEND_TESTS = "tests/test_rllib_backend.py"
TRAINING_CONFIG = "training/config.py"
GAME_PAGES = "docs/_hooks/game_pages.py"
CONFIG_ERRORS = "training/config_errors.py"
YAML12 = "training/yaml12.py"
VERSIONS = "card_envs/versions.py"
REGISTRATION = "card_envs/core/registration.py"
VERSION_CHECK = "tests/env_versions.py"
VERSION_TESTS = "tests/test_versions.py"
RUN_LOCK = "training/run_lock.py"
FILES = "training/files.py"
SCHEMA = "card_envs/core/snapshot_specs.py"
ROY_SCHEMA = "card_envs/games/roy/snapshot.py"
PROVENANCE = "card_envs/agents/provenance.py"
SHIPPED = "training/shipped.py"
ASSIGNMENTS = "training/assignments.py"
CHECKOUT_ALIAS = "training/_checkout.py"
CLI_EXTRAS = "card_envs/cli/extras.py"
TIANSHOU_ADAPTER = "card_envs/adapters/tianshou.py"
AGILERL_ADAPTER = "card_envs/adapters/agilerl.py"
ADAPTER_TESTS = "tests/test_adapters.py"
SEARCH = "card_envs/agents/search.py"
PRECISION = "training/precision.py"
PRECISION_TESTS = "tests/test_precision.py"
SEARCH_TESTS = "tests/test_search_agent.py"
SEARCH_FLAT = "card_envs/agents/search_flat.py"
FLAT_TESTS = "tests/test_search_flat.py"
HORIZON_TESTS = "tests/test_search_horizon.py"
SPIEL = "card_envs/analysis/spiel.py"
EXPLOIT_TESTS = "tests/test_exploitability.py"

# Test files fast enough to run whole (a second or two each).
T_ROY = "tests/test_roy_rules.py"
T_ROY_FORCED = "tests/test_roy_forced_draws.py"
T_MEMORY_UNO = "tests/test_memory_uno_rules.py"
T_GROUPING = "tests/test_mega_memory_grouping.py"
T_MEGA = "tests/test_mega_memory_rules.py"
T_CHART = "tests/test_deluxe_memory_chart.py"
T_DELUXE = "tests/test_deluxe_memory_rules.py"
T_DOGPILE = "tests/test_dogpile_rules.py"

CATALOG: tuple[Mutant, ...] = (
    # -- ROY ---------------------------------------------------------------------------------------
    Mutant(
        id="roy-continue-any-higher",
        area="roy",
        path=ROY,
        old=("            for c in hand:\n"
             "                if RANK_OF[c] == rank or c == nxt:\n"),
        new=("            for c in hand:\n"
             "                if RANK_OF[c] == rank or (SUIT_OF[c] == SUIT_OF[top]\n"
             "                                          and HIGH_OF[c] > HIGH_OF[top]):\n"),
        tests=(T_ROY,),
        why="a continuing card may be any higher card of the suit, not only the next one",
    ),
    Mutant(
        id="roy-aces-wrap",
        area="roy",
        path=ROY,
        old="-1 if RANK_OF[c] == ACE else (c - 12",
        new="c + 1 if RANK_OF[c] == ACE else (c - 12",
        tests=(T_ROY,),
        why="Aces also low: A 2 3 continues as a run (the text: 'not A, 2, 3')",
    ),
    Mutant(
        id="roy-king-drops-ace-penalty",
        area="roy",
        path=ROY,
        old="penalty = KING_DRAW + 2 * self.ace_chain",
        new="penalty = KING_DRAW",
        tests=(T_ROY,),
        why="the King of Spades' victim draws seven but not the Ace penalty it cannot answer",
    ),
    Mutant(
        id="roy-wild-jack-own-suit",
        area="roy",
        path=ROY,
        old="self.announced_suit = offset % 4",
        new="self.announced_suit = offset // 4",
        tests=(T_ROY,),
        why="a wild Jack announces its own suit, not the suit the player chose",
    ),
    Mutant(
        id="roy-scores-reset-each-hand",
        area="roy",
        path=ROY,
        old="self.scores[seat] += points",
        new="self.scores[seat] = points",
        tests=(T_ROY,),
        why="a hand's points replace the winner's total instead of adding to it",
    ),
    Mutant(
        id="roy-target-strict",
        area="roy",
        path=ROY,
        old="self.scores[seat] >= self.target",
        new="self.scores[seat] > self.target",
        tests=(T_ROY,),
        why="reaching the target score exactly does not win the game",
    ),
    Mutant(
        id="roy-dealer-passes-right",
        area="roy",
        path=ROY,
        old="self.dealer = (self.dealer + 1) % self.num_players",
        new="self.dealer = (self.dealer - 1) % self.num_players",
        tests=(T_ROY,),
        why="the deal passes right, not left, between hands (3+ players)",
    ),
    Mutant(
        id="roy-draw-when-able-ignored",
        area="roy",
        path=ROY,
        old=('if not playable or (self.config["draw_when_able"]\n'
             "                                    and (self.deck or len(self.discard) > 1)):"),
        new="if not playable:",
        tests=(T_ROY,),
        why="the draw_when_able option is ignored",
    ),
    Mutant(
        id="roy-reshuffle-keeps-memory",
        area="roy",
        path=ROY,
        old="                known[:, :RESHUFFLED] = -1\n",
        new="",
        tests=(T_ROY,),
        why="after a reshuffle seats still remember buried discards that are back in the deck",
    ),
    Mutant(
        id="roy-reshuffle-forgets-deck",
        area="roy",
        path=ROY,
        old="                known[:, RESHUFFLED:] = known[:, :RESHUFFLED]\n",
        new="                known[:, RESHUFFLED:] = -1\n",
        tests=(T_ROY,),
        why="a reshuffle loses which cards went into the new deck (the gap before roy's fix)",
    ),
    Mutant(
        id="roy-everyone-sees-the-draw",
        area="roy",
        path=ROY,
        old="                self.tracker.forget_seat_slot(seat, RESHUFFLED + card)\n",
        new="                self.tracker.conceal(RESHUFFLED + card)\n",
        tests=(T_ROY,),
        why="every seat learns which card left the reshuffled deck, not just the drawer",
    ),
    Mutant(
        id="roy-played-card-stays-in-deck",
        area="roy",
        path=ROY,
        old="        if self.reshuffled:  # played in view",
        new="        if False:  # played in view",
        tests=(T_ROY,),
        why="a reshuffled card played from a hand still counts as in the deck",
    ),
    Mutant(
        id="roy-resample-ignores-deck-memory",
        area="roy",
        path=KNOWLEDGE,  # the redeal shared with Memory-Uno
        old="    from_memory = min(deck_size, len(in_deck))\n",
        new="    from_memory = 0\n",
        tests=("tests/test_api_all_games.py::test_no_leak_under_resampling[roy-num_players=2]",),
        why="a determinization fills the deck with cards the seat knows are not in it",
    ),
    Mutant(
        id="core-redeal-leaves-counted-cards-at-the-bottom",
        area="roy",
        path=KNOWLEDGE,  # the redeal shared with Memory-Uno
        old="    deck = [deck[i] for i in rng.permutation(len(deck))]\n",
        new="",
        tests=("tests/test_core.py::"
               "test_a_redeal_deals_counted_cards_to_the_deck_and_shuffles_it",
               "tests/test_memory_uno_rules.py::"
               "test_resampling_shuffles_the_cards_counted_in_the_deck_into_it"),
        why="a determinization puts the cards the seat counts in the deck at its bottom",
    ),
    Mutant(
        id="roy-deck-memory-outlives-hand",
        area="roy",
        path=ROY,
        old="        self.reshuffled = False\n        self.tracker.known.fill(-1)\n",
        new="        self.reshuffled = False\n",
        tests=(T_ROY,),
        why="memories of the last hand's pile and deck carry into the next hand",
    ),
    Mutant(
        id="roy-opponent-size-wrong-seat",
        area="roy",
        path=ROY,
        old="self._watchers = [[(other, self._opp0 - 1 + (seat - other) % n,",
        new="self._watchers = [[(other, self._opp0 - 1 + (other - seat) % n,",
        tests=(T_ROY,),
        why="an opponent's hand size shows in another opponent's place (3+ players)",
    ),
    Mutant(
        id="roy-blocked-hand-late",
        area="roy",
        path=ROY,
        old="if self.stalled_turns >= self.num_players:",
        new="if self.stalled_turns > self.num_players:",
        tests=(T_ROY,),
        why="a blocked hand is declared one empty draw late",
        equivalent=("unreachable: drawing nothing leaves every card but the top in hands, so"
                    " a Jack holder, who can always discard, is in any full round of seats"
                    " (an Ace penalty always draws the cards under the Ace)"),
    ),
    Mutant(
        id="roy-scores-obs-fixed-target",
        area="roy",
        path=ROY,
        old="out[base + k] = scores[(seat + k) % n] / self.target",
        new="out[base + k] = scores[(seat + k) % n] / 100",
        tests=(T_ROY,),
        why="the observed scores are scaled by the default target, not target_score",
    ),
    Mutant(
        id="roy-chosen-draw-recorded",
        area="roy",
        path=ROY,
        old='        self._draws_are_forced = not self.config["draw_when_able"]\n',
        new="        self._draws_are_forced = True\n",
        tests=(T_ROY,),
        why="with draw_when_able a draw is a choice, yet the table is told the drawer was void",
    ),
    Mutant(
        id="roy-forced-draw-ignores-announced-suit",
        area="roy",
        path=ROY,
        old=("        top = self.discard[-1]\n"
             "        suit = self.announced_suit if self.announced_suit >= 0 else SUIT_OF[top]\n"),
        new="        top = self.discard[-1]\n        suit = SUIT_OF[top]\n",
        tests=(T_ROY,),
        why="a forced draw after a wild Jack records the Jack's suit, not the announced one",
    ),
    Mutant(
        id="roy-forced-draw-gains-not-counted",
        area="roy",
        path=ROY,
        old="            self.forced_gained[seat] += 1\n",
        new="            pass\n",
        tests=(T_ROY,),
        why="cards gained after a forced draw (penalties) do not count against its record",
    ),
    Mutant(
        id="roy-redeal-ignores-forced-draws",
        area="roy",
        path=ROY,
        old="        if max(self.forced_suit) >= 0:\n            self._honour_forced_draws(",
        new="        if False:\n            self._honour_forced_draws(",
        tests=(T_ROY_FORCED,),
        why="a redeal gives an opponent cards its last forced draw showed it did not hold",
    ),
    Mutant(
        id="roy-redeal-keeps-all-it-gained",
        area="roy",
        path=ROY,
        old="            keep = _limited_hypergeometric(total, can, len(hand), free, rng)\n",
        new="            keep = free\n",
        tests=(T_ROY_FORCED,),
        why="a redealt opponent that broke its forced draw always keeps as many answering "
            "cards as it gained, not a count drawn from the conditioned deal",
    ),
    Mutant(
        id="roy-redeal-swap-breaks-another-record",
        area="roy",
        path=ROY,
        old="                if unrecorded or not self._could_answer(other, card) \\\n",
        new="                if True or not self._could_answer(other, card) \\\n",
        tests=(T_ROY_FORCED,),
        why="the repair swaps an answering card into another opponent's hand past its own "
            "forced draw's limit",
    ),
    # -- Memory-Uno --------------------------------------------------------------------------------
    Mutant(
        id="mu-hundred-no-drop",
        area="memory_uno",
        path=MEMORY_UNO,
        old="DROPS = {50: 0, 100: 50}",
        new="DROPS = {50: 0}",
        tests=(T_MEMORY_UNO,),
        why="a total landing exactly on 100 does not drop to 50",
    ),
    Mutant(
        id="mu-mask-reads-the-deck-top",
        area="memory_uno",
        path=MEMORY_UNO,
        old="            if self.grave:\n",
        new="            if self.grave and (not self.deck or self.deck[-1] % 2):\n",
        tests=("tests/test_api_all_games.py::test_no_leak_under_resampling"
               "[memory_uno-num_players=4]",),
        why="a legal move hangs on the deck's hidden top card: the mask leaks it",
    ),
    Mutant(
        id="mu-tied-call-succeeds",
        area="memory_uno",
        path=MEMORY_UNO,
        old="if points[caller] >= min(points[:caller] + points[caller + 1:]):",
        new="if points[caller] > min(points[:caller] + points[caller + 1:]):",
        tests=(T_MEMORY_UNO,),
        why="a caller tied for the lowest hand escapes the 30-point penalty",
    ),
    Mutant(
        id="mu-failed-call-option-ignored",
        area="memory_uno",
        path=MEMORY_UNO,
        old="gains[caller] = CALL_PENALTY + (points[caller] if self._on_top else 0)",
        new="gains[caller] = CALL_PENALTY + points[caller]",
        tests=(T_MEMORY_UNO,),
        why="failed_call='instead' is ignored: a failed caller always scores hand + 30",
    ),
    Mutant(
        id="mu-red-king-no-rank-match",
        area="memory_uno",
        path=MEMORY_UNO,
        old='"rank": [BLACK_KING if k == RED_KING else k for k in range(NUM_KINDS)],',
        new='"rank": list(range(NUM_KINDS)),',
        tests=(T_MEMORY_UNO,),
        why="match='rank' (any King matches any King) keeps the Kings apart as the default does",
    ),
    Mutant(
        id="mu-default-match-kings-together",
        area="memory_uno",
        path=MEMORY_UNO,
        old='"rank_kings_by_colour": list(range(NUM_KINDS)),',
        new=('"rank_kings_by_colour": '
             '[BLACK_KING if k == RED_KING else k for k in range(NUM_KINDS)],'),
        tests=(T_MEMORY_UNO,),
        why="the default match lets a red King match a black King (the reading before issue 38)",
    ),
    Mutant(
        id="mu-default-match-by-points",
        area="memory_uno",
        path=MEMORY_UNO,
        old='        "match": Option("rank_kings_by_colour",',
        new='        "match": Option("points",',
        tests=(T_MEMORY_UNO,),
        why="the default match is by points (10 J Q black K together), against the effect table",
    ),
    Mutant(
        id="mu-window-placer-first",
        area="memory_uno",
        path=MEMORY_UNO,
        old="[(placer + k) % n for k in range(1, n + 1)]",
        new="[(placer + k) % n for k in range(n)]",
        tests=(T_MEMORY_UNO,),
        why="a reaction window asks the placer first instead of the seat to its left",
    ),
    Mutant(
        id="mu-lock-survives-draw",
        area="memory_uno",
        path=MEMORY_UNO,
        old='            self._lock(-1)  # "until ... a new card has been drawn"\n',
        new="",
        tests=(T_MEMORY_UNO,),
        why="drawing from the deck does not lift the stack lock",
    ),
    Mutant(
        id="mu-wrong-throw-private",
        area="memory_uno",
        path=MEMORY_UNO,
        old=("        self._see_all(slot, card)\n"
             "        self._add_card(seat, self._draw_card())"),
        new=("        self._see(slot, card, seat)\n"
             "        self._add_card(seat, self._draw_card())"),
        tests=(T_MEMORY_UNO,),
        why="a wrong throw shows the card to the thrower only, not to everyone",
    ),
    Mutant(
        id="mu-full-hand-may-throw",
        area="memory_uno",
        path=MEMORY_UNO,
        old=("            if self.hand_count[seat] < SLOTS:\n"
             "                tb = self.throw_base"),
        new=("            if self.hand_count[seat] <= SLOTS:\n"
             "                tb = self.throw_base"),
        tests=(T_MEMORY_UNO,),
        why="a seat holding 8 cards may throw, with no room for a penalty card",
    ),
    Mutant(
        id="mu-grave-card-discardable",
        area="memory_uno",
        path=MEMORY_UNO,
        old="            if phase == DRAWN and not self.drawn_from_grave:",
        new="            if phase == DRAWN:",
        tests=(T_MEMORY_UNO,),
        why="a card taken from the graveyard may be discarded for its effect",
    ),
    Mutant(
        id="mu-deck-draw-leaks",
        area="memory_uno",
        path=MEMORY_UNO,
        old="            self._drawn_v[self.turn_player, KIND_OF[card]] = 1.0",
        new="            self._drawn_v[:, KIND_OF[card]] = 1.0",
        tests=(T_MEMORY_UNO,),
        why="a card drawn from the deck shows in every seat's observation",
    ),
    Mutant(
        id="mu-elimination-at-100",
        area="memory_uno",
        path=MEMORY_UNO,
        old="max(totals) > ELIMINATION",
        new="max(totals) >= ELIMINATION",
        tests=(T_MEMORY_UNO,),
        why="a total of exactly 100 ends the game ('whoever exceeds 100')",
        equivalent="no total is ever exactly 100 when checked: landing on 100 drops it to 50 first",
    ),
    Mutant(
        id="mu-match-option-ignored",
        area="memory_uno",
        path=MEMORY_UNO,
        old='self._match = MATCH_KEYS[self.config["match"]]',
        new='self._match = MATCH_KEYS["rank_kings_by_colour"]',
        tests=(T_MEMORY_UNO,),
        why="the match option is ignored: a thrown card always matches by the default's rule",
    ),
    Mutant(
        id="mu-six-seats-as-five",
        area="memory_uno",
        path=ENGINE,
        old='self.num_players: int = int(self.config.get("num_players", 2))',
        new=('self.num_players: int = int(self.config.get("num_players", 2))\n'
             '        if self.name == "memory_uno" and self.num_players == 6:\n'
             "            self.num_players = 5"),
        tests=(T_MEMORY_UNO + "::test_every_player_count_deals_four_cards_to_each_seat",),
        why="num_players=6 is played with five seats (a player count capped below the maximum)",
    ),
    Mutant(
        id="mu-reshuffle-forgets-deck",
        area="memory_uno",
        path=MEMORY_UNO,
        old=("            known[:, d:] = known[:, g:d]\n"
             "            known[:, g:d] = -1\n"
             "            self._dmem[...] = self._gmem\n"),
        new=("            known[:, g:] = -1\n"
             "            self._dmem.fill(0.0)\n"),
        tests=(T_MEMORY_UNO,),
        why="a reshuffle loses which cards went into the new deck (the gap before the fix)",
    ),
    Mutant(
        id="mu-everyone-sees-the-draw",
        area="memory_uno",
        path=MEMORY_UNO,
        old="                self._seen_out_of_deck(seat, card)\n            self._set_drawn",
        new="                self._seen_out_of_deck_by_all(card)\n            self._set_drawn",
        tests=(T_MEMORY_UNO,),
        why="every seat stops counting the card drawn from a reshuffled deck, not the drawer only",
    ),
    Mutant(
        id="mu-landed-card-stays-in-deck",
        area="memory_uno",
        path=MEMORY_UNO,
        old="        if self.reshuffled:  # face up: everyone sees it has left the deck\n",
        new="        if False:\n",
        tests=(T_MEMORY_UNO,),
        why="a card that lands face up on the graveyard is still counted in the deck",
    ),
    Mutant(
        id="mu-look-keeps-deck-memory",
        area="memory_uno",
        path=MEMORY_UNO,
        old=("        sv[kk + 1 + KIND_OF[card]] = 1.0\n"
             "        if self.reshuffled:\n"
             "            self._seen_out_of_deck(seat, card)\n"),
        new="        sv[kk + 1 + KIND_OF[card]] = 1.0\n",
        tests=(T_MEMORY_UNO,),
        why="a seat that looks at a reshuffled card in someone's hand still counts it in the deck",
    ),
    Mutant(
        id="mu-resample-keeps-grave-order",
        area="memory_uno",
        path=MEMORY_UNO,
        old="        self.grave[:-1] = [self.grave[int(i)] for i in order]\n",
        new="",
        tests=("tests/test_memory_uno_rules.py::test_resampling_shuffles_the_buried_graveyard",),
        why="a determinization keeps the remembered buried cards in their true order",
    ),
    Mutant(
        id="mu-resample-ignores-deck-memory",
        area="memory_uno",
        path=KNOWLEDGE,  # the redeal shared with ROY
        old=("    in_deck = [c for c in unseen if is_counted[c]]\n"
             "    rest = [c for c in unseen if not is_counted[c]] + also_hidden\n"),
        new=("    in_deck: list[int] = []\n"
             "    rest = list(unseen) + also_hidden\n"),
        tests=(T_MEMORY_UNO,),
        why="determinization deals cards the seat counts in the deck anywhere, even buried",
    ),
    Mutant(
        id="mu-redeal-keeps-others-deck-memory",
        area="memory_uno",
        path=MEMORY_UNO,
        old="        if self.reshuffled:\n            self._redeal_deck_memory(seat)\n",
        new="",
        tests=(T_MEMORY_UNO,),
        why="after a redeal other seats still count cards the redeal put where they saw them",
    ),
    Mutant(
        id="mu-wrong-throw-keeps-deck-memory",
        area="memory_uno",
        path=MEMORY_UNO,
        old=("        self._kkcol[slot][...] = KNOWN_ROW_OF[card]  # _kk[:, slot]\n"
             "        if self.reshuffled:\n"
             "            self._seen_out_of_deck_by_all(card)\n"),
        new="        self._kkcol[slot][...] = KNOWN_ROW_OF[card]  # _kk[:, slot]\n",
        tests=(T_MEMORY_UNO,),
        why="a reshuffled card revealed by a wrong throw is still counted in the deck",
    ),
    Mutant(
        id="mu-redeal-buries-counted-cards",
        area="memory_uno",
        path=MEMORY_UNO,
        old="        memory[:, self.grave] = -1\n",
        new="",
        tests=(T_MEMORY_UNO,),
        why="after a redeal other seats count cards it buried (seats that forget only)",
    ),
    Mutant(
        id="mu-window-queue-never-shrinks",
        area="memory_uno",
        path=MEMORY_UNO,
        old="            seat = queue.pop(0)\n            sv[qa + seat] = 0.0\n",
        new="            seat = queue.pop(0)\n",
        tests=(T_MEMORY_UNO,),
        why="the observed window queue still shows seats that have already answered",
    ),
    Mutant(
        id="mu-give-keeps-window-queue",
        area="memory_uno",
        path=MEMORY_UNO,
        old="                self._close_window()  # the landed card opens a new one after"
            " the give\n",
        new="",
        tests=(T_MEMORY_UNO,),
        why="while a thrower chooses its give, the closed window's queue is still observed",
    ),
    Mutant(
        id="mu-window-queue-unobserved",
        area="memory_uno",
        path=MEMORY_UNO,
        old="        idx += [o[\"queue\"] + s for s in rel_seats]\n",
        new="        idx += [o[\"lock\"] + s for s in rel_seats]\n",
        tests=(T_MEMORY_UNO,),
        why="the window queue's observation block reads another field",
    ),
    Mutant(
        id="mu-wrong-throw-unlocks",
        area="memory_uno",
        path=MEMORY_UNO,
        old="        self._see_all(slot, card)\n        self._add_card(seat, self._draw_card())\n",
        new=("        self._see_all(slot, card)\n        self._lock(-1)\n"
             "        self._add_card(seat, self._draw_card())\n"),
        tests=(T_MEMORY_UNO,),
        why=("a wrong throw's penalty card counts as a new card drawn and reopens the locked "
             "stack (the text reopens it on a draw or a fire from another stack only)"),
    ),
    Mutant(
        id="mu-swap-with-one-card",
        area="memory_uno",
        path=MEMORY_UNO,
        old="or (phase == SWAP_FIRST and total < 2)):",
        new="or (phase == SWAP_FIRST and total < 1)):",
        tests=(T_MEMORY_UNO,),
        why="a J/Q swap with one card on the table is not skipped: a position with no legal move",
    ),
    Mutant(
        id="mu-give-without-cards",
        area="memory_uno",
        path=MEMORY_UNO,
        old="            if owner != seat and self.hand_count[seat] > 0:\n",
        new="            if owner != seat:\n",
        tests=(T_MEMORY_UNO,),
        why="a thrower with no cards is asked to give one: a position with no legal move",
    ),
    Mutant(
        id="mu-heuristic-never-calls",
        area="memory_uno",
        path=MEMORY_UNO_HEURISTIC_RULES,
        old="    if mine > CALL_LIMIT and not late:\n        return False\n",
        new="    return False\n",
        tests=("tests/test_memory_uno_heuristic.py",),
        why="the heuristic never calls the round, whatever its known hand",
    ),
    Mutant(
        id="mu-heuristic-calls-without-comparing",
        area="memory_uno",
        path=MEMORY_UNO_HEURISTIC_RULES,
        old="        if seat_sum(value, r * SLOTS) - mine < margin:\n",
        new="        if False:\n",
        tests=("tests/test_memory_uno_heuristic.py",),
        why="the heuristic calls on any low hand, without weighing the opponents' estimates",
    ),
    Mutant(
        id="mu-heuristic-sums-a-seat-in-order",
        area="memory_uno",
        path=MEMORY_UNO_HEURISTIC_RULES,
        old="    return (((v[s] + v[s + 1]) + (v[s + 2] + v[s + 3]))\n"
            "            + ((v[s + 4] + v[s + 5]) + (v[s + 6] + v[s + 7])))\n",
        new="    return (((((((v[s] + v[s + 1]) + v[s + 2]) + v[s + 3]) + v[s + 4]) + v[s + 5])\n"
            "             + v[s + 6]) + v[s + 7])\n",
        tests=("tests/test_memory_uno_heuristic.py::test_a_seats_sum_is_numpys_to_the_last_bit",),
        why="a seat's estimate added left to right, not in numpy's pairwise order: the same "
            "value but for the last bit, which can flip a call at the margin",
    ),
    Mutant(
        id="mu-heuristic-argmax-takes-the-last-of-equals",
        area="memory_uno",
        path=MEMORY_UNO_HEURISTIC_RULES,
        old="        if x > values[best]:\n",
        new="        if x >= values[best]:\n",
        tests=("tests/test_memory_uno_heuristic.py::"
               "test_its_moves_are_the_numpy_versions_on_perturbed_observations",),
        why="a one-hot field with two set entries read as the last, where numpy's argmax "
            "reads the first",
    ),
    Mutant(
        id="mu-heuristic-reads-no-top-as-an-ace",
        area="memory_uno",
        path=MEMORY_UNO_HEURISTIC_RULES,
        old="        if values[i] != 0.0:\n            return argmax(values, start, NUM_KINDS)\n"
            "    return -1\n",
        new="        if values[i] != 0.0:\n            return argmax(values, start, NUM_KINDS)\n"
            "    return 0\n",
        tests=("tests/test_memory_uno_heuristic.py::"
               "test_its_moves_are_the_numpy_versions_on_perturbed_observations",),
        why="an empty graveyard top (or no drawn card) read as kind 0, an Ace",
    ),
    # -- Mega Mem-Ory ------------------------------------------------------------------------------
    Mutant(
        id="mm-long-run-points",
        area="mega_memory",
        path=GROUPING,
        old="return 5 + 3 * (n - 4)",
        new="return 5 + 2 * (n - 4)",
        tests=(T_GROUPING,),
        why="a run beyond four cards gains two points per extra card, not three",
    ),
    Mutant(
        id="mm-king-ace-pair",
        area="mega_memory",
        path=GROUPING,
        old="(SUIT_OF[a] == SUIT_OF[b] and abs(a - b) == 1)",
        new="(SUIT_OF[a] == SUIT_OF[b] and abs(a - b) in (1, 12))",
        tests=(T_GROUPING,),
        why="K-A of one suit counts as a run pair (Aces are always low)",
    ),
    Mutant(
        id="mm-run-walks-past-ace",
        area="mega_memory",
        path=GROUPING,
        old="for _ in range(RANK_OF[low_card]):  # down to the Ace",
        new="for _ in range(12):  # down to the Ace",
        tests=(T_MEGA,),
        why="a centre run extends below the Ace into the previous suit's King",
    ),
    Mutant(
        id="mm-first-card-scores-after-flip",
        area="mega_memory",
        path=MEGA,
        old="for piles in scoring_piles((second,), self._rank_piles, self._pile_of):",
        new="for piles in scoring_piles((first,), self._rank_piles, self._pile_of):",
        tests=(T_MEGA,),
        why="after a side flip the first card still scores alone (the IMPORTANT NOTE)",
    ),
    Mutant(
        id="mm-dig-stops-after-a-join",
        area="mega_memory",
        path=MEGA,
        old=("            self.phase = DIG\n"
             "            if self.discard:\n"
             "                return\n"),
        new="            self.phase = DIG\n",
        tests=(T_MEGA,),
        why="a card dug into a discard-pile score ends the dig: the player cannot dig further",
    ),
    Mutant(
        id="mm-keep-swapped",
        area="mega_memory",
        path=MEGA,
        old="            if action == KEEP_SECOND:",
        new="            if action == KEEP_FIRST:",
        tests=(T_MEGA,),
        why="keep:first keeps the second card and keep:second the first",
    ),
    Mutant(
        id="mm-refill-seen",
        area="mega_memory",
        path=MEGA,
        old=("                self.sides[seat][slot] = self._pop_deck(SIDE_SLOT_BASE + seat *"
             " SIDE_SLOTS + slot)"),
        new=("                self._put_side(seat, slot, self._pop_deck(SIDE_SLOT_BASE + seat"
             " * SIDE_SLOTS + slot))"),
        tests=(T_MEGA,),
        why=("the side slot refilled from the deck is remembered by both players though nobody"
             " saw it"),
    ),
    Mutant(
        id="mm-winner-gains-points",
        area="mega_memory",
        path=MEGA,
        old="diff = abs(p0 - p1)",
        new="diff = max(p0, p1)",
        tests=(T_MEGA,),
        why="the round's winner gains its own points instead of the difference",
    ),
    Mutant(
        id="mm-ran-out-ignored",
        area="mega_memory",
        path=MEGA,
        old="if (not self.deck or (self.piles_ran_out and self._end_when_ran_out)",
        new="if (not self.deck",
        tests=(T_MEGA,),
        why="a turn that turned the last card with the discard pile empty does not end the round "
            "(the single card cycles: the reading before issue 38)",
    ),
    Mutant(
        id="mm-ran-out-on-any-last-deck-card",
        area="mega_memory",
        path=MEGA,
        old="        if not self.deck:  # the deck is empty only when the discard pile is too",
        new="        if len(self.deck) <= 1:",
        tests=(T_MEGA,),
        why="the round ends after the deck's last card is turned even when the discard pile "
            "slid over under it",
    ),
    Mutant(
        id="mm-round-end-option-ignored",
        area="mega_memory",
        path=MEGA,
        old='self._end_when_ran_out = self.config["round_end"] == "ran_out_this_turn"',
        new="self._end_when_ran_out = True",
        tests=(T_MEGA,),
        why="round_end='empty_at_turn_end' is ignored",
    ),
    Mutant(
        id="mm-stall-late",
        area="mega_memory",
        path=MEGA,
        old="self.scoreless_turns >= self.stall_turns",
        new="self.scoreless_turns > self.stall_turns",
        tests=(T_MEGA,),
        why="a stalled round ends one scoreless turn after stall_turns",
    ),
    Mutant(
        id="mm-dealer-starts",
        area="mega_memory",
        path=MEGA,
        old="        self._begin_turn(non_dealer)",
        new="        self._begin_turn(self.dealer)",
        tests=(T_MEGA,),
        why="the dealer plays first ('the sitch who did not deal goes first')",
    ),
    Mutant(
        id="mm-score-reward-one-sided",
        area="mega_memory",
        path=MEGA,
        old="                self.rewards[1 - winner] -= diff\n",
        new="",
        tests=(T_MEGA,),
        why="reward='score' pays the winner the swing but does not charge the loser",
    ),
    Mutant(
        id="mm-side-pair-option-ignored",
        area="mega_memory",
        path=MEGA,
        old='self.side_pair_ok = self.config["side_pair_without_centre"]',
        new="self.side_pair_ok = False",
        tests=(T_MEGA,),
        why="side_pair_without_centre=True is ignored: the two revealed cards never score alone",
    ),
    Mutant(
        id="mm-stall-obs-fixed-scale",
        area="mega_memory",
        path=MEGA,
        old="out[self._o_stall] = self.scoreless_turns / self.stall_turns",
        new="out[self._o_stall] = self.scoreless_turns / 48",
        tests=(T_MEGA,),
        why="the observed scoreless-turn count is scaled by the default stall_turns",
    ),
    # -- Deluxe Memory -----------------------------------------------------------------------------
    Mutant(
        id="dm-black-pair-self-target",
        area="deluxe_memory",
        path=DELUXE,
        old="            self._targets(m, exclude=(me,))",
        new="            self._targets(m, exclude=())",
        tests=(T_CHART,),
        why="a black pair (and the Ace's loss) may target the matcher itself",
    ),
    Mutant(
        id="dm-underdogs-never-end-by-tokens",
        area="deluxe_memory",
        path=DELUXE,
        old="sum(1 for t in self.tokens if t > 0) <= 1",
        new="sum(1 for t in self.tokens if t > 0) < 1",
        tests=(T_DELUXE,),
        why="under Underdogs the game goes on with only one player holding tokens (the reading "
            "before issue 38)",
    ),
    Mutant(
        id="dm-underdogs-end-option-ignored",
        area="deluxe_memory",
        path=DELUXE,
        old='self.underdogs_end_by_tokens = cfg["underdogs_end"] == "one_with_tokens"',
        new="self.underdogs_end_by_tokens = True",
        tests=(T_DELUXE,),
        why="underdogs_end='no_match_left' is ignored",
    ),
    Mutant(
        id="dm-equalise-to-zero-unchecked",
        area="deluxe_memory",
        path=DELUXE,
        old="""        self._check_out(a)  # 1 and 0 tokens (Underdogs) equalise to 0 and 0
        self._check_out(b)
""",
        new="",
        tests=(T_CHART,),
        why="an equalising that leaves both players at 0 tokens is not checked for the end",
    ),
    Mutant(
        id="dm-face-cards-ten",
        area="deluxe_memory",
        path=DELUXE,
        old=("        elif COLOUR_OF[ca] == COLOUR_OF[cb]:\n"
             "            self.amount = rank + 1"),
        new=("        elif COLOUR_OF[ca] == COLOUR_OF[cb]:\n"
             "            self.amount = min(rank + 1, 10)"),
        tests=(T_DELUXE,),
        why="J, Q, K pairs pay 10 instead of 11, 12, 13",
    ),
    Mutant(
        id="dm-bank-overdraws",
        area="deluxe_memory",
        path=DELUXE,
        old="got = min(amount, self.bank)",
        new="got = amount",
        tests=(T_DELUXE,),
        why="the bank pays out more tokens than it holds",
    ),
    Mutant(
        id="dm-hide-pays-out",
        area="deluxe_memory",
        path=DELUXE,
        old="budget = self.tokens[me] - (0 if self.underdogs else 1)",
        new="budget = self.tokens[me]",
        tests=(T_DELUXE,),
        why="a player may spend its last token hiding a card, and so go out",
    ),
    Mutant(
        id="dm-jack-shield-wrong-seat",
        area="deluxe_memory",
        path=DELUXE,
        old="richer = a if self.tokens[a] > self.tokens[b] else b",
        new="richer = a",
        tests=(T_CHART,),
        why="the Jack uses the first chosen player's shield, not the richer one's",
    ),
    Mutant(
        id="dm-stolen-eight-skips-wrong-seat",
        area="deluxe_memory",
        path=DELUXE,
        old="nxt = self._next_active(owner)",
        new="nxt = self._next_active(self.turn_owner)",
        tests=(T_CHART,),
        why="a stolen Eight skips the player after the matcher, not after the Ten pair's holder",
    ),
    Mutant(
        id="dm-out-player-ten-steals",
        area="deluxe_memory",
        path=DELUXE,
        old="if self.active[seat] and self._drop_kept(seat, TEN_PAIR):",
        new="if self._drop_kept(seat, TEN_PAIR):",
        tests=(T_CHART,),
        why="the Ten pair of a player who is out still takes another player's match",
    ),
    Mutant(
        id="dm-seven-pay-floor",
        area="deluxe_memory",
        path=DELUXE,
        old="floor = 5 if self.underdogs else 6",
        new="floor = 5",
        tests=(T_CHART,),
        why="buying a turn with exactly 5 tokens is offered, which puts the payer out",
    ),
    Mutant(
        id="dm-peek-first-ignored",
        area="deluxe_memory",
        path=DELUXE,
        old=("            if self.peek_first:\n"
             "                self._show(action, actor)"),
        new=("            if True:\n"
             "                self._show(action, actor)"),
        tests=(T_DELUXE,),
        why="peek_first=False still shows the first card before the second pick",
    ),
    Mutant(
        id="dm-reveal-face-up",
        area="deluxe_memory",
        path=DELUXE,
        old=("        elif ph in (ACE_REVEAL, SIX_REVEAL):\n"
             "            cells[:] = self._facedown"),
        new=("        elif ph in (ACE_REVEAL, SIX_REVEAL):\n"
             "            cells[:] = self._present"),
        tests=(T_CHART,),
        why="the Ace's and the Six's reveals may choose face-up cards",
    ),
    Mutant(
        id="dm-swap-forgets",
        area="deluxe_memory",
        path=DELUXE,
        old=("        self.tracker.swap(a, b)\n"
             "        seen_a = "),
        new="        seen_a = ",
        tests=(T_CHART,),
        why="memory does not follow swapped cards (the Two, the jokers)",
    ),
    Mutant(
        id="dm-kept-pair-to-matcher",
        area="deluxe_memory",
        path=DELUXE,
        old="            self.kept[owner].append([SHIELD if effect == R_NINE else TEN_PAIR, a, b])",
        new=("            self.kept[self.turn_owner].append("
             "[SHIELD if effect == R_NINE else TEN_PAIR, a, b])"),
        tests=(T_CHART,),
        why="a Nine or Ten pair matched for another seat's effect is kept by the matcher",
    ),
    Mutant(
        id="dm-simplicity-ignored",
        area="deluxe_memory",
        path=DELUXE,
        old='self.simplicity = bool(cfg["simplicity"])',
        new="self.simplicity = False",
        tests=(T_DELUXE,),
        why="simplicity=True is ignored: a mixed pair still goes to the Mixed Chart",
    ),
    Mutant(
        id="dm-seen-stays-on-swap",
        area="deluxe_memory",
        path=DELUXE,
        old=("        self._seen_cols[a][...] = self._seen_cols[b]\n"
             "        self._seen_cols[b][...] = seen_a\n"),
        new="",
        tests=(T_DELUXE,),
        why="who has seen a card stays on the cell when a Two or the jokers swap the card away",
    ),
    Mutant(
        id="dm-seen-forgotten",
        area="deluxe_memory",
        path=DELUXE,
        old="        self._cards_stale[seat] = True\n",
        new=("        self._cards_stale[seat] = True\n"
             "        self.seen[seat] &= (self.tracker.known[seat] >= 0)\n"
             "        self._views_ok = False\n"),
        tests=(T_DELUXE,),
        why="forgetting a card also forgets having looked at it, though the look was public",
    ),
    Mutant(
        id="dm-rotation-shows-turn-owner",
        area="deluxe_memory",
        path=DELUXE,
        old="out[self._rotation0 + (self.rotation - seat) % n] = 1.0",
        new="out[self._rotation0 + (self.turn_owner - seat) % n] = 1.0",
        tests=(T_CHART,),
        why="during a stolen extra turn the observation shows its owner as the seat play "
            "resumes from",
    ),
    # -- Dogpile -----------------------------------------------------------------------------------
    Mutant(
        id="dp-ace-high-option-ignored",
        area="dogpile",
        path=DOGPILE,
        old="(ace_high and (lo, mid, hi) == (ACE, QUEEN, 12))",
        new="((lo, mid, hi) == (ACE, QUEEN, 12))",
        tests=(T_DOGPILE,),
        why="Q-K-A counts as a straight fetch without ace_high_straight",
    ),
    Mutant(
        id="dp-default-order-rotates",
        area="dogpile",
        path=DOGPILE,
        old='        "tick_order": Option("random",',
        new='        "tick_order": Option("rotate",',
        tests=(T_DOGPILE,),
        why="the default tick order rotates: seat s acts before seat s+1 in (n-1)/n of the "
            "ticks (the default before issue 38)",
    ),
    Mutant(
        id="dp-boneathon-repeats",
        area="dogpile",
        path=DOGPILE,
        old="if count >= 3 and self.boneathon_by[kind] < 0:",
        new="if count >= 3:",
        tests=(T_DOGPILE,),
        why="a boneathon is granted again (in later rounds, or to a second dog)",
    ),
    Mutant(
        id="dp-blackjaw-at-21",
        area="dogpile",
        path=DOGPILE,
        old="self.bones[s] == FULL_LOOT and self.totals[s] < BLACKJAW_LIMIT]",
        new="self.bones[s] == FULL_LOOT and self.totals[s] <= BLACKJAW_LIMIT]",
        tests=(T_DOGPILE,),
        why="a total of exactly 21 counts as BLACKJAW ('under 21')",
    ),
    Mutant(
        id="dp-highest-sniffs",
        area="dogpile",
        path=DOGPILE,
        old="low = min(loot)",
        new="low = max(loot)",
        tests=(T_DOGPILE,),
        why="the dog with the most loot sniffs, not the one with the least",
    ),
    Mutant(
        id="dp-shuffler-on-the-right",
        area="dogpile",
        path=DOGPILE,
        old="self.current_player = (sniffer + 1) % self.num_players",
        new="self.current_player = (sniffer - 1) % self.num_players",
        tests=(T_DOGPILE,),
        why="the sniffed bones go to the dog on the right (3+ dogs)",
    ),
    Mutant(
        id="dp-sniffer-forgets",
        area="dogpile",
        path=DOGPILE,
        old="        known[sniffer, v] = card\n",
        new="",
        tests=(T_DOGPILE,),
        why="the sniffer does not know which bones it sniffed",
    ),
    Mutant(
        id="dp-put-back-digger-only",
        area="dogpile",
        path=DOGPILE,
        old=("            self._known_cols[slot][:] = self._card_cols[card]\n"
             "            if self._forgets:"),
        new=("            self.tracker.known[seat, slot] = card\n"
             "            if self._forgets:"),
        tests=(T_DOGPILE,),
        why="only the digger remembers where a dug bone went back, though every dog watched",
    ),
    Mutant(
        id="dp-same-dog-first",
        area="dogpile",
        path=DOGPILE,
        old="rotation = self.tick_count % self.num_players",
        new="rotation = 0",
        tests=(T_DOGPILE,),
        why="the same dog acts first in every tick",
    ),
    Mutant(
        id="dp-ticks-per-second-ignored",
        area="dogpile",
        path=DOGPILE,
        old='self.round_ticks = [s * cfg["ticks_per_second"] for s in cfg["round_seconds"]]',
        new='self.round_ticks = list(cfg["round_seconds"])',
        tests=(T_DOGPILE,),
        why="ticks_per_second is ignored: a round has one tick per second",
    ),
    Mutant(
        id="dp-buried-bone-forgotten",
        area="dogpile",
        path=DOGPILE,
        old="                tracker.move(paw_slot, slot)\n",
        new="                tracker.conceal(paw_slot)\n",
        tests=(T_DOGPILE,),
        why="a bone buried face down is forgotten by the dogs that remembered it in the paw",
    ),
    Mutant(
        id="dp-joker-collar",
        area="dogpile",
        path=DOGPILE,
        old="if r0 == r1 == r2 and r0 != JOKER_RANK:",
        new="if r0 == r1 == r2:",
        tests=(T_DOGPILE,),
        why="three jokers would make a 3-of-a-collar",
        equivalent="the deck holds two jokers, so three pawed bones are never all jokers",
    ),
    Mutant(
        id="dp-sniff-option-ignored",
        area="dogpile",
        path=DOGPILE,
        old='self.sniff_optional = cfg["sniff"] == "optional"',
        new="self.sniff_optional = True",
        tests=(T_DOGPILE,),
        why="sniff='required' is ignored: a sniffer may still decline",
    ),
    Mutant(
        id="dp-resample-keeps-candidates-in-place",
        area="dogpile",
        path=DOGPILE,
        old="            if len(block) > 1:\n",
        new="            if False:\n",
        tests=("tests/test_dogpile_rules.py::"
               "test_resampling_spreads_a_remembered_candidate_over_its_group",),
        why="a determinization puts every remembered sniffed-group bone back on its true spot",
    ),
    Mutant(
        id="dp-resample-pins-every-candidate",
        area="dogpile",
        path=DOGPILE,
        old="        pool = [p for p in hidden if self._card_at(p) not in remembered]\n",
        new="        pool = [p for p in hidden if self._card_at(p) not in member_of]\n",
        tests=("tests/test_dogpile_rules.py::"
               "test_resampling_redraws_bones_that_left_a_sniffed_group_unseen",),
        why="a bone in a sniffed group is redrawn only within its group, even for a dog that "
            "never knew it was there",
    ),
    Mutant(
        id="dp-parallel-idle-steps-uncapped",
        area="dogpile",
        path=DOGPILE_PARALLEL,
        old="if not engine.done and engine.num_steps + self._idle_steps >= engine.step_cap:",
        new="if not engine.done and engine.num_steps >= engine.step_cap:",
        tests=("tests/test_dogpile_parallel.py::"
               "test_idle_steps_that_reach_max_steps_end_the_episode_with_no_legal_action",),
        why="a Parallel env's idle ticks never count towards max_steps",
    ),
    Mutant(
        id="dp-heuristic-reads-beliefs-as-bones",
        area="dogpile",
        path=DOGPILE_HEURISTIC_RULES,
        old="    hits: list[int] = (observation[:at.read_end] == 1.0).nonzero()[0].tolist()\n",
        new="    hits: list[int] = (observation[:at.read_end] > 0.0).nonzero()[0].tolist()\n",
        tests=("tests/test_search_reference.py::test_heuristic_moves_are_the_recorded_ones",),
        why="the heuristic takes a sniffed group's belief for a bone it knows",
    ),
    Mutant(
        id="dp-heuristic-reads-two-ranks-as-a-bone",
        area="dogpile",
        path=DOGPILE_HEURISTIC_RULES,
        old="        if ranks == 1:\n",
        new="        if ranks >= 1:\n",
        tests=("tests/test_dogpile_heuristic.py::"
               "test_the_heuristic_reads_every_bone_as_one_row_at_a_time_would",),
        why="a row with two ranks at 1.0 (no bone's encoding) read as the first rank's bone",
    ),
    Mutant(
        id="mm-heuristic-negative-row-argmax-past-the-row",
        area="mega_memory",
        path=MEGA_HEURISTIC_RULES,
        old="    if best < 0.0 and count < width:  # a zero entry is the maximum: the first one\n",
        new="    if best < 0.0 and count <= width:  # a zero entry is the maximum: the first one\n",
        tests=("tests/test_mega_memory_heuristic.py::test_the_view_is_read_as_numpy_reads_it",),
        why="a row of 52 negatives read as the card past its end, not numpy's first maximum",
    ),
    Mutant(
        id="mm-heuristic-gone-summed-in-double",
        area="mega_memory",
        path=MEGA_HEURISTIC_RULES,
        old="""                    gone[c] = bool(self.observation[at.my_scored + c]
                                   + self.observation[at.opp_scored + c] > 0.5)
""",
        new="""                    gone[c] = vals[j] + vals[k] > 0.5
""",
        tests=("tests/test_mega_memory_heuristic.py::test_the_view_is_read_as_numpy_reads_it",),
        why="a card scored by both seats in part summed in double, not numpy's float32",
    ),
    Mutant(
        id="roy-heuristic-sizes-compared-as-doubles",
        area="roy",
        path=ROY_HEURISTIC_RULES,
        old="_AT_MOST_2_F32: Final = 2.0 + 2.0 ** -23\n",
        new="_AT_MOST_2_F32: Final = 2.0\n",
        tests=("tests/test_roy_heuristic.py::"
               "test_the_opponents_sizes_compare_as_numpys_float32_product_does",),
        why="an opponent's hand size / 52 times 52 compared with 2 at a double's rounding, "
            "not the float32 product's the numpy heuristic compared",
    ),
    Mutant(
        id="roy-heuristic-plans-from-the-played-card-twice",
        area="roy",
        path=ROY_HEURISTIC_RULES,
        old="        self.used[i] = True\n        value = self._search(first",
        new="        value = self._search(first",
        tests=("tests/test_roy_heuristic.py::"
               "test_the_compiled_decision_plays_the_numpy_ones_in_random_and_heuristic_play",),
        why="the turn's plan may play its first card again (it stays in the hand it walks)",
    ),
    Mutant(
        id="roy-resample-memory-follows-the-old-buried-cards",
        area="roy",
        path=ROY,
        old="np.where(remembered_by, np.array(now_buried), -1)",
        new="np.where(remembered_by, np.array(buried), -1)",
        tests=("tests/test_roy_resample.py",),
        why="a determinization marks remembered the buried cards it just redealt away, not "
            "the ones it put in their places",
    ),
    Mutant(
        id="dp-parallel-idle-steps-forgotten-in-play",
        area="dogpile",
        path=DOGPILE_PARALLEL,
        old="        if self._idle_steps:  # the engine's own cap counts its steps only\n"
            "            self._cap_steps()\n",
        new="",
        tests=("tests/test_dogpile_parallel.py::"
               "test_idle_steps_count_towards_max_steps_after_play_resumes",),
        why="idle steps between rounds stop counting once play resumes: max_steps is overrun",
    ),
    # -- core: rewards, truncation, memory, config, the envs ---------------------------------------
    Mutant(
        id="core-ten-alias-missing",
        area="core",
        path=ENGINE,
        old='            key = f"{family}:t{arg[2:]}"',
        new="            pass",
        tests=("tests/test_card_spellings.py",),
        why="action_id refuses the ten spelt 10 (play:10H), which stacked decks accept",
    ),
    Mutant(
        id="core-later-decks-ignored",
        area="core",
        path=ENGINE,
        old="        return self.stacked_decks.pop(0) if self.stacked_decks else None",
        new="        return None",
        tests=("tests/test_later_rounds.py",),
        why="reset(decks=...) stacks only the first round; later rounds are shuffled anyway",
    ),
    Mutant(
        id="core-determinization-keeps-stacked-decks",
        area="core",
        path=ENGINE,
        old=("        self.stacked_decks = []  "
             "# later deals are chance to come: shuffled from the new stream"),
        new="",
        tests=("tests/test_later_rounds.py",),
        why="a determinization keeps the stacked decks to come: a search knows future deals",
    ),
    Mutant(
        id="core-unpack-flat",
        area="core",
        path="card_envs/core/obs_layout.py",
        old="        return {name: arr[..., sl].reshape(lead + self.shapes[name])",
        new="        return {name: arr[..., sl]",
        tests=("tests/test_named_observations.py",),
        why="decode_observation hands back flat fields, not each in its documented shape",
    ),
    Mutant(
        id="dp-parallel-loads-mid-tick",
        area="dogpile",
        path=DOGPILE_PARALLEL,
        old='        if fields.get("phase") == PLAY and fields.get("order_pos", 0) != 0:',
        new="        if False:",
        tests=("tests/test_dogpile_parallel.py::"
               "test_an_aec_snapshot_loads_between_ticks_but_not_mid_tick",),
        why="the Parallel env loads a mid-tick snapshot and replays dogs that already acted",
    ),
    Mutant(
        id="core-snapshot-kinds-unchecked",
        area="core",
        path=ENGINE,
        old="            if not _same_kind(example, decoded) or (",
        new="            if False and (",
        tests=("tests/test_snapshot_validation.py::"
               "test_a_field_without_a_schema_is_still_refused_by_its_kind",),
        why="a snapshot field of the wrong kind loads, and a later step or render crashes",
    ),
    Mutant(
        id="core-loaded-end-pays-nothing",
        area="core",
        path=AEC_ENV,
        old="        payoff = self.engine.rewards.tolist() if done_t or done_tr else",
        new="        payoff = [0.0] * len(self.agents) if done_t or done_tr else",
        tests=("tests/test_api_conventions.py::"
               "test_a_finished_game_s_snapshot_loads_as_a_finished_episode[roy]",),
        why="a finished game's snapshot loaded into the AEC env pays nobody its outcome",
    ),
    Mutant(
        id="core-resample-keeps-future-chance",
        area="core",
        path=ENGINE,
        old="        self.rng = np.random.default_rng(int(rng.integers(2**63)))\n",
        new="",
        tests=("tests/test_api_all_games.py::test_resampling_redraws_future_chance_too"
               "[roy-num_players=2]",),
        why="a determinization keeps the real game's random stream: every world reshuffles "
            "and deals as the real game will",
    ),
    Mutant(
        id="core-tied-winners-paid-in-full",
        area="core",
        path=ENGINE,
        old="            out[w] = 1.0 / k",
        new="            out[w] = 1.0",
        tests=("tests/test_core.py::test_win_rewards_split_ties_and_pay_nothing_on_a_full_tie",),
        why="each of k tied winners gets +1 instead of +1/k",
    ),
    Mutant(
        id="core-cap-one-late",
        area="core",
        path=ENGINE,
        old="elif self.num_steps >= self.step_cap:",
        new="elif self.num_steps > self.step_cap:",
        tests=(
            "tests/test_api_conventions.py::test_snapshot_keeps_the_step_count_towards_max_steps",
        ),
        why="max_steps truncates one decision late",
    ),
    Mutant(
        id="core-cap-truncates-finished",
        area="core",
        path=ENGINE,
        old=("            self._clear_mask()\n"
             "        elif self.num_steps >= self.step_cap:"),
        new=("            self._clear_mask()\n"
             "        if self.num_steps >= self.step_cap:"),
        tests=(
            ("tests/test_core.py::"
             "test_an_episode_ending_on_the_cap_step_is_terminated_not_truncated"),
        ),
        why="an episode that ends by the rules on the cap step is also marked truncated",
    ),
    Mutant(
        id="core-forget-after-acting",
        area="core",
        path=ENGINE,
        old=("        self.tracker.after_decision(seat)\n"
             "        self._after_forgetting(seat)\n"
             "        self._apply(action)"),
        new=("        self._apply(action)\n"
             "        self.tracker.after_decision(seat)\n"
             "        self._after_forgetting(seat)"),
        tests=(
            ("tests/test_core.py::"
             "test_memory_decays_as_a_seat_decides_so_its_own_reveal_lasts_to_its_next_decision"),
        ),
        why="memory decays after the decision plays out: what a seat's own action reveals is lost",
    ),
    Mutant(
        id="core-swap-aliases",
        area="core",
        path=KNOWLEDGE,
        old="col = self.known[:, a].copy()",
        new="col = self.known[:, a]",
        tests=("tests/test_core.py::test_tracker_events_move_knowledge_with_cards",),
        why="a swap reads a view of the column it overwrites: memory does not follow both cards",
    ),
    Mutant(
        id="core-memory-none-by-chance",
        area="core",
        path=KNOWLEDGE,
        old=("        if p >= 1.0:\n"
             "            row.fill(UNKNOWN)"),
        new=("        if p > 1.0:\n"
             "            row.fill(UNKNOWN)"),
        tests=(
            "tests/test_core.py::test_memory_modes",
            "tests/test_roy_rules.py::test_no_memory_forgets_after_own_decision",
        ),
        why="memory='none' forgets through the random path",
        equivalent=("random() < 1 always holds, so p = 1 still forgets every card; only the"
                    " tracker's private stream advances"),
    ),
    Mutant(
        id="core-bool-is-a-choice",
        area="core",
        path=CONFIG,
        old="if not any(type(value) is type(c) and value == c for c in self.choices):",
        new="if value not in self.choices:",
        tests=("tests/test_core.py::test_config_errors_name_key_and_allowed_values",),
        why="True / False pass for the seats 1 / 0 of a config option",
    ),
    Mutant(
        id="core-cumulative-overwritten",
        area="core",
        path=AEC_ENV,
        old="cumulative[a] += value  # PettingZoo",
        new="cumulative[a] = value  # PettingZoo",
        tests=(
            ("tests/test_core.py::"
             "test_a_waiting_seat_accumulates_the_rewards_of_every_step_since_it_last_acted"),
        ),
        why="a seat's cumulative reward keeps only the last step's reward",
    ),
    Mutant(
        id="core-mask-for-every-seat",
        area="core",
        path=AEC_ENV,
        old="        elif seat == engine.current_player:\n",
        new="        elif True:\n",
        tests=("tests/test_api_all_games.py::test_only_the_seat_to_act_gets_a_mask",),
        why="a seat that is not to act is shown the acting seat's legal actions",
    ),
    Mutant(
        id="core-gym-opponent-seats",
        area="core",
        path=GYM_ENV,
        old="agent = self.opponents[seat if seat < learner else seat - 1]",
        new="agent = self.opponents[(seat - 1) % len(self.opponents)]",
        tests=(
            "tests/test_core.py::test_gym_env_opponent_list_is_in_seat_order_skipping_the_learner",
        ),
        why="opponents listed per seat play in the wrong seats when the learner is not seat 0",
    ),
    Mutant(
        id="core-gym-opponent-rewards-dropped",
        area="core",
        path=GYM_ENV,
        old="            reward += self._play_opponents()",
        new="            self._play_opponents()",
        tests=(
            "tests/test_core.py::test_gym_env_terminal_reward_reaches_learner_on_opponent_move",
        ),
        why="rewards that arrive on opponents' moves never reach the learner",
    ),
    Mutant(
        id="core-gym-rewards-before-the-first-decision-dropped",
        area="core",
        path=GYM_ENV,
        old="        self._pending_reward = reward\n",
        new="        self._pending_reward = 0.0\n",
        tests=("tests/test_core.py::test_gym_score_rewards_add_up_to_the_learners_score",),
        why="points paid before the learner's first decision are missing from its return",
    ),
    Mutant(
        id="core-gym-plays-on-after-an-opponent-raised",
        area="core",
        path=GYM_ENV,
        old="            self._has_reset = False\n            self._interrupted = True\n",
        new="            self._interrupted = True\n",
        tests=("tests/test_api_conventions.py::"
               "test_gym_env_refuses_to_go_on_after_an_opponent_raised",),
        why="after an opponent raised, step() plays the learner's action for that opponent",
    ),
    Mutant(
        id="core-forgetting-ignores-its-seed",
        area="core",
        path=KNOWLEDGE,
        old="            self._rng = np.random.default_rng(self._seed)",
        new="            self._rng = np.random.default_rng(0)",
        tests=("tests/test_core.py::test_tracker_forgetting_is_seeded",),
        why="every game forgets the same cards, whatever its seed",
    ),
    Mutant(
        id="core-dead-step-keeps-a-wrapper-s-penalty",
        area="core",
        path=AEC_ENV,
        old="its penalty must be paid once.\n        self._clear_step_rewards()",
        new=("its penalty must be paid once.\n"
             "        self._rewards_dirty and self._clear_step_rewards()"),
        tests=("tests/test_ecosystem.py::test_terminate_illegal_wrapper_s_penalty_is_paid_once",),
        why="TerminateIllegalWrapper's -1 stays in env.rewards through every dead-agent step",
    ),
    Mutant(
        id="core-illegal-moves-raise-by-default",
        area="core",
        path=CONVENTIONS,
        old='ILLEGAL_ACTION_MODES = ("penalty", "error")',
        new='ILLEGAL_ACTION_MODES = ("error", "penalty")',
        tests=("tests/test_api_all_games.py::test_an_illegal_move_ends_the_episode_by_default"
               "[roy]",),
        why="env() raises on an illegal move by default, and Gymnasium's and SB3's checkers "
            "fail on every registered id",
    ),
    Mutant(
        id="core-illegal-move-unannounced",
        area="core",
        path=AEC_ENV,
        old="""        warn_illegal_move("obs['action_mask']")\n""",
        new="",
        tests=("tests/test_api_all_games.py::test_an_illegal_move_ends_the_episode_by_default"
               "[roy]",),
        why="an illegal move silently ends the episode: a learner's mistakes go unnoticed",
    ),
    Mutant(
        id="core-illegal-move-dead-steps-start-at-the-offender",
        area="core",
        path=AEC_ENV,
        old=("        self._skip_agent_selection = agent\n"
             "        self.agent_selection = self.agents[0]\n"),
        new="",
        tests=("tests/test_ecosystem.py::"
               "test_the_default_illegal_move_is_terminate_illegal_wrapper_s[roy]",),
        why="after an illegal move the agents step None in another order than PettingZoo's "
            "TerminateIllegalWrapper leaves them",
    ),
    Mutant(
        id="core-parallel-penalty-charges-every-dog",
        area="core",
        path=DOGPILE_PARALLEL,
        old="rew = {a: ILLEGAL_MOVE_REWARD if a in illegal else 0.0 for a in agents}",
        new="rew = dict.fromkeys(agents, ILLEGAL_MOVE_REWARD)",
        tests=("tests/test_dogpile_parallel.py::"
               "test_an_illegal_action_ends_the_episode_by_default_before_any_dog_moves",),
        why="one dog's illegal action costs every dog -1 in the Parallel env",
    ),
    Mutant(
        id="core-reset-option-typo-ignored",
        area="core",
        path=CONVENTIONS,
        old="    if unknown and options != _PETTINGZOO_SIGNATURE_PROBE:\n",
        new="    if False:\n",
        tests=("tests/test_api_conventions.py::"
               "test_a_misspelt_reset_option_is_an_error_like_a_misspelt_env_option",),
        why="reset(options={'dek': ...}) deals a random deck instead of the stacked one meant",
    ),
    Mutant(
        id="core-reset-options-refuse-pettingzoo-s-probe",
        area="core",
        path=CONVENTIONS,
        old="    if unknown and options != _PETTINGZOO_SIGNATURE_PROBE:\n",
        new="    if unknown:\n",
        tests=("tests/test_api_all_games.py::test_pettingzoo_api[roy-num_players=2]",),
        why="PettingZoo's api_test fails on every env: it checks reset's signature with "
            "options={'options': 1}",
    ),
    Mutant(
        id="core-resample-hidden-takes-any-seat",
        area="core",
        path=ENGINE,
        old="        checked = self.check_seat(seat)\n",
        new="        checked = seat\n",
        tests=("tests/test_api_conventions.py::"
               "test_a_bare_engine_s_resample_hidden_refuses_a_seat_that_is_not_one",),
        why="seat -1 redraws the last seat's unknowns; ROY takes seats past the table",
    ),
    Mutant(
        id="core-max-steps-ignored",
        area="core",
        path=ENGINE,
        old="self.step_cap: int = DEFAULT_SAFETY_CAP if cap is None else int(cap)",
        new="self.step_cap: int = DEFAULT_SAFETY_CAP",
        tests=("tests/test_core.py::test_max_steps_truncates_after_that_many_decisions",),
        why="max_steps is ignored: episodes run to the game's own safety cap",
    ),
    Mutant(
        id="core-undealt-engine-unguarded",
        area="core",
        path=ENGINE,
        old="        self._dealt = False\n",
        new="        self._dealt = True\n",
        tests=(
            ("tests/test_engine_guard.py::"
             "test_a_fresh_engine_refuses_every_guarded_method_naming_it_and_reset"),
        ),
        why=("a bare engine is not guarded before its first deal: legal_mask, step, ... give an "
             "obscure error or silently wrong output instead of saying to call reset()"),
    ),
    Mutant(
        id="core-guard-cache-survives-a-refused-snapshot",
        area="core",
        path=ENGINE,
        old=("        self._dealt = dealt\n        if not dealt:\n"
             "            self._mask_valid = False\n"),
        new="        self._dealt = dealt\n",
        tests=("tests/test_engine_guard.py::"
               "test_a_refused_snapshot_leaves_a_fresh_engine_guarded",),
        why=("a never-dealt engine that refused a snapshot keeps the legal mask its invariant "
             "check computed, and legal_mask() answers from that cache instead of refusing"),
    ),
    Mutant(
        id="core-memory-uno-observation-unguarded",
        area="core",
        path=MEMORY_UNO,
        old=("    def observation(self, seat: Any) -> np.ndarray:\n"
             "        if type(seat) is not int or not self._dealt:\n"),
        new=("    def observation(self, seat: Any) -> np.ndarray:\n"
             "        if type(seat) is not int:\n"),
        tests=("tests/test_engine_guard.py::"
               "test_a_fresh_engine_refuses_every_guarded_method_naming_it_and_reset",),
        why="a game's own observation() reads a position that was never dealt",
    ),
    Mutant(
        id="core-copy-drops-python-attributes",
        area="core",
        path=COPYING,
        old="    for name in getattr(obj, \"__dict__\", ()):\n",
        new="    for name in ():\n",
        tests=("tests/test_engine_guard.py::"
               "test_copies_of_a_fresh_engine_keep_the_guard_and_of_a_dealt_one_do_not",),
        why=("copies and pickles keep only a compiled class's own attributes: a plain-Python "
             "engine (or a Python subclass's attributes) copies as an empty shell"),
    ),
    Mutant(
        id="core-compiled-build-runs-stale",
        area="core",
        path=COMPILED,
        old="        if path.is_file() and built.get(module) != source_digest(path):\n",
        new="        if False:\n",
        tests=("tests/test_compiled.py::test_a_build_is_not_chosen_once_a_source_changed",),
        why="an edited source is shadowed by the extension built from the old one",
    ),
    Mutant(
        id="core-compiled-build-without-its-library",
        area="core",
        path=COMPILED,
        old="    paths = [source_path(m, package_dir) for m in MODULES] + [library]\n",
        new="    paths = [source_path(m, package_dir) for m in MODULES]\n",
        tests=("tests/test_compiled.py::test_an_incomplete_build_is_not_chosen",),
        why="a build whose shared library is gone is chosen, and every import of it fails",
    ),
    # -- training: self-play, evaluation, checkpoints and resume -----------------------------------
    Mutant(
        id="tr-zero-sum-uses-sum",
        area="training",
        path=SELFPLAY,
        old="other = -1.0 / (num_players - 1) if mode",
        new="other = -1.0 if mode",
        tests=("tests/test_training.py::test_vecenv_zero_sum_rewards_pay_the_learner_its_margin",),
        why="zero_sum subtracts the sum of the other seats' rewards, not their mean",
    ),
    Mutant(
        id="tr-pool-keeps-an-oversized-state",
        area="training",
        path=SELFPLAY,
        old="        if len(state[\"steps\"]) > self.size:",
        new="        if False:",
        tests=("tests/test_training.py::"
               "test_a_pool_refuses_a_state_with_more_snapshots_than_it_keeps",),
        why="a pool loads more snapshots than its pool_size and keeps them for good",
    ),
    Mutant(
        id="tr-latest-prob-inverted",
        area="training",
        path=SELFPLAY,
        old="if rng.random() < self.latest_prob:",
        new="if rng.random() >= self.latest_prob:",
        tests=(
            "tests/test_training.py::test_self_play_seats_get_the_newest_snapshot_with_latest_prob",
        ),
        why="the newest snapshot is drawn with probability 1 - latest_prob",
    ),
    Mutant(
        id="tr-pool-overwrites-newest",
        area="training",
        path=SELFPLAY,
        old="slot = int(np.argmin(self.steps))",
        new="slot = int(np.argmax(self.steps))",
        tests=("tests/test_training.py::test_pool_keeps_the_last_pool_size_snapshots",),
        why="a full opponent pool overwrites its newest snapshot, not its oldest",
    ),
    Mutant(
        id="tr-terminated-as-truncated",
        area="training",
        path=SELFPLAY,
        old='"TimeLimit.truncated": bool(engine.truncated and not engine.terminated),',
        new='"TimeLimit.truncated": bool(engine.done),',
        tests=("tests/test_training.py::test_only_a_step_cap_marks_an_episode_truncated",),
        why="every finished episode is marked truncated, so PPO bootstraps past real endings",
    ),
    Mutant(
        id="tr-shared-win-counted-whole",
        area="training",
        path=SELFPLAY,
        old="win = (1.0 / len(winners)) if learner in winners else 0.0",
        new="win = 1.0 if learner in winners else 0.0",
        tests=("tests/test_training.py::test_a_shared_win_counts_one_over_k_in_the_win_rates",),
        why="a k-way shared win counts as a whole win in the training win rates",
    ),
    Mutant(
        id="tr-wilson-centre",
        area="training",
        path=EVALUATE,
        old="centre = (p + z * z / (2 * n)) / denom",
        new="centre = p",
        tests=("tests/test_evaluate.py::test_wilson_interval_matches_reference_values",),
        why="the Wilson interval is centred on the raw proportion",
    ),
    Mutant(
        id="tr-focal-seat-fixed",
        area="training",
        path=EVALUATE,
        old="seats[g % n_players] = a",
        new="seats[0] = a",
        tests=("tests/test_evaluate.py::test_scores_rotate_the_focal_seat_and_split_shared_wins",),
        why="the evaluated agent always sits in seat 0 instead of rotating",
    ),
    Mutant(
        id="tr-duplicate-new-deals",
        area="training",
        path=EVALUATE,
        old="games_per_deal=n_players if duplicate else 1,",
        new="games_per_deal=1,",
        tests=("tests/test_evaluate.py::test_duplicate_play_cancels_the_deal",),
        why="duplicate play deals every game afresh, so the deal's luck stays in the result",
    ),
    Mutant(
        id="tr-duplicate-matchups-own-deals",
        area="training",
        path=EVALUATE,
        old="seed=seed + 7919 * (1 if duplicate else m + 1)",
        new="seed=seed + 7919 * (m + 1)",
        tests=("tests/test_evaluate.py::test_duplicate_play_cancels_the_deal",),
        why="duplicate matchups are dealt different games, so two policies meet other hands",
    ),
    Mutant(
        id="tr-rating-drift",
        area="training",
        path=EVALUATE,
        old="model = PlackettLuce(tau=0.0)",
        new="model = PlackettLuce()",
        tests=("tests/test_evaluate.py::test_unchanging_agents_grow_more_certain_with_more_games",),
        why="ratings drift, so the last games outweigh the rest and sigma never shrinks",
    ),
    Mutant(
        id="tr-rating-in-given-order",
        area="training",
        path=EVALUATE,
        old="games = sorted((list(seating), sorted(winners)) for matchup in schedule",
        new="games = list((list(seating), sorted(winners)) for matchup in schedule",
        tests=("tests/test_evaluate.py::test_ratings_do_not_depend_on_the_order_of_the_games",),
        why="the same games listed in another order get other ratings",
    ),
    Mutant(
        id="tr-rating-one-object-for-two-seats",
        area="training",
        path=EVALUATE,
        old="teams = [[model.rating(mu=ratings[i].mu, sigma=ratings[i].sigma)] for i in seating]",
        new="teams = [[ratings[i]] for i in seating]",
        tests=("tests/test_evaluate.py::"
               "test_an_agent_in_several_seats_gets_the_mean_of_their_updates",),
        why="an agent in two seats passes openskill one object twice, which rates it once",
    ),
    Mutant(
        id="tr-resume-global-rng-lost",
        area="training",
        path=TRAIN,
        old=('    venv.load_state_dict(state["venv"], model.policy)\n'
             '    set_rng_states(state["rng"])'),
        new='    venv.load_state_dict(state["venv"], model.policy)',
        tests=("tests/test_training.py::test_resume_continues_exactly",),
        why="a resumed run does not restore the python / numpy / torch RNG streams",
    ),
    Mutant(
        id="tr-checkpoint-any-config",
        area="training",
        path=CHECKPOINT,
        old="diff = [d for d in _diff(saved, config) if not _resumable(_key_of(d))]",
        new="diff = []",
        tests=("tests/test_training.py::test_corrupt_or_mismatched_checkpoint_is_a_clear_error",),
        why="a checkpoint written with a different config is resumed without a word",
    ),
    Mutant(
        id="tr-signal-handler-left-to-a-library",
        area="training",
        path=TRAIN,
        old="        for sig in self._previous:\n            signal.signal(sig, self._handle)\n",
        new="        return\n",
        tests=("tests/test_training.py::test_stop_on_signal_takes_its_handler_back_from_a_library",),
        why="ray.init's SIGTERM handler (sys.exit) stays in charge: the RLlib trainer dies "
            "mid-run or mid-teardown instead of stopping after a checkpoint",
    ),
    Mutant(
        id="tr-signal-after-training-unreported",
        area="training",
        path=TRAIN,
        old="    if stopped_by_signal and not stopped and not stopped_in_warm_start:\n",
        new="    if False:\n",
        tests=("tests/test_training.py::"
               "test_a_signal_after_the_training_leaves_only_the_closing_evaluation",),
        why="a run signalled after its training says only 'finished', though its closing "
            "evaluation was skipped",
    ),
    Mutant(
        id="tr-next-schedule-step",
        area="training",
        path=TRAIN,
        old="    while current <= step:",
        new="    while current < step:",
        tests=("tests/test_training.py::test_snapshots_at_step_0_and_every_snapshot_every_steps",),
        why="a snapshot / evaluation / checkpoint due exactly now is scheduled again for now",
    ),
    Mutant(
        id="tr-yaml-1-1",
        area="training",
        path=YAML12,
        old='    yaml = YAML(typ="safe", pure=True)\n',
        new='    yaml = YAML(typ="safe", pure=True)\n    yaml.version = (1, 1)\n',
        tests=("tests/test_training.py::test_a_number_written_without_a_dot_is_a_number",),
        why="a seed written 010 trains seed 8 (YAML 1.1 octal), and 1:30 reads as 90",
    ),
    Mutant(
        id="tr-yaml-duplicates-only-at-the-top",
        area="training",
        path=YAML12,
        old="            _check_duplicate_keys(value, name, where, seen)\n",
        new="",
        tests=("tests/test_training.py::"
               "test_a_duplicate_key_is_an_error_naming_its_path_and_line",),
        why="a key given twice inside a section keeps the last value without a word",
    ),
    Mutant(
        id="tr-config-lax-types",
        area="training",
        path=TRAINING_CONFIG,
        old='model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)',
        new='model_config = ConfigDict(strict=False, extra="forbid", allow_inf_nan=False)',
        tests=("tests/test_config_schema.py",),
        why='pydantic coerces "16" to 16 and true to 1: a quoted or mistyped value trains',
    ),
    Mutant(
        id="tr-config-unknown-keys-ignored",
        area="training",
        path=TRAINING_CONFIG,
        old='model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)',
        new='model_config = ConfigDict(strict=True, extra="ignore", allow_inf_nan=False)',
        tests=("tests/test_config_schema.py",),
        why="a mistyped key silently falls back to its default",
    ),
    Mutant(
        id="tr-config-nan-passes",
        area="training",
        path=TRAINING_CONFIG,
        old='model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)',
        new='model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=True)',
        tests=("tests/test_training.py::test_config_errors_name_the_key",),
        why="a .nan weight or .inf learning rate passes every range check",
    ),
    Mutant(
        id="tr-config-policy-kwargs-replace-defaults",
        area="training",
        path=TRAINING_CONFIG,
        old='policy = {**PPO_DEFAULTS["policy_kwargs"], **given.pop("policy_kwargs", {})}',
        new='policy = given.pop("policy_kwargs", PPO_DEFAULTS["policy_kwargs"])',
        tests=("tests/test_training.py::test_policy_kwargs_are_merged_over_the_defaults",),
        why="setting one policy option drops the default net_arch for SB3's smaller one",
    ),
    Mutant(
        id="tr-config-every-ppo-default-written",
        area="training",
        path=TRAINING_CONFIG,
        old="given = ppo.model_dump(exclude_unset=True)",
        new="given = ppo.model_dump()",
        tests=("tests/test_config_schema.py::"
               "test_empty_sections_take_their_defaults_and_a_config_round_trips",),
        why="config.yaml gains every MaskablePPO argument: an older run's checkpoint no longer "
            "matches its config and cannot be resumed",
    ),
    Mutant(
        id="tr-config-union-reported-per-member",
        area="training",
        path=CONFIG_ERRORS,
        old="        if message not in messages:\n            messages.append(message)",
        new="        messages.append(message)",
        tests=("tests/test_config_schema.py::"
               "test_every_problem_is_named_at_once_and_once_each",),
        why="a bad learner_seat is reported twice, once per member of its union",
    ),
    Mutant(
        id="tr-config-schema-env-for-every-game",
        area="training",
        path=TRAINING_CONFIG,
        old='"then": {"properties": {"env": {"properties": options,\n'
            '                                            "additionalProperties": False}}}})',
        new='"then": {"properties": {"env": {"properties": options}}}})',
        tests=("tests/test_config_schema.py",),
        why="the schema lets an editor accept another game's option in env",
    ),
    Mutant(
        id="tr-config-override-into-a-value-dropped",
        area="training",
        path=TRAINING_CONFIG,
        old="over a list: never\n",
        new="over a list: never\n                    break\n",
        tests=("tests/test_config_schema.py::"
               "test_an_override_inside_a_value_that_is_no_section_is_an_error",),
        why="--set ppo.policy_kwargs.net_arch.pi=[64] over a list is dropped without a word",
    ),
    Mutant(
        id="tr-config-key-not-text-no-unknown-key",
        area="training",
        path=CONFIG_ERRORS,
        old='    if kind in ("extra_forbidden", "invalid_key") or loc[-1:] == ("[key]",):',
        new='    if kind == "extra_forbidden" or loc[-1:] == ("[key]",):',
        tests=("tests/test_config_schema.py::test_a_key_that_is_no_name_is_an_unknown_key",),
        why="a key such as YAML's 1: is reported as a section that is no mapping",
    ),
    Mutant(
        id="tr-evaluate-env-flag-kept-once",
        area="training",
        path=EVALUATE,
        old='parser.add_argument("--env", nargs="+", action="extend", default=[],',
        new='parser.add_argument("--env", nargs="+", default=[],',
        tests=("tests/test_evaluate.py::test_cli_env_options_add_up_over_repeated_flags",),
        why="a second --env silently drops the first one's options",
    ),
    Mutant(
        id="tr-eval-points-wait-for-the-next-dump",
        area="training",
        path=TRAIN,
        old="                output.writer.add_scalar(key, value, step)\n",
        new="                logger.record(key, value)\n",
        tests=("tests/test_training.py::test_tensorboard_draws_each_evaluation_at_its_step",),
        why="evaluations are drawn in TensorBoard a rollout late, the closing one never",
    ),
    Mutant(
        id="tr-step-0-evaluation-before-its-checkpoint",
        area="training",
        path=TRAIN,
        old=("        self.checkpoint()\n"
             "        # An evaluation due now follows"),
        new="        # An evaluation due now follows",
        tests=("tests/test_training.py::"
               "test_the_step_0_checkpoint_comes_before_the_step_0_evaluation",),
        why="a kill during the first evaluation loses the warm start",
    ),
    # -- docs: the generated game pages ------------------------------------------------------------
    Mutant(
        id="docs-options-table-drops-common-options",
        area="docs",
        path=GAME_PAGES,
        old="get_game(name).engine_class().options().items()",
        new="get_game(name).engine_class().OPTIONS.items()",
        tests=("tests/test_docs_site.py::test_game_page_options_are_the_engines",),
        why="a game page lists the game's own options but not memory, reward and max_steps",
    ),
    Mutant(
        id="docs-observation-offsets-of-another-player-count",
        area="docs",
        path=GAME_PAGES,
        old="    for field, spec in layouts[default].fields().items():\n",
        new="    for field, spec in layouts[counts[-1]].fields().items():\n",
        tests=("tests/test_docs_site.py::test_game_page_observation_and_actions_are_the_engines",),
        why="the offsets shown are the largest table's, not the default player count's",
    ),
    Mutant(
        id="docs-rules-headings-not-demoted",
        area="docs",
        path=GAME_PAGES,
        old='    return re.sub(r"^(#+) ", r"#\\1 ", text, flags=re.M)\n',
        new="    return text\n",
        tests=("tests/test_docs_site.py::test_game_page_holds_the_card_and_the_whole_rules",),
        why="RULES.md's title becomes a second page title, its sections siblings of the tables",
    ),
    Mutant(
        id="docs-option-allowed-ignores-the-check",
        area="docs",
        path=CONFIG,
        old='            return self.check(_NO_VALUE) or "any value"\n',
        new='            return "any value"\n',
        tests=("tests/test_docs_site.py::test_option_allowed_says_what_validate_accepts",),
        why="an option with a range check is documented as taking anything",
    ),
    Mutant(
        id="core-version-check-ignores-spaces",
        area="core",
        path=VERSION_CHECK,
        old=('    for part, now in (("playthroughs", playthrough_prints(game)),\n'
             '                      ("spaces", space_prints(game))):\n'
             "        changed, added, dropped = _compare(entry[part], now)"),
        new=('    for part, now in (("playthroughs", playthrough_prints(game)),):\n'
             "        changed, added, dropped = _compare(entry[part], now)"),
        tests=(f"{VERSION_TESTS}::test_a_changed_case_of_a_released_version_asks_for_a_bump",),
        why="an observation space's shape or bounds change without a new env version",
    ),
    Mutant(
        id="core-version-check-released-not-frozen",
        area="core",
        path=VERSION_CHECK,
        old='        if changed and entry["released"] is not None:\n            out.append(\n',
        new="        if False:\n            out.append(\n",
        tests=(f"{VERSION_TESTS}::test_a_changed_case_of_a_released_version_asks_for_a_bump",),
        why="a released version's games change under its id, recorded as if unreleased",
    ),
    Mutant(
        id="core-version-check-unreleased-needs-no-changelog",
        area="core",
        path=VERSION_CHECK,
        old='        if not entry.get("changes") or missing:',
        new='        if not entry.get("changes"):',
        tests=(f"{VERSION_TESTS}::"
               "test_an_unreleased_version_takes_a_change_with_a_changelog_line",),
        why="an unreleased version's change is recorded without its changelog line",
    ),
    Mutant(
        id="core-env-name-unversioned",
        area="core",
        path=VERSIONS,
        old='    return current(game).name if game in VERSIONS else f"{game}_v0"',
        new="    return game",
        tests=(f"{VERSION_TESTS}::test_entry_modules_ids_and_env_names_follow_the_ledger",),
        why="metadata['name'] loses the version, so a saved policy does not record it",
    ),
    Mutant(
        id="core-retired-module-imports-nothing",
        area="core",
        path="card_envs/__init__.py",
        old="versions.install_finder()\n",
        new="",
        tests=(f"{VERSION_TESTS}::test_a_retired_module_raises_naming_the_current_module",),
        why="importing a retired entry module says only 'No module named', not where it went",
    ),
    Mutant(
        id="core-retired-gym-id-left-to-gymnasium",
        area="core",
        path=REGISTRATION,
        old=("            if version.gym_id not in gymnasium.registry:\n"
             "                gymnasium.register(id=version.gym_id,\n"
             "                                   entry_point=retired_constructor(version, "
             "version.gym_id))\n"),
        new="",
        tests=(f"{VERSION_TESTS}::test_a_retired_gymnasium_id_raises_our_message_not_gymnasiums",),
        why="gymnasium.make of a retired id gives Gymnasium's message, which says not what changed",
    ),
    Mutant(
        id="core-retired-message-names-the-old-id",
        area="core",
        path=VERSIONS,
        old='        kind, replacement = "Gymnasium id", now.gym_id',
        new='        kind, replacement = "Gymnasium id", version.gym_id',
        tests=(f"{VERSION_TESTS}::test_a_retired_gymnasium_id_raises_our_message_not_gymnasiums",),
        why="the retired id's error points at itself instead of the current id",
    ),
    Mutant(
        id="core-retired-message-drops-the-options",
        area="core",
        path=VERSIONS,
        old="    if version.options:\n",
        new="    if not version.options:\n",
        tests=(f"{VERSION_TESTS}::test_a_retired_pettingzoo_id_raises_naming_the_current_id",),
        why="the error does not say which options of the new version play the old rules",
    ),
    # -- reliability: the run lock, snapshot validation, saved-policy identity, write errors ------
    Mutant(
        id="tr-run-lock-shared",
        area="training",
        path=RUN_LOCK,
        old="fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)",
        new="fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)",
        tests=("tests/test_run_lock.py::test_a_second_lock_is_refused_naming_the_holder",),
        why="a shared lock lets a second run into the directory, mixing the two runs' files",
    ),
    Mutant(
        id="tr-resume-without-the-lock",
        area="training",
        path=TRAIN,
        old="            lock = RunLock(run_dir).acquire()\n",
        new="",
        tests=("tests/test_run_lock.py::test_two_resumes_of_one_run_one_is_refused",),
        why="two --resume of one run both train, duplicating progress.csv's steps",
    ),
    Mutant(
        id="tr-write-error-unnamed",
        area="training",
        path=FILES,
        old="    with writing(path):\n        try:\n            write(tmp)",
        new="    with contextlib.nullcontext():\n        try:\n            write(tmp)",
        tests=("tests/test_write_errors.py::"
               "test_a_full_disk_keeps_the_checkpoint_and_names_its_path",
               "tests/test_write_errors.py::test_a_read_only_filesystem_is_named"),
        why="a full disk ends the run with a bare OSError that names no cause the user can act on",
    ),
    Mutant(
        id="tr-final-zip-on-a-stop",
        area="training",
        path=TRAIN,
        old="        if not stopped:\n            save_model(",
        new="        if True:\n            save_model(",
        tests=("tests/test_run_advice.py::"
               "test_a_stopped_run_says_so_and_its_resume_command_finishes_it",),
        why="Ctrl-C writes final.zip, and the unfinished run reads as finished",
    ),
    Mutant(
        id="core-schema-int-unbounded",
        area="core",
        path=SCHEMA,
        old=("        if type(value) is not int or not (_bound(self.low, engine) <= value\n"
             "                                          <= _bound(self.high, engine)):"),
        new="        if type(value) is not int:",
        tests=("tests/test_snapshot_validation.py::"
               "test_the_issue_s_positions_are_refused_naming_field_and_values",),
        why="a snapshot's dealer=99 or phase=9 loads (ROY then writes into another field's slot)",
    ),
    Mutant(
        id="core-schema-not-checked",
        area="core",
        path=ENGINE,
        old=("        problem = snapshot_specs.check_decoded(self, name, decoded)\n"
             "        if problem is not None:"),
        new=("        problem = snapshot_specs.check_decoded(self, name, decoded)\n"
             "        if False:"),
        tests=("tests/test_snapshot_validation.py::"
               "test_the_issue_s_positions_are_refused_naming_field_and_values",),
        why="the declared schemas are never consulted: out-of-range fields load",
    ),
    Mutant(
        id="core-rng-garbage-decoded",
        area="core",
        path=SCHEMA,
        old="        if name == \"rng\":\n            check_encoded_rng(value)",
        new="        if False:\n            check_encoded_rng(value)",
        tests=("tests/test_snapshot_validation.py::"
               "test_the_issue_s_positions_are_refused_naming_field_and_values",),
        why="a garbage random state is refused as 'string indices must be integers'",
    ),
    Mutant(
        id="core-winners-of-a-live-episode",
        area="core",
        path=ENGINE,
        old="        assert self.terminated or not self.winners, (",
        new="        assert True or not self.winners, (",
        tests=("tests/test_snapshot_validation.py::"
               "test_the_issue_s_positions_are_refused_naming_field_and_values",),
        why="a snapshot of a game in play with winners loads",
    ),
    Mutant(
        id="roy-snapshot-terminated-mid-hand",
        area="roy",
        path=ROY,
        old="                assert len(self.winners) == 1 and not self.hands[w], (",
        new="                assert len(self.winners) == 1, (",
        tests=("tests/test_snapshot_validation.py::"
               "test_the_issue_s_positions_are_refused_naming_field_and_values",),
        why="a ROY snapshot terminated mid-hand, its winner holding cards, loads",
    ),
    Mutant(
        id="roy-schema-dealer-past-the-table",
        area="roy",
        path=ROY_SCHEMA,
        old='    "dealer": seat(),',
        new='    "dealer": Int(0, 99),',
        tests=("tests/test_snapshot_validation.py::"
               "test_the_issue_s_positions_are_refused_naming_field_and_values",),
        why="ROY's dealer may name a seat past the table",
    ),
    Mutant(
        id="core-policy-options-not-compared",
        area="core",
        path=PROVENANCE,
        old='        if key == "env_config" and isinstance(was, dict) and isinstance(now, dict):',
        new='        if key == "env_config":\n            continue\n        if False:',
        tests=("tests/test_policy_metadata.py::"
               "test_an_opponent_trained_on_other_options_is_refused",),
        why="a policy trained on episode=game plays in an episode=hand env (the issue's case)",
    ),
    Mutant(
        id="core-policy-mismatch-always-allowed",
        area="core",
        path=PROVENANCE,
        old="    if allow_mismatch:\n        return\n",
        new="    return\n",
        tests=("tests/test_policy_metadata.py",),
        why="saved policies are never checked against the env they are loaded for",
    ),
    Mutant(
        id="tr-resume-ignores-the-checkpoint-identity",
        area="training",
        path=TRAIN,
        old="            if differences and not allow_policy_mismatch:",
        new="            if False:",
        tests=("tests/test_policy_metadata.py::"
               "test_a_run_s_policies_and_checkpoint_record_its_env",),
        why="a checkpoint of another package version resumes without a word",
    ),
    # -- the card-envs command and the package layout ----------------------------------------
    Mutant(
        id="cli-set-values-dropped",
        area="training",
        path=TRAIN,
        old="            cfg = load_config(config_path, overrides)\n",
        new="            cfg = load_config(config_path)\n",
        tests=("tests/test_cli.py::test_train_a_game_by_name_with_set",),
        why="card-envs train validates --set but trains the file's values",
    ),
    Mutant(
        id="cli-set-key-twice-last-wins",
        area="training",
        path=ASSIGNMENTS,
        old="        if key in values:\n",
        new="        if False:\n",
        tests=("tests/test_cli.py::test_set_syntax_errors_name_the_item",),
        why="--set seed=1 --set seed=2 silently trains seed 2",
    ),
    Mutant(
        id="cli-shipped-name-over-the-user-s-file",
        area="training",
        path=SHIPPED,
        old="    if path.is_file():\n        return path\n    shipped = shipped_configs()\n",
        new="    shipped = shipped_configs()\n    if path.is_file() and source not in shipped:\n"
            "        return path\n",
        tests=("tests/test_cli.py::test_a_file_named_like_a_game_is_the_user_s",),
        why="a user's config file named like a game is ignored for the shipped one",
    ),
    Mutant(
        id="cli-extra-marker-ignored",
        area="training",
        path=CLI_EXTRAS,
        old='    return Marker(marker).evaluate({"extra": extra})',
        new="    return True",
        tests=("tests/test_cli.py::test_the_extra_check_reads_the_installed_extra",),
        why="card-envs train asks for another extra's libraries (dev, bench) before it runs",
    ),
    Mutant(
        id="cli-checkout-training-a-second-copy",
        area="training",
        path=CHECKOUT_ALIAS,
        old="    sys.modules[ALIAS] = real\n",
        new="",
        tests=("tests/test_cli.py::test_the_checkout_s_training_is_card_envs_training",),
        why="the checkout's training package is loaded twice: two ConfigError classes",
    ),
    Mutant(
        id="ad-tianshou-others-rewards-dropped",
        area="adapters",
        path=TIANSHOU_ADAPTER,
        old=("        for a, reward in inner.rewards.items():\n"
             "            self._owed[a] += reward\n"),
        new="        self._owed[agent] += inner.rewards[agent]\n",
        tests=(f"{ADAPTER_TESTS}::"
               "test_seat_rewards_pays_each_seat_what_the_env_paid_on_its_own_transitions",),
        why="a reward paid on another seat's move never reaches that seat's Tianshou learner",
    ),
    Mutant(
        id="ad-tianshou-one-closing-turn",
        area="adapters",
        path=TIANSHOU_ADAPTER,
        old="            self._closing = [a for a in order if a in self.agents]\n",
        new="            self._closing = [a for a in order if a in self.agents][-1:]\n",
        tests=(f"{ADAPTER_TESTS}::"
               "test_seat_rewards_pays_each_seat_what_the_env_paid_on_its_own_transitions",),
        why="only the last mover closes: the other seats' final payoffs are lost",
    ),
    Mutant(
        id="ad-tianshou-paid-twice",
        area="adapters",
        path=TIANSHOU_ADAPTER,
        old="        self.rewards[agent], self._owed[agent] = self._owed[agent], 0.0\n",
        new="        self.rewards[agent] = self._owed[agent]\n",
        tests=(f"{ADAPTER_TESTS}::"
               "test_seat_rewards_pays_each_seat_what_the_env_paid_on_its_own_transitions",),
        why="what a seat is owed is paid again on each of its later transitions",
    ),
    Mutant(
        id="ad-agilerl-rewards-to-the-actor-only",
        area="adapters",
        path=AGILERL_ADAPTER,
        old="        rewards = {a: float(env.rewards.get(a, 0.0)) for a in self.agents}\n",
        new=("        rewards = {a: float(env.rewards.get(a, 0.0)) if a == actor else 0.0\n"
             "                   for a in self.agents}\n"),
        tests=(f"{ADAPTER_TESTS}::"
               "test_turns_as_parallel_pays_every_seat_what_the_aec_env_paid",),
        why="the Parallel view pays only the seat that acted, as Tianshou's dispatcher did",
    ),
    Mutant(
        id="core-ended-episode-masks-all-zero",
        area="core",
        path=AEC_ENV,
        old="            mask = self._ended_mask.copy()\n",
        new="            mask = self._zero_mask.copy()\n",
        tests=(f"{ADAPTER_TESTS}::"
               "test_after_the_end_every_mask_is_all_ones_and_infos_hold_winners",),
        why="the last mover's final mask is all false: TorchRL's masked policies sample NaN",
    ),
    Mutant(
        id="core-winners-vector-empty",
        area="core",
        path=AEC_ENV,
        old="    winners[list(engine.winners)] = True\n",
        new="",
        tests=(f"{ADAPTER_TESTS}::"
               "test_after_the_end_every_mask_is_all_ones_and_infos_hold_winners",),
        why="the end-of-game info says nobody won",
    ),
    Mutant(
        id="dp-parallel-ended-masks-all-zero",
        area="dogpile",
        path=DOGPILE_PARALLEL,
        old="                mask[:] = self._ended_mask\n",
        new="                mask.fill(0)\n",
        tests=("tests/test_dogpile_parallel.py::"
               "test_a_finished_game_masks_all_ones_and_reports_winners",),
        why="the Parallel env's final masks are empty rows for a masked policy",
    ),
    Mutant(
        id="dp-parallel-conflict-reported-as-mask",
        area="dogpile",
        path=DOGPILE_PARALLEL,
        old="                        voided[seat] = VOID_CONFLICT\n",
        new="                        voided[seat] = VOID_MASK\n",
        tests=("tests/test_dogpile_parallel.py::"
               "test_two_dogs_digging_the_same_bone_first_in_order_wins",),
        why="a legal move that lost a conflict reads as the learner's illegal action",
    ),
    Mutant(
        id="play-person-sees-the-table",
        area="core",
        path="card_envs/play/sessions.py",
        old="            view = seat_view(self.game, obs, mask, person)\n",
        new="            view = table_view(self.game, engine.state_array())\n"
            "            view[\"legal\"] = seat_view(self.game, obs, mask, person)[\"legal\"]\n",
        tests=("tests/test_play_leak.py",),
        why="the play app sends a person's page the whole table, other hands included",
    ),
    Mutant(
        id="pictures-seat-view-from-state",
        area="core",
        path="card_envs/pictures/scene.py",
        old="engine.observation(seat), \"seat\", seat)",
        new="engine.state_array(), \"table\", None)",
        tests=("tests/test_pictures.py::"
               "test_seat_picture_shows_only_what_the_observation_allows",),
        why="a seat's picture is drawn from the whole state: its rgb_array shows hidden cards",
    ),
    Mutant(
        id="records-replay-skips-reward-check",
        area="core",
        path="card_envs/records.py",
        old="        if row.get(\"r\") != paid:\n",
        new="        if False:\n",
        tests=("tests/test_records.py::test_tampered_record_names_the_step",),
        why="a replay that diverges in what it pays goes unnoticed",
    ),
    Mutant(
        id="gpu-dogpile-features-host-tensor",
        area="training",
        path="card_envs/games/dogpile/features.py",
        old="torch.zeros(batch, NUM_ACTIONS, ACTION_FEATURES, device=device)",
        new="torch.zeros(batch, NUM_ACTIONS, ACTION_FEATURES)",
        tests=("tests/test_device.py::test_derived_features_run_on_any_device",),
        why="Dogpile's features make a table on the CPU: a CUDA forward pass fails (issue 37)",
    ),
    Mutant(
        id="dogpile-paw-loot-misses-a-pair",
        area="training",
        path="card_envs/games/dogpile/features.py",
        old="_PAW_FIRST, _PAW_SECOND = [p[0] for p in _PAW_PAIRS], [p[1] for p in _PAW_PAIRS]",
        new="_PAW_FIRST, _PAW_SECOND = [0, 0], [1, 2]",
        tests=("tests/test_features.py::"
               "test_dogpile_loot_of_the_best_three_matches_the_heuristics",
               "tests/test_feature_paths.py::test_dogpile_features_are_the_ones_computed_before"),
        why="the best three of paws and a bone skips the triples with paw bones 1 and 2",
    ),
    Mutant(
        id="dogpile-paw-loss-of-the-wrong-bone",
        area="training",
        path="card_envs/games/dogpile/features.py",
        old="torch.cat([v[1] + v[2], v[0] + v[2], v[0] + v[1]], 1)",
        new="torch.cat([v[0] + v[2], v[1] + v[2], v[0] + v[1]], 1)",
        tests=("tests/test_features.py::"
               "test_dogpile_loot_of_the_best_three_matches_the_heuristics",),
        why="burying paw bone 0 is valued as burying bone 1 (the bury features swap)",
    ),
    Mutant(
        id="dogpile-feat-in-reach-skips-a-pair",
        area="training",
        path="card_envs/games/dogpile/features.py",
        old="_PLACE_FIRST, _PLACE_SECOND = [p[0] for p in _PAIRS], [p[1] for p in _PAIRS]",
        new="_PLACE_FIRST, _PLACE_SECOND = [p[0] for p in _PAIRS[:5]], [p[1] for p in _PAIRS[:5]]",
        tests=("tests/test_feature_paths.py::test_dogpile_features_are_the_ones_computed_before",),
        why="a feat in reach misses the last paw bone paired with the bone in the paw",
    ),
    Mutant(
        id="deluxe-mates-count-the-card-itself",
        area="training",
        path="card_envs/games/deluxe_memory/features.py",
        old="mates = (rank @ rank.sum(1).unsqueeze(-1))[..., 0] - known",
        new="mates = (rank @ rank.sum(1).unsqueeze(-1))[..., 0]",
        tests=("tests/test_features.py::"
               "test_deluxe_features_find_known_pairs_and_the_first_cards_mate",
               "tests/test_feature_paths.py::test_deluxe_features_are_the_ones_computed_before"),
        why="every known card counts as its own mate: a known pair everywhere",
    ),
    Mutant(
        id="deluxe-exposed-by-a-player-s-own-sighting",
        area="training",
        path="card_envs/games/deluxe_memory/features.py",
        old="seen_mates = seen_ranks @ rank.transpose(1, 2) - others * known.unsqueeze(1)",
        new="seen_mates = seen_ranks @ rank.transpose(1, 2)",
        tests=("tests/test_features.py::"
               "test_deluxe_exposed_pairs_need_one_player_to_have_seen_both_cards",
               "tests/test_feature_paths.py::test_deluxe_features_are_the_ones_computed_before"),
        why="a card another player has seen counts as its own mate: exposed with no pair",
    ),
    Mutant(
        id="mega-features-read-every-relation-as-same-rank",
        area="training",
        path="card_envs/games/mega_memory/features.py",
        old="picked_host = torch.cat([torch.cat([position(first, r, second),",
        new="picked_host = torch.cat([torch.cat([position(first, 0, second),",
        tests=("tests/test_features.py::"
               "test_mega_features_relate_the_first_card_to_side_centre_and_scored_cards",
               "tests/test_feature_paths.py::test_mega_memory_features_are_the_ones_computed_before"),
        why="the batched product's pairs are read from the first relation's rows for all three",
    ),
    Mutant(
        id="mega-features-scored-column-is-the-last-entity",
        area="training",
        path="card_envs/games/mega_memory/features.py",
        old="position(entity, r, torch.full_like(entity, ENTITIES))",
        new="position(entity, r, torch.full_like(entity, ENTITIES - 1))",
        tests=("tests/test_features.py::"
               "test_mega_features_relate_the_first_card_to_side_centre_and_scored_cards",
               "tests/test_feature_paths.py::test_mega_memory_features_are_the_ones_computed_before"),
        why="an entity's scored extensions read against the last centre pile, not the scored cards",
    ),
    Mutant(
        id="rollout-buffer-keeps-raw-observations",
        area="training",
        path="card_envs/agents/features.py",
        old="        if not self.generator_ready:  # the first get() after a rollout",
        new="        if False:  # the first get() after a rollout",
        tests=("tests/test_feature_paths.py::"
               "test_the_rollout_buffer_holds_the_extractor_s_features[dogpile]",),
        why="the rollout buffer stores no features: every PPO epoch derives them again",
    ),
    Mutant(
        id="snapshot-features-from-the-wrong-rows",
        area="training",
        path=SELFPLAY,
        old="            for actor_id in sorted(groups, key=lambda a: a < 2):\n",
        new="            for actor_id in groups:\n",
        tests=("tests/test_feature_paths.py::test_snapshots_share_one_features_pass",),
        why="the snapshots' shared features pass reads rows that hold other opponents' "
            "observations",
    ),
    Mutant(
        id="gpu-actor-host-observations",
        area="training",
        path="training/actors.py",
        old="policy.pi_features_extractor(torch.as_tensor(obs, device=policy.device))",
        new="policy.pi_features_extractor(torch.as_tensor(obs))",
        tests=("tests/test_device.py::"
               "test_training_makes_every_tensor_on_the_model_s_device[memory_uno]",),
        why="snapshot and evaluation networks get host observations: a GPU learner fails",
    ),
    Mutant(
        id="gpu-snapshots-on-the-cpu",
        area="training",
        path="training/actors.py",
        old="    net = net.to(policy.device if device is None else device)\n",
        new="",
        tests=("tests/test_device.py::test_snapshots_live_on_the_learner_s_device",),
        why="a GPU learner's snapshots are made on the CPU, its device ignored",
    ),
    Mutant(
        id="gpu-cloning-data-on-the-host",
        area="training",
        path="training/pretrain.py",
        old="    masks = torch.as_tensor(data.masks, device=device)\n",
        new="    masks = torch.as_tensor(data.masks)\n",
        tests=("tests/test_device.py::"
               "test_training_makes_every_tensor_on_the_model_s_device[memory_uno]",),
        why="behaviour cloning keeps its masks on the CPU while the policy is on the GPU",
    ),
    Mutant(
        id="gpu-checkpoint-loaded-where-it-was-saved",
        area="training",
        path=CHECKPOINT,
        old='state = torch.load(path, map_location="cpu", weights_only=False)',
        new="state = torch.load(path, weights_only=False)",
        tests=("tests/test_device.py::"
               "test_a_run_trained_on_a_gpu_evaluates_plays_and_resumes_without_one",),
        why="a GPU run's checkpoint needs CUDA to load: it cannot resume on a CPU machine",
    ),
    Mutant(
        id="workers-one-seed-for-all",
        area="training",
        path="training/selfplay_workers.py",
        old=("    return [int(s.generate_state(1)[0]) for s in "
             "np.random.SeedSequence(seed).spawn(workers)]"),
        new="    return [seed] * workers",
        tests=("tests/test_selfplay_workers.py::"
               "test_worker_seeds_are_distinct_and_follow_the_seed",),
        why="every worker deals the same games: N workers play one slice's games N times",
    ),
    Mutant(
        id="workers-snapshots-not-shipped",
        area="training",
        path="training/selfplay_workers.py",
        old='        self.owner.call_all("pool_add", (weights, step))\n',
        new="",
        tests=("tests/test_selfplay_workers.py::"
               "test_workers_play_each_slice_as_one_process_would",),
        why="the workers' pools never get the learner's snapshots (random stands in)",
    ),
    Mutant(
        id="workers-resume-loses-the-pool",
        area="training",
        path="training/selfplay_workers.py",
        old='        weights = saved[0]["pool"]["weights"]\n',
        new='        weights = saved[-1]["pool"]["weights"]\n',
        tests=("tests/test_selfplay_workers.py::test_resume_with_two_workers_continues_exactly",),
        why="a resumed run's workers restore their pools without the snapshots' weights",
    ),
    Mutant(
        id="search-backup-for-the-deciding-seat",
        area="agents",
        path=SEARCH,
        old="                score = edge.w[mover] / n + c * math.sqrt(math.log(edge.avail) / n)\n",
        new="                score = edge.w[0] / n + c * math.sqrt(math.log(edge.avail) / n)\n",
        tests=(f"{SEARCH_TESTS}::"
               "test_search_finds_the_winning_take_against_a_best_replying_opponent",),
        why="every node of the tree is scored for one seat: the opponents play to help it",
    ),
    Mutant(
        id="search-ucb-uses-parent-visits-never-growing",
        area="agents",
        path=SEARCH,
        old="            edge.avail += 1\n",
        new="",
        tests=(f"{SEARCH_TESTS}::"
               "test_search_finds_the_winning_take_against_a_best_replying_opponent",),
        why="availability counts never grow: log(0) fails, or exploration never shrinks",
    ),
    Mutant(
        id="search-ignores-time-budget",
        area="agents",
        path=SEARCH,
        old="            if deadline is not None and time.perf_counter() >= deadline:\n",
        new="            if False:\n",
        tests=(f"{SEARCH_TESTS}::test_time_budget_is_honoured",),
        why="time_ms is accepted and ignored: a 50 ms agent thinks for seconds",
    ),
    Mutant(
        id="search-plays-on-the-real-position",
        area="agents",
        path=SEARCH,
        old="            world = engine.clone()\n",
        new="            world = engine\n",
        tests=(f"{SEARCH_TESTS}::test_search_moves_are_legal_and_leave_the_position_alone",),
        why="the search steps the real engine instead of a copy",
    ),
    Mutant(
        id="search-heuristic-prior-weightless",
        area="agents",
        path=SEARCH,
        old="HEURISTIC_PRIOR = 0.5\n",
        new="HEURISTIC_PRIOR = 0.0\n",
        tests=(f"{SEARCH_TESTS}::"
               "test_heuristic_prior_spends_a_small_budget_on_the_heuristics_move",),
        why="prior=heuristic spreads the prior evenly: a small budget is a random mover again",
    ),
    Mutant(
        id="search-heuristic-prior-unused",
        area="agents",
        path=SEARCH,
        old='        puct = self._policy is not None or self.settings.prior == "heuristic"\n',
        new="        puct = self._policy is not None\n",
        tests=(f"{SEARCH_TESTS}::"
               "test_heuristic_prior_spends_a_small_budget_on_the_heuristics_move",),
        why="prior=heuristic is accepted and ignored: plain UCB tries each move once",
    ),
    Mutant(
        id="search-heuristic-prior-optimistic-first-play",
        area="agents",
        path=SEARCH,
        old="        first = 0.0 if self._policy is None else 0.5\n",
        new="        first = 0.5\n",
        tests=(f"{SEARCH_TESTS}::"
               "test_heuristic_prior_spends_a_small_budget_on_the_heuristics_move",),
        why="one lost rollout of the heuristic's move sends the budget to every other move",
    ),
    Mutant(
        id="search-deal-horizon-rollout-plays-on",
        area="agents",
        path=SEARCH,
        old="            while not world.done and depth != 0 and (deal is None or "
            "world.deal_number == deal):\n"
            "                world.step(self._rollout_move(world, fast))\n",
        new="            while not world.done and depth != 0:\n"
            "                world.step(self._rollout_move(world, fast))\n",
        tests=(f"{HORIZON_TESTS}::test_a_deal_horizon_rollout_stops_where_the_deal_ends",),
        why="horizon=deal is accepted, but heuristic rollouts play on to the game's end",
    ),
    Mutant(
        id="search-deal-horizon-tree-crosses-the-deal",
        area="agents",
        path=SEARCH,
        old="        while not world.done and (deal is None or world.deal_number == deal):\n",
        new="        while not world.done:\n",
        tests=(f"{HORIZON_TESTS}::test_a_deal_horizon_tree_never_crosses_into_the_next_deal",),
        why="the tree grows into the next deal, whose cards no rollout of this one sees",
    ),
    Mutant(
        id="search-margin-is-the-own-reward",
        area="agents",
        path=SEARCH,
        old='            return _margins(summed) if s.value == "margin" else summed\n',
        new="            return summed\n",
        tests=(f"{HORIZON_TESTS}::test_a_deal_horizon_rollout_is_scored_by_what_the_deal_paid",),
        why="value=margin scores a seat's own points: the opponent's hand costs it nothing",
    ),
    Mutant(
        id="roy-deal-number-never-counts",
        area="roy",
        path=ROY,
        old="        return self.hand_number\n",
        new="        return 1\n",
        tests=(f"{HORIZON_TESTS}::test_deal_number_counts_the_deals_of_a_full_game",),
        why="a full game's later hands look like its first: a deal horizon never stops",
    ),
    Mutant(
        id="search-flat-best-mean-without-the-paired-test",
        area="agents",
        path=SEARCH_FLAT,
        old="    if favoured is not None and best != favoured and not _clearly_better(\n",
        new="    if False and not _clearly_better(\n",
        tests=(f"{FLAT_TESTS}::test_flat_keeps_the_heuristics_move_unless_clearly_beaten",),
        why="flat plays the luckiest few rollouts' move instead of the heuristic's baseline",
    ),
    Mutant(
        id="search-flat-paired-test-ignores-the-spread",
        area="agents",
        path=SEARCH_FLAT,
        old="    return mean > z * math.sqrt(var / n)\n",
        new="    return mean > 0\n",
        tests=(f"{FLAT_TESTS}::test_clearly_better_is_a_paired_test",),
        why="any positive mean advantage, however noisy, replaces the heuristic's move",
    ),
    Mutant(
        id="search-flat-halving-never-halves",
        area="agents",
        path=SEARCH_FLAT,
        old="            kept = alive[:max(1, math.ceil(len(alive) / 2))]\n",
        new="            kept = list(alive)\n",
        tests=(f"{FLAT_TESTS}::test_flat_rounds_score_every_move_still_in_on_the_same_worlds",),
        why="sequential halving keeps every move: the budget is spread over moves long lost",
    ),
    Mutant(
        id="search-flat-policy-baseline-is-the-heuristics",
        area="agents",
        path=SEARCH_FLAT,
        old='    if s.baseline == "policy":\n',
        new="    if False:\n",
        tests=(f"{FLAT_TESTS}::test_flat_with_a_policy_baseline_keeps_the_policys_move_unless_"
               "clearly_beaten",),
        why="baseline=policy is read and ignored: the flat search keeps the heuristic's move",
    ),
    Mutant(
        id="search-flat-top-k-scores-every-move",
        area="agents",
        path=SEARCH_FLAT,
        old="    if s.top_k is None or len(legal) <= s.top_k:\n",
        new="    if True:\n",
        tests=(f"{FLAT_TESTS}::test_flat_top_k_scores_k_moves_the_policys_likeliest_and_the_"
               "baseline",),
        why="top_k is read and ignored: the rollouts are spread over every legal move",
    ),
    Mutant(
        id="search-flat-top-k-drops-the-baseline",
        area="agents",
        path=SEARCH_FLAT,
        old="        kept[-1] = favoured\n",
        new="        pass\n",
        tests=(f"{FLAT_TESTS}::test_flat_top_k_scores_k_moves_the_policys_likeliest_and_the_"
               "baseline",),
        why="the heuristic's move, outside the policy's top k, is never scored, yet stays the "
            "move played when no candidate is clearly better",
    ),
    Mutant(
        id="search-flat-top-k-adds-the-baseline",
        area="agents",
        path=SEARCH_FLAT,
        old="        kept[-1] = favoured\n",
        new="        kept.append(favoured)\n",
        tests=(f"{FLAT_TESTS}::test_flat_top_k_scores_k_moves_the_policys_likeliest_and_the_"
               "baseline",),
        why="a baseline outside the policy's top k is scored beside all k: k+1 moves share "
            "the rollouts top_k=k was to spend on k",
    ),
    Mutant(
        id="search-flat-deadline-ignores-the-rollouts-cost",
        area="agents",
        path=SEARCH_FLAT,
        old="        return time.perf_counter() + cost < self.deadline\n",
        new="        return time.perf_counter() < self.deadline\n",
        tests=(f"{FLAT_TESTS}::test_flat_starts_no_rollout_that_would_end_after_the_deadline",),
        why="a rollout started just before the deadline runs past it (the check before issue "
            "40's fix: 55 ms a decision at time_ms=50 in Dogpile)",
    ),
    Mutant(
        id="search-flat-deadline-ignores-a-rounds-set-up",
        area="agents",
        path=SEARCH_FLAT,
        old="        if round_start and self.setups:\n",
        new="        if False:\n",
        tests=(f"{FLAT_TESTS}::test_flat_clock_counts_a_rounds_set_up_before_starting_it",),
        why="a round is started whose clone and resample leave no time for a rollout: its "
            "set-up is wasted and it is dropped",
    ),
    Mutant(
        id="search-flat-every-candidate-on-one-world",
        area="agents",
        path=SEARCH_FLAT,
        old="                trial = world if i == last else world.clone()\n",
        new="                trial = world\n",
        tests=("tests/test_search_reference.py::"
               "test_flat_search_moves_and_rollouts_are_the_recorded_ones",),
        why="the clone saved for the last candidate saved for every one: each candidate "
            "plays on from where the previous one's rollout ended",
    ),
    Mutant(
        id="search-forced-move-wrong",
        area="agents",
        path=SEARCH,
        old="                return int(mask.argmax())\n",
        new="                return int(mask.argmin())\n",
        tests=("tests/test_search_reference.py::"
               "test_flat_search_moves_and_rollouts_are_the_recorded_ones",),
        why="the rollout's shortcut for a forced move plays another (illegal) action",
    ),
    Mutant(
        id="search-reseeds-only-deterministic-heuristics",
        area="agents",
        path=SEARCH,
        old="            if heuristic.draws_random:  # a fresh generator costs about 20 us\n",
        new="            if not heuristic.draws_random:\n",
        tests=("tests/test_search_reference.py::"
               "test_flat_search_moves_and_rollouts_are_the_recorded_ones",),
        why="the heuristics that draw random numbers are no longer reseeded per candidate: "
            "a round's candidates meet different random choices",
    ),
    Mutant(
        id="clone-shares-lists",
        area="core",
        path=ENGINE,
        old="            new.append(item if type(item) in _ATOMIC else copy_state(item, memo))\n",
        new="            new.append(item)\n",
        tests=("tests/test_engine_clone.py",),
        why="a clone's nested lists (hands, piles) are the original's: play on the clone "
            "changes the real position",
    ),
    Mutant(
        id="mu-window-queue-aliases-the-shared-order",
        area="memory_uno",
        path=MEMORY_UNO,
        old="        self.queue = self._window_order[placer][:]\n",
        new="        self.queue = self._window_order[placer]\n",
        tests=("tests/test_engine_clone.py::"
               "test_memory_uno_clones_share_only_tables_that_play_never_writes",),
        why="a reaction window's queue is the fixed table itself, which clones share: the "
            "window's pops empty the original's table",
    ),
    Mutant(
        id="clone-copies-an-object-twice",
        area="core",
        path=ENGINE,
        old="        new = []\n        memo[id(value)] = new\n",
        new="        new = []\n",
        tests=("tests/test_engine_clone.py::"
               "test_copy_state_keeps_identities_and_shares_only_the_memo",),
        why="a list reached from two attributes becomes two lists in the clone (deepcopy's "
            "identities lost): a change through one no longer shows through the other",
    ),
    Mutant(
        id="search-spec-key-unchecked",
        area="agents",
        path=SEARCH,
        old="            if key not in known:\n",
        new="            if False:\n",
        tests=(f"{SEARCH_TESTS}::test_spec_errors_name_the_problem",),
        why="a misspelt setting (sims=10) fails obscurely or is ignored",
    ),
    Mutant(
        id="league-latest-prob-inverted",
        area="training",
        path=LEAGUE,
        old="            elif rng.random() < self.latest_prob:\n",
        new="            elif rng.random() >= self.latest_prob:\n",
        tests=(f"{RLLIB_BACKEND_TESTS}::test_the_league_seats_opponents_at_the_selfplay_rates",),
        why="RLlib self-play plays the newest snapshot at 1 - latest_prob",
    ),
    Mutant(
        id="league-learner-seat-fixed",
        area="training",
        path=LEAGUE,
        old="        seat = int(rng.integers(n)) if self.learner_seat == \"random\" "
            "else int(self.learner_seat)\n",
        new="        seat = 0 if self.learner_seat == \"random\" else int(self.learner_seat)\n",
        tests=(f"{RLLIB_BACKEND_TESTS}::test_the_league_seats_opponents_at_the_selfplay_rates",),
        why="learner_seat: random always seats the RLlib learner first",
    ),
    Mutant(
        id="league-redraws-within-an-episode",
        area="training",
        path=LEAGUE,
        old="        seats = self._seats.get(key)\n",
        new="        seats = None\n",
        tests=(f"{RLLIB_BACKEND_TESTS}::test_the_league_draws_once_per_episode_and_reproducibly",),
        why="each seat of one episode is drawn from a different draw: two learners, or none",
    ),
    Mutant(
        id="league-pool-overwrites-newest",
        area="training",
        path=LEAGUE,
        old="        return min(self.steps, key=lambda s: (self.steps[s], s))\n",
        new="        return max(self.steps, key=lambda s: (self.steps[s], s))\n",
        tests=(f"{RLLIB_BACKEND_TESTS}::test_the_snapshot_pool_overwrites_its_oldest_slot",),
        why="a full RLlib snapshot pool overwrites its newest snapshot, keeping the oldest forever",
    ),
    Mutant(
        id="rllib-batch-not-scaled-to-learner-steps",
        area="training",
        path=RLLIB_SETTINGS,
        old="    return 1 if simultaneous else num_players\n",
        new="    return 1\n",
        tests=(f"{RLLIB_BACKEND_TESTS}::test_ppo_maps_onto_rllib_s_names_and_batches",),
        why="RLlib's train batch in env steps holds 1/num_players of SB3's learner samples",
    ),
    Mutant(
        id="rllib-clip-range-vf-dropped",
        area="training",
        path=RLLIB_SETTINGS,
        old="        \"ppo.clip_range_vf\": (ppo.get(\"clip_range_vf\") is not None,\n",
        new="        \"ppo.clip_range_vf\": (False,\n",
        tests=(f"{RLLIB_BACKEND_TESTS}::test_what_rllib_cannot_honour_is_refused_by_name",),
        why="an SB3 key with no RLlib meaning is silently ignored under backend: rllib",
    ),
    Mutant(
        id="rllib-stop-message-says-warm-start-stops",
        area="training",
        path=TRAIN,
        old='"rllib": ("iteration boundary", "a warm start in progress finishes first")',
        new='"rllib": ("iteration boundary", "a warm start in progress stops at once, unsaved")',
        tests=("tests/test_training.py::test_the_stop_message_says_what_each_backend_does",),
        why="a signal during an RLlib warm start says it stops at once, unsaved, where it "
            "finishes and the run stops at its step-0 checkpoint",
    ),
    Mutant(
        id="ray-init-sets-its-sigterm-handler",
        area="training",
        path=TRAIN,
        old="        setattr(owner, setter, lambda *args, **kwargs: None)\n",
        new="",
        tests=("tests/test_training.py::"
               "test_stop_on_signal_keeps_its_handler_while_a_library_would_set_its_own",),
        why="ray.init's SIGTERM handler (sys.exit) is set while it runs: a SIGTERM then ends "
            "the RLlib trainer with no summary",
    ),
    Mutant(
        id="ray-imported-before-its-signal-setting",
        area="training",
        path=RLLIB_SETTINGS,
        old="        os.environ.setdefault(key, value)\n",
        new="        pass\n",
        tests=(f"{RLLIB_BACKEND_TESTS}::"
               "test_ray_s_import_time_settings_come_before_ray_is_imported",),
        why="Ray's C++ crash handler takes SIGTERM while ray.init runs: the RLlib trainer "
            "aborts (status 134) with no summary",
    ),
    Mutant(
        id="best-response-per-world",
        area="agents",
        path=SPIEL,
        old="        return self._keys[player]\n",
        new="        return self._keys[player] + str(self)\n",
        tests=(f"{EXPLOIT_TESTS}::test_micro_best_response_worked_out_by_hand",),
        why="the responder's information state holds the whole position: a best response "
            "per determinized world, which overstates exploitability",
    ),
    Mutant(
        id="best-response-horizon-ignored",
        area="agents",
        path=SPIEL,
        old="        if self._decisions >= self._game.setting.horizon:\n",
        new="        if False:\n",
        tests=(f"{EXPLOIT_TESTS}::test_micro_best_response_worked_out_by_hand",),
        why="the reduced setting plays past its horizon: another game than the one reported",
    ),
    Mutant(
        id="best-response-draw-not-the-outcome",
        area="agents",
        path="card_envs/analysis/roy_endgame.py",
        old="            deck[i], deck[-1] = deck[-1], deck[i]\n",
        new="            pass\n",
        tests=(f"{EXPLOIT_TESTS}::test_deals_positions_and_draws",),
        why="a draw's chance outcome is ignored: the top of a fixed stock is drawn every time",
    ),
    Mutant(
        id="exploitability-not-averaged-over-seats",
        area="agents",
        path="card_envs/analysis/exploitability.py",
        old='"nash_conv": br[0] + br[1], "exploitability": (br[0] + br[1]) / 2}',
        new='"nash_conv": br[0] + br[1], "exploitability": max(br)}',
        tests=(f"{EXPLOIT_TESTS}::test_micro_best_response_worked_out_by_hand",),
        why="the seat with the larger best response is reported for both",
    ),
    Mutant(
        id="search-distribution-per-move",
        area="agents",
        path=SEARCH,
        old="                dist[a] = n / total\n",
        new="                dist[a] = n / len(self.last_visits)\n",
        tests=("tests/test_expert_iteration.py::"
               "test_visit_distribution_where_the_search_is_known",),
        why="the teacher's targets are visits per visited move, not a distribution",
    ),
    Mutant(
        id="exit-soft-loss-on-probabilities",
        area="training",
        path="training/pretrain.py",
        old="    return -(targets * dist.distribution.logits).sum(-1)\n",
        new="    return -(targets * dist.distribution.probs).sum(-1)\n",
        tests=("tests/test_expert_iteration.py::"
               "test_soft_target_loss_is_cross_entropy_for_one_hot_targets",),
        why="the soft loss weighs probabilities, not log-probabilities: no cross-entropy",
    ),
    Mutant(
        id="exit-targets-ignored",
        area="training",
        path="training/pretrain.py",
        old="            imitation = (-dist.log_prob(actions[idx]) if targets is None\n",
        new="            imitation = (-dist.log_prob(actions[idx]) if True\n",
        tests=("tests/test_expert_iteration.py::"
               "test_cloning_the_search_fits_its_distributions",),
        why="the search's distributions are collected, then only its chosen move is cloned",
    ),
    Mutant(
        id="exit-policy-prior-ignored",
        area="training",
        path="training/pretrain.py",
        old="            if policy_prior:\n",
        new="            if False:\n",
        tests=("tests/test_expert_iteration.py::"
               "test_expert_iteration_rounds_use_the_policy_as_the_search_prior",),
        why="policy_prior is accepted and the rounds keep the configured search: no iteration",
    ),
    Mutant(
        id="exit-dagger-teacher-ignored",
        area="training",
        path="training/pretrain.py",
        old='            "heuristic" if dagger_settings is None else dagger_settings)\n',
        new='            "heuristic" if settings is None else settings)\n',
        tests=("tests/test_expert_iteration.py::test_the_dagger_rounds_have_their_own_labeller",),
        why="pretrain.dagger_teacher is accepted and the rounds are labelled by the teacher",
    ),
    Mutant(
        id="exit-flat-teaches-its-rollout-counts",
        area="agents",
        path=SEARCH,
        old='        if self.last_visits and self.settings.method != "flat":\n',
        new="        if self.last_visits:\n",
        tests=("tests/test_expert_iteration.py::test_a_flat_search_teaches_its_move_alone",),
        why="a flat teacher's sequential-halving counts, not its move, become the target",
    ),
    Mutant(
        id="selfplay-search-kind-dropped",
        area="training",
        path=SELFPLAY,
        old="            if kind == 3:\n",
        new="            if kind == 4:\n",
        tests=("tests/test_expert_iteration.py::"
               "test_search_opponents_play_in_the_selfplay_env_reproducibly",),
        why="a search share in the opponent mix plays snapshots or random moves instead",
    ),
    Mutant(
        id="selfplay-search-unseeded",
        area="training",
        path=SELFPLAY,
        old="            self.search_agent.seed(int(seeds[n_envs + 3].generate_state(1)[0]))\n",
        new="            pass\n",
        tests=("tests/test_expert_iteration.py::"
               "test_search_opponents_play_in_the_selfplay_env_reproducibly",),
        why="the search opponents draw from an unseeded stream: one seed, different games",
    ),
    Mutant(
        id="precision-heads-in-bfloat16",
        area="training",
        path=PRECISION,
        old="    return [m for m in trunk.modules() if isinstance(m, nn.Linear)]\n",
        new="    return [m for m in policy.modules() if isinstance(m, nn.Linear)]\n",
        tests=(f"{PRECISION_TESTS}::test_only_the_trunk_s_linear_layers_are_hidden",),
        why="the action and value heads compute in bfloat16 too: the log-probabilities PPO's "
            "clipped ratio compares lose their precision",
    ),
    Mutant(
        id="precision-layers-left-in-bfloat16",
        area="training",
        path=PRECISION,
        old="            del layer.forward\n",
        new="            pass\n",
        tests=(f"{PRECISION_TESTS}::test_the_layers_are_as_before_after_the_block_and_after_an_"
               "error",),
        why="after the update the rollouts, snapshots and evaluations run in bfloat16 too",
    ),
    Mutant(
        id="precision-cloning-in-float32",
        area="training",
        path="training/pretrain.py",
        old="            with hidden_layers_in(precision, policy):\n",
        new='            with hidden_layers_in("float32", policy):\n',
        tests=(f"{PRECISION_TESTS}::test_cloning_in_bfloat16_repeats_and_differs_from_float32",),
        why="training.precision: bfloat16 leaves the warm start's cloning in float32",
    ),
    Mutant(
        id="precision-update-in-float32",
        area="training",
        path=PRECISION,
        old='        with hidden_layers_in("bfloat16", self.policy):\n',
        new='        with hidden_layers_in("float32", self.policy):\n',
        tests=(f"{PRECISION_TESTS}::test_the_learner_class_trains_in_bfloat16_and_rolls_out_in_"
               "float32",),
        why="training.precision: bfloat16 leaves PPO's update in float32",
    ),
    Mutant(
        id="precision-arm-bfloat16-unseen",
        area="training",
        path=PRECISION,
        old='NATIVE_BFLOAT16 = ("avx512_bf16", "amx_bf16", "bf16", "sve_bf16")\n',
        new='NATIVE_BFLOAT16 = ("avx512_bf16", "amx_bf16")\n',
        tests=("tests/test_training.py::test_bfloat16_on_a_cpu_without_it_is_an_error",),
        why="the config check refuses bfloat16 on an Arm CPU that computes it natively",
    ),
    Mutant(
        id="precision-emulated-cpu-accepted",
        area="training",
        path="training/config.py",
        old="        if cpu_bfloat16_instructions() == []:\n",
        new="        if cpu_bfloat16_instructions() == [None]:\n",
        tests=("tests/test_training.py::test_bfloat16_on_a_cpu_without_it_is_an_error",),
        why="bfloat16 is accepted on a CPU that emulates it, 5 to 9 times slower than float32",
    ),
    Mutant(
        id="torch-threads-auto-ignores-workers",
        area="training",
        path="training/selfplay_workers.py",
        old="        return max(1, available_cores() - busy_processes)\n",
        new="        return max(1, available_cores())\n",
        tests=("tests/test_selfplay_workers.py::"
               "test_auto_torch_threads_are_the_cores_the_worker_processes_leave",),
        why="auto gives torch every core beside 15 busy worker processes",
    ),
    Mutant(
        id="torch-threads-in-process-worker-counted",
        area="training",
        path="training/selfplay_workers.py",
        old="    return resolve_torch_threads(threads, workers if workers > 1 else 0)\n",
        new="    return resolve_torch_threads(threads, workers)\n",
        tests=("tests/test_selfplay_workers.py::test_a_run_gives_torch_the_cores_its_workers_leave",),
        why="a run alone on 2 cores leaves one idle: the in-process games counted as a worker",
    ),
)

"""Mega Mem-Ory Ultima-Ory: a two-player memory game of matches and same-suit runs.

| Import | `from card_envs import mega_memory_v1` |
| --- | --- |
| Actions | Discrete |
| Parallel API | No |
| Manual control | No |
| Agents | `agents = ['player_0', 'player_1']` |
| Action shape | `()`: a scalar integer, as `Discrete.contains` takes it |
| Action values | Discrete(43) |
| Observation shape | `{"observation": (1116,), "action_mask": (43,)}` |
| Observation values | [0, 1] (round points in [0, 4], mega-points in [0, 1 + 128/target]) |
| Rewards | +1 / -1 at the end of the round (`episode="game"`: of the game); `reward="score"`: +difference / -difference at each round's end; an illegal move: -1 to the offender, the episode ends (`illegal_action="error"` raises) |
| Variants | `episode` round/game, `target_score`, `first_dealer`, `stall_turns`, `round_end`, `side_pair_without_centre`, `discard_without_second`, `memory` |

Rules and every interpretation: `card_envs/games/mega_memory/RULES.md`.

Actions: `0` `reveal:deck` / `1` `reveal:discard` reveal the first card of the turn (with an
empty discard pile the deck card is revealed without a decision); `2..16` `score:<piles>` score
the last revealed card with the face-up cards of those centre piles (e.g. `score:1+3`; a match
or a same-suit run, Aces low); `17..32` `multiscore:<piles>` score both revealed cards with those
centre piles (the second card came from the side; its slot is refilled from the deck);
`33..36` `flip:side1..4` and `37` `flip:discard` reveal the second card; `38` `take` scores the
revealed cards from the discard pile (no side or centre cards); `39` `dig` reveals the next
discard card to extend that score; `40` `keep:first` / `41` `keep:second` make no score: that
card goes back face down where the second card came from, the other face down on top of the
discard pile; `42` `discard:first` (variant `discard_without_second`) discards the first card
without revealing a second.

Observation (for the seat to act, own values first): card-indexed blocks of 52 for each
centre pile's face-up card (4 x 52), own and opponent side slots as remembered (2 x 4 x 52),
own and opponent scored cards, the first and second revealed cards, cards dug from the discard
pile into a pending score, the discard pile and deck cards this seat remembers with their depth
from the top; then the phase (5), the first card's source (2), the second card's source (5),
centre pile sizes (4), deck and discard sizes, both players' best round points (exact optimum
regrouping) and mega-points, whether this seat dealt, and the count of turns in a row without a
score (/ `stall_turns`). What a seat remembers of face-down
cards follows `memory` ("perfect", "none" or a forget probability). `env.state()` gives the
full state for a centralised critic.

Usage::

    from card_envs import mega_memory_v1
    env = mega_memory_v1.env(render_mode="ansi", episode="game")
"""

from card_envs.core.registration import aec_constructors, gym_constructor

env, raw_env = aec_constructors("mega_memory")
gym_env = gym_constructor("mega_memory")

__all__ = ["env", "raw_env", "gym_env"]

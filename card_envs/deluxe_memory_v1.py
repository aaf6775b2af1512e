"""Deluxe Memory: Memory with a poker deck, tokens, and a chart of effects for mixed-colour pairs.

| Import | `from card_envs import deluxe_memory_v1` |
| --- | --- |
| Actions | Discrete |
| Parallel API | No |
| Manual control | No |
| Agents | `agents = ['player_0', 'player_1', 'player_2']` (2 to 6 with `num_players`) |
| Action shape | `()`: a scalar integer, as `Discrete.contains` takes it |
| Action values | Discrete(80) |
| Observation shape | `{"observation": (1300 + 67n,), "action_mask": (80,)}` |
| Observation values | [0, 1] |
| Rewards | +1 / -1 at the end of the game, ties split (`reward="score"`: token changes); an illegal move: -1 to the offender, the episode ends (`illegal_action="error"` raises) |
| Variants | `num_players` 2-6, `simplicity`, `jokin_around` (+ `joker_swaps`), `underdogs` (+ `underdogs_end`), `starting_tokens`, `tokens_per_player`, `peek_first`, `first_player`, `memory` |

Rules and every interpretation: `card_envs/games/deluxe_memory/RULES.md`.

52 cards lie face down on a 7 by 8 grid without its corners (rows `a`..`g`, columns `1`..`8`;
with Jokin' Around the jokers' two extra places are the corners `a1` and `g8`). On a turn a
player looks at two cards: a black pair makes a chosen player return its value to the bank, a
red pair makes a chosen player gain it, a mixed pair runs the Mixed Chart (Ace..King), and an
unmatched pair goes back face up unless the player pays one token per card to keep it hidden.
A player without tokens is out; the game ends when one player has tokens or no match is left,
and the most tokens win.

Every choice is a separate decision of the same seat; the observation's `phase` field says
which one is pending and the mask allows only what is legal for it. Actions: `0..55`
`cell:<row><col>` picks a card for the turn or the cell an effect asks for (a card to reveal,
look at or swap; the top-left cell of a 2 by 2 square; the centre of a 3 by 3 cross);
`56..61` `target:+k` chooses the player `k` seats to the deciding seat's left (`+0` is itself);
`62..73` `effect:<rank>` is the effect a King pair takes (A..Q); `74..77`
`nomatch:show|hide_first|hide_second|hide_both` puts an unmatched pair back (a hidden card
costs a token); `78` `stop` ends an optional series (reveals, targets, joker swaps) or declines
to pay; `79` `pay_for_turn` spends 5 tokens for yet another turn after a Seven's extra turn.
A decision with a single legal action is resolved without asking.

Observation (players relative to the observer, itself first): per cell whether a card lies
there (56) and is face up (56); per cell the card the observer can see or remembers, as a rank
one-hot with jokers (14) plus black/red (2) (896; the cards it is holding this turn included);
this turn's first and second picks (56 + 56); cells chosen so far by the pending effect (56)
and the 2 by 2 square being looked at (56); the pending decision (23); the rank of the effect
being resolved (14); tokens at stake / 13 (1); reveals or swaps used (1); who decides, whose
turn it is, who owns the effect, players chosen so far (4n); tokens and the bank as fractions
of the supply (n + 1); who is still in (n); kept Nine and Ten pairs (2n); pending skips and
queued extra turns (2n); whether this is a Seven's extra turn (1); the cards off the grid per
rank and colour (27); per player and cell, whether that player has looked at the card now
there (56n: who looks is public, what they saw is not). ``env.state()`` gives the same layout with every card shown, seats in
absolute order.

Usage::

    from card_envs import deluxe_memory_v1
    env = deluxe_memory_v1.env(render_mode="ansi", num_players=4, underdogs=True)
"""

from card_envs.core.registration import aec_constructors, gym_constructor

env, raw_env = aec_constructors("deluxe_memory")
gym_env = gym_constructor("deluxe_memory")

__all__ = ["env", "raw_env", "gym_env"]

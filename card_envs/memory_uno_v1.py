"""Memory-Uno: remember your face-down cards, peek, swap blind, quick-play matches, call the round.

| Import | `from card_envs import memory_uno_v1` |
| --- | --- |
| Actions | Discrete |
| Parallel API | No |
| Manual control | No |
| Agents | `agents = ['player_0', 'player_1', 'player_2', 'player_3']` (2 to 6 with `num_players`) |
| Action shape | `()`: a scalar integer, as `Discrete.contains` takes it |
| Action values | Discrete(14 + 16n): 78 for 4 players (46, 62, 78, 94, 110 for n = 2..6) |
| Observation shape | `{"observation": (8n² + 149n + 73,), "action_mask": (14 + 16n,)}`: 797 for 4 players |
| Observation values | [0, 1] (totals in [-1, 2.5], last round in [-0.5, 1.5]) |
| Rewards | +1 / -1 at the end of the episode, ties split (`reward="score"`: minus the points added to your total); an illegal move: -1 to the offender, the episode ends (`illegal_action="error"` raises) |
| Variants | `num_players` 2-6, `episode` round/game, `match` rank_kings_by_colour/rank/points, `failed_call` on_top/instead, `give_after_throw` optional/required, `call_timing` any/turn, `first_player`, `memory` |

Rules and every interpretation: `card_envs/games/memory_uno/RULES.md`.

Each seat has up to 8 face-down cards in fixed positions (0-3 dealt, 4-7 for penalty cards). A
turn is: draw from the deck or the graveyard, then swap the card into one of your positions or,
for a deck card, discard it and play its effect (7/8 look at an own card, 9/10 look at another's,
J/Q swap any two cards, black K look at any card then swap any two). After every card that lands
on the graveyard a reaction window asks each seat in turn, starting left of the seat that put
the card there, to throw a matching card (any seat's), pass or call the round. The round ends
when someone calls or a seat without cards is reached; lowest hand wins, a failed call costs 30.

Actions (offset = seats clockwise from the acting seat, 0 = its own cards):

| ids | name | when |
| --- | --- | --- |
| 0 | `call` | start of turn; also in reaction windows unless `call_timing="turn"` |
| 1, 2 | `draw_deck`, `draw_grave` | start of turn |
| 3 | `discard` | a card drawn from the deck: discard it and play its effect |
| 4 | `pass` | reaction window |
| 5 | `keep` | after throwing another seat's card: give nothing back (`give_after_throw="optional"`) |
| 6..13 | `own:<pos>` | put the drawn card at own position; or give that own card after a throw |
| 14.. | `pick:<offset>.<pos>` (8n) | the card an effect looks at or swaps |
| 14+8n.. | `throw:<offset>.<pos>` (8n) | quick-play that card in a reaction window |

A decision with a single legal action is played automatically.

Observation (for one seat; seats in offset order, own first; 8 positions per seat): `occupied`
(8n), `known` (8n, this seat remembers the card), `known_kind` (8n x 15: A 2..10 J Q blackK redK
joker), `seen_by` (n x 8n: the public record of which seat has seen the card now at each
position), `selected` (8n: a swap's first card or a thrown position awaiting a give),
`grave_memory` (15: remembered buried graveyard cards per kind / copies), `deck_memory` (15:
the same for cards that went into the deck at a reshuffle, not seen to leave), `phase` (9),
`turn_player` (n), `drawn_kind` (15, if this seat may see it), `drawn_from_grave` (1),
`top_kind` (15), `locked_stack` (n), `deck_size`, `grave_size`, `round_turns` (1 each),
`totals` (n, / 100), `last_round` (n, / 100). Memory of face-down cards follows
`memory="perfect" | "none" | <forget probability>`. ``env.state()`` gives the full state.

Usage::

    from card_envs import memory_uno_v1
    env = memory_uno_v1.env(render_mode="ansi", num_players=4, episode="game")
"""

from card_envs.core.registration import aec_constructors, gym_constructor

env, raw_env = aec_constructors("memory_uno")
gym_env = gym_constructor("memory_uno")

__all__ = ["env", "raw_env", "gym_env"]

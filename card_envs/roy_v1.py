"""ROY: a shedding game of multi-card turns, wild Jacks, stacking Aces and the King of Spades.

| Import | `from card_envs import roy_v1` |
| --- | --- |
| Actions | Discrete |
| Parallel API | No |
| Manual control | No |
| Agents | `agents = ['player_0', 'player_1']` (2 to 4 with `num_players`) |
| Action shape | `()`: a scalar integer, as `Discrete.contains` takes it |
| Action values | Discrete(70) |
| Observation shape | `{"observation": (198 + 20n,), "action_mask": (70,)}` |
| Observation values | [0, 1] (scores in [0, 1 + 52/target]) |
| Rewards | +1 / -1 at the end of the episode, a hand or a game (`reward="score"`: each hand's points when it is scored); an illegal move: -1 to the offender, the episode ends (`illegal_action="error"` raises) |
| Variants | `num_players` 2-4, `episode` hand/game, `target_score`, `draw_when_able`, `first_dealer`, `memory` |

Rules and every interpretation: `card_envs/games/roy/RULES.md`.

Actions: `0..51` `play:<card>` discards that card as an ordinary card; `52..67`
`wild:<jack>><suit>` discards a Jack as a wild card announcing a suit (it must be the first and
only card of the turn); `68` `draw` draws one card, or the pending Ace penalty, and ends the
turn; `69` `end` ends the turn after at least one discard. A turn whose only remaining option is
`end` ends by itself.

Observation (for the seat to act; opponents listed from the next seat on): own hand (52),
top card (52), announced suit (4), Ace penalty on the pile (1), King of Spades discarded this
turn (1), phase first/continuing (2), each opponent's hand size (n-1), each opponent's last
forced draw (18 each: the suit and rank it could not match, the cards it has gained since), the
buried discards this seat remembers (52), the cards this seat remembers going into the deck at
the hand's last reshuffle and has not seen leave it (52), deck size (1), scores (n, own first).
``env.state()`` gives the full state for a centralised critic.

Usage::

    from card_envs import roy_v1
    env = roy_v1.env(render_mode="ansi", num_players=3)
"""

from card_envs.core.registration import aec_constructors, gym_constructor

env, raw_env = aec_constructors("roy")
gym_env = gym_constructor("roy")

__all__ = ["env", "raw_env", "gym_env"]

"""Dogpile: dig the dogpile against the clock for the best (or the smallest) loot.

| Import | `from card_envs import dogpile_v1` |
| --- | --- |
| Actions | Discrete |
| Parallel API | Yes (`dogpile_v1.parallel_env()`) |
| Manual control | No |
| Agents | `agents = ['player_0', 'player_1', 'player_2']` (2 to 6 with `num_players`) |
| Action shape | `()`: a scalar integer, as `Discrete.contains` takes it |
| Action values | Discrete(167) |
| Observation shape | `{"observation": (1257 + 87n,), "action_mask": (167,)}` (1518 for 3 dogs) |
| Observation values | [0, 1] (totals in [0, 3], last round's loot in [0, 2]) |
| Rewards | +1 / -1 (ties split) at the end of the game (`reward="score"`: each round's loot); an illegal move: -1 to the offender, the episode ends (`illegal_action="error"` raises) |
| Variants | `num_players` 2-6, `ticks_per_second`, `round_seconds`, `tick_order`, `shuffler_sees_bones`, `ace_high_straight`, `sniff`, `memory` |

Rules and every interpretation: `card_envs/games/dogpile/RULES.md`.

Time runs in ticks (`ticks_per_second`, default 2, so rounds of 60, 40 and 20 ticks). In every
tick each dog makes exactly one decision, in an order drawn per tick (`tick_order="rotate"`:
rotating by one seat per tick); every decision, `wait` included, costs the tick. The
AEC env asks the dogs one after another (a later dog sees what an earlier one did in the same
tick); `parallel_env()` lets them all choose at once from the start of the tick and resolves
conflicts in the tick's order (see `card_envs/games/dogpile/parallel.py`).

Actions: `0..53` `dig:NN` turns over the bone at pile slot NN for all to see (in the sniff
phase: picks it up to sniff); `54..107` `down:NN` and `108..161` `up:NN` put the bone in motion
(a dug bone, a bone being buried, a sniffed bone being shuffled back) on empty slot NN face down
/ face up; `162` `keep` keeps the dug bone in a free paw; `163..165` `bury:i` starts burying paw
bone i (two decisions: choose the bone, then the spot); `166` `wait` (in the sniff, before the
first pick: decline to sniff).

Observation (opponents listed from the next seat on; n = `num_players`): the 54 pile slots x
(occupied, face up, rank 14 + suit 4 of the face-up or remembered bone, or the chance of each
bone remembered in a sniffed group) (1080); slots put back by a sniff (54); own paws 3 x 19;
own state (free / digging / burying + which paw) (6); the bone each dog is digging, face up
(19n); opponents' paws, occupancy + remembered bone (57(n-1)); which paw bone each opponent is
burying (3(n-1)); looted bones (54); totals, last round's loot, bones looted, boneathon progress
(7n); round (3); time left in the round (1); phase play/sniff/shuffle/over (3+1); own position
in this tick's order (1); who is sniffing or shuffling (n); the sniff bag (57, faces shown to the
sniffer only). Size: 1257 + 87n (1518 for 3 dogs). ``env.state()`` is the seer view.

Usage::

    from card_envs import dogpile_v1
    env = dogpile_v1.env(render_mode="ansi", num_players=3)
    par = dogpile_v1.parallel_env(num_players=4)
"""

from typing import Any

from card_envs.core.conventions import DEFAULT_ILLEGAL_ACTION
from card_envs.core.registration import aec_constructors, gym_constructor
from card_envs.games.dogpile.parallel import DogpileParallelEnv

env, raw_env = aec_constructors("dogpile")
gym_env = gym_constructor("dogpile")


def parallel_env(render_mode: str | None = None, illegal_action: str = DEFAULT_ILLEGAL_ACTION,
                 render_view: str | int = "table", **config: Any) -> DogpileParallelEnv:
    """All dogs act at once each tick (PettingZoo Parallel API). Keyword args: game options.
    ``illegal_action``, for an action its agent's mask did not allow: "penalty" (the default,
    as ``env()``) ends the episode with -1 to each offender and an ``IllegalActionWarning``;
    "void" turns it into ``wait`` (``infos[agent]["voided"]``); "error" raises
    ``IllegalActionError``."""
    return DogpileParallelEnv(render_mode=render_mode, illegal_action=illegal_action,
                              render_view=render_view, **config)


__all__ = ["env", "raw_env", "gym_env", "parallel_env"]

"""Steered random play for the shared API tests, so that their checks reach deep positions.

Uniform random seats are shallow players in some games: a Memory-Uno seat may call the round
at any turn start or reaction window (the episode is over in a few decisions), and in a
reaction window the many ``throw:`` actions drown ``pass``, so a drawn card is rarely
discarded and its peek or swap effect rarely starts. :func:`steered_move` plays a random
legal move that avoids both, and :func:`position_tags` names what a position is, so a test can
assert that its checks saw the phases that matter (and cannot silently go shallow again).
"""

from __future__ import annotations

import importlib

import numpy as np

from card_envs.core.engine import Engine

_FAMILIES: dict[tuple[type, int], np.ndarray] = {}


def action_families(engine: Engine) -> np.ndarray:
    """Per action, the index of its family: its name up to the first ``:`` (``throw``,
    ``pick``, ``play``, ...), so that one family of many actions does not drown the others."""
    cls = type(engine)
    key = (cls, engine.num_actions)
    if key not in _FAMILIES:
        names = [n.split(":")[0] for n in engine.action_names]
        index = {n: i for i, n in enumerate(dict.fromkeys(names))}
        _FAMILIES[key] = np.array([index[n] for n in names])
    return _FAMILIES[key]


#: Actions that end the round on the spot (the episode, with ``episode="round"``). Steering
#: by name costs nothing; asking a clone whether a move ends the episode (as
#: ``_move_that_keeps_playing`` in test_api_all_games.py does) costs about 1 ms a move.
ROUND_ENDERS = frozenset({"call"})


def steered_move(engine: Engine, rng: np.random.Generator, keep_playing_until: int) -> int:
    """A random legal action: a family of the legal actions uniformly, then one of its
    actions uniformly. Until ``keep_playing_until`` decisions have been made, no action of
    :data:`ROUND_ENDERS` if another is legal (a random Memory-Uno seat calls at once)."""
    legal = np.flatnonzero(engine.legal_mask())
    if engine.num_steps < keep_playing_until:
        enders = _enders(engine)
        keep = legal[~enders[legal]]
        if keep.size:
            legal = keep
    families = action_families(engine)[legal]
    family = rng.choice(np.unique(families))
    return int(rng.choice(legal[families == family]))


_ENDERS: dict[tuple[type, int], np.ndarray] = {}


def _enders(engine: Engine) -> np.ndarray:
    key = (type(engine), engine.num_actions)
    if key not in _ENDERS:
        _ENDERS[key] = np.array([n in ROUND_ENDERS for n in engine.action_names])
    return _ENDERS[key]


def position_tags(engine: Engine) -> set[str]:
    """What kind of position this is: the pending decision's phase, and the game's rarer
    states (a later round or hand, a locked stack, a pending Ace penalty, ...)."""
    if engine.done:
        return {"over"}
    name = engine.name
    if name == "roy":
        tags = {"continue" if engine.phase else "first"}
        tags |= {"ace_chain"} if engine.ace_chain else set()
        tags |= {"wild"} if engine.announced_suit >= 0 else set()
        return tags | ({"hand2+"} if engine.hand_number > 1 else set())
    if name == "dogpile":
        return {("play", "sniff", "shuffle")[engine.phase], f"round{engine.round_index + 1}"}
    names = importlib.import_module(type(engine).__module__).PHASE_NAMES
    tags = {names[engine.phase]}
    if name in ("memory_uno", "mega_memory") and engine.round_number > 1:
        tags.add("round2+")
    if name == "memory_uno" and engine.locked >= 0:
        tags.add("lock")
    return tags


def step_tagged(engine: Engine, action: int) -> set[str]:
    """Play ``action``; return what it did that no position shows: in Memory-Uno and ROY
    "reshuffle" (the graveyard or discard pile became the deck), in Memory-Uno "penalty" (a
    wrong throw drew a hidden penalty card), in ROY "king7" (a King of Spades' seven cards)."""
    name = engine.name
    before = None
    if name in ("memory_uno", "roy"):
        rounds = engine.round_number if name == "memory_uno" else engine.hand_number
        cards = (list(engine.hand_count) if name == "memory_uno"
                 else [len(h) for h in engine.hands])
        before = (rounds, len(engine.deck), cards)
    engine.step(action)
    if before is None or engine.done:
        return set()
    rounds, deck, cards = before
    now = engine.round_number if name == "memory_uno" else engine.hand_number
    if now != rounds:
        return set()
    tags = {"reshuffle"} if len(engine.deck) > deck else set()
    if name == "memory_uno":
        tags |= {"penalty"} if sum(engine.hand_count) > sum(cards) else set()
    else:
        grew = [len(h) - c for h, c in zip(engine.hands, cards, strict=True)]
        tags |= {"king7"} if max(grew) >= 7 else set()
    return tags


#: Games whose uniform random play is shallow (measured for the shared API tests): a random
#: Memory-Uno seat calls the round within a few decisions and rarely discards a drawn card,
#: so its effects (peeks, blind swaps) are rarely reached. The other games' random episodes
#: run for tens to hundreds of decisions through all their phases, and stay uniform (their
#: tests keep the positions they always checked), but for Deluxe Memory's matches
#: (:func:`deluxe_move`).
STEERED_GAMES = frozenset({"memory_uno"})

#: Deluxe Memory: the share of second picks that take a mate of the first card of the other
#: colour when there is one (the test sees the grid). Uniform random pairs match in about one
#: turn in fifty, so each Mixed Chart effect came up in some variants only; steered, every
#: effect's decisions are reached in every variant that offers them (measured).
MIXED_MATCHES = 0.3


def deluxe_move(engine: Engine, rng: np.random.Generator) -> int:
    """A random legal Deluxe Memory move, steered to mixed-colour matches (their Mixed Chart
    effects) and, in a Three's reveals, to Threes (its players-lose-three decision)."""
    from card_envs.core.cards import COLOUR, RANK
    from card_envs.games.deluxe_memory.engine import NUM_CELLS, PICK2, R_THREE, THREE_REVEAL

    legal = np.flatnonzero(engine.legal_mask())
    cells = legal[legal < NUM_CELLS]
    grid = np.asarray(engine.grid)[cells]
    if engine.phase == PICK2 and rng.random() < MIXED_MATCHES:
        first = engine.grid[engine.picks[0]]
        mates = cells[(RANK[grid] == RANK[first]) & (COLOUR[grid] != COLOUR[first])]
        if mates.size:
            return int(rng.choice(mates))
    elif engine.phase == THREE_REVEAL:
        threes = cells[RANK[grid] == R_THREE]
        if threes.size:
            return int(rng.choice(threes))
    return int(rng.choice(legal))


def play_move(engine: Engine, rng: np.random.Generator, keep_playing_until: int = 80) -> int:
    """The move a shared test plays: :func:`steered_move` in :data:`STEERED_GAMES`,
    :func:`deluxe_move` in Deluxe Memory, else a uniformly random legal action (the same draws
    as ``rng.choice(legal)``)."""
    if engine.name in STEERED_GAMES:
        return steered_move(engine, rng, keep_playing_until)
    if engine.name == "deluxe_memory":
        return deluxe_move(engine, rng)
    return int(rng.choice(np.flatnonzero(engine.legal_mask())))

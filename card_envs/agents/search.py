"""Information-set Monte Carlo tree search over determinizations, for every game.

:class:`SearchAgent` is single-observer information-set MCTS (SO-ISMCTS; Cowling, Powley and
Whitehouse, "Information Set Monte Carlo Tree Search", IEEE TCIAIG 2012), written once against
the engine's public search hooks: ``clone()``, ``resample_hidden(seat, rng)``, ``legal_mask()``,
``step()``, ``current_player``, ``done`` and ``winners`` (or ``rewards``).

Each simulation clones the real position, redraws everything the deciding seat cannot know
(``resample_hidden``: hidden cards and the chance to come), and walks ONE tree shared by all
determinizations, whose nodes are the action sequences played from the decision (the deciding
seat's information sets, with every other seat's moves as edges). An edge is scored for the
seat that moves there (``current_player`` of that determinization, so Dogpile's per-tick orders
and any number of seats need nothing special); an edge counts how often it was *available*
(legal in the determinization that reached its node), and UCB uses that count in place of the
parent's visits, as ISMCTS must when the legal moves differ between determinizations. A new
node is expanded, then the game is played to its end by the rollout agent (random or the
game's heuristic) or cut off after ``rollout_depth`` steps, and every edge on the path gets
the result for every seat (a vector, so each seat maximises its own value).

With a policy (a saved MaskablePPO ``.zip``), node priors are the policy's move probabilities
for the seat to move there and selection is PUCT (AlphaZero's rule over availability counts);
``leaf=value`` then scores a new node with the policy's value head for every seat instead of a
rollout (its estimate, mapped from [-1, 1] to [0, 1]: fitted to ``reward="win"`` training).

Why SO-ISMCTS and not PIMC (a separate perfect-information search per determinization, votes
summed): PIMC's searches each see one world's hidden cards, so they never value a move that
gathers information or keeps the deciding seat's options open (strategy fusion), and these are
memory games, where peeking and remembering is most of the play. ISMCTS shares one tree over
all worlds, so a move's value averages the worlds in which it is taken, and its budget is
spent on one tree instead of many shallow ones. Multiple-observer ISMCTS would also stop the
opponents' edges from seeing the deciding seat's redrawn cards, at one tree per seat; at 50 ms
per decision the simulations are too few to feed several trees.

Budgets: ``simulations`` per decision (deterministic for a seed, in any process), or
``time_ms`` per decision (stops at whichever comes first: the time budget makes the moves
depend on the machine's speed). A decision with one legal move costs nothing.

The agent needs the position, not just an observation: callers that hold the engine (the
arena, the Gymnasium env's opponents, ``training.evaluate``) call :meth:`Agent.act_in`, which
:class:`SearchAgent` implements. In a PettingZoo loop pass ``env.unwrapped.engine``.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from card_envs.agents.base import Agent

#: Rollout agents by name (``policy`` needs ``policy=<path>``).
ROLLOUTS = ("random", "heuristic", "policy")
LEAVES = ("rollout", "value")
VALUES = ("win", "reward", "margin")
HORIZONS = ("episode", "deal")
OPPONENTS = ("search", "rollout")
PRIORS = ("none", "heuristic")
METHODS = ("ismcts", "flat")
BASELINES = ("heuristic", "policy")
_WIN_PAYS_AT_THE_END = ("search setting horizon=deal scores what a deal pays, but this {game} "
                        "config has reward='win', which pays only at the episode's end: use "
                        "reward='score', or horizon=episode")
#: Share of a node's prior that ``prior=heuristic`` gives the heuristic's move (the rest is
#: spread evenly over every legal move).
HEURISTIC_PRIOR = 0.5


@dataclass(frozen=True)
class SearchSettings:
    """What :class:`SearchAgent` does per decision (also its ``search:<key>=<value>`` keys)."""

    #: Simulations per decision (an upper bound when ``time_ms`` is set).
    simulations: int = 200
    #: Wall-clock budget per decision in milliseconds (None: simulations only).
    time_ms: float | None = None
    #: Exploration constant of UCB (values lie in [0, 1]) or of PUCT with a policy.
    c: float = 0.7
    #: Who plays the rollouts: "random", "heuristic" (the game's), "policy" (needs ``policy``).
    rollout: str = "random"
    #: Steps a rollout plays before it stops (None: to the end). A cut-off rollout scores every
    #: seat 1 / seats, or by the value head with ``leaf=value``.
    rollout_depth: int | None = None
    #: A saved MaskablePPO policy (.zip or run directory): move priors (PUCT) and value head.
    policy: str | None = None
    #: How a new node is scored: "rollout", or "value" (the policy's value head).
    leaf: str = "rollout"
    #: What a finished game is worth to a seat: "win" (1 / winners for each winner, else 0:
    #: what training.evaluate scores), "reward" (the engine's summed rewards from here on), or
    #: "margin" (that minus the mean of the other seats': what ``selfplay.reward: zero_sum``
    #: pays). "reward" and "margin" are in the engine's units, not [0, 1].
    value: str = "win"
    #: Where the tree and the rollouts stop: "episode" (its end), or "deal" (also the end of
    #: the hand or round the decision is in, the engine's ``deal_number``: a game of many
    #: deals is then searched one deal ahead, scored by what the deal pays; needs
    #: value=reward or margin, and an engine config that pays rewards as deals end).
    horizon: str = "episode"
    #: How the other seats move inside the tree: "search" (each maximises its own value, as
    #: the deciding seat does: SO-ISMCTS proper), or "rollout" (the rollout agent's moves: an
    #: opponent model, which does not let them play on the determinization's hidden cards).
    opponents: str = "search"
    #: Move priors without a policy: "none" (plain UCB, every untried move first), or
    #: "heuristic" (PUCT with half the prior on the game's heuristic's move for the seat to
    #: move, untried moves valued 0: a budget smaller than the legal moves then refines the
    #: heuristic's choice instead of trying each move once and keeping the luckiest rollout).
    prior: str = "none"
    #: "ismcts" (the tree above), or "flat": rollout policy improvement, every root move
    #: scored by rollouts from shared determinizations, sequential halving over the moves,
    #: ties to the heuristic's move (card_envs.agents.search_flat; ``simulations`` then
    #: counts rollouts).
    method: str = "ismcts"
    #: method=flat: standard errors by which the best move's paired mean advantage over the
    #: baseline move must exceed before it is played instead (0: the best mean wins).
    z: float = 1.0
    #: method=flat: the move a candidate must beat by ``z`` standard errors to be played,
    #: never halved away: "heuristic" (the game's heuristic's move), or "policy" (the
    #: policy's most probable legal move: the flat search with the policy as its prior).
    baseline: str = "heuristic"
    #: method=flat with a policy: only ``top_k`` moves are scored, the policy's most probable
    #: (the baseline among them, in the k-th place if the policy ranks it lower), so a budget
    #: smaller than the legal moves is spent on a few (None: every legal move).
    top_k: int | None = None

    def __post_init__(self) -> None:
        problems = []
        if type(self.simulations) is not int or self.simulations < 1:
            problems.append(f"simulations={self.simulations!r}: expected an integer >= 1")
        if self.time_ms is not None and not (isinstance(self.time_ms, (int, float))
                                             and math.isfinite(self.time_ms)
                                             and self.time_ms > 0):
            problems.append(f"time_ms={self.time_ms!r}: expected a number > 0 (milliseconds)")
        if not (isinstance(self.c, (int, float)) and math.isfinite(self.c) and self.c >= 0):
            problems.append(f"c={self.c!r}: expected a number >= 0")
        if not (isinstance(self.z, (int, float)) and math.isfinite(self.z) and self.z >= 0):
            problems.append(f"z={self.z!r}: expected a number >= 0")
        if self.rollout not in ROLLOUTS:
            problems.append(f"rollout={self.rollout!r}: expected one of {', '.join(ROLLOUTS)}")
        if self.rollout_depth is not None and (type(self.rollout_depth) is not int
                                               or self.rollout_depth < 0):
            problems.append(f"rollout_depth={self.rollout_depth!r}: expected an integer >= 0")
        if self.leaf not in LEAVES:
            problems.append(f"leaf={self.leaf!r}: expected one of {', '.join(LEAVES)}")
        if self.opponents not in OPPONENTS:
            problems.append(f"opponents={self.opponents!r}: expected one of "
                            f"{', '.join(OPPONENTS)}")
        if self.value not in VALUES:
            problems.append(f"value={self.value!r}: expected one of {', '.join(VALUES)}")
        if self.horizon not in HORIZONS:
            problems.append(f"horizon={self.horizon!r}: expected one of {', '.join(HORIZONS)}")
        elif self.horizon == "deal" and self.value == "win":
            problems.append("horizon=deal scores a rollout by what the deal pays: it needs "
                            "value=reward or value=margin (a deal's end has no winner)")
        if self.prior not in PRIORS:
            problems.append(f"prior={self.prior!r}: expected one of {', '.join(PRIORS)}")
        if self.method not in METHODS:
            problems.append(f"method={self.method!r}: expected one of {', '.join(METHODS)}")
        if self.method == "flat" and (self.prior != "none" or self.leaf != "rollout"
                                      or self.opponents != "search"):
            problems.append("method=flat scores every root move by rollouts: it takes no "
                            "prior, leaf=value or opponents=rollout (the rollout agent plays "
                            "every seat)")
        if self.baseline not in BASELINES:
            problems.append(f"baseline={self.baseline!r}: expected one of "
                            f"{', '.join(BASELINES)}")
        if self.top_k is not None and (type(self.top_k) is not int or self.top_k < 1):
            problems.append(f"top_k={self.top_k!r}: expected an integer >= 1")
        if self.method != "flat" and (self.baseline != "heuristic" or self.top_k is not None):
            problems.append("baseline and top_k are method=flat's settings (the tree takes a "
                            "policy's move probabilities as PUCT priors)")
        elif self.policy is None and (self.baseline == "policy" or self.top_k is not None):
            problems.append(f"baseline={self.baseline}, top_k={self.top_k} need "
                            "policy=<a saved .zip or run directory>")
        if (self.method == "flat" and self.policy is not None and self.rollout != "policy"
                and self.baseline != "policy" and self.top_k is None):
            problems.append("method=flat reads policy=... as its rollout agent "
                            "(rollout=policy) or as its prior (baseline=policy, top_k=...): "
                            "give one")
        if self.policy is not None and self.prior != "none":
            problems.append(f"prior={self.prior} and policy=... both give move priors: "
                            "choose one")
        if self.policy is None and (self.leaf == "value" or self.rollout == "policy"):
            problems.append(f"leaf={self.leaf}, rollout={self.rollout} need policy=<a saved "
                            ".zip or run directory>")
        if problems:
            raise ValueError("invalid search settings: " + "; ".join(problems))

    @classmethod
    def parse(cls, text: str) -> SearchSettings:
        """Settings from ``key=value,key=value`` (what follows ``search:`` in an agent spec)."""
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            key, sep, raw = item.partition("=")
            key = key.strip()
            if not sep or not key:
                raise ValueError(f"search setting {item!r}: expected key=value")
            if key not in known:
                raise ValueError(f"unknown search setting {key!r}; known: {', '.join(known)}")
            if key in values:
                raise ValueError(f"search setting {key!r} given twice")
            values[key] = _parse_value(key, raw.strip(), cls.__dataclass_fields__[key].default)
        return cls(**values)


def _parse_value(key: str, raw: str, default: Any) -> Any:
    """``raw`` as the type of ``key``'s field: ints for counts, floats for c and time_ms,
    "none" for an optional one's None (a field whose default is None), text otherwise."""
    if raw.lower() == "none" and default is None:
        return None
    counts = ("simulations", "rollout_depth", "top_k")
    try:
        if key in counts:
            return int(raw)
        if key in ("c", "time_ms", "z"):
            return float(raw)
    except ValueError:
        kind = "an integer" if key in counts else "a number"
        raise ValueError(f"search setting {key}={raw!r}: expected {kind}") from None
    return raw


class _Edge:
    """One move from a node: its action, visits, availability (how often it was legal when
    its node was reached), summed value per seat, prior, and its child node (action -> edge)."""

    __slots__ = ("action", "n", "avail", "w", "prior", "child")

    def __init__(self, action: int, seats: int, prior: float) -> None:
        self.action = action
        self.n = 0
        self.avail = 0
        self.w = [0.0] * seats
        self.prior = prior
        self.child: dict[int, _Edge] | None = None


class SearchAgent(Agent):
    """Single-observer ISMCTS (see the module docstring): ``settings``, or the same as
    keywords (``SearchAgent("roy", simulations=400, rollout="heuristic")``)."""

    name = "search"
    needs_engine = True

    def __init__(self, game: str | None, config: Mapping[str, Any] | None = None,
                 settings: SearchSettings | None = None, seed: int | None = None,
                 allow_policy_mismatch: bool = False, **kwargs: Any) -> None:
        """``game``: a registered game (its options ``config``), or None to search any engine
        that offers the hooks (random rollouts only: no heuristic, no policy).
        ``allow_policy_mismatch``: take a ``policy`` saved for other options or versions (as
        :func:`~card_envs.agents.make_agent` does; e.g. a full-game policy searching hands)."""
        from card_envs.games import get_game, make_engine

        if settings is not None and kwargs:
            raise ValueError("give SearchAgent settings= or keyword settings, not both")
        self.settings = settings if settings is not None else SearchSettings(**kwargs)
        self.game = game if game is None else get_game(game).name
        self.config: dict[str, Any] = {}
        if game is not None:
            self.config = dict(make_engine(game, **dict(config or {})).config)
        elif (self.settings.rollout != "random" or self.settings.policy is not None
              or self.settings.prior != "none"):
            raise ValueError("a SearchAgent for any game (game=None) rolls out at random and "
                             "takes no policy or prior: name the game for heuristic or policy "
                             "play")
        if self.settings.horizon == "deal" and self.config.get("reward") == "win":
            raise ValueError(_WIN_PAYS_AT_THE_END.format(game=self.game))
        self.rng = np.random.default_rng(seed)
        self._policy: Any = None
        if self.settings.policy is not None and self.game is not None:
            from card_envs.agents import make_agent
            from card_envs.agents.policy import PolicyAgent

            loaded = make_agent(self.settings.policy, self.game, self.config,
                                allow_policy_mismatch=allow_policy_mismatch)
            if not isinstance(loaded, PolicyAgent):
                raise ValueError(f"search setting policy={self.settings.policy!r}: expected a "
                                 "saved MaskablePPO policy (.zip) or a training run directory")
            self._policy = loaded.model.policy
        self._heuristics: list[Agent] = []
        if (self.settings.rollout == "heuristic" or self.settings.prior == "heuristic"
                or self.settings.method == "flat") and self.game is not None:
            cls = get_game(self.game).heuristic_class()
            self._heuristics = [cls(**self.config) for _ in range(self.config["num_players"])]
            for i, heuristic in enumerate(self._heuristics):  # as seed() seeds them
                heuristic.seed(None if seed is None else seed + 1 + i)
        self._obs: np.ndarray | None = None
        #: The deal (``deal_number``) the decision being searched is in, with horizon=deal.
        self._deal: int | None = None
        #: After each decision: the simulations run, and the root's visits per action (the
        #: search's move distribution).
        self.last_simulations = 0
        self.last_visits: dict[int, int] = {}
        #: Decisions searched (more than one legal move) and the wall-clock seconds they took.
        self.searched = 0
        self.search_seconds = 0.0

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)
        for i, heuristic in enumerate(self._heuristics):
            heuristic.seed(None if seed is None else seed + 1 + i)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise TypeError("SearchAgent searches the position, which an observation does not "
                        "hold: call act_in(engine) (the arena, the Gymnasium env and "
                        "training.evaluate do; in a PettingZoo loop pass "
                        "env.unwrapped.engine)")

    def act_in(self, engine: Any) -> int:
        """The move for ``engine.current_player``, searched from what that seat may know
        (the engine is only cloned, never changed)."""
        started = time.perf_counter()  # a time budget counts the whole decision
        if self.game is not None and engine.name != self.game:
            raise ValueError(f"SearchAgent for {self.game} was given a {engine.name} position")
        if engine.done:
            raise ValueError("SearchAgent was asked to move in a finished episode")
        legal = np.flatnonzero(engine.legal_mask())
        self.last_visits = {}
        self.last_simulations = 0
        if legal.size == 1:
            return int(legal[0])
        s = self.settings
        seat = engine.current_player
        seats = engine.num_players
        if s.horizon == "deal":
            if engine.reward_mode == "win":
                raise ValueError(_WIN_PAYS_AT_THE_END.format(game=engine.name))
            self._deal = engine.deal_number
        rng = self.rng
        fast = random.Random(int(rng.integers(2**63)))
        deadline = None if s.time_ms is None else started + s.time_ms / 1000.0
        if s.method == "flat":
            from card_envs.agents.search_flat import flat_search

            move, self.last_visits, self.last_simulations = flat_search(
                self, engine, legal.tolist(), seat, rng, fast, deadline)
            self.searched += 1
            self.search_seconds += time.perf_counter() - started
            return move
        root: dict[int, _Edge] = {}
        sims = 0
        while sims < s.simulations:
            world = engine.clone()
            world.resample_hidden(seat, rng)
            self._simulate(world, root, seat, seats, fast)
            sims += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.last_simulations = sims
        self.searched += 1
        self.search_seconds += time.perf_counter() - started
        self.last_visits = {a: e.n for a, e in root.items() if e.n}
        return _most_visited(root, legal.tolist(), seat)

    def distribution_in(self, engine: Any) -> tuple[int, np.ndarray]:
        """:meth:`act_in`'s move and the search's move distribution: the root's visit counts
        over every action (``legal_mask()``'s length), normalised: a teacher's targets for
        behaviour cloning (with one legal move, all on it). The search is act_in's.
        ``method=flat`` gives its move alone: its rollout counts are sequential halving's
        schedule (the heuristic's move is never halved away), not a preference over moves."""
        action = self.act_in(engine)
        dist = np.zeros(len(engine.legal_mask()), dtype=np.float32)
        if self.last_visits and self.settings.method != "flat":
            total = sum(self.last_visits.values())
            for a, n in self.last_visits.items():
                dist[a] = n / total
        else:
            dist[action] = 1.0
        return action, dist

    def _simulate(self, world: Any, node: dict[int, _Edge], seat: int, seats: int,
                  fast: random.Random) -> None:
        """One simulation on the determinization ``world``: select down the tree, expand one
        node, score it, and add the score to every edge on the path."""
        summed = [0.0] * seats if self.settings.value != "win" else None
        modelled = self.settings.opponents == "rollout"
        deal = self._deal
        path: list[_Edge] = []
        while not world.done and (deal is None or world.deal_number == deal):
            mover = world.current_player
            if modelled and mover != seat:  # the opponent model moves; the tree records it
                action = self._rollout_move(world, fast)
                edge = node.get(action) or node.setdefault(action, _Edge(action, seats, 0.0))
            else:
                legal = np.flatnonzero(world.legal_mask()).tolist()
                edge = self._select(world, node, legal, mover, seats, fast)
            path.append(edge)
            world.step(edge.action)
            if summed is not None:
                _add(summed, world.rewards)
            if edge.child is None:  # a new node: expanded, and scored from here
                edge.child = {}
                break
            node = edge.child
        values = self.leaf_values(world, seats, fast, summed)
        for edge in path:
            edge.n += 1
            w = edge.w
            for i in range(seats):
                w[i] += values[i]

    def _select(self, world: Any, node: dict[int, _Edge], legal: list[int], mover: int,
                seats: int, fast: random.Random) -> _Edge:
        """UCB over the legal edges (an untried legal move first, at random), or PUCT over
        the policy's priors; every legal edge's availability counts this visit."""
        puct = self._policy is not None or self.settings.prior == "heuristic"
        if puct and any(a not in node for a in legal):
            priors = self.move_priors(world, mover, legal)
            for a in legal:
                if a not in node:
                    node[a] = _Edge(a, seats, priors[a])
        untried: list[_Edge] = []
        for a in legal:
            edge = node.get(a)
            if edge is None:
                edge = node[a] = _Edge(a, seats, 0.0)
            edge.avail += 1
            if edge.n == 0 and not puct:
                untried.append(edge)
        if untried:
            return untried[fast.randrange(len(untried))]
        c = self.settings.c
        # An untried move's value under PUCT: a policy's moves start neutral (0.5); with the
        # heuristic's prior they start at 0 (pessimistic first-play urgency), so a small
        # budget leaves the heuristic's move only for one the search has seen do better.
        first = 0.0 if self._policy is None else 0.5
        best = node[legal[0]]
        best_score = -math.inf
        for a in legal:
            edge = node[a]
            n = edge.n
            if puct:
                q = edge.w[mover] / n if n else first
                score = q + c * edge.prior * math.sqrt(edge.avail) / (1 + n)
            else:
                score = edge.w[mover] / n + c * math.sqrt(math.log(edge.avail) / n)
            if score > best_score:
                best, best_score = edge, score
        return best

    def leaf_values(self, world: Any, seats: int, fast: random.Random,
                    summed: list[float] | None) -> list[float]:
        """Each seat's value of the new node: a rollout to the end (or ``rollout_depth``
        steps), or the policy's value head."""
        s = self.settings
        if not world.done and s.leaf == "value":
            return self._value_head(world, seats)
        depth = -1 if s.rollout_depth is None else s.rollout_depth
        deal = self._deal
        if s.rollout == "random":
            while not world.done and depth != 0 and (deal is None or world.deal_number == deal):
                legal = np.flatnonzero(world.legal_mask())
                world.step(int(legal[fast.randrange(legal.size)]))
                if summed is not None:
                    _add(summed, world.rewards)
                depth -= 1
        else:
            while not world.done and depth != 0 and (deal is None or world.deal_number == deal):
                world.step(self._rollout_move(world, fast))
                if summed is not None:
                    _add(summed, world.rewards)
                depth -= 1
        if summed is not None:
            return _margins(summed) if s.value == "margin" else summed
        if not world.done:  # cut off: the value head if there is one, else no opinion
            return self._value_head(world, seats) if self._policy is not None \
                else [1.0 / seats] * seats
        winners = world.winners
        values = [0.0] * seats
        for w in winners:
            values[w] = 1.0 / len(winners)
        return values

    def reseed_heuristics(self, seed: int) -> None:
        """Reseed the rollout heuristics (seat i from ``seed + i``): flat search replays the
        same random choices for every candidate of a round."""
        for i, heuristic in enumerate(self._heuristics):
            if heuristic.draws_random:  # a fresh generator costs about 20 us
                heuristic.seed(seed + i)

    def _observe(self, world: Any, seat: int) -> np.ndarray:
        """``seat``'s observation of ``world``, written into one reused buffer."""
        if self._obs is None:
            self._obs = np.empty(world.layout.size, dtype=np.float32)
        world.write_observation(seat, self._obs)
        return self._obs

    def heuristic_move(self, world: Any, seat: int) -> int | None:
        """The game's heuristic's move for ``seat`` in ``world`` (None without a game)."""
        if not self._heuristics:
            return None
        return int(self._heuristics[seat].act(self._observe(world, seat), world.legal_mask()))

    def _rollout_move(self, world: Any, fast: random.Random) -> int:
        """The rollout agent's move in ``world`` (random, the heuristic, or the policy's most
        likely move)."""
        if self.settings.rollout == "random":
            legal = np.flatnonzero(world.legal_mask())
            return int(legal[fast.randrange(legal.size)])
        mover = world.current_player
        mask = world.legal_mask()
        if self.settings.rollout == "heuristic":
            if np.count_nonzero(mask) == 1:
                # A forced move: every game's heuristic plays it without reading the
                # observation (or drawing a random number), so neither is built.
                return int(mask.argmax())
            return int(self._heuristics[mover].act(self._observe(world, mover), mask))
        obs = self._observe(world, mover)
        return int(np.argmax(self._logits(obs[None], mask[None])[0]))

    # -- the policy: priors, values, rollout moves ----------------------------------------------
    def _logits(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        import torch

        policy = self._policy
        with torch.no_grad():
            features = policy.pi_features_extractor(torch.as_tensor(obs))
            latent = policy.mlp_extractor.forward_actor(features)
            logits = policy.action_net(latent).numpy().astype(np.float64)
        logits[masks == 0] = -np.inf
        return logits

    def move_priors(self, world: Any, mover: int, legal: list[int]) -> dict[int, float]:
        """The policy's move probabilities for ``mover`` from its observation of ``world``,
        or with ``prior=heuristic`` the heuristic's move weighted (see HEURISTIC_PRIOR)."""
        if self._policy is None:
            favoured = self.heuristic_move(world, mover)
            base = (1.0 - HEURISTIC_PRIOR) / len(legal)
            return {a: base + (HEURISTIC_PRIOR if a == favoured else 0.0) for a in legal}
        obs = world.observation(mover)[None]
        logits = self._logits(obs, world.legal_mask()[None])[0]
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        return {a: float(probs[a]) for a in legal}

    def _value_head(self, world: Any, seats: int) -> list[float]:
        """Every seat's value-head estimate from its own observation, in [0, 1]."""
        import torch

        obs = np.stack([world.observation(i) for i in range(seats)])
        with torch.no_grad():
            values = self._policy.predict_values(torch.as_tensor(obs)).numpy().reshape(-1)
        return [min(1.0, max(0.0, (float(v) + 1.0) / 2.0)) for v in values]


def _margins(summed: list[float]) -> list[float]:
    """Each seat's summed reward minus the mean of the other seats' (``value=margin``)."""
    others = len(summed) - 1
    if others == 0:
        return summed
    total = sum(summed)
    return [v - (total - v) / others for v in summed]


def _add(total: list[float], rewards: np.ndarray) -> None:
    for i, r in enumerate(rewards.tolist()):
        total[i] += r


def _most_visited(root: dict[int, _Edge], legal: list[int], seat: int) -> int:
    """The root move visited most; ties go to the higher mean value, then the lower id."""
    best, key = legal[0], (-1, -math.inf)
    for a in legal:
        edge = root.get(a)
        if edge is None:
            continue
        k = (edge.n, edge.w[seat] / edge.n if edge.n else -math.inf)
        if k > key:
            best, key = a, k
    return best


def make_search_agent(spec: str, game: str, config: Mapping[str, Any] | None = None,
                      seed: int | None = None,
                      allow_policy_mismatch: bool = False) -> SearchAgent:
    """The agent an agent spec ``search`` or ``search:<key>=<value>,...`` names."""
    head, sep, rest = spec.partition(":")
    if head != "search" or (sep and not rest.strip()):
        raise ValueError(f"agent spec {spec!r}: expected 'search' or "
                         "'search:<key>=<value>,...' (keys: "
                         + ", ".join(f.name for f in fields(SearchSettings)) + ")")
    return SearchAgent(game, config, SearchSettings.parse(rest), seed=seed,
                       allow_policy_mismatch=allow_policy_mismatch)

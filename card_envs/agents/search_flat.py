"""Flat Monte Carlo over the root moves: rollout policy improvement (``method=flat``).

Each root move is scored by rollouts from determinizations: the deciding seat's move, then
every seat moving by the rollout agent to the end of the episode (or of the deal, with
``horizon=deal``, or ``rollout_depth`` steps).
With the game's heuristic as the rollout agent this is Tesauro and Galperin's rollout policy
improvement ("On-line policy improvement using Monte-Carlo search", NIPS 1996): the move whose
heuristic continuation does best, which, with enough rollouts, plays at least as well as the
heuristic itself, because the heuristic's own move is one of the candidates scored.

What makes it work at 50 ms a decision:

* **Common random numbers.** One round draws ONE determinization (``resample_hidden``) and
  one rollout seed, and plays every candidate move from a copy of it: the candidates are
  compared on the same hidden cards and the same chance to come, so a round's differences
  are the moves', not the deal's (the heuristic rollouts are deterministic given the world).
* **Sequential halving** (Karnin, Koren and Somekh, ICML 2013): the budget is split over
  ``ceil(log2(moves))`` phases; after each, the better half of the candidates (by mean value)
  goes on, so the last rounds are spent telling the best few apart instead of on moves that
  lost every early round. With ``time_ms`` the budget is re-estimated from the rollouts' cost
  after the first round.
* **The heuristic's move is the baseline.** It is never halved away, ties go to it (then to
  the lower action id), and the best move replaces it only if its mean advantage over the
  heuristic's move, on the rounds both were scored in (paired: the same worlds), exceeds
  ``z`` standard errors (the ``z`` setting, default 1): a budget too small to separate the
  moves plays what the heuristic plays, not the move with the luckiest few rollouts.
* **A policy as the prior** (``policy=...``): ``baseline=policy`` makes the policy's most
  probable move the baseline in the heuristic's place, so a budget too small to separate the
  moves plays what a policy stronger than the heuristic plays; ``top_k=k`` scores only the
  policy's k most probable moves (the baseline taking the k-th place if it is not among
  them), so the rollouts go to the moves the policy thinks worth telling apart. The rollouts
  are still the rollout agent's: a policy's forward pass per rollout step would cost more
  than the rollout.

Why flat and not the tree here: in a tree over move sequences, a card drawn inside the tree
does not split its node, so the moves after a draw are chosen blind to the card; the flat
search has no tree below the root (the rollout agent sees each determinization's draws as a
player would), and its improvement over the rollout policy does not depend on the tree
converging within a few hundred simulations.
"""

from __future__ import annotations

import math
import random
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from card_envs.agents.search import SearchAgent


def flat_search(agent: SearchAgent, engine: Any, legal: list[int], seat: int,
                rng: Any, fast: random.Random,
                deadline: float | None) -> tuple[int, dict[int, int], int]:
    """The move for ``seat`` by sequential halving over ``legal`` (see the module docstring),
    the rollouts per move, and the rollouts run (``simulations`` is the rollout budget;
    ``deadline``, a ``time.perf_counter()`` time, stops it as :class:`_Clock` says)."""
    s = agent.settings
    seats = engine.num_players
    favoured, legal = _baseline_and_candidates(agent, engine, legal, seat)
    sums = dict.fromkeys(legal, 0.0)
    counts = dict.fromkeys(legal, 0)
    # Each move's value in each round it took part in (round -> value), for paired tests.
    rounds_of: dict[int, dict[int, float]] = {a: {} for a in legal}
    round_id = 0
    alive = list(legal)
    budget = s.simulations
    phases = max(1, math.ceil(math.log2(len(alive))))
    done = 0
    out_of_time = False
    first_round = True
    clock = _Clock(deadline)
    while len(alive) > 1 and not out_of_time and done + len(alive) <= budget:
        phase_start, rounds = done, 0
        # The rounds this phase: its share of what is left, over the moves still in (the
        # budget may shrink after the first round, when the time budget is estimated).
        while not out_of_time and done + len(alive) <= budget and rounds < max(
                1, ((budget - phase_start) // phases) // len(alive)):
            if not clock.fits(round_start=True):
                out_of_time = True
                break
            round_started = time.perf_counter()
            world = engine.clone()
            world.resample_hidden(seat, rng)
            round_seed = fast.getrandbits(63)
            scored: list[tuple[int, float]] = []
            legal_here = world.legal_mask()
            last = len(alive) - 1
            clock.set_up(time.perf_counter() - round_started)
            for i, a in enumerate(alive):
                if not legal_here[a]:  # not the deciding seat's in this world
                    continue
                if not clock.fits():
                    break
                rollout_started = time.perf_counter()
                # The last candidate plays on the world itself: nothing reads it after.
                trial = world if i == last else world.clone()
                summed = [0.0] * seats if s.value != "win" else None
                trial.step(a)
                if summed is not None:
                    for i, r in enumerate(trial.rewards.tolist()):
                        summed[i] += r
                agent.reseed_heuristics(round_seed)  # their random choices paired too
                values = agent.leaf_values(trial, seats, random.Random(round_seed), summed)
                scored.append((a, values[seat]))
                clock.rolled_out(time.perf_counter() - rollout_started)
            else:  # a whole round: every move still in scored on the same world
                for a, value in scored:
                    sums[a] += value
                    counts[a] += 1
                    rounds_of[a][round_id] = value
                round_id += 1
                done += len(scored)
                rounds += 1
                if deadline is not None and first_round and done:
                    # How many rollouts the time left allows, at what this round cost (its
                    # set-up and rollouts: not the heuristic's move and the rest before it).
                    now = time.perf_counter()
                    per_rollout = max(now - round_started, 1e-9) / done
                    budget = min(budget, done + int((deadline - now) / per_rollout))
                first_round = False
                continue
            # A round cut short by the time is dropped: its moves saw different worlds.
            out_of_time = True
        alive = _ranked(alive, sums, counts, favoured)
        if not out_of_time:
            kept = alive[:max(1, math.ceil(len(alive) / 2))]
            if favoured in alive and favoured not in kept:  # the baseline stays in
                kept.append(favoured)
            alive = kept
            phases = max(1, phases - 1)
    best = _ranked(alive, sums, counts, favoured)[0]
    if favoured is not None and best != favoured and not _clearly_better(
            rounds_of[best], rounds_of[favoured], s.z):
        best = favoured
    return best, {a: n for a, n in counts.items() if n}, done


def _baseline_and_candidates(agent: SearchAgent, engine: Any, legal: list[int],
                             seat: int) -> tuple[int | None, list[int]]:
    """The baseline move (the heuristic's, or with ``baseline=policy`` the policy's most
    probable, ties to the lower id) and the moves to score: every legal move, or with
    ``top_k`` k moves, the policy's most probable with the baseline in the k-th place if
    it is not among them, in id order."""
    s = agent.settings
    ranked: list[int] = []  # the policy's most probable first, ties to the lower id
    if s.baseline == "policy" or s.top_k is not None:
        priors = agent.move_priors(engine, seat, legal)
        ranked = sorted(legal, key=lambda a: (-priors[a], a))
    if s.baseline == "policy":
        favoured: int | None = ranked[0]
    else:
        favoured = agent.heuristic_move(engine, seat)
    if s.top_k is None or len(legal) <= s.top_k:
        return favoured, legal
    kept = ranked[:s.top_k]
    if favoured is not None and favoured not in kept:  # the baseline is always scored
        kept[-1] = favoured
    return favoured, sorted(kept)


class _Clock:
    """A decision's time budget: nothing is started that, at what the same kind of work has
    cost so far in this decision (a round's set-up: the clone and ``resample_hidden``; a
    rollout: the candidate's clone, its move and the rollout), would end after the deadline.
    The time before the first round (the heuristic's move) is spent already: the deadline
    counts from the decision's start. The first set-up and the first rollout of a decision
    start if the deadline has not passed (nothing measured yet)."""

    __slots__ = ("deadline", "setup_s", "setups", "rollout_s", "rollouts")

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.setup_s, self.setups = 0.0, 0
        self.rollout_s, self.rollouts = 0.0, 0

    def fits(self, round_start: bool = False) -> bool:
        """Whether the next rollout (with ``round_start``: a round's set-up and its first
        rollout) would end by the deadline; always, without one."""
        if self.deadline is None:
            return True
        cost = self.rollout_s / self.rollouts if self.rollouts else 0.0
        if round_start and self.setups:
            cost += self.setup_s / self.setups
        return time.perf_counter() + cost < self.deadline

    def set_up(self, seconds: float) -> None:
        self.setup_s += seconds
        self.setups += 1

    def rolled_out(self, seconds: float) -> None:
        self.rollout_s += seconds
        self.rollouts += 1


def _clearly_better(challenger: dict[int, float], baseline: dict[int, float],
                    z: float) -> bool:
    """Whether ``challenger``'s mean advantage over ``baseline``, over the rounds both were
    scored in (the same worlds), exceeds ``z`` standard errors of that mean."""
    diffs = [value - baseline[r] for r, value in challenger.items() if r in baseline]
    if not diffs:
        return False
    n = len(diffs)
    mean = sum(diffs) / n
    if mean <= 0:
        return False
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    return mean > z * math.sqrt(var / n)


def _ranked(moves: list[int], sums: dict[int, float], counts: dict[int, int],
            favoured: int | None) -> list[int]:
    """``moves`` best first: the higher mean value, then the heuristic's move, then the lower
    action id (a move never rolled out ranks last)."""
    def key(a: int) -> tuple[float, int, int]:
        mean = sums[a] / counts[a] if counts[a] else -math.inf
        return (-mean, 0 if a == favoured else 1, a)
    return sorted(moves, key=key)

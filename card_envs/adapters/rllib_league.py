"""Who plays each seat of an RLlib self-play episode: the learner, a frozen snapshot of it,
the random agent or the heuristic, at the ``selfplay`` section's rates (no Ray here).

:class:`League` is RLlib's ``policy_mapping_fn``: RLlib calls it for each agent the first
time the agent appears in an episode, in the EnvRunner that steps that episode. The first call
of an episode draws every seat at once, as the SB3 trainer does when it deals a game: the
learner's seat (``selfplay.learner_seat``, or uniformly at random), then for each other seat an
opponent kind by ``selfplay.opponents``; a ``self`` seat plays the newest snapshot with
probability ``selfplay.latest_prob``, else a snapshot drawn uniformly from the pool. The draws
come from a stream seeded by the run's seed, the EnvRunner's index and a generation (bumped
on resume), so a run's league is reproducible from its seed.

Snapshots live in ``pool_size`` fixed module slots (``snapshot_0``...): RLlib's MultiRLModule
is built once, and a new snapshot overwrites the oldest slot's weights. The driver tells every
EnvRunner which slots hold snapshots (:meth:`League.set_pool`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

LEARNER = "learner"
RANDOM = "random"
HEURISTIC = "heuristic"
KINDS = ("self", RANDOM, HEURISTIC)


def snapshot_id(slot: int) -> str:
    """The module id of snapshot slot ``slot``."""
    return f"snapshot_{slot}"


def opponent_kind(module_id: str) -> str:
    """``self``, ``random`` or ``heuristic``: the opponent kind a module id plays."""
    return "self" if module_id.startswith("snapshot_") else module_id


class League:
    """RLlib's ``policy_mapping_fn`` for league self-play (module docstring)."""

    #: Episodes whose seats are remembered (an EnvRunner has at most its games in flight).
    MEMORY = 4096

    def __init__(self, agents: Sequence[str], opponents: Mapping[str, float],
                 latest_prob: float, learner_seat: int | str, seed: int) -> None:
        weights = np.array([float(opponents.get(k, 0.0)) for k in KINDS])
        if weights.sum() <= 0 or (weights < 0).any():
            raise ValueError(f"opponents: non-negative weights, one positive, got {opponents}")
        unknown = set(opponents) - set(KINDS)
        if unknown:
            raise ValueError(f"opponents: unknown kinds {sorted(unknown)}; expected {KINDS}")
        if learner_seat != "random" and not 0 <= int(learner_seat) < len(agents):
            raise ValueError(f"learner_seat: 'random' or 0..{len(agents) - 1}, "
                             f"got {learner_seat!r}")
        self.agents = list(agents)
        self.kind_p = weights / weights.sum()
        self.latest_prob = float(latest_prob)
        self.learner_seat = learner_seat
        self.seed = int(seed)
        self.slots: list[int] = []  # slots holding a snapshot
        self.newest = -1
        self.worker_index = 0
        self.generation = 0
        self._rng = self._stream()
        self._seats: OrderedDict[Any, dict[str, str]] = OrderedDict()

    def _stream(self) -> np.random.Generator:
        return np.random.default_rng([self.seed, self.worker_index, self.generation])

    def bind(self, worker_index: int, generation: int) -> None:
        """This EnvRunner's own stream: its index and the run's generation (one per session)."""
        self.worker_index, self.generation = int(worker_index), int(generation)
        self._rng = self._stream()
        self._seats.clear()

    def set_pool(self, slots: Sequence[int], newest: int) -> None:
        """The snapshot slots filled so far, and the newest one."""
        if slots and newest not in slots:
            raise ValueError(f"newest slot {newest} is not among the filled slots {slots}")
        self.slots, self.newest = [int(s) for s in slots], int(newest)

    def draw(self) -> dict[str, str]:
        """One episode's seats: agent id to module id."""
        rng, n = self._rng, len(self.agents)
        seat = int(rng.integers(n)) if self.learner_seat == "random" else int(self.learner_seat)
        kinds = rng.choice(len(KINDS), size=n, p=self.kind_p)
        seats: dict[str, str] = {}
        for i, agent in enumerate(self.agents):
            if i == seat:
                seats[agent] = LEARNER
                continue
            kind = KINDS[int(kinds[i])]
            if kind != "self":
                seats[agent] = kind
            elif not self.slots:  # no snapshot yet: the random agent, as the SB3 trainer
                seats[agent] = RANDOM
            elif rng.random() < self.latest_prob:
                seats[agent] = snapshot_id(self.newest)
            else:
                seats[agent] = snapshot_id(self.slots[int(rng.integers(len(self.slots)))])
        return seats

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        key = getattr(episode, "id_", episode)
        seats = self._seats.get(key)
        if seats is None:
            seats = self._seats[key] = self.draw()
            while len(self._seats) > self.MEMORY:
                self._seats.popitem(last=False)
        return seats[agent_id]


class SnapshotPool:
    """The driver's record of the snapshot slots: which hold a snapshot, taken at which
    learner step; a new snapshot fills the next free slot, then overwrites the oldest."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"pool size: at least 1, got {size}")
        self.size = size
        self.steps: dict[int, int] = {}  # slot -> learner step of its snapshot
        self.newest = -1

    def next_slot(self) -> int:
        """The slot the next snapshot goes into."""
        if len(self.steps) < self.size:
            return len(self.steps)
        return min(self.steps, key=lambda s: (self.steps[s], s))

    def add(self, step: int) -> int:
        slot = self.next_slot()
        self.steps[slot] = step
        self.newest = slot
        return slot

    @property
    def slots(self) -> list[int]:
        return sorted(self.steps)

    def state_dict(self) -> dict[str, Any]:
        return {"steps": {str(k): v for k, v in self.steps.items()}, "newest": self.newest}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.steps = {int(k): int(v) for k, v in state["steps"].items()}
        self.newest = int(state["newest"])

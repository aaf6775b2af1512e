"""The games the app is running: one :class:`Session` per game (a person's game or a watched
one), one :class:`Replay` per record being stepped through. Every request that changes a game
is checked in full before anything changes, so a bad one leaves the game as it was."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from card_envs.agents import Agent, make_agent
from card_envs.core.engine import Engine
from card_envs.pictures.scene import Facts, facts
from card_envs.play.insight import policy_insight
from card_envs.play.payload import seat_view, table_view
from card_envs.records import GameRecord, Recorder, RecordError, replay

MAX_SESSIONS = 64  # the oldest games are dropped past this many (a local app, bounded memory)
BASE_AGENTS = ("random", "heuristic")


class RequestError(Exception):
    """A request the app refuses: ``status`` is its HTTP status, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def agent_kinds(game: str) -> list[str]:
    """Who can sit in a seat: a person, the package's agents that :func:`make_agent` resolves
    by name for this game (``search`` when the package has one), or a saved policy."""
    kinds = ["person", *BASE_AGENTS]
    try:
        make_agent("search", game)
        kinds.append("search")
    except (ValueError, ImportError):
        pass
    return [*kinds, "policy"]


@dataclass
class Seat:
    kind: str  # person / random / heuristic / search / policy
    agent: Agent | None  # None for a person
    label: str


def make_seat(spec: Any, game: str, config: dict[str, Any], seed: int) -> Seat:
    if not isinstance(spec, dict) or not isinstance(spec.get("kind"), str):
        raise RequestError(400, f"a seat is {{'kind': ...}}, got {spec!r}")
    kind = spec["kind"]
    if kind == "person":
        return Seat("person", None, "person")
    if kind == "policy":
        path = spec.get("path")
        if not isinstance(path, str) or not path:
            raise RequestError(400, "a policy seat needs 'path': a saved policy (.zip) or a "
                                    "training run's directory")
        try:
            return Seat("policy", make_agent(path, game, config, seed=seed), path)
        except (ValueError, OSError, ImportError) as err:
            raise RequestError(400, f"policy {path!r}: {err}") from None
    if kind in BASE_AGENTS or kind == "search":
        try:
            return Seat(kind, make_agent(kind, game, config, seed=seed), kind)
        except (ValueError, ImportError) as err:
            raise RequestError(400, f"agent {kind!r}: {err}") from None
    raise RequestError(400, f"unknown seat kind {kind!r}: use one of person, random, "
                            "heuristic, search (if installed) or policy")


@dataclass
class Session:
    """One game: a person's (``person`` is their seat) or a watched one (``person`` None)."""

    id: str
    engine: Engine
    recorder: Recorder
    seats: list[Seat]
    person: int | None
    show_policy: bool
    game: Facts
    events: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def mode(self) -> str:
        return "play" if self.person is not None else "watch"

    def advisor(self) -> Agent | None:
        """The policy whose probabilities a person's payload shows on their own decisions."""
        return next((s.agent for s in self.seats if s.kind == "policy"), None)

    def _agent_move(self) -> None:
        engine = self.engine
        seat = engine.current_player
        agent = self.seats[seat].agent
        assert agent is not None
        obs, mask = engine.observation(seat), engine.legal_mask()
        event: dict[str, Any] = {"seat": seat, "who": self.seats[seat].label}
        if self.show_policy and self.person is None:  # watching: every seat may be shown
            insight = policy_insight(agent, obs, mask, self.game.action_names)
            if insight is not None:
                event["policy"] = insight
        # A search agent reads the position (through clone and resample_hidden only).
        action = int(agent.act_in(engine) if agent.needs_engine else agent.act(obs, mask))
        if not engine.is_legal(action):
            raise RequestError(500, f"agent {self.seats[seat].label!r} in seat {seat} chose "
                                    f"an illegal move: {engine.illegal_reason(action)}")
        event["action"] = engine.action_name(action)
        self.recorder.step(action)
        self.events.append(event)

    def run_agents(self) -> None:
        """Agents move until the person's turn or the end."""
        while not self.engine.done and self.engine.current_player != self.person:
            self._agent_move()

    def advance(self) -> None:
        if self.person is not None:
            raise RequestError(409, "this is a person's game: agents move after each of your "
                                    "moves (advance is for watched games)")
        if not self.engine.done:
            self._agent_move()

    def move(self, action: Any) -> None:
        engine = self.engine
        if self.person is None:
            raise RequestError(409, "this is a watched game: nobody here may move")
        if engine.done:
            raise RequestError(409, "the game is over: start a new one")
        if engine.current_player != self.person:
            raise RequestError(409, f"it is not your turn (player_{self.person})")
        names = self.game.action_names
        if isinstance(action, str) and action in names:
            action = names.index(action)
        if type(action) is not int or not 0 <= action < len(names):
            raise RequestError(400, f"unknown move {action!r}: legal now: "
                                    + ", ".join(n for n, ok in zip(names, engine.legal_mask(),
                                                                   strict=True) if ok))
        if not engine.is_legal(action):
            raise RequestError(400, f"illegal move {names[action]!r}: "
                                    f"{engine.illegal_reason(action)}")
        self.recorder.step(action)
        self.events.append({"seat": self.person, "who": "person", "action": names[action]})
        self.run_agents()

    def payload(self, since: int = 0) -> dict[str, Any]:
        """What the page gets. A person's game: their seat's view only (payload.py)."""
        engine = self.engine
        person = self.person
        if person is not None:
            obs = engine.observation(person)
            mask = engine.legal_mask() if engine.current_player == person and not engine.done \
                else np.zeros(engine.num_actions, dtype=np.int8)
            view = seat_view(self.game, obs, mask, person)
            if self.show_policy and mask.any():
                advisor = self.advisor()
                if advisor is not None:  # the policy's reading of the person's own view
                    view["policy"] = policy_insight(advisor, obs, mask, self.game.action_names)
        else:
            view = table_view(self.game, engine.state_array())
        return {"id": self.id, "mode": self.mode, "game": engine.name,
                "num_players": engine.num_players, "seat": person,
                "seats": [s.label for s in self.seats],
                "your_turn": bool(view["legal"]), "over": bool(engine.done),
                "result": engine.result() if engine.done else None,
                "events": self.events[since:], "event_count": len(self.events), **view}


@dataclass
class Replay:
    id: str
    record: GameRecord
    game: Facts
    states: list[np.ndarray]

    def payload(self, t: int) -> dict[str, Any]:
        if not 0 <= t < len(self.states):
            raise RequestError(404, f"position {t} is not in this record: it has positions "
                                    f"0..{len(self.states) - 1}")
        event = None
        if t > 0:
            row = self.record.steps[t - 1]
            event = {"seat": row["seat"], "action": row.get("name"), "rewards": row.get("r")}
        return {"id": self.id, "mode": "replay", "game": self.record.game, "t": t,
                "length": len(self.states) - 1, "players": self.record.players,
                "event": event, **table_view(self.game, self.states[t])}


class Store:
    """Every running game and replay, by id (ids are unguessable: one browser, one game)."""

    def __init__(self) -> None:
        self.items: OrderedDict[str, Session | Replay] = OrderedDict()
        self.lock = threading.Lock()

    def _add(self, item: Session | Replay) -> None:
        with self.lock:
            self.items[item.id] = item
            while len(self.items) > MAX_SESSIONS:
                self.items.popitem(last=False)

    def get(self, id: str) -> Session | Replay:
        with self.lock:
            item = self.items.get(id)
        if item is None:
            raise RequestError(404, f"no game {id!r} here (it ended with the server, or was "
                                    "dropped as one of the oldest): start a new one")
        return item

    def session(self, id: str) -> Session:
        item = self.get(id)
        if not isinstance(item, Session):
            raise RequestError(409, f"{id!r} is a replay, not a game")
        return item

    def replay(self, id: str) -> Replay:
        item = self.get(id)
        if not isinstance(item, Replay):
            raise RequestError(409, f"{id!r} is a game, not a replay")
        return item

    def new_session(self, body: Any) -> Session:
        from card_envs.games import GAMES, make_engine

        if not isinstance(body, dict):
            raise RequestError(400, "expected a JSON object {game, options, seats, ...}")
        game = body.get("game")
        if game not in GAMES:
            raise RequestError(404, f"unknown game {game!r}: the games are {', '.join(GAMES)}")
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise RequestError(400, f"options: expected an object, got {options!r}")
        try:
            engine = make_engine(game, **options)
        except (ValueError, TypeError) as err:
            raise RequestError(400, f"options: {err}") from None
        seed = body.get("seed")
        if seed is not None and (type(seed) is not int or seed < 0):
            raise RequestError(400, f"seed: expected an integer >= 0, got {seed!r}")
        specs = body.get("seats")
        n = engine.num_players
        if not isinstance(specs, list) or len(specs) != n:
            raise RequestError(400, f"seats: expected a list of {n} seats for {game} with these "
                                    f"options, got {specs!r}")
        base = secrets.randbits(31) if seed is None else seed
        seats = [make_seat(spec, game, engine.config, base + 1 + i)
                 for i, spec in enumerate(specs)]
        people = [i for i, s in enumerate(seats) if s.kind == "person"]
        if len(people) > 1:
            raise RequestError(400, "one person per game: each person plays from their own "
                                    "browser, in their own game")
        recorder = Recorder(engine, [s.label for s in seats])
        recorder.reset(seed=base)
        session = Session(secrets.token_urlsafe(12), engine, recorder, seats,
                          people[0] if people else None, bool(body.get("show_policy")),
                          facts(engine))
        if session.person is not None:
            session.run_agents()
        self._add(session)
        return session

    def new_replay(self, text: Any) -> Replay:
        if not isinstance(text, str):
            raise RequestError(400, "expected {'record': the record's JSON lines as text}")
        try:
            record = GameRecord.loads(text)
            states = [engine.state_array() for engine in replay(record)]
        except RecordError as err:
            raise RequestError(400, f"malformed or unplayable record: {err}") from None
        from card_envs.games import make_engine

        item = Replay(secrets.token_urlsafe(12), record,
                      facts(make_engine(record.game, **record.config)), states)
        self._add(item)
        return item

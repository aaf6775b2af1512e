"""Game records: one episode as JSON lines (a header, one line per decision, an end line), small
enough to keep thousands, readable with ``head``, and replayable exactly.

A record pins what the replay needs (the env's id and version from ``env_versions.json``, the
resolved game options, the seed) and every decision (seat, action id, action name, the rewards
that step paid, only when some seat's is nonzero). :func:`replay` deals the same game again and
checks every decision against it, so a record the package can no longer play (another env
version, an action renamed, another outcome) fails with the reason, never silently diverges.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from card_envs.core.engine import Engine

FORMAT = "card-envs-record"
FORMAT_VERSION = 1


class RecordError(ValueError):
    """A record that cannot be read or replayed; the message says why."""


@dataclass
class GameRecord:
    """One episode: what dealt it and every decision taken in it."""

    game: str
    env: str  # the versioned env name, e.g. "roy_v1"
    env_version: int
    config: dict[str, Any]
    seed: int
    players: list[str] = field(default_factory=list)  # who sat where (labels, optional)
    package_version: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None

    # -- writing ---------------------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "game": self.game,
                "env": self.env, "env_version": self.env_version,
                "package_version": self.package_version, "config": self.config,
                "seed": self.seed, "players": self.players}

    def lines(self) -> list[str]:
        rows: list[dict[str, Any]] = [self.header(), *self.steps]
        if self.end is not None:
            rows.append(self.end)
        return [json.dumps(row, separators=(",", ":")) for row in rows]

    def dumps(self) -> str:
        return "\n".join(self.lines()) + "\n"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the record (``.jsonl``) atomically: a crash leaves the old file or the new."""
        tmp = f"{os.fspath(path)}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(self.dumps())
        os.replace(tmp, path)

    # -- reading ---------------------------------------------------------------------------
    @classmethod
    def loads(cls, text: str, source: str = "record") -> GameRecord:
        """Parse a record; :class:`RecordError` naming the line at fault."""
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise RecordError(f"{source} line {number}: not JSON ({err.msg})") from None
            if not isinstance(row, dict):
                raise RecordError(f"{source} line {number}: expected a JSON object")
            rows.append(row)
        if not rows:
            raise RecordError(f"{source} is empty: expected a header line")
        head = rows[0]
        if head.get("format") != FORMAT:
            raise RecordError(f"{source} is not a card-envs game record (its first line has "
                              f"format {head.get('format')!r}, expected {FORMAT!r})")
        version = head.get("format_version")
        if version != FORMAT_VERSION:
            raise RecordError(f"{source} has record format version {version!r}; this "
                              f"package reads version {FORMAT_VERSION}")
        missing = [k for k in ("game", "env", "env_version", "config", "seed") if k not in head]
        if missing:
            raise RecordError(f"{source} header lacks {', '.join(missing)}")
        if not isinstance(head["config"], dict) or type(head["seed"]) is not int:
            raise RecordError(f"{source} header: 'config' must be an object and 'seed' an int")
        steps, end = [], None
        for number, row in enumerate(rows[1:], 2):
            if "end" in row:
                end = row
                continue
            if end is not None:
                raise RecordError(f"{source} line {number}: a decision after the end line")
            if type(row.get("seat")) is not int or type(row.get("action")) is not int:
                raise RecordError(f"{source} line {number}: a decision needs an int 'seat' "
                                  f"and an int 'action', got {row}")
            steps.append(row)
        return cls(game=head["game"], env=head["env"], env_version=head["env_version"],
                   config=head["config"], seed=head["seed"],
                   players=list(head.get("players") or []),
                   package_version=str(head.get("package_version", "")), steps=steps, end=end)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> GameRecord:
        with open(path, encoding="utf-8") as f:
            return cls.loads(f.read(), source=os.fspath(path))


class Recorder:
    """Records the episode an engine plays: :meth:`reset` deals (with a seed, drawn when none
    is given, since a replay needs one), :meth:`step` applies one action and logs it."""

    def __init__(self, engine: Engine, players: Sequence[str] = ()) -> None:
        self.engine = engine
        self.players = list(players)
        self.record: GameRecord | None = None

    def reset(self, seed: int | None = None) -> None:
        from card_envs import __version__
        from card_envs.versions import current

        if seed is None:
            seed = secrets.randbits(63)
        version = current(self.engine.name)
        self.engine.reset(seed=seed)
        self.record = GameRecord(game=self.engine.name, env=version.name,
                                 env_version=version.number, config=_plain(self.engine.config),
                                 seed=int(seed), players=self.players,
                                 package_version=__version__)

    def step(self, action: int) -> None:
        record = self.record
        if record is None:
            raise RuntimeError("Recorder.step before Recorder.reset")
        engine = self.engine
        seat = int(engine.current_player)
        engine.step(int(action))
        row: dict[str, Any] = {"seat": seat, "action": int(action),
                               "name": engine.action_name(int(action))}
        if engine.rewards.any():
            row["r"] = [float(r) for r in engine.rewards]
        record.steps.append(row)
        if engine.done and record.end is None:
            record.end = end_line(engine)

    def truncate(self) -> None:
        """End the episode without a result, as an env view that counts its own steps does."""
        if self.record is None:
            raise RuntimeError("Recorder.truncate before Recorder.reset")
        self.engine.truncate()
        self.record.end = end_line(self.engine)


def end_line(engine: Engine) -> dict[str, Any]:
    return {"end": True, "terminated": bool(engine.terminated),
            "truncated": bool(engine.truncated), "result": _plain(engine.result())}


def _plain(value: Any) -> Any:
    """JSON's types (numpy scalars and arrays become numbers and lists)."""
    return json.loads(json.dumps(value, default=lambda v: v.tolist()
                                 if hasattr(v, "tolist") else str(v)))


def check_replayable(record: GameRecord) -> None:
    """:class:`RecordError` saying why this package cannot replay ``record``, if it cannot."""
    from card_envs.games import GAMES
    from card_envs.versions import current

    if record.game not in GAMES:
        raise RecordError(f"the record is of game {record.game!r}, which this package does not "
                          f"have (installed: {', '.join(GAMES)})")
    now = current(record.game)
    if record.env_version != now.number or record.env != now.name:
        made = (f" by card-envs {record.package_version}" if record.package_version else "")
        raise RecordError(
            f"the record was made{made} with {record.env} (version {record.env_version}); this "
            f"package plays {now.name}, whose rules, options or action numbering changed "
            f"(docs/versioning.md): replay it with the card-envs release that made it")


def replay(record: GameRecord) -> Iterator[Engine]:
    """Deal the record's game and play its decisions, yielding the engine at each position
    (the deal first, then after every decision). Every decision is checked: the same seat to
    act, a legal action with the same name, the same rewards; a mismatch raises
    :class:`RecordError` naming the step."""
    from card_envs.games import make_engine

    check_replayable(record)
    try:
        engine = make_engine(record.game, **record.config)
    except ValueError as err:
        raise RecordError(f"the record's game options are refused: {err}") from None
    engine.reset(seed=record.seed)
    yield engine
    for t, row in enumerate(record.steps):
        where = f"record step {t}"
        if engine.done:
            raise RecordError(f"{where}: the episode had already ended here")
        if row["seat"] != engine.current_player:
            raise RecordError(f"{where}: seat {row['seat']} acts in the record, but seat "
                              f"{engine.current_player} is to act in this package's deal")
        action = row["action"]
        if not 0 <= action < engine.num_actions or not engine.is_legal(action):
            raise RecordError(f"{where}: action {action} ({row.get('name')}) is not legal here")
        name = engine.action_name(action)
        if "name" in row and row["name"] != name:
            raise RecordError(f"{where}: action {action} is {name!r} in this package but "
                              f"{row['name']!r} in the record")
        engine.step(action)
        paid = [float(r) for r in engine.rewards] if engine.rewards.any() else None
        if row.get("r") != paid:
            raise RecordError(f"{where}: the rewards were {row.get('r')} in the record but "
                              f"{paid} on replay")
        yield engine
    end = record.end
    if end is not None:
        if end.get("truncated") and not engine.done:
            engine.truncate()
        if _plain(engine.result()) != end.get("result") or bool(engine.done) is not True:
            raise RecordError(f"the replay ended with {_plain(engine.result())}, the record "
                              f"with {end.get('result')}")


def record_dir_path(directory: str | os.PathLike[str], game: str, index: int) -> str:
    """Where an evaluation's ``index``-th game of ``game`` goes under ``directory``."""
    return os.path.join(os.fspath(directory), f"{game}-{index:06d}.jsonl")

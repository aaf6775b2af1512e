"""Snapshot validation: every field of real snapshots of every game, mutated (integers out of
range, wrong types, lists of the wrong length, duplicated or foreign cards, garbage random
states), is either refused with a SnapshotError naming what is wrong, or loads a position that
passes check_invariants() and plays on (every later position passing them too, every
observation inside its space)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from card_envs import make_engine
from card_envs.core.engine import CorruptSnapshotError, SnapshotError
from card_envs.core.snapshot_specs import describe, schema_of
from card_envs.games import GAMES

#: Each game with its defaults and one other variant.
VARIANTS = [(game, {}) for game in GAMES] + [
    ("roy", {"num_players": 3, "episode": "game", "target_score": 30}),
    ("memory_uno", {"num_players": 3, "episode": "game"}),
    ("mega_memory", {"episode": "game", "target_score": 8, "memory": 0.3}),
    ("deluxe_memory", {"num_players": 4, "underdogs": True}),
    ("dogpile", {"num_players": 4, "memory": "none"}),
]


def _positions(game: str, config: dict[str, Any]) -> list[dict[str, Any]]:
    """JSON round-tripped snapshots of one seeded random game: its start, two positions in
    play and its end."""
    engine = make_engine(game, **config)
    engine.reset(seed=11)
    rng = np.random.default_rng(11)
    snaps, step = [engine.state_dict()], 0
    while not engine.done:
        engine.step(int(rng.choice(np.flatnonzero(engine.legal_mask()))))
        step += 1
        if step in (7, 40):
            snaps.append(engine.state_dict())
    snaps.append(engine.state_dict())
    return [json.loads(json.dumps(s)) for s in snaps]


GARBAGE_RNG = [
    "x", None, 5, {"__rng__": "x"}, {"__rng__": {}},
    {"__rng__": {"bit_generator": "MT19937", "state": {"key": [0] * 624, "pos": 0}}},
    {"__rng__": {"bit_generator": "PCG64", "state": {"state": -1, "inc": 1}, "has_uint32": 0,
                 "uinteger": 0}},
    {"__rng__": {"bit_generator": "PCG64", "state": {"state": 1.5, "inc": 1}, "has_uint32": 0,
                 "uinteger": 0}},
    {"__rng__": {"bit_generator": "PCG64", "state": {"state": 1, "inc": 1}, "has_uint32": 2,
                 "uinteger": 0}},
]


def _scalar_mutations(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value, 0, 1, "True", None]
    if isinstance(value, int):
        return [value + 1, value - 1, -1, -7, 99, 10**6, True, 1.5, "x", None, [value]]
    if isinstance(value, float):
        return [float("nan"), float("inf"), -1.0, value + 1.0, "x"]
    return [None, 0, "x"]


def mutations(value: Any) -> Iterator[Any]:
    """Wrong values for one encoded field, and some plausible ones."""
    if isinstance(value, dict) and "__rng__" in value:
        yield from GARBAGE_RNG
        return
    if isinstance(value, dict) and "__tracker__" in value:
        inner = value["__tracker__"]
        known = inner["known"]
        yield {"__tracker__": {**inner, "known": known[:-1]}}
        yield {"__tracker__": {**inner, "known": [row[:-1] for row in known]}}
        for bad in (99, -7, 0.5, "x"):
            rows = copy.deepcopy(known)
            rows[0][0] = bad
            yield {"__tracker__": {**inner, "known": rows}}
        for rng in GARBAGE_RNG[:4]:
            yield {"__tracker__": {**inner, "rng": rng}}
        yield {"__tracker__": {"known": known}}
        return
    if isinstance(value, dict) and "__ndarray__" in value:
        data = value["__ndarray__"]
        flat = np.asarray(data, dtype=float)
        yield {**value, "__ndarray__": data[:-1]}
        yield {**value, "dtype": "no such dtype"}
        yield {"__ndarray__": "x", "dtype": value["dtype"]}
        yield "x"
        if flat.size:
            for bad in (99, -7, 0.5, float("nan"), 2, -1):
                arr = flat.copy()
                arr.flat[0] = bad
                yield {**value, "__ndarray__": arr.tolist()}
        return
    if isinstance(value, dict) and "__tuple__" in value:
        for bad in mutations(value["__tuple__"]):
            yield {"__tuple__": bad} if isinstance(bad, list) else bad
        return
    if isinstance(value, list):
        yield "x"
        yield None
        yield []
        if value:
            yield value[:-1]
            yield value + [value[-1]]
            yield value[::-1]
            yield [None] * len(value)
            for index in {0, len(value) - 1}:
                for bad in list(mutations(value[index]))[:8]:
                    yield value[:index] + [bad] + value[index + 1:]
        yield value + [99]
        yield value + [-7]
        return
    if isinstance(value, dict):
        yield {}
        yield "x"
        for key in list(value)[:3]:
            for bad in list(mutations(value[key]))[:4]:
                yield {**value, key: bad}
        return
    yield from _scalar_mutations(value)


def _plays_on(engine: Any, steps: int = 25) -> None:
    low, high = engine.layout.bounds()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        engine.check_invariants()
        for seat in range(engine.num_players):
            obs = engine.observation(seat)
            assert ((obs >= low) & (obs <= high)).all(), "an observation outside its space"
        if engine.done:
            return
        engine.step(int(rng.choice(np.flatnonzero(engine.legal_mask()))))


@pytest.mark.parametrize(("game", "config"), VARIANTS,
                         ids=[f"{g}-{'-'.join(map(str, c.values())) or 'default'}"
                              for g, c in VARIANTS])
def test_every_mutated_field_is_refused_or_plays_on(game: str, config: dict[str, Any]) -> None:
    refused = accepted = 0
    failures: list[str] = []
    for snap in _positions(game, config):
        for name, value in snap["fields"].items():
            for bad in mutations(value):
                broken = {**snap, "fields": {**snap["fields"], name: bad}}
                engine = make_engine(game, **config)
                try:
                    engine.load_state_dict(copy.deepcopy(broken))
                except SnapshotError as err:
                    refused += 1
                    text = str(err)
                    assert text.startswith((f"corrupt {game} snapshot: ", "snapshot ")), text
                    if not isinstance(err, CorruptSnapshotError):
                        # Refused by the schema: the field, its value, what it may hold.
                        assert f"field {name!r}" in text and "allowed: " in text or (
                            "cannot be read" in text or "has shape" in text
                            or "not a value like" in text), text
                    continue
                except Exception as err:  # any other exception is a bug
                    failures.append(f"{name}={bad!r:.80}: {type(err).__name__}: {err}")
                    continue
                accepted += 1
                try:
                    _plays_on(engine)
                except Exception as err:
                    failures.append(f"{name}={bad!r:.80} was accepted, then: "
                                    f"{type(err).__name__}: {str(err)[:200]}")
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:40])
    assert refused > accepted > 0  # both happen: the mutations are not all out of range


def test_the_issue_s_positions_are_refused_naming_field_and_values() -> None:
    """The issue's examples: accepted (ROY dealer=99, phase=9 writing into another field's
    slot, winners=[5], terminated mid-hand; Deluxe Memory turn_owner=99), or refused with
    "string indices must be integers" (rng garbage) and "AssertionError: ;" (ace_chain)."""
    cases = [
        ("roy", "dealer", 99, "field 'dealer' is 99; allowed: an integer in 0..1"),
        ("roy", "phase", 9, "field 'phase' is 9; allowed: an integer in 0..1"),
        ("roy", "phase", -1, "field 'phase' is -1; allowed: an integer in 0..1"),
        ("roy", "winners", [5], "field 'winners'[0] is 5; allowed: a list of 0 to 2 distinct, "
                                "in ascending order of an integer in 0..1"),
        ("roy", "ace_chain", 100, "field 'ace_chain' is 100; allowed: an integer in 0..4"),
        ("roy", "rng", "garbage", "field 'rng' is 'garbage'; allowed: a random generator's "
                                  "state"),
        ("deluxe_memory", "turn_owner", 99,
         "field 'turn_owner' is 99; allowed: an integer in 0..2"),
    ]
    for game, name, value, message in cases:
        engine = make_engine(game)
        engine.reset(seed=3)
        snap = engine.state_dict()
        before = engine.state_dict()
        with pytest.raises(SnapshotError) as info:
            engine.load_state_dict({**snap, "fields": {**snap["fields"], name: value}})
        assert not isinstance(info.value, CorruptSnapshotError)
        assert message in str(info.value), str(info.value)
        assert engine.state_dict() == before  # refused before anything changed
    # Terminated mid-hand: allowed values one by one, impossible together.
    engine = make_engine("roy")
    engine.reset(seed=3)
    snap = engine.state_dict()
    with pytest.raises(CorruptSnapshotError, match="a ROY winner is the one seat whose hand "
                                                   "is empty"):
        engine.load_state_dict({**snap, "fields": {
            **snap["fields"], "terminated": True, "winners": [0],
            "rewards": {"__ndarray__": [1.0, -1.0], "dtype": "float64"}}})
    with pytest.raises(CorruptSnapshotError, match="winners \\[1\\] in an episode that has "
                                                   "not terminated"):
        make_engine("roy").load_state_dict({**snap, "fields": {**snap["fields"],
                                                                "winners": [1]}})


@pytest.mark.parametrize("game", list(GAMES))
def test_every_snapshot_field_has_a_documented_schema(game: str) -> None:
    engine = make_engine(game)
    engine.reset(seed=0)
    fields = engine.state_dict()["fields"]
    schema = schema_of(engine)
    assert set(fields) <= set(schema), sorted(set(fields) - set(schema))
    described = describe(engine, list(fields))
    assert all(text and text != "(no schema)" for text in described.values()), described


def test_a_field_without_a_schema_is_still_refused_by_its_kind() -> None:
    """A rule variant (a Python subclass) may snapshot a field its game's schema does not
    declare: a value of another kind than a dealt engine holds there is refused all the same."""
    from card_envs.games.roy.engine import RoyEngine

    class Bonus(RoyEngine):
        STATE_FIELDS = (*RoyEngine.STATE_FIELDS, "bonus")

        def _deal(self, deck: list[int] | None) -> None:
            self.bonus = 0
            super()._deal(deck)

    engine = Bonus()
    engine.reset(seed=0)
    snap = engine.state_dict()
    assert "bonus" not in schema_of(engine)
    for bad in ("x", 1.5, None, [0]):
        with pytest.raises(SnapshotError, match="field 'bonus' holds .*, not a value like 0"):
            Bonus().load_state_dict({**snap, "fields": {**snap["fields"], "bonus": bad}})
    loaded = Bonus()
    loaded.load_state_dict({**snap, "fields": {**snap["fields"], "bonus": 3}})
    assert loaded.bonus == 3


"""What each field of an engine snapshot may hold, declared per game, checked before a
snapshot changes the engine.

``Engine.load_state_dict`` refuses a snapshot whose fields break these rules with a
``SnapshotError`` naming the field, the value and the allowed values, before anything of the
engine changes. Then it loads the fields and checks what relates them to each other (the cards
conserved, a finished game's winners, the game's own rules) through ``check_invariants()``: a
failure there is a ``CorruptSnapshotError`` (a ``SnapshotError`` too), and the engine, which
holds part of the snapshot, must be reset. Each game declares its fields in the ``SCHEMA`` of
its ``snapshot.py``, a :class:`Spec` per name of ``STATE_FIELDS``, which also documents them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

#: A bound that depends on the engine's options: a number, or a function of the engine.
Bound = int | float | Callable[[Any], int | float]


class FieldError(Exception):
    """A value a :class:`Spec` refuses; ``where`` names the part of the field (an index)."""

    def __init__(self, allowed: str, where: str = "", value: Any = None) -> None:
        super().__init__(allowed)
        self.allowed, self.where, self.value = allowed, where, value


def _bound(bound: Bound, engine: Any) -> int | float:
    return bound(engine) if callable(bound) else bound


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Spec:
    """What one field may hold. :meth:`check` raises :class:`FieldError` if ``value`` is not
    allowed; :meth:`describe` says what is, for the message and the documentation."""

    def check(self, value: Any, engine: Any) -> None:
        raise NotImplementedError

    def describe(self, engine: Any) -> str:
        raise NotImplementedError

    def fail(self, value: Any, engine: Any, where: str = "") -> FieldError:
        return FieldError(self.describe(engine), where, value)


@dataclass(frozen=True)
class Int(Spec):
    """An int (never a bool) in ``low..high``."""

    low: Bound
    high: Bound

    def check(self, value: Any, engine: Any) -> None:
        if type(value) is not int or not (_bound(self.low, engine) <= value
                                          <= _bound(self.high, engine)):
            raise self.fail(value, engine)

    def describe(self, engine: Any) -> str:
        return f"an integer in {_bound(self.low, engine)}..{_bound(self.high, engine)}"


def seat(none: int | None = None) -> Int:
    """A seat (0..num_players-1), or ``none`` (say -1) meaning no seat."""
    return Int(0 if none is None else none, lambda e: e.num_players - 1)


#: The largest count a snapshot field may hold (a C int's, as the compiled engines keep them).
COUNT = 2**31 - 1


@dataclass(frozen=True)
class Float(Spec):
    """A finite int or float in ``low..high``."""

    low: Bound = -np.inf
    high: Bound = np.inf

    def check(self, value: Any, engine: Any) -> None:
        if (type(value) not in (int, float) or not np.isfinite(value)
                or not _bound(self.low, engine) <= value <= _bound(self.high, engine)):
            raise self.fail(value, engine)

    def describe(self, engine: Any) -> str:
        low, high = _bound(self.low, engine), _bound(self.high, engine)
        if np.isinf(low) and np.isinf(high):
            return "a finite number"
        return f"a finite number in {low}..{high}"


@dataclass(frozen=True)
class Bool(Spec):
    def check(self, value: Any, engine: Any) -> None:
        if type(value) is not bool:
            raise self.fail(value, engine)

    def describe(self, engine: Any) -> str:
        return "True or False"


@dataclass(frozen=True)
class OneOf(Spec):
    """One of ``values`` (compared by type too: 1 is not True)."""

    values: tuple[Any, ...]

    def check(self, value: Any, engine: Any) -> None:
        if not any(type(value) is type(v) and value == v for v in self.values):
            raise self.fail(value, engine)

    def describe(self, engine: Any) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class Card(Spec):
    """A card id of the game's deck (``deck_cards()``), or ``none`` (say -1) for no card."""

    none: int | None = None

    def check(self, value: Any, engine: Any) -> None:
        if type(value) is not int or (value != self.none and value not in _deck(engine)):
            raise self.fail(value, engine)

    def describe(self, engine: Any) -> str:
        deck = sorted(_deck(engine))
        ids = (f"{deck[0]}..{deck[-1]}" if deck == list(range(deck[0], deck[-1] + 1))
               else ", ".join(map(str, deck)))
        return (f"a card id of the deck ({ids})"
                + ("" if self.none is None else f" or {self.none} for none"))


def _deck(engine: Any) -> frozenset[int]:
    return frozenset(engine.deck_cards())


@dataclass(frozen=True)
class Deck(Spec):
    """A stacked deck: a list holding every card of the game's deck once, in any order."""

    def check(self, value: Any, engine: Any) -> None:
        if (type(value) is not list or not all(type(c) is int for c in value)
                or sorted(value) != sorted(engine.deck_cards())):
            raise self.fail(value, engine)

    def describe(self, engine: Any) -> str:
        return f"a stacked deck: all {len(engine.deck_cards())} card ids of the deck, once each"


@dataclass(frozen=True)
class ListOf(Spec):
    """A list of ``item``: ``length`` long (or ``min_length..max_length``), its items
    ``distinct`` and/or ``ascending`` if asked."""

    item: Spec
    length: Bound | None = None
    min_length: Bound = 0
    max_length: Bound | None = None
    distinct: bool = False
    ascending: bool = False
    kind: type = list

    def check(self, value: Any, engine: Any) -> None:
        if type(value) is not self.kind:
            raise self.fail(value, engine)
        items: list[Any] = list(cast(Sequence[Any], value))
        n = len(items)
        if self.length is not None and n != _bound(self.length, engine):
            raise self.fail(value, engine)
        if n < _bound(self.min_length, engine) or (
                self.max_length is not None and n > _bound(self.max_length, engine)):
            raise self.fail(value, engine)
        for i, item in enumerate(items):
            try:
                self.item.check(item, engine)
            except FieldError as err:
                raise FieldError(f"{self.describe(engine)}", f"[{i}]{err.where}",
                                 err.value) from None
        if self.distinct and len(set(map(_hashable, items))) != n:
            raise FieldError(self.describe(engine), "", value)
        if self.ascending and items != sorted(items):
            raise FieldError(self.describe(engine), "", value)

    def describe(self, engine: Any) -> str:
        kind = "a tuple" if self.kind is tuple else "a list"
        if self.length is not None:
            size = f" of {_bound(self.length, engine)}"
        elif self.max_length is not None:
            size = (f" of {_bound(self.min_length, engine)} to "
                    f"{_bound(self.max_length, engine)}")
        elif _bound(self.min_length, engine):
            size = f" of at least {_bound(self.min_length, engine)}"
        else:
            size = ""
        order = ", ".join(w for w, on in (("distinct", self.distinct),
                                          ("in ascending order", self.ascending)) if on)
        return f"{kind}{size}{' ' + order if order else ''} of {self.item.describe(engine)}"


def per_seat(spec: Spec) -> ListOf:
    """One ``spec`` value per seat."""
    return ListOf(spec, length=lambda e: e.num_players)


def _hashable(value: Any) -> Any:
    return tuple(map(_hashable, value)) if isinstance(value, (list, tuple)) else value


@dataclass(frozen=True)
class Array(Spec):
    """A numpy array (already of the engine's shape and dtype) with every entry in
    ``low..high`` (or in ``values``)."""

    low: Bound = -np.inf
    high: Bound = np.inf
    values: tuple[float, ...] | None = None

    def check(self, value: Any, engine: Any) -> None:
        if not isinstance(value, np.ndarray):
            raise self.fail(value, engine)
        if self.values is not None:
            bad = ~np.isin(value, self.values)
        else:
            with np.errstate(invalid="ignore"):
                bad = ~((value >= _bound(self.low, engine)) & (value <= _bound(self.high, engine))
                        & np.isfinite(value))
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            where = "[" + ", ".join(map(str, index)) + "]"
            raise FieldError(self.describe(engine), where, value[index].item())

    def describe(self, engine: Any) -> str:
        if self.values is not None:
            return "an array of entries " + " or ".join(f"{v:g}" for v in self.values)
        low, high = _bound(self.low, engine), _bound(self.high, engine)
        if np.isinf(low) and np.isinf(high):
            return "an array of finite numbers"
        return f"an array of entries in {low}..{high}"


@dataclass(frozen=True)
class Anything(Spec):
    """A field the kind check and ``check_invariants()`` cover alone (``why`` says how)."""

    why: str

    def check(self, value: Any, engine: Any) -> None:
        pass

    def describe(self, engine: Any) -> str:
        return self.why


# -- encoded values checked before decoding ---------------------------------------------------
PCG64_STATE = ("{'__rng__': {'bit_generator': 'PCG64', 'state': {'state': int, 'inc': int}, "
               "'has_uint32': 0 or 1, 'uinteger': int}}")


def check_rng_state(state: Any) -> None:
    """A numpy PCG64 generator's state, as ``bit_generator.state`` gives it (what the
    engines' random streams are); a :class:`FieldError` otherwise."""
    ok = (isinstance(state, Mapping) and state.get("bit_generator") == "PCG64"
          and set(state) == {"bit_generator", "state", "has_uint32", "uinteger"}
          and isinstance(state["state"], Mapping) and set(state["state"]) == {"state", "inc"}
          and all(type(state["state"][k]) is int and 0 <= state["state"][k] < 2**128
                  for k in ("state", "inc"))
          and type(state["has_uint32"]) is int and state["has_uint32"] in (0, 1)
          and type(state["uinteger"]) is int and 0 <= state["uinteger"] < 2**32)
    if not ok:
        raise FieldError(f"a random generator's state, {PCG64_STATE}", "", state)


def check_encoded_rng(value: Any) -> None:
    if not (isinstance(value, Mapping) and set(value) == {"__rng__"}):
        raise FieldError(f"a random generator's state, {PCG64_STATE}", "", value)
    check_rng_state(value["__rng__"])


def check_encoded_tracker(value: Any, engine: Any) -> None:
    """The knowledge tracker's snapshot: who remembers what (seats x slots of card ids or -1)
    and the forgetting stream's state."""
    allowed = ("{'__tracker__': {'known': a list of num_players rows of "
               f"{engine.tracker.num_slots} card ids or -1, 'rng': a PCG64 state}}")
    if not (isinstance(value, Mapping) and set(value) == {"__tracker__"}
            and isinstance(value["__tracker__"], Mapping)
            and set(value["__tracker__"]) == {"known", "rng"}):
        raise FieldError(allowed, "", value)
    inner = value["__tracker__"]
    known = inner["known"]
    shape = engine.tracker.known.shape
    if not (isinstance(known, list) and len(known) == shape[0]
            and all(isinstance(row, list) and len(row) == shape[1] for row in known)):
        raise FieldError(allowed, "['known']", _show(known))
    cards = _deck(engine) | {-1}
    for s, row in enumerate(known):
        for slot, card in enumerate(row):
            if type(card) is not int or card not in cards:
                raise FieldError(allowed, f"['known'][{s}][{slot}]", card)
    try:
        check_rng_state(inner["rng"])
    except FieldError as err:
        raise FieldError(err.allowed, "['rng']", inner["rng"]) from None


# -- the schema of a game ---------------------------------------------------------------------
@dataclass(frozen=True)
class Schema:
    """A game's fields. ``fields``: a :class:`Spec` per name of ``STATE_FIELDS`` (and of the
    fields every engine has, which :data:`COMMON` declares)."""

    fields: Mapping[str, Spec] = field(default_factory=dict)


#: The fields every engine snapshots (``Engine._snapshot_fields``); ``rng`` is checked
#: encoded, before it is decoded.
COMMON: dict[str, Spec] = {
    "rng": Anything("a PCG64 state (checked before decoding)"),
    "rewards": Array(),  # finite: NaN and inf fail the range
    "current_player": seat(),
    "terminated": Bool(),
    "truncated": Bool(),
    "winners": ListOf(seat(), max_length=lambda e: e.num_players, distinct=True,
                      ascending=True),
    "num_steps": Int(0, lambda e: e.step_cap),
    "stacked_decks": ListOf(Deck()),
}


def schema_of(engine: Any) -> dict[str, Spec]:
    """``engine``'s game's schema with :data:`COMMON`: its game's ``snapshot.SCHEMA`` (by the
    game's name, so a subclass of a game keeps its schema), or the common fields alone for a
    game that declares none."""
    name = getattr(engine, "name", "")
    cached = _SCHEMAS.get(name)
    if cached is None:
        try:
            module = importlib.import_module(f"card_envs.games.{name}.snapshot")
            own = dict(module.SCHEMA)
        except ModuleNotFoundError:
            own = {}
        cached = _SCHEMAS[name] = {**COMMON, **own}
    return cached


_SCHEMAS: dict[str, dict[str, Spec]] = {}


def refusal(game: str, name: str, err: FieldError) -> str:
    return (f"corrupt {game} snapshot: field {name!r}{err.where} is {_show(err.value)}; "
            f"allowed: {err.allowed}")


def check_encoded(engine: Any, name: str, value: Any) -> str | None:
    """What is wrong with a field's encoded value (random streams and the tracker are checked
    before decoding), or None."""
    try:
        if name == "rng":
            check_encoded_rng(value)
        elif name == "tracker":
            check_encoded_tracker(value, engine)
    except FieldError as err:
        return refusal(engine.name, name, err)
    return None


def check_decoded(engine: Any, name: str, value: Any) -> str | None:
    """What the field's :class:`Spec` refuses in its decoded value, or None (also for a field
    without a spec)."""
    spec = schema_of(engine).get(name)
    if spec is None:
        return None
    try:
        spec.check(value, engine)
    except FieldError as err:
        return refusal(engine.name, name, err)
    return None


def describe(engine: Any, names: Sequence[str]) -> dict[str, str]:
    """Each field's allowed values in words (for the documentation)."""
    schema = schema_of(engine)
    return {n: schema[n].describe(engine) if n in schema else "(no schema)" for n in names}

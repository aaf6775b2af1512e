"""Copies and pickles of the compiled classes, which keep their attributes in slots, not in
an instance ``__dict__`` (see :mod:`card_envs.compiled`); the same code serves the plain-Python
build."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, TypeVar, cast

import numpy as np
from numpy.random.bit_generator import ISeedSequence

T = TypeVar("T")


def native_attributes(cls: type) -> tuple[str, ...]:
    """The attribute names a compiled (mypyc native) class keeps in slots, its own and its
    bases' (``__mypyc_attrs__``), once per class (a search copies engines often). An instance
    of a plain Python class, or of a Python subclass of a compiled one, keeps (the rest of)
    them in ``__dict__``."""
    native = _NATIVE_ATTRIBUTES.get(cls)
    if native is None:
        native = _NATIVE_ATTRIBUTES[cls] = tuple(dict.fromkeys(
            name for klass in cls.__mro__
            for name in klass.__dict__.get("__mypyc_attrs__", ()) if name != "__dict__"))
    return native


#: Each class's compiled attribute names, without repeats, in the order of its MRO.
_NATIVE_ATTRIBUTES: dict[type, tuple[str, ...]] = {}
_UNSET = object()


def attribute_state(obj: object, leave_out: Collection[str] = ()) -> dict[str, Any]:
    """``obj``'s attributes that are set, by name, but those in ``leave_out``."""
    cls = type(obj)
    leave_out = tuple(leave_out)
    kept = _KEPT_ATTRIBUTES.get((cls, leave_out))
    if kept is None:  # filtering the names each time was three quarters of a clone's here
        kept = _KEPT_ATTRIBUTES[cls, leave_out] = tuple(
            name for name in native_attributes(cls) if name not in leave_out)
    state = {}
    for name in kept:
        value = getattr(obj, name, _UNSET)
        if value is not _UNSET:
            state[name] = value
    for name in getattr(obj, "__dict__", ()):
        if name not in leave_out:
            value = getattr(obj, name, _UNSET)
            if value is not _UNSET:
                state[name] = value
    return state


#: Each (class, names left out)'s compiled attribute names less those left out.
_KEPT_ATTRIBUTES: dict[tuple[type, tuple[str, ...]], tuple[str, ...]] = {}


def restore_attributes(obj: object, state: dict[str, Any]) -> None:
    for name, value in state.items():
        setattr(obj, name, value)


def uninitialised(cls: type[T]) -> T:
    """A new ``cls`` without ``__init__``, for a copy's state to fill: what a reduction names
    (copyreg's default refuses a compiled class under pickle protocols 0 and 1)."""
    return cls.__new__(cls)


class _StateSetNext(ISeedSequence):
    """The seed of a copied bit generator, whose state is set from the original's right after
    it is made: seeding it from a number instead (a ``SeedSequence``'s hashing) was three
    quarters of the cost of copying a generator, and a clone copies two (the game's and the
    forgetting stream). Not spawnable: a copy's seed says nothing about its stream. (Here, in
    a plain-Python module: a class compiled by mypyc loses this base class.)"""

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        return np.zeros(n_words, dtype=dtype)


_STATE_SET_NEXT = _StateSetNext()


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """A generator in ``rng``'s state: the same draws from here on (a tenth of the cost of
    deep-copying it)."""
    bits = type(rng.bit_generator)(cast(Any, _STATE_SET_NEXT))  # numpy's stubs want a number
    bits.state = rng.bit_generator.state
    return np.random.Generator(bits)

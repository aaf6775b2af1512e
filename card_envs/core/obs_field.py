"""One named field of an observation layout (plain Python: mypyc cannot compile a NamedTuple
whose field is called ``slice``, and the name is the one users read)."""

from __future__ import annotations

from typing import NamedTuple


class ObsField(NamedTuple):
    """One named field of an observation (or state) vector: ``vector[slice]`` holds it, and
    ``vector[slice].reshape(shape)`` is it in its natural shape (``(4, 52)`` for four piles
    of card one-hots). ``meaning`` says what the values are."""

    slice: slice
    shape: tuple[int, ...]
    meaning: str

"""Memoryviews over numpy arrays, typed by what their items read and write as.

Engines write single entries and short rows through memoryviews bound once (in
``_bind_views``): a half to a third of numpy's cost per item. Each helper returns exactly
``memoryview(array)`` (``ndarray.data`` is that same view); what they add is the type:
numpy's stubs declare ndarray's buffer protocol (``__buffer__``) for Python >= 3.12 only, so
``memoryview(array)`` does not type-check at the package's 3.10 floor, and a float32 array's
items are floats, which an untyped view would refuse to take.

Bind views with these, outside the hot paths: each is one extra call.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import numpy.typing as npt


def int_items(array: npt.NDArray[np.integer[Any]]) -> memoryview[int]:
    """``memoryview(array)`` of an integer array: items read and write as Python ints."""
    return array.data


def float_items(array: npt.NDArray[np.floating[Any]]) -> memoryview[float]:
    """``memoryview(array)`` of a float array: items read and write as Python floats."""
    # The view's format is the array's ("f" for float32): its items are floats.
    return cast("memoryview[float]", array.data)


def bool_items(array: npt.NDArray[np.bool_]) -> memoryview[bool]:
    """``memoryview(array)`` of a bool array: items read and write as Python bools."""
    # The view's format is "?": its items are bools.
    return cast("memoryview[bool]", array.data)

"""Input checks shared by the stats modules: every failure is a ValueError naming the argument."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray


def as_float_array(
    name: str, values: Any, *, allow_nan: bool = False, min_len: int = 1
) -> NDArray[np.float64]:
    """Convert to a 1-D float array (None becomes NaN), checking length and NaN."""
    if isinstance(values, str | bytes) or values is None:
        raise ValueError(f"{name}: expected a sequence of numbers, got {type(values).__name__}")
    if not isinstance(values, np.ndarray) and isinstance(values, Iterable):
        values = list(values)
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence, got {arr.ndim}-D")
    if arr.size < min_len:
        what = "is empty" if arr.size == 0 else f"has {arr.size} value(s)"
        raise ValueError(f"{name}: {what}; need at least {min_len}")
    if np.isinf(arr).any():
        raise ValueError(f"{name}: contains an infinite value")
    if not allow_nan and np.isnan(arr).any():
        raise ValueError(f"{name}: contains NaN or None")
    return arr


def as_labels(name: str, labels: Any, length: int, length_of: str) -> list[Any]:
    """Materialise a sequence of hashable labels whose length must equal ``length``."""
    if isinstance(labels, str | bytes) or not isinstance(labels, Iterable):
        raise ValueError(f"{name}: expected a sequence of labels")
    out = list(labels.tolist() if isinstance(labels, np.ndarray) else labels)
    if len(out) != length:
        raise ValueError(f"{name}: has {len(out)} entries but {length_of} has {length}")
    try:
        for label in out:
            hash(label)
    except TypeError:
        raise ValueError(f"{name}: labels must be hashable") from None
    return out


def check_confidence(confidence: float, name: str = "confidence") -> float:
    return check_open_unit(name, confidence)


def check_open_unit(name: str, value: Any) -> float:
    """A probability strictly inside (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number in (0, 1), got {value!r}")
    x = float(value)
    if not 0.0 < x < 1.0:  # also rejects NaN
        raise ValueError(f"{name}: must lie strictly between 0 and 1, got {value!r}")
    return x


def check_int(name: str, value: Any, minimum: int = 0) -> int:
    """An integer (numpy integers accepted, bools and floats refused) >= minimum."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    x = int(value)
    if x < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {x}")
    return x


def check_finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name}: must be finite, got {value!r}")
    return x


def check_positive(name: str, value: Any) -> float:
    x = check_finite(name, value)
    if x <= 0:
        raise ValueError(f"{name}: must be > 0, got {value!r}")
    return x


def as_stack(name: str, x: Any) -> NDArray[np.float64]:
    """Runs x items scores as a 2-D float array (one run may be given as a 1-D row); NaN is
    a missing score, an infinite one a ValueError naming ``name``."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"{name}: expected runs x items scores")
    if np.isinf(arr).any():
        raise ValueError(f"{name}: scores must be finite or NaN (missing)")
    return arr

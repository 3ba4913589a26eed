"""One wording for every argument error: ``"<name> must <rule>, got <name>=<value>"``.

Every public function validates at its boundary with these helpers and then works
on clean NumPy arrays. Never ``assert`` on user input. Each helper returns the clean
value or raises ``ValueError`` (a rule is broken) / ``TypeError`` (wrong kind of value)
with that wording; :func:`fail` builds the ``ValueError`` for rules checked elsewhere.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

# Tolerance for "sums to one" and "rows are stochastic" on user input. Loose enough
# for decimal files written by other tools, tight enough that guarantees recomputed
# from the matrix are not distorted (a guarantee is always recomputed from the
# renormalized matrix, see Mechanism).
STOCHASTIC_ATOL = 1e-9


#: The most characters of a user's value an error line echoes: a value from a file can be any size (a 1 GB CSV
#: field was echoed whole, 1,000,000,168 bytes of "one line", issue 61); the rest is elided and its length given.
SHOWN_MAX = 200


def show_value(value: Any, limit: int = SHOWN_MAX) -> str:
    """``repr(value)`` for an error line: at most ``limit`` characters, then ``…`` and the value's length.

    The length is a string's own (in characters), else its ``repr``'s. A string is cut before ``repr``: a 1 GB
    value is not copied to be shown.

    >>> show_value("ab")
    "'ab'"
    >>> show_value("x" * 1000, limit=8)
    "'xxxxxx… (a value of 1,000 characters)"
    """
    if isinstance(value, str):
        text, length = repr(value[:limit]), len(value)
        cut = len(value) > limit or len(text) > limit
    else:
        text = repr(value)
        length, cut = len(text), len(text) > limit
    return f"{text[:limit - 1]}… (a value of {length:,} characters)" if cut else text


def _show(value: Any) -> str:
    if isinstance(value, (np.ndarray, list, tuple)):
        if not isinstance(value, np.ndarray):  # long strings cut before numpy copies them to a fixed width
            value = [x[:SHOWN_MAX] + "…" if isinstance(x, str) and len(x) > SHOWN_MAX else x for x in value]
        text = np.array2string(np.asarray(value), threshold=8, precision=6)
    else:
        text = show_value(value)
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:77] + "..."


#: What is trimmed around an environment variable's value: ASCII white space only (a shell or a ``.env`` file may add
#: it). Python's ``str.strip()`` also removes U+001C–U+001F and U+0085, JavaScript's ``trim()`` U+FEFF: a value read
#: by both languages (the CLI and clients/js) must get one verdict, so neither is used.
ASCII_SPACE = " \t\n\v\f\r"


def environment(name: str) -> tuple[str, str] | None:
    """An environment variable as (raw value, value trimmed of :data:`ASCII_SPACE`), or ``None`` when unset."""
    raw = os.environ.get(name)
    return None if raw is None else (raw, raw.strip(ASCII_SPACE))


def show_text(text: str) -> str:
    r"""A value quoted as JSON with ASCII escapes: one line, and the text clients/js prints for the same value.

    >>> show_text("\ufeff64\n")
    '"\\ufeff64\\n"'
    """
    return json.dumps(text, ensure_ascii=True)


def fail(name: str, rule: str, value: Any) -> ValueError:
    """Build the house-style ``ValueError`` (the caller raises it)."""
    return ValueError(f"{name} must {rule}, got {name}={_show(value)}")


def real_scalar(name: str, value: Any) -> float:
    """A finite real number (bool rejected)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {name}={_show(value)}")
    out = float(value)
    if not math.isfinite(out):
        raise fail(name, "be finite", value)
    return out


def nonnegative(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """A finite real number >= 0 (``inf`` too when ``allow_inf``)."""
    if allow_inf and isinstance(value, (int, float, np.floating)) and value == math.inf:
        return math.inf
    out = real_scalar(name, value)
    if out < 0:
        raise fail(name, "be >= 0", value)
    return out


def positive(name: str, value: Any) -> float:
    """A finite real number > 0."""
    out = real_scalar(name, value)
    if out <= 0:
        raise fail(name, "be > 0", value)
    return out


def in_interval(name: str, value: Any, low: float, high: float, *, closed: str = "both") -> float:
    """A real number in an interval; ``closed`` is 'both', 'left', 'right' or 'neither'."""
    out = real_scalar(name, value)
    left_ok = out >= low if closed in ("both", "left") else out > low
    right_ok = out <= high if closed in ("both", "right") else out < high
    if not (left_ok and right_ok):
        lb = "[" if closed in ("both", "left") else "("
        rb = "]" if closed in ("both", "right") else ")"
        raise fail(name, f"lie in {lb}{low:g}, {high:g}{rb}", value)
    return out


def epsilon(value: Any, name: str = "epsilon") -> float:
    """A privacy budget in nats: finite and >= 0."""
    return nonnegative(name, value)


def delta(value: Any, name: str = "delta") -> float:
    """A failure probability in (0, 1]."""
    return in_interval(name, value, 0.0, 1.0, closed="right")


def radius(value: Any, name: str = "radius") -> float:
    """An l1 radius in [0, 2]."""
    return in_interval(name, value, 0.0, 2.0)


def positive_int(name: str, value: Any) -> int:
    """An integer >= 1 (an integral float is accepted; bool is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be a positive integer, got {name}={_show(value)}")
    if value <= 0:
        raise fail(name, "be a positive integer", value)
    return int(value)


def finite_array(name: str, value: Any, ndim: int) -> np.ndarray:
    """A finite float64 array with ``ndim`` dimensions (a fresh copy)."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers, got {name}={_show(value)}") from None
    if arr.ndim != ndim:
        raise fail(name, f"be {ndim}-dimensional", value)
    if arr.size == 0:
        raise fail(name, "be non-empty", value)
    if not np.all(np.isfinite(arr)):
        raise fail(name, "contain only finite numbers (no NaN or inf)", value)
    return arr


def probability_vector(name: str, value: Any, *, full_support: bool = False) -> np.ndarray:
    """A finite, non-negative vector summing to one (renormalized exactly)."""
    arr = finite_array(name, value, 1)
    if np.any(arr < 0):
        raise fail(name, "be non-negative", value)
    total = math.fsum(arr)
    if abs(total - 1.0) > STOCHASTIC_ATOL:
        raise fail(name, f"sum to 1 (sum is {total:.12g})", value)
    if full_support and np.any(arr <= 0):
        raise fail(name, "have full support (every probability > 0)", value)
    return arr / total


def stochastic_matrix(name: str, value: Any) -> np.ndarray:
    """A finite, non-negative matrix whose rows sum to one (rows renormalized exactly).

    The row sums are taken on a C-ordered copy: numpy's pairwise summation follows the memory layout, so a
    column-major matrix (designs stack columns) and the same values read back from a file (row-major) would be
    renormalized differently in the last bits, and a guarantee judged on one would be recomputed on the other.
    """
    arr = np.ascontiguousarray(finite_array(name, value, 2))
    if np.any(arr < 0):
        raise fail(name, "have non-negative entries", value)
    sums = arr.sum(axis=1)
    worst = int(np.argmax(np.abs(sums - 1.0)))
    if abs(sums[worst] - 1.0) > STOCHASTIC_ATOL:
        raise fail(name, f"be row-stochastic (row {worst} sums to {sums[worst]:.12g})", value)
    return arr / sums[:, None]


def column_block(name: str, value: Any, rows: int) -> np.ndarray:
    """A float64 array of ``rows`` rows and one column per candidate (a vector is one column); not copied."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != rows:
        raise fail(name, f"have {rows} rows (one per prior entry)", arr.shape)
    return arr


def nonnegative_columns(name: str, value: Any, rows: int) -> np.ndarray:
    """:func:`column_block` with finite, non-negative entries (columns of a mechanism, lift vectors)."""
    arr = column_block(name, value, rows)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise fail(name, "be finite and non-negative", value)
    return arr


def labels(name: str, value: Sequence[Any] | None, size: int, default_prefix: str = "") -> tuple[str, ...]:
    """Distinct string labels, one per coordinate; ``None`` gives '0', '1', … (with ``default_prefix``)."""
    if value is None:
        return tuple(f"{default_prefix}{i}" for i in range(size))
    if isinstance(value, str):
        raise TypeError(f"{name} must be a sequence of labels, got {name}={value!r}")
    out = tuple(str(v) for v in value)
    if len(out) != size:
        raise fail(name, f"have {size} entries (one per coordinate)", list(out))
    if len(set(out)) != len(out):
        raise fail(name, "be distinct", list(out))
    return out


def is_pandas(value: Any) -> bool:
    """True for a pandas object, checked by its type's module so that pandas is never imported here."""
    return type(value).__module__.split(".")[0] == "pandas"


def axis_labels(value: Any, axis: int) -> list[Any] | None:
    """The index (``axis=0``) or columns (``axis=1``) of a pandas Series/DataFrame, else ``None``.

    Lets ``Prior.from_counts(series.value_counts())`` and ``Mechanism.from_matrix(frame)`` keep the
    labels instead of silently numbering the categories.
    """
    if not is_pandas(value):
        return None
    labels = value.index if axis == 0 else getattr(value, "columns", None)
    return None if labels is None else list(labels)

r"""The checks of a structured file at the speed ``verify`` needs at N = 10⁵: its guarantee and its canonical bytes.

**The guarantee.** Each type's PML over the ball is the grouped greedy
(:func:`~mechdesign.core._group_greedy.group_min_linear`) on its (cell, level) groups, values h_t/r_k, l_t/r_k, 0.
The greedy wants them sorted by value, which is the sort that dominates at T = 3,000 types × 3K = 7,467 groups; but
h_t/r_k descends as r_k ascends for *every* type, so one sort of the K row sums orders the high groups and the low
groups of all types, and the two lists concatenate in order whenever h_t/max r ≥ l_t/min r (every type but those
whose levels lie within the row sums' spread, ~1e-9, which are sorted one by one). The greedy then sees sorted input
and its own stable sort leaves it as it is. The groups of value 0 act as one, and types are processed in blocks, so
the working arrays stay small.

**The canonical bytes.** RFC 8785 through ``rfc8785`` costs 1.6 µs a value; the long arrays of a structured file
(labels, counts, levels, packed streams) are written here in bulk instead and handed to
:func:`~mechdesign.mechfile.canonical_json` as known parts: strings and integers by :func:`json.dumps`
(whose escapes are ECMAScript's ``JSON.stringify``'s for every string with a canonical form: ``\"``, ``\\``,
``\b \f \n \r \t`` and ``\u00xx`` in lowercase for other control characters; a lone surrogate fails to
encode, as it has no canonical form), floats by :func:`~mechdesign.mechfile.matrix_texts`
(ECMAScript's number layout).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import numpy as np

from mechdesign._numerics import round_up
from mechdesign.core._group_greedy import group_min_linear
from mechdesign.core._symmetric import SymmetricMechanism
from mechdesign.mechfile._canonical import matrix_texts
from mechdesign.mechfile._format import canonical_bytes

__all__ = ["canonical_digest", "known_parts", "type_capacities"]

_BLOCK = 256  # types per block of the greedy (arrays of 256 × (2K + 1) floats at most: in cache, ~8 % faster than 512)


def type_capacities(mechanism: SymmetricMechanism, radius: float) -> np.ndarray:
    """Each type's PML over B_β(P̂), rounded up: :meth:`SymmetricMechanism.type_capacities` with one sort.

    The groups of value 0 (the zero level of every cell, and the low level of a type with l_t = 0) form one group
    whose mass is the exact integer Σ_k (s_k − a_tk − b_tk) n_k over m: the greedy drains values from the top and
    adds to the smallest, so groups of one value act as one (module docstring).

    Parameters
    ----------
    mechanism : SymmetricMechanism
        The types.
    radius : float
        β.

    Returns
    -------
    numpy.ndarray
        Shape (T,), upper bounds in nats (the greedy's lower bound on min_Q Q·c and round_up, as in
        :meth:`SymmetricMechanism.type_capacities`).
    """
    m = mechanism
    order = np.argsort(m.row_sums, kind="stable")  # h/r_k descending, ties in cell order
    r = m.row_sums[order]
    n, s = m.cells.counts[order], m.cells.sizes[order]
    out = np.empty(m.types)
    two_level = m.low > 0
    k_count = r.size
    for kind in (np.flatnonzero(~two_level), np.flatnonzero(two_level)):
        for start in range(0, kind.size, _BLOCK):
            rows = kind[start:start + _BLOCK]
            h, lo = m.high[rows], m.low[rows]
            levels = 2 if lo.any() else 1
            # The block's counts in the sorted cell order (one gather each); the zero groups' mass an exact integer.
            a_sorted, b_sorted = m.high_counts[rows[:, None], order], m.low_counts[rows[:, None], order]
            zero_mass = ((s - a_sorted - b_sorted) @ n) / m.cells.samples
            # [h/r | l/r (two-level) | 0] and the masses [a·n | b·n] / m, zero_mass: each part written in place.
            values = np.zeros((rows.size, levels * k_count + 1))
            masses = np.empty(values.shape)
            np.divide(h[:, None], r[None, :], out=values[:, :k_count])
            np.divide(a_sorted * n, m.cells.samples, out=masses[:, :k_count])
            if levels == 2:
                np.divide(lo[:, None], r[None, :], out=values[:, k_count:-1])
                np.divide(b_sorted * n, m.cells.samples, out=masses[:, k_count:-1])
            masses[:, -1] = zero_mass
            mixed = np.flatnonzero(h / r[-1] < lo / r[0])  # high and low values interleave: sort these rows
            if mixed.size:
                resort = np.argsort(-values[mixed], axis=1, kind="stable")
                values[mixed] = np.take_along_axis(values[mixed], resort, axis=1)
                masses[mixed] = np.take_along_axis(masses[mixed], resort, axis=1)
            g = group_min_linear(values, masses, radius)
            with np.errstate(divide="ignore"):
                raw = np.log(h / r[0]) - np.log(g)
            out[rows] = [round_up(float(x)) if math.isfinite(x) else math.inf for x in raw]
    return out


def known_parts(content: dict[str, Any]) -> dict[int, bytes]:
    """Canonical bytes of the long arrays of a structured file's content, keyed by ``id`` (module docstring)."""
    known: dict[int, bytes] = {}

    def record(node: Any) -> None:  # a list whose canonical bytes are json.dumps's (_plain)
        try:
            known[id(node)] = json.dumps(node, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: rfc8785 refuses it with its own message

    def strings_or_ints(node: Any) -> None:
        if isinstance(node, list) and node and (all(type(x) is str for x in node) or all(
                type(x) is int and abs(x) < 2**53 for x in node)):
            record(node)

    strings_or_ints(content.get("inputs"))
    strings_or_ints(content.get("counts"))
    types = content.get("types")
    if isinstance(types, dict):
        for name in ("high_counts", "count_centres", "count_rice"):
            strings_or_ints(types.get(name))
        forms = types.get("low_counts")  # null, "rest" or [[k, b], ...] a type: JSON of null, strings and integers
        if isinstance(forms, list) and forms and all(_plain(form, 2) for form in forms):
            record(forms)
        for name in ("high", "low", "weights"):
            values = types.get(name)
            if isinstance(values, list) and values and all(type(x) is float for x in values):
                try:
                    known[id(values)] = matrix_texts([values])[1][1:-1]
                except ValueError:
                    pass
    return known


def _plain(node: Any, depth: int) -> bool:
    """Whether ``node`` is JSON whose canonical form is :func:`json.dumps`'s (module docstring).

    That is null, a string, an integer below 2⁵³, or a list of those at most ``depth`` lists deep.
    """
    if node is None or type(node) is str or (type(node) is int and abs(node) < 2**53):
        return True
    return type(node) is list and depth > 0 and all(_plain(x, depth - 1) for x in node)


def canonical_digest(content: dict[str, Any]) -> str:
    """The SHA-256 of a structured file's canonical content (the bytes :func:`canonical_bytes` gives)."""
    return hashlib.sha256(canonical_bytes(content, known_parts(content))).hexdigest()

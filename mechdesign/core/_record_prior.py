"""Joint priors of whole records: the empirical distribution over a product alphabet, stored sparsely.

A record has d categorical attributes with alphabets X_1, …, X_d. Its letter is the tuple
x = (x_1, …, x_d) of the product alphabet X = X_1 × … × X_d, of size N = ∏ N_i: every combination is a
letter, observed or not (a record in an unobserved cell must still be privatizable, and the ℓ1 ball of
[E] eq. 31 lets the true distribution put mass there). From m records the estimate is the joint empirical
distribution ([E] eq. 13 on X)

    P̂(x) = n_x / m,

and the radius of the ball is β*(δ, m, N) of [E] eq. 37 on the joint alphabet. Only the K ≤ min(m, N)
observed letters carry mass, so :class:`JointPrior` keeps their codes and counts (K × d integers) instead
of N probabilities: N = 10⁶ letters cost nothing when only 5·10⁴ of them are observed.

Letters are numbered in mixed radix with the first attribute most significant,

    index(x) = ((x_1 N_2 + x_2) N_3 + x_3) … ,

the row order of the Kronecker product W_1 ⊗ W_2 ⊗ … ⊗ W_d (numpy.kron), so a product mechanism and
the joint prior index the same letters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._prior import Prior
from mechdesign.core._record_codes import check_size, columns_to_codes, distinct_names, frame_columns
from mechdesign.core._sample_radius import design_radius
from mechdesign.core._uncertainty import L1Ball

__all__ = ["MAX_JOINT_SIZE", "JointBall", "JointPrior"]

#: Largest joint alphabet N = ∏ N_i accepted by default (``max_size``): the record-level capacity visits
#: every output of a product mechanism, and dense vectors over X are built only for small N.
MAX_JOINT_SIZE = 10**7
_DENSE_LIMIT = 10**7


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class JointPrior:
    """The joint empirical distribution of m records over a product alphabet (module docstring).

    Build one with :meth:`from_frame`, :meth:`from_columns`, :meth:`from_adult` or :meth:`from_table`,
    which validate their input; the constructor is the frozen record they fill in (arrays read-only).

    Parameters
    ----------
    attributes : tuple of str
        The d attribute names (distinct).
    alphabets : tuple of tuple of str
        The alphabet X_i of each attribute, in order (N_i = len(alphabets[i]) ≥ 1).
    codes : numpy.ndarray of int64, shape (K, d)
        The observed letters, one row of attribute codes each, sorted by letter index.
    counts : numpy.ndarray of int64, shape (K,)
        Their counts n_x > 0 (summing to m).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 13 (the empirical distribution), eq. 31 (the ball) and eq. 37 (its radius).

    Examples
    --------
    >>> prior = JointPrior.from_columns([["a", "a", "b"], ["x", "y", "y"]], attributes=["u", "v"])
    >>> prior.sizes, prior.size, prior.observed, prior.samples
    ((2, 2), 4, 3, 3)
    >>> prior.letter(1), prior.dense().round(4).tolist()
    (('a', 'x'), [0.3333, 0.3333, 0.3333, 0.0])
    """

    attributes: tuple[str, ...]
    alphabets: tuple[tuple[str, ...], ...]
    codes: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_columns(cls, columns: Sequence[Sequence[Any]], attributes: Sequence[Any] | None = None, *,
                     alphabets: Mapping[str, Sequence[Any]] | None = None,
                     max_size: int = MAX_JOINT_SIZE) -> JointPrior:
        """The joint empirical prior of records given column by column.

        Values are compared as strings. Without ``alphabets`` an attribute's alphabet is its observed
        values, most frequent first (ties by first appearance), as in :meth:`Prior.from_samples`.

        Parameters
        ----------
        columns : sequence of sequences
            d columns of equal length m ≥ 1 (record r is ``(columns[0][r], …, columns[d-1][r])``).
        attributes : sequence of str, optional
            The d distinct attribute names; default ``"a0", "a1", …``.
        alphabets : mapping of str to sequence, optional
            A fixed alphabet (and order) for some attributes; categories never observed get count 0.
        max_size : int
            Largest joint alphabet N = ∏ N_i accepted.

        Returns
        -------
        JointPrior
            With m = the number of records.

        Raises
        ------
        ValueError
            If there is no column, the columns differ in length or are empty, attribute names repeat, a
            value is missing (None/NaN), a value lies outside its fixed alphabet, or N exceeds ``max_size``.
        TypeError
            If ``columns`` is a string or ``attributes`` is a single string.

        Examples
        --------
        >>> JointPrior.from_columns([[1, 2, 2], [0, 0, 1]]).alphabets
        (('2', '1'), ('0', '1'))
        """
        names, alphabet_list, codes = columns_to_codes(columns, attributes, alphabets)
        return cls._from_codes(names, alphabet_list, codes, None, max_size)

    @classmethod
    def from_frame(cls, frame: Any, columns: Sequence[str] | None = None, *,
                   alphabets: Mapping[str, Sequence[Any]] | None = None,
                   max_size: int = MAX_JOINT_SIZE) -> JointPrior:
        """The joint empirical prior of the rows of a pandas DataFrame over some of its columns.

        Parameters
        ----------
        frame : pandas.DataFrame
            One row per record.
        columns : sequence of str, optional
            The attributes, in order (default: every column of ``frame``).
        alphabets : mapping of str to sequence, optional
            Fixed alphabets, as in :meth:`from_columns`.
        max_size : int
            Largest joint alphabet N = ∏ N_i accepted.

        Returns
        -------
        JointPrior
            Over ``columns``.

        Raises
        ------
        ValueError
            If a column does not exist or is repeated, a record misses an attribute, or as in
            :meth:`from_columns`.
        TypeError
            If ``frame`` is not a DataFrame or ``columns`` is a single string.

        Examples
        --------
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"sex": ["F", "M", "M"], "age": ["old", "old", "young"]})
        >>> JointPrior.from_frame(frame, ["sex", "age"]).counts.tolist()
        [1, 1, 1]
        """
        names, data = frame_columns(frame, columns)
        return cls.from_columns(data, names, alphabets=alphabets, max_size=max_size)

    @classmethod
    def from_adult(cls, columns: Sequence[str], *, max_size: int = MAX_JOINT_SIZE) -> JointPrior:
        """The joint prior of some attributes of the 48,842 vendored UCI Adult records.

        Parameters
        ----------
        columns : sequence of str
            Attributes among :data:`mechdesign._datasets.ADULT_COLUMNS`, distinct.
        max_size : int
            Largest joint alphabet N = ∏ N_i accepted.

        Returns
        -------
        JointPrior
            m = 48,842.

        Raises
        ------
        ValueError
            If a column is not an Adult attribute or is repeated, or N exceeds ``max_size``.

        Examples
        --------
        >>> prior = JointPrior.from_adult(["race", "sex", "education"])
        >>> prior.size, prior.observed, prior.samples
        (160, 154, 48842)
        """
        from mechdesign._datasets import load_adult

        wanted = distinct_names(columns)
        return cls.from_frame(load_adult(wanted), wanted, max_size=max_size)

    @classmethod
    def from_table(cls, table: Any, attributes: Sequence[Any] | None = None,
                   alphabets: Sequence[Sequence[Any]] | None = None, *,
                   max_size: int = MAX_JOINT_SIZE) -> JointPrior:
        """The joint empirical prior from a contingency table of counts (one axis per attribute).

        Parameters
        ----------
        table : array_like, shape (N_1, …, N_d)
            Non-negative integer counts n_x with a positive total m.
        attributes : sequence of str, optional
            The d attribute names; default ``"a0", "a1", …``.
        alphabets : sequence of sequences, optional
            The labels of each axis; default ``"0", "1", …``.
        max_size : int
            Largest joint alphabet N = ∏ N_i accepted.

        Returns
        -------
        JointPrior
            With the table's cells as letters.

        Raises
        ------
        ValueError
            If ``table`` has a negative, non-integer or non-finite count, a zero total, or too many cells,
            or the labels do not fit.

        Examples
        --------
        >>> JointPrior.from_table([[3, 0], [1, 4]]).dense().tolist()
        [0.375, 0.0, 0.125, 0.5]
        """
        counts = np.asarray(table, dtype=np.float64)
        if counts.ndim == 0 or counts.size == 0:
            raise v.fail("table", "have one non-empty axis per attribute", table)
        check_size(counts.shape, max_size)
        if not np.all(np.isfinite(counts)) or np.any(counts < 0) or np.any(counts != np.round(counts)):
            raise v.fail("table", "hold non-negative integer counts", table)
        names = v.labels("attributes", attributes, counts.ndim, default_prefix="a")
        if alphabets is None:
            labels = tuple(v.labels(f"alphabets[{i}]", None, n) for i, n in enumerate(counts.shape))
        else:
            if isinstance(alphabets, str) or len(alphabets) != counts.ndim:
                raise v.fail("alphabets", f"give {counts.ndim} alphabets (one per axis)", alphabets)
            labels = tuple(v.labels(f"alphabets[{i}]", a, n) for i, (a, n) in enumerate(zip(alphabets, counts.shape,
                                                                                          strict=True)))
        flat = counts.reshape(-1)
        index = np.flatnonzero(flat)
        if index.size == 0:
            raise v.fail("table", "have a positive total (m > 0)", table)
        codes = np.stack(np.unravel_index(index, counts.shape), axis=1).astype(np.int64)
        return cls._from_codes(names, labels, codes, flat[index].astype(np.int64), max_size)

    @classmethod
    def _from_codes(cls, attributes: tuple[str, ...], alphabets: tuple[tuple[str, ...], ...], codes: np.ndarray,
                    weights: np.ndarray | None, max_size: int) -> JointPrior:
        sizes = tuple(len(a) for a in alphabets)
        check_size(sizes, max_size)
        index = np.ravel_multi_index(tuple(codes.T), sizes)
        letters, inverse = np.unique(index, return_inverse=True)
        counts = np.bincount(inverse, weights=weights, minlength=letters.size) if weights is not None else \
            np.bincount(inverse, minlength=letters.size)
        observed = np.stack(np.unravel_index(letters, sizes), axis=1).astype(np.int64).reshape(letters.size, len(sizes))
        return cls(attributes, alphabets, _frozen(observed), _frozen(np.asarray(counts, dtype=np.int64)))

    @property
    def dimension(self) -> int:
        """d, the number of attributes."""
        return len(self.attributes)

    @property
    def sizes(self) -> tuple[int, ...]:
        """(N_1, …, N_d), the alphabet sizes."""
        return tuple(len(a) for a in self.alphabets)

    @property
    def size(self) -> int:
        """N = ∏ N_i, the number of joint letters (observed or not)."""
        return math.prod(self.sizes)

    @property
    def observed(self) -> int:
        """K, the number of observed letters (those carrying mass in P̂)."""
        return int(self.counts.size)

    @property
    def samples(self) -> int:
        """m, the number of records."""
        return int(self.counts.sum())

    @property
    def probabilities(self) -> np.ndarray:
        """P̂(x) = n_x / m for the K observed letters (in the order of :attr:`codes`)."""
        return self.counts / self.samples

    @property
    def indices(self) -> np.ndarray:
        """The mixed-radix index of each observed letter (module docstring), increasing."""
        return np.ravel_multi_index(tuple(self.codes.T), self.sizes)

    def letter(self, index: int) -> tuple[str, ...]:
        """The labels (x_1, …, x_d) of the letter with mixed-radix ``index``.

        Parameters
        ----------
        index : int
            The letter's index in [0, N) (module docstring).

        Returns
        -------
        tuple of str
            One label per attribute.

        Raises
        ------
        ValueError
            If ``index`` lies outside [0, N).
        """
        if not 0 <= int(index) < self.size:
            raise v.fail("index", f"lie in [0, {self.size})", index)
        code = np.unravel_index(int(index), self.sizes)
        return tuple(self.alphabets[i][int(c)] for i, c in enumerate(code))

    def marginal(self, attribute: int | str) -> Prior:
        """The marginal empirical prior P̂_i of one attribute, with its counts (m records).

        Parameters
        ----------
        attribute : int or str
            The attribute's position or name.

        Returns
        -------
        Prior
            Over X_i, labelled by the alphabet (zeros for unobserved categories).

        Raises
        ------
        ValueError
            If ``attribute`` names no attribute.
        """
        i = self._position(attribute)
        counts = np.bincount(self.codes[:, i], weights=self.counts, minlength=self.sizes[i])
        return Prior.from_counts(np.round(counts).astype(np.int64), self.alphabets[i])

    def dense(self) -> np.ndarray:
        """P̂ as a dense vector over all N letters (mixed-radix order); for N ≤ 10⁷.

        Returns
        -------
        numpy.ndarray of float64, shape (N,)
            P̂(x) = n_x/m, zero for unobserved letters.

        Raises
        ------
        ValueError
            If N > 10⁷.
        """
        if self.size > _DENSE_LIMIT:
            raise v.fail("prior", f"have at most {_DENSE_LIMIT} letters for a dense vector", self.size)
        out = np.zeros(self.size)
        out[self.indices] = self.probabilities
        return out

    def radius(self, delta: float) -> float:
        """β*(δ, m, N) of [E] eq. 37 on the joint alphabet, rounded up as files state it, clipped to 2.

        Parameters
        ----------
        delta : float
            Failure probability δ ∈ (0, 1].

        Returns
        -------
        float
            min(2, sqrt((2/m)(log(2^N − 2) − log δ))) rounded up toward privacy
            (:func:`~mechdesign.core.design_radius`).

        Raises
        ------
        ValueError
            If ``delta`` ∉ (0, 1] or N < 2.

        Examples
        --------
        >>> round(JointPrior.from_adult(["race", "sex"]).radius(1e-6), 6)
        0.029146
        """
        return design_radius(delta, self.samples, self.size)

    def ball(self, delta: float | None = None, *, radius: float | None = None) -> JointBall:
        """The ℓ1 ball B_β(P̂) on the joint alphabet ([E] eq. 31), β = :meth:`radius` (δ) or a given ``radius``.

        Parameters
        ----------
        delta : float, optional
            Failure probability δ: β = β*(δ, m, N) of [E] eq. 37, clipped to 2.
        radius : float, optional
            β ∈ [0, 2] given directly.

        Returns
        -------
        JointBall
            Centred at this prior.

        Raises
        ------
        ValueError
            Unless exactly one of ``delta`` and ``radius`` is given, or if it is out of range.
        """
        if (delta is None) == (radius is None):
            raise ValueError(f"ball needs exactly one of delta and radius, got delta={delta}, radius={radius}")
        return JointBall(self, self.radius(delta) if delta is not None else v.radius(radius))

    def _position(self, attribute: int | str) -> int:
        if isinstance(attribute, str):
            if attribute not in self.attributes:
                raise v.fail("attribute", f"be one of {list(self.attributes)}", attribute)
            return self.attributes.index(attribute)
        if isinstance(attribute, bool) or not isinstance(attribute, (int, np.integer)) or \
                not 0 <= attribute < self.dimension:
            raise v.fail("attribute", f"be a name or a position in [0, {self.dimension})", attribute)
        return int(attribute)

    def __repr__(self) -> str:
        return (f"JointPrior(attributes={list(self.attributes)}, N={self.size}, observed={self.observed}, "
                f"m={self.samples})")


@dataclass(frozen=True, eq=False)
class JointBall:
    """The ℓ1 ball B_β(P̂) = {Q on X : ‖Q − P̂‖₁ ≤ β} around a joint prior ([E] eq. 31 on X = ∏ X_i).

    Build it with :meth:`JointPrior.ball`. The centre is sparse; :meth:`dense` gives the
    :class:`~mechdesign.core.L1Ball` over all N letters for small N (brute-force checks).

    Parameters
    ----------
    center : JointPrior
        The estimate P̂.
    radius : float
        β ∈ [0, 2].

    Examples
    --------
    >>> ball = JointPrior.from_table([[3, 0], [1, 4]]).ball(radius=0.1)
    >>> ball.size, ball.dense().size
    (4, 4)
    """

    center: JointPrior
    radius: float

    @property
    def size(self) -> int:
        """N, the number of joint letters."""
        return self.center.size

    def dense(self) -> L1Ball:
        """The same ball as an :class:`~mechdesign.core.L1Ball` over all N letters (N ≤ 10⁷).

        Returns
        -------
        L1Ball
            B_β(P̂) with P̂ dense (mixed-radix order), for brute-force checks on small alphabets.

        Raises
        ------
        ValueError
            If N > 10⁷.
        """
        return L1Ball(Prior.from_probabilities(self.center.dense()), self.radius)

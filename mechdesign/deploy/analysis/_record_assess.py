r"""Record files on data: the ε of a record design at the data's joint distribution, and its (ε′, δ) curve.

Two questions about a record file (:mod:`mechdesign.mechfile._record`) and a table of n records, both asked of
the **joint** empirical distribution P̃ of the records over X = X_1 × … × X_d (N = ∏ N_i letters; only the K
observed ones carry mass):

**The ε at the data** (``privatize``/``verify`` with ``--override-data-check``): the PML level of the design at
P̃ itself ([E] eq. 7–8 on the joint alphabet),

.. math:: ε_{\min}(W, \tilde P) = \max_{y:\ \tilde P W(y) > 0}
          \log \frac{\max_{x \in \operatorname{supp} \tilde P} W(y \mid x)}{\sum_x \tilde P(x)\, W(y \mid x)},

the maximum running over the observed letters only (unobserved letters have no mass). For a joint design this is
:func:`~mechdesign.core.epsilon_min` on the dense P̃. A product W = W_1 ⊗ … ⊗ W_d has M = ∏ M_i outputs
(10⁵–10⁶ for Adult's five attributes), so the K × M table of W(y|x) is never built whole: the denominators P̃W(y) of
all outputs come from d mode products of the dense P̃ (one BLAS contraction per attribute), each numerator is
bounded by :math:`\prod_i \max_{x_i \in S_i} W_i(y_i \mid x_i)` (S_i the values of attribute i seen in the data:
the largest product over observed letters is at most the product of the largest factors), and outputs are
evaluated exactly (K letters each) in decreasing order of that bound, until the next bound is at most the best
exact ratio. The result is exact, and rounded up (:func:`~mechdesign._numerics.round_up`) over the float error
of sums of N terms. On Adult's five attributes (K = 1,527, 559,416 outputs) 16 outputs settle it (0.15 s; 0.3 s
for data on 5, 200 or all 6,720 letters). In the worst case every output is evaluated: O(K M d).

An attribute-sampled design (:mod:`mechdesign.records._sampled`) releases (i, y) with W[x, (i, y)] = π_i W_i[x_i, y];
π_i cancels from the ratio and P̃W(i, y) = π_i P̃_i W_i(y), so its level is that of the worst attribute at its own
data marginal, :math:`\max_i ε_{\min}(W_i, \tilde P_i)` (:func:`sampled_epsilon_min`), whatever π.

**The record-level (ε′, δ) guarantee on the sample** (``assess`` with several ``--column``): for each δ,
ε′(δ) = C(W, B_{β*}(P̃)), the capacity over the joint ball of radius β* = β*(δ, n, N) ([E] eq. 37 on the joint
alphabet, Theorem 2), computed by :func:`~mechdesign.mechfile.record_epsilon` exactly as loading a
record file recomputes its guarantee (product capacity or dense capacity, solver-free, rounded toward privacy; for
a sampled design the marginal of the joint ball is the marginal ball, so ε′ = max_i C(W_i, B_{β*}(P̃_i))).

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
eq. 7–8 (ε_min), Def. 5, eq. 22–23 (capacity), eq. 37 (radius), Theorem 2, Remark 3 (LDP).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import round_up, sorted_unique
from mechdesign.core._assessment import DEFAULT_DELTAS, DeltaRow
from mechdesign.core._leakage import epsilon_min, ldp_epsilon
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._record_prior import JointPrior
from mechdesign.core._sample_radius import radius_for_delta
from mechdesign.mechfile._record import RecordFile, record_epsilon

__all__ = ["RecordAssessment", "assess_record", "count_record_data", "data_prior", "epsilon_at_data",
           "record_epsilon_min", "sampled_epsilon_min"]

_BLOCK_ENTRIES = 1 << 21  # K × outputs evaluated at once: 16 MiB of float64


@dataclass(frozen=True)
class RecordAssessment:
    """The record-level guarantee of a record file's design on a sample (the result of :func:`assess_record`).

    Parallel to :class:`~mechdesign.core.Assessment`; every ε is the record's, rounded toward privacy.

    Parameters
    ----------
    prior : JointPrior
        The sample's joint empirical distribution P̃ (the estimate the balls are centred on).
    samples : int
        n, the number of records.
    epsilon_at_estimate : float
        ε_min(W, P̃) ([E] eq. 7–8 on the joint alphabet; :func:`record_epsilon_min`).
    ldp_epsilon : float
        The record's LDP level (every prior on X, [E] Remark 3): for a product exactly Σ_i ε_LDP(W_i), since
        max_x / min_x of a product column is the product of the factors' ratios; for a sampled design
        max_i ε_LDP(W_i) (a column (i, y) is π_i times a column of W_i); ``inf`` if a used column has a zero.
    rows : tuple of DeltaRow
        One per δ: β*(δ, n, N) (not clipped) and ε′ = C(W, B_{min(β*, 2)}(P̃)); ``theorem4_bound`` is ``None``
        (Theorem 4 of [E] needs a full-support estimate and the dense privacy regions), and
        ``proposition2_regime`` is β* < 2 min P̃ over all N letters (false while a letter is unobserved).
    """

    prior: JointPrior
    samples: int
    epsilon_at_estimate: float
    ldp_epsilon: float
    rows: tuple[DeltaRow, ...]


def count_record_data(record: RecordFile, source: str | os.PathLike[str], columns: Sequence[str],
                      chunk_size: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """The joint letters observed in a CSV, Parquet or Arrow IPC table and their counts, streamed (bounded memory).

    Parameters
    ----------
    record : RecordFile
        The record file whose alphabets encode the values.
    source : str or os.PathLike
        The table.
    columns : sequence of str
        One column per attribute of ``record``, in its order.
    chunk_size : int
        Records read at once.

    Returns
    -------
    tuple of numpy.ndarray
        (letters, counts): the observed joint letters (mixed radix, increasing) and their positive counts.

    Raises
    ------
    ValueError
        If a column is missing, a value is missing or outside its attribute's alphabet.
    """
    from mechdesign.deploy._io import iter_columns
    from mechdesign.deploy.analysis._datacheck import JointCounter

    counter = JointCounter(record.prior.size)
    for values in iter_columns(source, list(columns), chunk_size, "data"):
        counter.add(record.letters(record.encode(values)))
    return counter.result()


def data_prior(record: RecordFile, letters: Any, counts: Any) -> JointPrior:
    """The joint empirical distribution of counted records, on the record file's attributes and alphabets.

    Parameters
    ----------
    record : RecordFile
        Gives the attributes and alphabets.
    letters : array_like of int
        Distinct joint letters in [0, N) (mixed radix, :mod:`mechdesign.core._record_prior`).
    counts : array_like of int
        Their counts (non-negative; zeros are dropped), with a positive total n.

    Returns
    -------
    JointPrior
        P̃(x) = n_x / n over the record's joint alphabet.

    Raises
    ------
    ValueError
        If letters repeat or fall outside [0, N), a count is negative or not an integer, the lengths differ, or
        there is no record.
    """
    index = np.asarray(letters, dtype=np.int64).reshape(-1)
    raw = v.finite_array("counts", counts, 1)
    if raw.size != index.size:
        raise v.fail("counts", f"have one entry per letter ({index.size})", raw.size)
    if np.any(raw < 0) or np.any(raw != np.round(raw)):
        raise v.fail("counts", "be non-negative integers", counts)
    size = record.prior.size
    if index.size and (index.min() < 0 or index.max() >= size):
        raise v.fail("letters", f"lie in [0, {size})", index)
    if sorted_unique(index).size != index.size:
        raise v.fail("letters", "be distinct", index)
    kept = raw > 0
    if not np.any(kept):
        raise v.fail("counts", "hold at least one record", int(raw.sum()))
    order = np.argsort(index[kept])
    observed, number = index[kept][order], raw[kept][order].astype(np.int64)
    codes = np.stack(np.unravel_index(observed, record.prior.sizes), axis=1).astype(np.int64)
    for array in (codes, number):
        array.setflags(write=False)
    return JointPrior(record.attributes, record.alphabets, codes.reshape(observed.size, record.prior.dimension),
                      number)


def _product_epsilon_min(mats: list[np.ndarray], prior: JointPrior) -> float:
    """ε_min of W_1 ⊗ … ⊗ W_d at ``prior`` by bounds and exact refinement (module docstring), not rounded."""
    tensor = prior.dense().reshape(prior.sizes)
    for w in mats:  # contracting the leading axis appends the output axis: (M_1, …, M_d) after d steps
        tensor = np.tensordot(tensor, w, axes=([0], [0]))
    output = tensor.reshape(-1)
    codes = prior.codes
    top = np.ones(1)
    for i, w in enumerate(mats):  # ∏_i max over the observed values of attribute i: ≥ every exact numerator
        top = np.multiply.outer(top, w[np.unique(codes[:, i])].max(axis=0)).reshape(-1)
    occurs = np.flatnonzero(output > 0)  # P̃W(y) = 0: the output never occurs (no leakage to speak of)
    bound = top[occurs] / output[occurs]
    order = occurs[np.argsort(-bound, kind="stable")]
    bound = np.sort(bound)[::-1]
    shape = tuple(w.shape[1] for w in mats)
    widest = max(1, _BLOCK_ENTRIES // codes.shape[0])
    best, start, block = 0.0, 0, min(16, widest)
    while start < order.size and bound[start] > best:
        chunk = order[start:start + block]
        block = min(2 * block, widest)
        values = np.ones((codes.shape[0], chunk.size))
        for w, code, y in zip(mats, codes.T, np.unravel_index(chunk, shape), strict=True):
            values *= w[code][:, y]
        best = max(best, float(np.max(values.max(axis=0) / output[chunk])))
        start += chunk.size
    return math.log(best) if best > 0 else 0.0


def record_epsilon_min(prior: JointPrior, factors: Sequence[Mechanism] = (),
                       mechanism: Mechanism | None = None) -> float:
    """The PML level ε_min(W, P̃) of a product or joint record design at a joint prior, exact and rounded up.

    Parameters
    ----------
    prior : JointPrior
        P̃, e.g. the data's joint empirical distribution (:func:`data_prior`).
    factors : sequence of Mechanism
        W_1, …, W_d of a product design (rows = the attributes' alphabets); empty for a joint design.
    mechanism : Mechanism, optional
        The joint mechanism (rows in the mixed-radix order of the product alphabet).

    Returns
    -------
    float
        max over outputs y with P̃W(y) > 0 of log max_{x ∈ supp P̃} W(y|x) / P̃W(y) ([E] eq. 7–8 on the joint
        alphabet; module docstring), rounded up over the float error of sums of N terms.

    Raises
    ------
    ValueError
        Unless exactly one of ``factors`` and ``mechanism`` is given, with rows matching the alphabets.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    eq. 7–8.

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> rr = randomized_response(2, 1.0)
    >>> prior = JointPrior.from_table([[50, 0], [0, 50]])      # two perfectly correlated bits
    >>> round(record_epsilon_min(prior, [rr, rr]), 6)           # y = (0, 0): log(0.731² / ((0.731² + 0.269²) / 2))
    0.566219
    """
    if (len(factors) == 0) == (mechanism is None):
        raise ValueError("record_epsilon_min needs exactly one of factors (product) and mechanism (joint), got "
                         f"factors={len(factors)}, mechanism={mechanism is not None}")
    terms = prior.size + sum(prior.sizes) + prior.dimension
    if mechanism is not None:
        if mechanism.shape[0] != prior.size:
            raise v.fail("mechanism", f"have {prior.size} rows (the joint alphabet)", mechanism.shape)
        return round_up(epsilon_min(mechanism.matrix, prior.dense()), terms)
    if len(factors) != prior.dimension:
        raise v.fail("factors", f"give one mechanism per attribute ({prior.dimension})", len(factors))
    mats = [np.asarray(f.matrix, dtype=np.float64) for f in factors]
    for i, (w, n) in enumerate(zip(mats, prior.sizes, strict=True)):
        if w.shape[0] != n:
            raise v.fail(f"factors[{i}]", f"have {n} rows (the alphabet of {prior.attributes[i]!r})", w.shape)
    return round_up(_product_epsilon_min(mats, prior), terms)


def sampled_epsilon_min(prior: JointPrior, factors: Sequence[Mechanism]) -> float:
    """The PML level at ``prior`` of an attribute-sampled design: max_i ε_min(W_i, P̃_i), rounded up.

    Parameters
    ----------
    prior : JointPrior
        P̃, e.g. the data's joint empirical distribution (:func:`data_prior`).
    factors : sequence of Mechanism
        W_1, …, W_d (rows = the attributes' alphabets); the sampling probabilities do not matter.

    Returns
    -------
    float
        The level of the lifted mechanism W[x, (i, y)] = π_i W_i[x_i, y] at P̃ ([E] eq. 7–8; module docstring),
        in nats, rounded up over the float error of a marginal's sum.

    Raises
    ------
    ValueError
        If there is not one factor per attribute, with rows matching the alphabets.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    eq. 7–8.

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> rr = randomized_response(2, 1.0)
    >>> prior = JointPrior.from_table([[50, 0], [0, 50]])      # two perfectly correlated bits
    >>> round(sampled_epsilon_min(prior, [rr, rr]), 6)          # log(0.731 / 0.5): one bit's level, not the pair's
    0.379885
    """
    if len(factors) != prior.dimension:
        raise v.fail("factors", f"give one mechanism per attribute ({prior.dimension})", len(factors))
    worst = 0.0
    for i, factor in enumerate(factors):
        if factor.shape[0] != prior.sizes[i]:
            raise v.fail(f"factors[{i}]", f"have {prior.sizes[i]} rows (the alphabet of {prior.attributes[i]!r})",
                         factor.shape)
        worst = max(worst, epsilon_min(factor.matrix, prior.marginal(i).probabilities))
    return round_up(worst, max(prior.sizes) + 1)


def _design(record: RecordFile, privatizer: Any) -> tuple[tuple[Mechanism, ...], Mechanism | None]:
    """The file's design, or the sampled (quantised) design of ``privatizer`` (what privatize draws from)."""
    if privatizer is None:
        return record.factors, record.mechanism
    sampled = tuple(Mechanism.from_matrix(s.sampled_matrix, s.mechanism.inputs, s.mechanism.outputs)
                    for s in privatizer.samplers)
    return ((), sampled[0]) if record.mechanism is not None else (sampled, None)


def epsilon_at_data(record: RecordFile, letters: Any, counts: Any, privatizer: Any = None) -> float:
    """ε_min of a record file's design at the joint empirical distribution of counted records (module docstring).

    Parameters
    ----------
    record : RecordFile
        The loaded record file.
    letters, counts : array_like of int
        The observed joint letters and their counts (:func:`count_record_data`).
    privatizer : RecordPrivatizer, optional
        Use its sampled (quantised) design instead of the file's: the design records are actually drawn from.

    Returns
    -------
    float
        :func:`record_epsilon_min` at :func:`data_prior` (nats, rounded up); :func:`sampled_epsilon_min` for an
        attribute-sampled file.
    """
    factors, mechanism = _design(record, privatizer)
    prior = data_prior(record, letters, counts)
    if record.sampling is not None:
        return sampled_epsilon_min(prior, factors)
    return record_epsilon_min(prior, factors, mechanism)


def assess_record(record: RecordFile, prior: JointPrior, deltas: Any = DEFAULT_DELTAS) -> RecordAssessment:
    """The record-level (ε′, δ)-PML guarantee of a record file's design on a sample (module docstring).

    Parameters
    ----------
    record : RecordFile
        The loaded record file (its design; its own guarantee plays no part).
    prior : JointPrior
        The sample's joint empirical distribution on the file's alphabets (:func:`data_prior`).
    deltas : float or iterable of float
        Failure probabilities δ ∈ (0, 1]; default ``(1e-2, 1e-3, 1e-4, 1e-6, 1e-9)``.

    Returns
    -------
    RecordAssessment
        ε_min at P̃, the record's LDP level, and one row per δ with ε′(δ) = C(W, B_{β*(δ, n, N)}(P̃)).

    Raises
    ------
    ValueError
        If the prior's alphabets differ from the file's, N < 2, or a δ is outside (0, 1].

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    Def. 5, eq. 22–23, eq. 37 and Theorem 2 on the joint alphabet.
    """
    if not isinstance(prior, JointPrior) or prior.alphabets != record.alphabets:
        raise v.fail("prior", "be a JointPrior on the record file's alphabets (data_prior)", getattr(
            prior, "alphabets", type(prior).__name__))
    if prior.size < 2:
        raise v.fail("alphabets", "span at least 2 joint letters", prior.size)
    n, size = prior.samples, prior.size
    sampled = record.sampling is not None
    rows = []
    for raw in deltas if hasattr(deltas, "__iter__") else [deltas]:
        d = v.delta(raw)
        # As a file at δ states it (design_radius), uncapped here: the report shows β* beyond 2.
        beta = round_up(round_up(radius_for_delta(d, n, size)))
        exact = record_epsilon(prior, min(beta, 2.0), record.factors, record.mechanism, sampled=sampled)
        # β < 2 min P̃ needs every one of the N letters observed.
        regime = prior.observed == size and beta < 2 * float(prior.probabilities.min())
        rows.append(DeltaRow(d, beta, exact, None, bool(regime)))
    mechs = record.factors if record.mechanism is None else (record.mechanism,)
    levels = [ldp_epsilon(m) for m in mechs]
    ldp = max(levels) if sampled else math.fsum(levels)
    terms = size + sum(prior.sizes) + prior.dimension
    at_estimate = (sampled_epsilon_min(prior, record.factors) if sampled
                   else record_epsilon_min(prior, record.factors, record.mechanism))
    return RecordAssessment(prior, n, at_estimate, ldp if math.isinf(ldp) else round_up(ldp, terms), tuple(rows))

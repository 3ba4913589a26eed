r"""Decoding privatized records: every marginal with standard errors, and the joint table where identifiable.

**Product** files: attribute i was released by its own factor W_i, so its marginal p_i is decoded from the
output counts of its column by that factor's efficient unbiased linear decoder
(:func:`~mechdesign.deploy.analysis.estimate_frequencies`, ``"linear"``) at the file's marginal P̂_i — data-
independent, hence exactly unbiased; standard errors under multinomial sampling. The joint table is not
identifiable from the marginal counts alone (the columns are decoded one by one), so none is reported.

**Sampled** files (each record reports one attribute, :mod:`mechdesign.records._sampled`): attribute i is decoded
from the n_i records whose column i is not empty (a null in Parquet), by its factor's decoder as for a product;
every record must report exactly one attribute, and n = Σ_i n_i. The estimate f̂_i targets the frequencies of
all n records, of which the n_i are a random subsample (Bernoulli(π_i), independent of the data), so its variance
is the decoder's on n_i fixed records plus the subsample's own variation (finite-population correction):

.. math:: \operatorname{Var} \hat f_{i,v} ≈ V^{\mathrm{dec}}_{v} / n_i
          + f_{i,v}(1 − f_{i,v}) (1/n_i − 1/n).

The multinomial standard error of the decoder on n_i reports, s²_v (above), treats the n_i inputs as i.i.d.
draws and so already holds f(1 − f)/n_i besides the mechanism's noise V^dec_v/n_i (law of total variance for an
unbiased linear decoder); the reported standard error is therefore √(s²_v − f̂_v(1 − f̂_v)/n), f̂ clipped to
[0, 1] — which equals the formula above, and is what the module's tests check by simulation (the same records
privatized over many seeds: z-scores of unit variance). The joint table is not identifiable: no record reports
two attributes.

**Joint** files: the record's one output y (each of the d columns holds it) has counts q̂; the marginals are the
quantities Lp with L the stacked marginalisation map (:func:`~mechdesign.core.marginal_map`),
decoded by :func:`~mechdesign.deploy.analysis.estimate_quantities` at the joint estimate; the joint table p is
decoded as well when the joint matrix has rank N (no inseparable letters). References are mixed 10⁻³ with the
uniform distribution when the estimate has zeros (the decoders need full support; unbiasedness holds at any
reference).

**Post-processing** (``method``, as for single columns, :mod:`~mechdesign.deploy.analysis._decode`): every
:class:`Marginal` keeps the unbiased estimate in ``unbiased`` and reports ``values`` on its simplex. ``"linear"``
projects each unbiased marginal (and the joint table) onto the simplex (Norm-Sub, Wang et al., NDSS 2020);
standard errors stay those of the unbiased estimate. ``"ml"`` is the constrained maximum likelihood: of each
factor's marginal from its column (product, sampled), of the joint table from the joint outputs (joint designs;
the marginals are its sums, identifiable whenever the linear decoder's are — every maximiser has the same output
law pW, and the rows of L lie in the range of W), with parametric-bootstrap standard errors
(:func:`~mechdesign.deploy.analysis.bootstrap_errors`; for a sampled design the subsample term above is
removed from the bootstrap variance in the same way).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy.analysis._decode import Estimate
from mechdesign.mechfile._record import RecordFile

__all__ = ["Marginal", "RecordEstimate", "count_record_file", "decode_records"]

_MIX = 1e-3
_METHODS = ("linear", "ml")


@dataclass(frozen=True)
class Marginal:
    """The decoded marginal of one attribute.

    Parameters
    ----------
    attribute : str
        The attribute's name.
    labels : tuple of str
        Its alphabet.
    values : numpy.ndarray
        The estimate of p_i on the simplex (the projected unbiased estimate, or the maximum likelihood).
    standard_errors : numpy.ndarray
        Their standard errors: of ``unbiased`` for "linear", of ``values`` (bootstrap) for "ml".
    unbiased : numpy.ndarray
        The efficient unbiased linear estimate of p_i (an entry may be negative).
    reports : int or None
        n_i, the records that reported the attribute (a sampled design); ``None`` when every record did.
    """

    attribute: str
    labels: tuple[str, ...]
    values: np.ndarray
    standard_errors: np.ndarray
    unbiased: np.ndarray
    reports: int | None = None


@dataclass(frozen=True, eq=False)
class RecordEstimate:
    """Every decoded marginal of a record release, and the joint table when identifiable.

    Parameters
    ----------
    marginals : tuple of Marginal
        One per attribute, in order.
    joint : Estimate or None
        The decoded joint table over the joint labels (joint designs of rank N), else ``None``.
    records : int
        The number of privatized records n.
    method : str
        "linear" or "ml" (module docstring).
    """

    marginals: tuple[Marginal, ...]
    joint: Estimate | None
    records: int
    method: str = "linear"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``records``, ``method``, ``marginals``, ``standard_errors``, ``unbiased``, ``joint``.

        ``marginals`` {attribute: {label: value}} on each simplex, ``unbiased`` the unprojected linear estimates; a
        sampled release adds ``reports`` {attribute: n_i}.
        """
        out: dict[str, Any] = {
            "records": self.records, "method": self.method,
            "marginals": {m.attribute: dict(zip(m.labels, m.values.tolist(), strict=True)) for m in self.marginals},
            "standard_errors": {m.attribute: dict(zip(m.labels, m.standard_errors.tolist(), strict=True))
                                for m in self.marginals},
            "unbiased": {m.attribute: dict(zip(m.labels, m.unbiased.tolist(), strict=True)) for m in self.marginals},
            "joint": None}
        if any(m.reports is not None for m in self.marginals):
            out["reports"] = {m.attribute: m.reports for m in self.marginals}
        if self.joint is not None:
            out["joint"] = {"frequencies": self.joint.as_dict(), "standard_errors": dict(
                zip(self.joint.labels, self.joint.standard_errors.tolist(), strict=True))}
        return out


def _reference(probabilities: np.ndarray) -> np.ndarray:
    if np.all(probabilities > 0):
        return probabilities
    return (1 - _MIX) * probabilities + _MIX / probabilities.size


def count_record_file(record: RecordFile, source: str | os.PathLike[str], columns: Sequence[str], *,
                      chunk_size: int = 1_000_000, progress: bool | None = False) -> list[np.ndarray]:
    """Output counts of a privatized table in one pass: one vector per factor (product, sampled) or one (joint).

    A sampled release's empty fields (Parquet nulls) are the attributes a record does not report; every record must
    report exactly one.

    Parameters
    ----------
    record : RecordFile
        The file that privatized the table.
    source : str or os.PathLike
        The privatized CSV, Parquet or Arrow IPC file.
    columns : sequence of str
        The d privatized columns, in attribute order.
    chunk_size : int
        Records per chunk (memory bound).
    progress : bool or None
        The records read on stderr: ``None`` on a terminal only, ``True`` anywhere, ``False`` never.

    Returns
    -------
    list of numpy.ndarray
        int64 output counts.

    Raises
    ------
    ValueError
        If a column is missing or repeated, a value is not an output label, (joint) the d columns of a record
        disagree, or (sampled) a record reports no attribute or several.
    """
    from mechdesign._progress import Progress
    from mechdesign.core._record_codes import distinct_names
    from mechdesign.deploy._io import encode_labels, iter_columns

    names = distinct_names(columns)
    if len(names) != record.prior.dimension:
        raise v.fail("columns", f"name one column per attribute of the record file {list(record.attributes)}", names)
    mechs = record.factors if record.mechanism is None else (record.mechanism,)
    counts = [np.zeros(m.shape[1], dtype=np.int64) for m in mechs]
    sampled, done = record.sampling is not None, 0
    report = Progress(progress, None, verb="read")
    for values in iter_columns(source, names, chunk_size, "data", empty_nulls=sampled, progress=report):
        if sampled:
            reported = np.stack([column != "" for column in values])
            per_record = reported.sum(axis=0)
            if np.any(per_record != 1):
                wrong = int(np.flatnonzero(per_record != 1)[0])
                raise v.fail("data", f"report exactly one attribute per record in the columns {names} (a sampled "
                             "design: one non-empty field)", f"{int(per_record[wrong])} at record {done + wrong}")
            values = [column[r] for column, r in zip(values, reported, strict=True)]
            done += reported.shape[1]
        if record.mechanism is not None:
            first = values[0]
            for other, name in zip(values[1:], names[1:], strict=True):
                if np.any(other != first):
                    raise v.fail(f"column {name!r}", f"hold the record's joint output, as column {names[0]!r} does "
                                 "(a joint design releases one output per record)", "a different value")
            values = values[:1]
        for i, (mech, column) in enumerate(zip(mechs, values, strict=True)):
            codes = encode_labels(column, mech.outputs, f"column {names[i]!r}", kind="output")
            counts[i] += np.bincount(codes, minlength=mech.shape[1])
    report.close()
    if int(sum(c.sum() for c in counts)) == 0:
        raise v.fail("data", "hold at least one record", str(source))
    return counts


def decode_records(record: RecordFile, counts: Sequence[Any], method: str = "linear", *, replicates: int = 200,
                   seed: int = 0) -> RecordEstimate:
    """Every marginal (and the joint table where identifiable) from output counts (module docstring).

    Parameters
    ----------
    record : RecordFile
        The record file that privatized the data.
    counts : sequence of array_like
        Output counts: one vector per factor (product; sampled: of the records reporting that attribute), or one
        over the joint outputs (joint).
    method : str
        "linear" (the efficient unbiased decoders, projected onto each simplex) or "ml" (constrained maximum
        likelihood).
    replicates, seed
        "ml": parametric-bootstrap replicates for the standard errors, and the seed of their generator.

    Returns
    -------
    RecordEstimate
        Marginals with standard errors (a sampled design's include the subsample's variation); the joint table
        for joint designs of rank N.

    Raises
    ------
    ValueError
        If the counts do not match the file's outputs, (sampled) an attribute has no report, ``method`` is not
        "linear" or "ml", or ``replicates`` is 1 or negative.

    References
    ----------
    :mod:`mechdesign.core._fisher` (the efficient unbiased linear decoder and its covariance);
    :mod:`mechdesign.deploy.analysis._mle` (the constrained maximum likelihood); Wang, Lopuhaä-Zwakenberg, Chen,
    Zhao, "Locally differentially private frequency estimation with consistency", NDSS 2020 (Norm-Sub).
    """
    from mechdesign.deploy.analysis._decode import estimate_frequencies, estimate_quantities, project_to_simplex

    if method not in _METHODS:
        raise v.fail("method", f"be one of {list(_METHODS)} for a record file", method)
    if method == "ml":  # the single-column decoder checks them too; the joint path uses them directly
        for name, value, low in (("replicates", replicates, 2), ("seed", seed, 0)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or (value < low and value != 0):
                raise v.fail(name, f"be 0 or an integer >= {low}" if low else "be a non-negative integer", value)
    options: dict[str, Any] = {"replicates": replicates, "seed": seed} if method == "ml" else {}
    prior = record.prior
    if record.sampling is not None:
        return _decode_sampled(record, counts, method, options)
    if record.mechanism is None:
        if len(counts) != prior.dimension:
            raise v.fail("counts", f"give one vector per factor ({prior.dimension})", len(counts))
        marginals = [_marginal(prior.attributes[i], prior.alphabets[i], factor, c, _reference(
            prior.marginal(i).probabilities), method, options) for i, (factor, c) in enumerate(
            zip(record.factors, counts, strict=True))]
        return RecordEstimate(tuple(marginals), None, int(np.sum(counts[0])), method)
    from mechdesign.core._fisher import inseparable_categories

    if len(counts) != 1:
        raise v.fail("counts", "give one vector of joint output counts", len(counts))
    mechanism, reference = record.mechanism, _reference(prior.dense())
    sizes = prior.sizes
    kept = [i for i, n in enumerate(sizes) if n >= 2]  # a one-letter attribute has nothing to decode
    # L of mechdesign.core.marginal_map (rows: attribute i at value a, row-major letters).
    letters = np.indices(sizes).reshape(len(sizes), -1)
    rows = np.vstack([(letters[i][None, :] == np.arange(sizes[i])[:, None]).astype(np.float64) for i in kept])
    quantities = estimate_quantities(mechanism, counts[0], rows, reference)
    values, errors = quantities.values, quantities.standard_errors
    if method == "ml":
        values, errors = _joint_ml(mechanism.matrix, np.asarray(counts[0]), rows, replicates, seed)
    marginals, start = [], 0
    for i in range(len(sizes)):
        if i not in kept:
            marginals.append(Marginal(prior.attributes[i], prior.alphabets[i], np.ones(1), np.zeros(1), np.ones(1)))
            continue
        stop = start + sizes[i]
        decoded = values[start:stop] if method == "ml" else project_to_simplex(values[start:stop])
        marginals.append(Marginal(prior.attributes[i], prior.alphabets[i], decoded, errors[start:stop],
                                  quantities.values[start:stop]))
        start = stop
    joint_estimate = None
    if inseparable_categories(mechanism.matrix).size == 0:
        joint_estimate = estimate_frequencies(mechanism, counts[0], method,
                                              reference=reference if method == "linear" else None, **options)
    return RecordEstimate(tuple(marginals), joint_estimate, quantities.records, method)


def _marginal(attribute: str, labels: tuple[str, ...], factor: Any, counts: Any, reference: np.ndarray, method: str,
              options: dict[str, Any]) -> Marginal:
    """One factor's marginal: the unbiased linear estimate at ``reference`` and the ``method``'s estimate."""
    from mechdesign.deploy.analysis._decode import estimate_frequencies

    linear = estimate_frequencies(factor, counts, "linear", reference=reference)
    if method == "linear":
        return Marginal(attribute, labels, linear.frequencies, linear.standard_errors, linear.unbiased)
    fit = estimate_frequencies(factor, counts, method, **options)
    return Marginal(attribute, labels, fit.frequencies, fit.standard_errors, linear.unbiased)


def _joint_ml(matrix: np.ndarray, counts: np.ndarray, rows: np.ndarray, replicates: int,
              seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Marginals L p̂ of the joint maximum likelihood p̂, with bootstrap (or face-Fisher) standard errors."""
    from mechdesign.deploy.analysis._mle import maximum_likelihood
    from mechdesign.deploy.analysis._standard_errors import bootstrap_errors, face_fisher_errors

    fit = maximum_likelihood(matrix, counts, tol=1e-10)
    if replicates == 0:
        face = face_fisher_errors(matrix, fit.frequencies, int(counts.sum()))
        return rows @ fit.frequencies, np.sqrt(rows**2 @ face**2)  # the face's covariance is dropped: approximate
    errors = bootstrap_errors(lambda draw: rows @ maximum_likelihood(matrix, draw, fit.frequencies,
                                                                     tol=1e-10).frequencies,
                              matrix, fit.frequencies, int(counts.sum()), replicates,
                              np.random.default_rng(seed))
    return rows @ fit.frequencies, errors


def _decode_sampled(record: RecordFile, counts: Sequence[Any], method: str,
                    options: dict[str, Any]) -> RecordEstimate:
    """Each attribute from its own reports, standard errors with the subsample's variation (module docstring)."""
    prior = record.prior
    if len(counts) != prior.dimension:
        raise v.fail("counts", f"give one vector per factor ({prior.dimension})", len(counts))
    reports = [int(np.sum(c)) for c in counts]
    records = sum(reports)
    marginals = []
    for i, (factor, c) in enumerate(zip(record.factors, counts, strict=True)):
        if reports[i] == 0:
            raise v.fail(f"counts[{i}]", f"hold at least one report of attribute {prior.attributes[i]!r} (a sampled "
                         "release decodes each attribute from the records that report it)", 0)
        marginal = _marginal(prior.attributes[i], prior.alphabets[i], factor, c,
                             _reference(prior.marginal(i).probabilities), method, options)
        f = np.clip(marginal.unbiased if method == "linear" else marginal.values, 0.0, 1.0)
        variance = marginal.standard_errors ** 2 - f * (1 - f) / records
        marginals.append(Marginal(marginal.attribute, marginal.labels, marginal.values,
                                  np.sqrt(np.maximum(variance, 0.0)), marginal.unbiased, reports[i]))
    return RecordEstimate(tuple(marginals), None, records, method)

"""What ``assess`` says about a mechanism on a sample: the exact (ε′, δ)-PML guarantee, its JSON and its text.

* :func:`matrix` — a single-column mechanism (a dense file's, or CSV rows with no file): the estimate P̂ of the
  sample (counts or a column of a table), ε_min at P̂, the LDP level, and per δ the exact ε′ = C(W, B_β*(δ)(P̂))
  with Theorem 4's bound ([E] §III); ``releases`` adds the leakage of T releases over the same ball.
* :func:`record` — a record file: the record-level guarantee on the sample's joint empirical distribution, with
  β*(δ, m, N) on the joint alphabet N = ∏ N_i (:mod:`mechdesign.deploy.analysis._record_assess`). A record file
  needs records (counts of one column cannot give a record guarantee).

A structured file is refused (:func:`structured`): its ε′ at another prior needs the dense matrix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mechdesign.deploy._columns import column_order_hint, record_columns, single_column
from mechdesign.deploy._reports import Report

__all__ = ["matrix", "record", "structured"]


def matrix(mechanism: Any, *, loaded: Any = None, counts: Sequence[float] | None = None, data: Any = None,
           columns: Sequence[str] | None = None, deltas: Any = None, releases: int | None = None) -> Report:
    """The assessment of a single-column mechanism on a sample (counts, or ``data`` with one column).

    ``loaded`` is its mechanism file as read (the release policy decides the T-release account), or ``None`` for a
    matrix given as CSV rows.
    """
    from mechdesign.core._assessment import assess
    from mechdesign.core._prior import Prior

    if counts is not None:
        if len(counts) != mechanism.shape[0]:
            shown = ",".join(str(int(c)) if float(c).is_integer() else repr(float(c)) for c in counts)
            raise ValueError(f"counts must have one entry per mechanism input ({mechanism.shape[0]}), got "
                             f"counts={shown}")
        prior = Prior.from_counts(counts, labels=mechanism.inputs)
    else:
        if columns is None:
            raise ValueError("column must be given with --data, got column=None")
        from mechdesign.deploy._io import count_labels

        # Streamed: counts only, memory bounded by the chunk whatever the file size.
        prior = Prior.from_counts(count_labels(data, single_column(columns), mechanism.inputs, name="data",
                                               file_name="data"),
                                  labels=mechanism.inputs)
    result = assess(mechanism, prior, _deltas(deltas))
    accounts = None if releases is None else [_column_account(loaded, mechanism, prior, row, releases)
                                              for row in result.rows]
    summary = {"inputs": list(mechanism.inputs), "prior": result.prior.probabilities, "samples": result.samples,
               "epsilon_at_estimate": result.epsilon_at_estimate, "ldp_epsilon": result.ldp_epsilon,
               "rows": _rows(result.rows, accounts)}
    width = max(len(label) for label in mechanism.inputs)
    lines = [f"estimate P̂ from m = {result.samples} records:",
             *(f"  {label:<{width}}  {p:.6g}" for label, p in zip(mechanism.inputs, result.prior.probabilities,
                                                                   strict=True)),
             f"ε_min at P̂ (PML w.r.t. the estimate): {result.epsilon_at_estimate:.6g} nats",
             f"LDP level (PML for every prior):       {_fmt(result.ldp_epsilon)} nats",
             *_row_lines(result.rows, "n/a (β ≥ 2 min P̂)", accounts),
             "exact ε′ = capacity over the ℓ1 ball B_β*(δ)(P̂): the mechanism is (ε′, δ)-PML ([E] §III).",
             *_account_lines(accounts)]
    return Report(summary, tuple(lines), result)


def record(deployment: Any, *, counts: Sequence[float] | None = None, data: Any = None,
           columns: Sequence[str] | None = None, deltas: Any = None, releases: int | None = None) -> Report:
    """The record-level assessment of a record file on the joint empirical distribution of ``data``."""
    from mechdesign.deploy.analysis._record_assess import assess_record, count_record_data, data_prior
    from mechdesign.deploy.analysis._repeated import release_account

    loaded = deployment.loaded
    if data is None:
        raise ValueError("data must be given with a record file (--data FILE with one --column per attribute "
                         f"{list(loaded.attributes)}): counts of a single column cannot give a record guarantee, "
                         "got data=None")
    if columns is None:
        raise ValueError("column must be given with --data, got column=None")
    names = record_columns(columns, loaded.attributes)
    with column_order_hint(names, loaded.attributes):
        prior = data_prior(loaded, *count_record_data(loaded, data, names))
    result = assess_record(loaded, prior, _deltas(deltas))
    accounts = None if releases is None else [release_account(loaded, releases, prior=prior,
                                                              radius=min(row.radius, 2.0)) for row in result.rows]
    summary = {"file": deployment.name, "design": loaded.kind, "attributes": list(loaded.attributes),
               "columns": names, "letters": prior.size, "observed": prior.observed, "notion": "pml",
               "level": "record",
               "prior": {"letters": [int(i) for i in prior.indices], "counts": [int(c) for c in prior.counts]},
               "samples": result.samples, "epsilon_at_estimate": result.epsilon_at_estimate,
               "ldp_epsilon": result.ldp_epsilon, "rows": _rows(result.rows, accounts)}
    lines = [f"joint estimate P̂ from m = {result.samples:,} records over {' × '.join(loaded.attributes)} "
             f"(N = {prior.size:,} joint letters, {prior.observed:,} observed; {loaded.kind} design)",
             f"record-level ε_min at P̂ (PML w.r.t. the estimate): {result.epsilon_at_estimate:.6g} nats",
             f"record-level LDP level (PML for every prior):     {_fmt(result.ldp_epsilon)} nats",
             *_row_lines(result.rows, "n/a (records)", accounts),
             "exact ε′ = record-level capacity over the joint ℓ1 ball B_β*(δ)(P̂), β* on N = ∏ N_i letters: "
             "the record release is (ε′, δ)-PML ([E] §III).",
             *_account_lines(accounts)]
    return Report(summary, tuple(lines), result)


def structured(deployment: Any, **_: Any) -> Report:
    """A structured file is refused: the exact ε′ over a sample's ball needs the dense matrix."""
    raise ValueError("matrix must be a dense or record mechanism file (the exact epsilon' over the sample's ball "
                     "needs the dense matrix; mechdesign export --dense writes the dense file of a small design), got "
                     f"matrix={deployment.name!r} (a structured file)")


def _deltas(deltas: Any) -> Any:
    from mechdesign.core._assessment import DEFAULT_DELTAS

    return DEFAULT_DELTAS if deltas is None else deltas


def _column_account(loaded: Any, mechanism: Any, prior: Any, row: Any, releases: int) -> Any:
    """The T-release account of a single-column mechanism over the sample's ball B_β*(δ)(P̂) of ``row``.

    ``loaded`` is the mechanism file as read (its release policy decides), or ``None`` for CSV rows.
    """
    from mechdesign.core._repeated import release_leakage
    from mechdesign.core._uncertainty import L1Ball
    from mechdesign.deploy.analysis._repeated import ReleaseAccount, release_account

    if loaded is not None and (loaded.guarantee["notion"] == "pml" or loaded.release.policy != "single"):
        return release_account(loaded, releases, prior=prior.probabilities, radius=min(row.radius, 2.0))
    from mechdesign.mechfile._accounts import reporter

    leakage = release_leakage(mechanism, L1Ball(prior, min(row.radius, 2.0)), releases, progress=reporter())
    return ReleaseAccount("single", leakage.releases, leakage.epsilon, leakage.lower, leakage.exact, leakage.method,
                          leakage.vectors)


def _rows(rows: Any, accounts: list[Any] | None) -> list[dict[str, Any]]:
    """The (ε′, δ) rows as the JSON output reports them (one column or a whole record)."""
    out = [{"delta": r.delta, "radius": r.radius, "epsilon_prime": r.epsilon_prime,
            "theorem4_bound": r.theorem4_bound, "proposition2_regime": r.proposition2_regime} for r in rows]
    for entry, account in zip(out, accounts or [], strict=False):
        entry["releases"] = account.to_dict()
    return out


def _row_lines(rows: Any, no_bound: str, accounts: list[Any] | None) -> list[str]:
    head = f"{'δ':>8}  {'β*(δ) eq.37':>12}  {'exact ε′':>10}  {'Thm 4 bound':>11}"
    if accounts:
        head += f"  {f'{accounts[0].releases:,} releases':>16}"
    lines = [head]
    for i, r in enumerate(rows):
        bound = no_bound if r.theorem4_bound is None else _fmt(r.theorem4_bound)
        line = f"{r.delta:>8.0e}  {r.radius:>12.6g}  {_fmt(r.epsilon_prime):>10}  {bound:>11}"
        if accounts:
            a = accounts[i]
            line += f"  {_fmt(a.epsilon) + ('' if a.exact else ' (bound)'):>16}"
        lines.append(line)
    return lines


def _account_lines(accounts: list[Any] | None) -> list[str]:
    if not accounts:
        return []
    return [f"{accounts[0].releases:,} releases: the leakage of that many releases of one person's value over the "
            "same ball (exact over every count vector, or a certified upper bound; one release if memoized)."]


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.6g}"

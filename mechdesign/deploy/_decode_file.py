"""What ``decode`` says about a privatized table, for each kind of file: the estimate, its JSON and its text.

One function per kind, called by its adapter's :meth:`~mechdesign.deploy.Deployment.decode_file`; the table is
streamed (bounded memory) and its records read are reported on stderr as ``privatize`` reports them
(:class:`mechdesign._progress.Progress`).

* :func:`dense` — the frequencies (:func:`~mechdesign.deploy.analysis.estimate_frequencies`: linear, inversion, ml,
  em; ``within_ball`` maximises the likelihood over the file's ball) through the matrix each report is drawn from
  (W₁W₂ for a two-layer file); for an ``estimation_linear`` design the quantities it was designed for, and the
  per-category frequencies only when the mechanism has rank N.
* :func:`structured` — the efficient unbiased estimate at the file's prior, projected onto the simplex, from the
  reports' text or binary form (:class:`~mechdesign.deploy.analysis.ReportTally`).
* :func:`record` — every marginal with standard errors, and the joint table when it is identifiable
  (:mod:`mechdesign.deploy.analysis._record_decode`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mechdesign.deploy._columns import column_order_hint, record_columns, single_column
from mechdesign.deploy._reports import Report

__all__ = ["dense", "record", "structured"]


def dense(deployment: Any, source: Any, columns: Sequence[str], *, method: str = "linear",
          within_ball: bool = False, chunk_size: int = 1_000_000, progress: bool | None = False) -> Report:
    """The decode of a single-column file's reports (its frequencies, or an estimation_linear design's quantities)."""
    from mechdesign.core._fisher import inseparable_categories
    from mechdesign.deploy.analysis._decode import count_file, estimate_frequencies, estimate_quantities

    column = single_column(columns)
    loaded = deployment.loaded
    mechanism = loaded.reported  # a two-layer file's reports come from W₁W₂: one period decodes through it
    counts = count_file(mechanism, source, column, chunk_size=chunk_size, progress=progress)
    utility = loaded.utility or {}
    quantities = None
    if utility.get("kind") == "estimation_linear" and "weights" in utility:
        quantities = estimate_quantities(mechanism, counts, utility["weights"], loaded.guarantee["prior"],
                                         names=utility.get("quantities"))
    estimate = None
    if quantities is None or inseparable_categories(mechanism.matrix).size == 0:
        reference = loaded.guarantee.get("prior") if method == "linear" else None
        estimate = estimate_frequencies(mechanism, counts, method, reference=reference,
                                        ball=_file_ball(loaded) if within_ball else None)
    summary: dict[str, Any] = {"records": int(counts.sum())}
    lines = []
    if estimate is not None:
        summary |= {"method": estimate.method, "within_ball": within_ball, "iterations": estimate.iterations,
                    "converged": estimate.converged, "gap": estimate.gap, "frequencies": estimate.as_dict(),
                    "standard_errors": dict(zip(estimate.labels, estimate.standard_errors.tolist(), strict=True))}
        within = " within the file's ball" if within_ball else ""
        lines.append(f"# {estimate.method}{within}, {estimate.records:,} records: estimate ± standard error "
                     f"(log-likelihood gap ≤ {estimate.gap:.1e} nats per record)")
        lines += _rows(estimate.labels, estimate.frequencies, estimate.standard_errors)
    if quantities is not None:
        summary |= {"quantities": quantities.as_dict(), "quantity_standard_errors":
                    dict(zip(quantities.names, quantities.standard_errors.tolist(), strict=True))}
        lines.append(f"# quantities of the estimation_linear design (linear decoder at the design prior), "
                     f"{quantities.records:,} records: estimate ± standard error")
        lines += _rows(quantities.names, quantities.values, quantities.standard_errors)
    summary["output_counts"] = dict(zip(mechanism.outputs, counts.tolist(), strict=True))
    return Report(summary, tuple(lines), estimate)


def structured(deployment: Any, source: Any, columns: Sequence[str], *,
               method: str = "linear", within_ball: bool = False, chunk_size: int = 1_000_000,
               progress: bool | None = False) -> Report:
    """The decode of a structured file's reports: the efficient unbiased estimate, projected."""
    from mechdesign._progress import Progress
    from mechdesign.deploy._io import iter_column
    from mechdesign.deploy.analysis._symmetric_decode import ReportTally

    if method != "linear" or within_ball:
        raise ValueError(f"method must be 'linear' with a structured file (the efficient unbiased decoder at the "
                         f"file's prior, projected onto the simplex), got method={method!r}"
                         + (" with --within-ball" if within_ball else ""))
    column = single_column(columns)
    tally = ReportTally(deployment.loaded.mechanism)
    report = Progress(progress, None, verb="read")
    if not _tally_arrow(tally, source, column, chunk_size, report):
        report = Progress(report.enabled, None, verb="read")  # the general reader starts again
        for chunk in iter_column(source, column, chunk_size, file_name="data", progress=report):
            tally.add_texts(list(chunk), tally.records)
    report.close()
    estimate = tally.estimate()
    summary = {"records": estimate.records, "method": "linear", "kind": "symmetric",
               "frequencies": estimate.as_dict(),
               "unbiased": dict(zip(estimate.labels, estimate.unbiased.tolist(), strict=True)),
               "standard_errors": dict(zip(estimate.labels, estimate.standard_errors.tolist(), strict=True))}
    lines = [f"# linear (efficient unbiased at the file's prior, projected onto the simplex), {estimate.records:,} "
             "reports: estimate ± standard error (of the unbiased estimate, at the file's prior)",
             *_rows(estimate.labels, estimate.frequencies, estimate.standard_errors)]
    return Report(summary, tuple(lines), estimate)


def record(deployment: Any, source: Any, columns: Sequence[str], *, method: str = "linear",
           within_ball: bool = False, chunk_size: int = 1_000_000, progress: bool | None = False) -> Report:
    """The decode of a record file's reports: every marginal (and the joint table if identifiable)."""
    from mechdesign.deploy.analysis._record_decode import count_record_file, decode_records

    loaded = deployment.loaded
    names = record_columns(columns, loaded.attributes)
    if method not in ("linear", "ml") or within_ball:
        raise ValueError(f"method must be 'linear' or 'ml' (without --within-ball) for a record file, got "
                         f"method={method!r}{' with --within-ball' if within_ball else ''}")
    with column_order_hint(names, loaded.attributes):
        counts = count_record_file(loaded, source, names, chunk_size=chunk_size, progress=progress)
    estimate = decode_records(loaded, counts, method)
    decoder = ("efficient unbiased linear decoder at the file's estimate, projected onto the simplex"
               if method == "linear" else "constrained maximum likelihood, bootstrap standard errors")
    lines = [f"# {loaded.kind} record file, {estimate.records:,} records: marginals, estimate ± standard error "
             f"({decoder})"]
    for marginal in estimate.marginals:
        lines.append(f"## {marginal.attribute}")
        lines += _rows(marginal.labels, marginal.values, marginal.standard_errors)
    if estimate.joint is not None:
        lines.append("## joint table (" + ", ".join(loaded.attributes) + ")")
        lines += _rows(estimate.joint.labels, estimate.joint.frequencies, estimate.joint.standard_errors)
    elif loaded.kind == "joint":
        lines.append("# the joint table is not identifiable from this design (rank below N): marginals only")
    elif loaded.kind == "sampled":
        lines.append("# the joint table is not identifiable from a sampled design (each record reports one "
                     "attribute): marginals only; their standard errors include the variation of the records that "
                     "report each one")
    return Report({"design": loaded.kind, **estimate.to_dict()}, tuple(lines), estimate)


def _rows(labels: Sequence[str], values: Any, errors: Any) -> list[str]:
    """One line per label: ``label  value ± error``, the labels padded to one width."""
    width = max(len(label) for label in labels)
    return [f"{label:<{width}}  {value:.6f} ± {error:.6f}" for label, value, error in
            zip(labels, values, errors, strict=True)]


def _file_ball(loaded: Any) -> Any:
    """The file's ball B_β(P̂) from its guarantee (its prior and radius)."""
    from mechdesign.core._uncertainty import L1Ball

    guarantee = loaded.guarantee
    if guarantee.get("prior") is None or guarantee.get("radius") is None:
        raise ValueError("--within-ball needs a file whose guarantee states a prior and a radius, got a file "
                         "without them")
    return L1Ball(guarantee["prior"], guarantee["radius"])


def _tally_arrow(tally: Any, source: Any, column: str, chunk: int, progress: Any) -> bool:
    """Tally the reports of a Parquet, Arrow IPC or plain CSV file read by Arrow (no Python object a report).

    A binary column holds reports in binary form, a string column (and CSV) in text form. False leaves the file to
    the general reader (compressed CSV, no pyarrow, a CSV Arrow cannot parse): then nothing is tallied.
    ``progress`` counts the reports tallied.
    """
    from mechdesign.deploy._io import column_index, csv_header, file_kind

    path = Path(source)
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        return False
    if not path.is_file():
        return False
    kind = file_kind(path, "data")
    if kind in ("parquet", "arrow"):
        from mechdesign.deploy._io import columnar_file, iter_parquet_tables

        parquet = columnar_file(path)
        at = column_index(parquet.schema_arrow.names, column)
        kind = parquet.schema_arrow.field(at).type
        # The binary form (a binary column, as privatize writes Parquet and Arrow IPC) or the text form (strings).
        binary = pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
        if not (binary or pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise ValueError(f"column must hold reports as binary or text, got column type={kind}")
        add = tally.add_binary_arrow if binary else tally.add_arrow
        progress.total = parquet.metadata.num_rows
        for table in iter_parquet_tables(parquet, chunk, columns=[column]):
            add(table.column(0).combine_chunks(), tally.records)
            progress.update(table.num_rows)
        return True
    if kind != "csv" or [s.lower() for s in path.suffixes][-1:] != [".csv"]:
        return False
    header = csv_header(path)
    column_index(header, column)
    options = pcsv.ConvertOptions(include_columns=[column], column_types={column: pa.string()},
                                  strings_can_be_null=False, quoted_strings_can_be_null=False)
    try:
        # Blocks of 64 MiB: ~4·10⁵ reports of 142 bytes a batch (Arrow's default 1 MiB gives ~7,000: a Python step
        # of the tally each).
        with pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=1 << 26),
                           convert_options=options) as reader:
            for batch in reader:
                tally.add_arrow(batch.column(0), tally.records)
                progress.update(batch.num_rows)
    except (pa.ArrowInvalid, UnicodeDecodeError):
        tally.clear()  # the general reader starts again and names the problem
        return False
    return True

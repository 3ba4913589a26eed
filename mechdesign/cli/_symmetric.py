"""``privatize`` and ``decode`` on structured files (kind ``"symmetric"``).

The verbs detect the kind after the one read of the file (:func:`~mechdesign.cli._io.read_mechanism_argument`) and
come here. What a dense file offers and a structured one cannot yet: ``--ledger``, the data's own ε after
``--override-data-check``, and decoders other than the linear one; each is refused in one line (``mechdesign export
FILE --dense`` makes a dense file of a small design). ``verify`` reads a structured file through its deploy adapter
(:class:`~mechdesign.deploy._kinds.StructuredDeployment`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mechdesign.cli._io import data_file, print_json, print_signature_notice, single_column, stream

if TYPE_CHECKING:
    from mechdesign._progress import Progress


def _refuse(args: argparse.Namespace, option: str, value: Any, why: str) -> None:
    if value not in (None, False):
        raise ValueError(f"{option} must not be given with a structured file ({why}; mechdesign export --dense "
                         f"writes the dense file of a small design), got {option}={value!r}")


def _report_sizes(loaded: Any, binary: bool = False, family: Any = None) -> tuple[int, float]:
    """The largest and the median report size in bytes, of the text form or (``binary``) the binary form."""
    from mechdesign.mechfile._placement import PlacementFamily
    from mechdesign.mechfile._report_binary import binary_widths

    m = loaded.mechanism
    family = family or PlacementFamily(m.cells, m.high_counts, m.low_counts)
    if binary:
        type_bytes, widths = binary_widths(family)
        sizes = (type_bytes + widths).tolist()
    else:
        sizes = [family.report_bytes(t) for t in range(m.types)]
    return max(sizes), statistics.median(sizes)


def _guarantee_with_prior(loaded: Any) -> dict[str, Any]:
    return {**loaded.guarantee, "prior": loaded.prior.tolist()}


def run_privatize(args: argparse.Namespace, source: Any) -> int:
    """``mechdesign privatize`` with a structured file: reports ``t<type>.<hex>`` in the column."""
    from mechdesign.cli._release import generator, memo_for
    from mechdesign.deploy.analysis._datacheck import DATA_DELTA, DataCheck, check_counts, refusal
    from mechdesign.deploy.sampling._symmetric import SymmetricPrivatizer
    from mechdesign.deploy.sampling._symmetric_stream import privatize_symmetric_file
    from mechdesign.mechfile._symmetric import read_symmetric_file

    _refuse(args, "ledger", args.ledger, "release ledgers are kept for dense files")
    _refuse(args, "override_data_check", args.override_data_check, "the data's own epsilon needs the dense matrix")
    args.column = single_column(args.column)
    loaded = read_symmetric_file(source, public_key=args.public_key)
    data_delta = DATA_DELTA if args.data_delta is None else args.data_delta
    checks: list[DataCheck] = []
    guarantee = _guarantee_with_prior(loaded)

    def check(counts: Any) -> None:
        result = check_counts(guarantee, counts, data_delta)
        if not result.inside:
            raise ValueError(refusal(result))
        checks.append(result)

    memo = memo_for(args, loaded)
    sampler = SymmetricPrivatizer(loaded.mechanism)
    achieved = sampler.check(loaded.guarantee, loaded.achieved)  # bounded from the reader's capacity first
    records = privatize_symmetric_file(sampler, data_file(args), args.out, args.column, rng=stream(args),
                                       chunk_size=args.chunk_size, progress=True if args.progress else None,
                                       check_counts=check, memo=memo,
                                       user_column=args.user_column if memo is not None else None)
    data = checks[0]
    print_signature_notice(source.name, loaded, args)
    stated = max(float(loaded.guarantee["epsilon"]), achieved)
    from mechdesign.deploy._io import file_kind

    binary = file_kind(Path(args.out), "output") != "csv"  # Parquet and Arrow IPC: the binary form
    largest, _ = _report_sizes(loaded, binary, sampler.family)
    form = "binary reports (type and seed, big-endian)" if binary else "reports t<type>.<hex>"
    if args.json:
        print_json({"output": args.out, "records": records, "column": args.column, "kind": "symmetric",
                    "generator": generator(args, memo), "user_column": args.user_column,
                    "release": loaded.release.policy, "notion": "pml", "epsilon": stated,
                    "file_epsilon": loaded.guarantee["epsilon"], "sampled_epsilon": achieved,
                    "report_bytes_max": largest, "report_form": "binary" if binary else "text",
                    "sha256": loaded.sha256,
                    "data_check": {"passed": data.inside, "records": data.records, "divergence": data.divergence,
                                   "threshold": data.threshold, "data_delta": data.data_delta}})
        return 0
    per = "for a lifetime of reports of an unchanged value (memoized: one release)" if memo is not None else \
        "per release"
    print(f"{args.out}: {records:,} records, column {args.column!r} privatized ({generator(args, memo)}); "
          f"guarantee: pml epsilon {stated!r} {per} (data check passed: divergence to the ball "
          f"{data.divergence:.4g} <= {data.threshold:.4g} at delta_d {data.data_delta:g}); {form} "
          f"of at most {largest} bytes")
    return 0


def run_decode(args: argparse.Namespace, source: Any) -> int:
    """``mechdesign decode`` on reports of a structured file: the efficient unbiased estimate, projected."""
    from mechdesign._progress import Progress
    from mechdesign.deploy._io import iter_column
    from mechdesign.deploy.analysis._symmetric_decode import ReportTally
    from mechdesign.mechfile._symmetric import read_symmetric_file

    if args.method != "linear" or args.within_ball:
        raise ValueError(f"method must be 'linear' with a structured file (the efficient unbiased decoder at the "
                         f"file's prior, projected onto the simplex), got method={args.method!r}"
                         + (" with --within-ball" if args.within_ball else ""))
    column = single_column(args.column)
    loaded = read_symmetric_file(source, public_key=args.public_key)
    tally = ReportTally(loaded.mechanism)
    report = Progress(True if args.progress else None, None, verb="read")
    if not _tally_arrow(tally, data_file(args), column, args.chunk_size, report):
        report = Progress(report.enabled, None, verb="read")  # the general reader starts again
        for chunk in iter_column(data_file(args), column, args.chunk_size, file_name="data", progress=report):
            tally.add_texts(list(chunk), tally.records)
    report.close()
    estimate = tally.estimate()
    print_signature_notice(source.name, loaded, args)
    if args.json:
        print_json({"records": estimate.records, "method": "linear", "kind": "symmetric",
                    "frequencies": estimate.as_dict(),
                    "unbiased": dict(zip(estimate.labels, estimate.unbiased.tolist(), strict=True)),
                    "standard_errors": dict(zip(estimate.labels, estimate.standard_errors.tolist(), strict=True))})
        return 0
    width = max(len(label) for label in estimate.labels)
    out = [f"# linear (efficient unbiased at the file's prior, projected onto the simplex), {estimate.records:,} "
           "reports: estimate ± standard error (of the unbiased estimate, at the file's prior)"]
    out += [f"{label:<{width}}  {value:.6f} ± {error:.6f}" for label, value, error in
            zip(estimate.labels, estimate.frequencies, estimate.standard_errors, strict=True)]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _tally_arrow(tally: Any, source: Any, column: str, chunk: int, progress: Progress) -> bool:
    """Tally the reports of a Parquet, Arrow IPC or plain CSV file read by Arrow (no Python object a report).

    A binary column holds reports in binary form, a string column (and CSV) in text form. False leaves the file to
    the general reader (compressed CSV, no pyarrow, a CSV Arrow cannot parse): then nothing is tallied.
    ``progress`` counts the reports tallied.
    """
    from pathlib import Path

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

"""``privatize`` on structured files (kind ``"symmetric"``).

The verb detects the kind after the one read of the file (:func:`~mechdesign.cli._io.read_mechanism_argument`) and
comes here. What a dense file offers and a structured one cannot yet: ``--ledger`` and the data's own ε after
``--override-data-check``; each is refused in one line (``mechdesign export FILE --dense`` makes a dense file of a
small design). ``verify`` and ``decode`` read a structured file through its deploy adapter
(:class:`~mechdesign.deploy._kinds.StructuredDeployment`).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from mechdesign.cli._io import data_file, print_json, print_signature_notice, single_column, stream


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

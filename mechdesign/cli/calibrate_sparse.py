"""``mechdesign calibrate sparse``: noise σ and threshold τ for GSHM and CSH under (ε, δ)-DP."""

from __future__ import annotations

import argparse

from mechdesign.cli._io import print_json

COMMAND = ("calibrate", "sparse")
HELP = "sparse histograms (GSHM, correlated CSH): minimal noise and threshold (release iff count > 1 + tau)"
EXAMPLE = "mechdesign calibrate sparse --epsilon 0.35 --delta 1e-5 --k 1000"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign calibrate sparse`` to ``parser``."""
    from mechdesign.noise.sparse import METHODS

    parser.add_argument("--epsilon", type=float, required=True, help="privacy budget ε (nats)")
    parser.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    parser.add_argument("--k", type=int, required=True,
                        help="k: for the gshm rows the most keys one user contributes to; for the csh rows a bound "
                             "on the keys of every dataset's histogram (which bounds a user's keys too). The rows "
                             "compare at one k only where a user may touch nearly every key; release a histogram "
                             "with 'mechdesign release sparse'")
    parser.add_argument("--sigma", type=float, default=None,
                        help="independent per-key noise std; default: the σ giving the smallest threshold")
    parser.add_argument("--method", action="append", choices=METHODS, default=None,
                        help="analysis to report (repeatable; default: all)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _calibrate(method: str, args: argparse.Namespace):
    """The calibration, or None when the given σ is below this method's σ_min (reported, not an error)."""
    from mechdesign.noise.sparse._accounting import calibrate_sparse

    try:
        return calibrate_sparse(method, args.k, args.epsilon, args.delta, args.sigma)
    except ValueError as exc:
        if args.sigma is not None and "must exceed sigma_min" in str(exc):
            return None
        raise


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign calibrate sparse`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.noise.sparse import METHODS
    from mechdesign.noise.sparse._accounting import sigma_min

    methods = args.method or list(METHODS)
    results = {m: _calibrate(m, args) for m in methods}
    if all(r is None for r in results.values()):
        raise ValueError(f"sigma must exceed sigma_min of at least one method, got sigma={args.sigma!r}")
    baseline = _calibrate("gshm-exact", args)
    rows = []
    for method, r in results.items():
        floor = r.sigma_min if r else sigma_min(method, args.k, args.epsilon, args.delta)
        ratio = r.threshold / baseline.threshold if (r and baseline) else None
        rows.append({
            "method": method, "sigma_min": floor, "sigma": r.sigma if r else args.sigma,
            "total_std": r.total_std if r else None, "threshold": r.threshold if r else None,
            "delta_achieved": r.delta_achieved if r else None, "threshold_ratio_to_gshm_exact": ratio,
            "status": "ok" if r else "sigma below sigma_min",
        })
    if args.json:
        print_json({"epsilon": args.epsilon, "delta": args.delta, "k": args.k, "sigma": args.sigma,
                    "convention": "release key iff noisy count > 1 + threshold", "results": rows})
        return 0

    def show(value: float | None, width: int) -> str:
        return f"{value:>{width}.4f}" if value is not None else f"{'-':>{width}}"

    print(f"epsilon={args.epsilon:g} delta={args.delta:g} k={args.k}  (release iff noisy count > 1 + tau)")
    print(f"{'method':<18}{'sigma_min':>12}{'sigma':>12}{'total_std':>12}{'tau':>14}{'tau/gshm-exact':>16}")
    for row in rows:
        print(f"{row['method']:<18}{show(row['sigma_min'], 12)}{show(row['sigma'], 12)}"
              f"{show(row['total_std'], 12)}{show(row['threshold'], 14)}"
              f"{show(row['threshold_ratio_to_gshm_exact'], 16)}")
    return 0

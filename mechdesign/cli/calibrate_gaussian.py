"""``mechdesign calibrate gaussian``: σ for an (ε*, δ*)-PML target, or the δ* of a given σ ([E] eq. 64–65).

Without ``--sigma``: the smallest σ with ε* ≤ ``--epsilon`` and δ* ≤ ``--delta``. With ``--sigma``: the
(ε*, δ*) pair of that σ at ε* = ``--epsilon``. ``--delta-estimate`` is δ₂ (failure of the estimate, eq. 45).
"""

from __future__ import annotations

import argparse

from mechdesign.cli._io import print_json
from mechdesign.cli.calibrate_laplace import add_sample_arguments, sample_estimate

COMMAND = ("calibrate", "gaussian")
HELP = "Gaussian noise σ for binary data under (epsilon*, delta*)-PML, or the (epsilon*, delta*) of a σ"
EXAMPLE = "mechdesign calibrate gaussian --epsilon 0.5 --delta 1e-5 --samples 10000 --p-hat-min 0.3"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign calibrate gaussian`` to ``parser``."""
    parser.add_argument("--epsilon", type=float, required=True, help="PML level ε* (nats)")
    parser.add_argument("--delta", type=float, help="total failure probability δ* (to calibrate σ)")
    parser.add_argument("--sigma", type=float, help="report (ε*, δ*) of this σ instead of calibrating")
    parser.add_argument("--delta-estimate", type=float, default=1e-6,
                        help="δ₂, failure probability of the estimate (default 1e-6, as in [E] Fig. 6)")
    add_sample_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign calibrate gaussian`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes.
    """
    from mechdesign.noise.additive._base import estimate_from_counts
    from mechdesign.noise.additive._gaussian_calibrate import gaussian_guarantee_for_target, gaussian_sigma, pldp_sigma

    estimate = sample_estimate(args)
    samples, p_min = estimate_from_counts(estimate) if isinstance(estimate, list) else estimate
    if (args.sigma is None) == (args.delta is None):
        raise ValueError(f"sigma must be given exactly when --delta is not, got sigma={args.sigma!r}")
    try:
        if args.sigma is None:
            g = gaussian_sigma(args.epsilon, args.delta, samples, p_min, args.delta_estimate)
        else:
            g = gaussian_guarantee_for_target(args.sigma, args.epsilon, samples, p_min, args.delta_estimate)
        baseline = pldp_sigma(g.epsilon_star, g.delta_star) if g.epsilon_star > 0 else float("inf")
    except OverflowError:  # e^ε beyond float64 inside the calibration: say which input, not "math range error"
        raise ValueError(f"epsilon must be small enough that e^epsilon fits a float64 in the Gaussian calibration "
                         f"(at most about 700 nats), got epsilon={args.epsilon!r}") from None
    if args.json:
        print_json({"mechanism": "gaussian", "sigma": g.sigma, "epsilon_star": g.epsilon_star,
                    "delta_star": g.delta_star, "epsilon": g.epsilon, "delta1": g.delta1,
                    "delta_estimate": g.delta_estimate, "radius": g.radius, "samples": g.samples,
                    "p_hat_min": g.p_hat_min, "pldp_sigma": baseline})
    else:
        print(f"sigma = {g.sigma!r}  (ε* = {g.epsilon_star:.12g}, δ* = {g.delta_star:.6g} "
              f"= δ₁ {g.delta1:.6g} "
              f"+ δ₂ {g.delta_estimate:g} − δ₁δ₂; pLDP at the same (ε*, δ*) needs σ = {baseline:.6g})")
    return 0

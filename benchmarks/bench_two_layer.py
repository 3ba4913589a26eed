"""The fair race of issue 45: two-layer ε-PML designs against L-GRR, L-OSUE and L-SUE at equal three levels.

Cells: Adult race (5), education (16), native-country (42) × (ε_lifetime, ε_report) ∈ {(1, 0.5), (2, 1), (4, 1)}.
The chains (:mod:`mechdesign.design.baselines._longitudinal`, ε-LDP, the instantaneous layer calibrated exactly) are at
ε_∞ = ε_lifetime and ε_1 = ε_report; their linkability levels (:func:`~mechdesign.core.link_level`:
ln(p₂/q₂) for L-GRR, N·ln(p₂/q₂) for the unary encodings) differ, and the two-layer design
(:func:`mechdesign.design.two_layer.design_two_layer`, ε-PML over the ball of δ = 1e-6) is given the **smallest**
of the three as its link budget, so it is at least as unlinkable as each of them. A second design at link ε = ∞ (no
linkability budget: the memoized single-layer design at ε_report, W₂ = I) shows what unlinkability costs.

Metric: n × the total MSE of one period's decoded frequencies on the n = 48,842 records with fixed values.

* **exact**: the design's efficient decoder, n(tr J⁻¹ − 1) through W₁W₂; the chains' unbiased estimator (Wang et al.,
  Theorem 2, with the chain's p* and q*).
* **simulated**, T = 5 periods with each of ``--keys`` memoization keys (standard errors across keys: one key's
  periods share its permanent draws): our file through the real ``mechdesign
  privatize --memo-key K --user-column id`` (the permanent layer memoized per person, fresh reports each period),
  decoded by :func:`~mechdesign.deploy.analysis.estimate_frequencies` (the API of ``mechdesign decode``):
  ``linear`` unprojected (unbiased) and ``ml`` (constrained maximum likelihood). The chains' two layers drawn in
  NumPy (the permanent output once per person and key, fresh bits or values per period), decoded by their unbiased
  estimator and by multi-freq-ldpy's own ``IBU`` (its ``Histogram_estimator.IBU``, 10,000 iterations, tolerance
  1e-12, uniform start) with the channel its aggregators build (for L-GRR the row-stochastic q = q₁p₂ + (1 − q₁)q₂:
  the library's ``L_GRR_Aggregator_IBU`` uses p₁q₂ + q₁p₂, a defect noted in reference/peers.md). ``ml`` and
  IBU use the same side information: the channel and the counts, no prior.

``lead`` is the best chain's exact unbiased n·MSE over ours; ``lead (post-processed)`` the best chain's simulated IBU
over our simulated ML. ``equal_lead`` is the lead over the best chain at the design's three levels (PML-calibrated,
p₂ capped by the link budget: L-GRR in every cell). Where it is below 2×, ``why`` gives the reason: a proof where
the certified λ-LDP bound (``link_bound``, N ≤ 10: every report of a design at link level λ is λ-LDP) is within 2× of
the chain; otherwise the measured split: the single-layer design at the per-report and link budgets (``target``, a
design's value) against the chain, and the permanent layer's cost on top (ratio to it).

**Repeats.** A cell's design is time-limited and its value varies from run to run (native-country (1, 0.5) at 120 s:
710 to 3,716 over five runs): with ``--repeats R`` each cell is designed R times, and the row is the run of median
n·MSE (its file is the one simulated), every run's value kept in ``two_layer_mse_runs`` and the table showing
[min, max of R]; ``--repeat-attributes`` limits the repeats to some attributes (the others once).

**Some cells again.** ``--cells race:1:0.5 education:2:1 …`` designs and simulates only those cells and merges
their rows into results/two_layer.json in place of the old ones (the other rows kept as they were, the file's
``rerun`` entry naming the cells, date and load): the run must keep the file's protocol (``--time-limit``,
``--repeats``, ``--keys``), or it is refused. Remove the cells' cached designs first, or they are reused.

Run: ``python benchmarks/bench_two_layer.py [--time-limit 300] [--keys 2] [--repeats 3] [--unlinked-from-results]
[--cells ATTRIBUTE:LIFETIME:REPORT ...]`` (``--unlinked-from-results`` keeps the link ε = ∞ column of the previous
results instead of designing it again) (needs ``pip install mechdesign[bench]``); designs cached in
benchmarks/designs/two_layer/ (ignored by git); results in results/two_layer.{json,csv} and the display table
results/two_layer_table.{csv,md} (``--table`` rewrites it).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import RESULTS, TWO_LAYER_ATTRIBUTES, read_rows, significant, write_results, write_table

from mechdesign.design.baselines import LONGITUDINAL, longitudinal_protocol
from mechdesign.design.two_layer._link_bound import MAX_LINK_BOUND_SIZE, link_bound

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "problems"
DESIGNS = ROOT / "benchmarks" / "designs" / "two_layer"
ATTRIBUTES = TWO_LAYER_ATTRIBUTES
BUDGETS = ((1.0, 0.5), (2.0, 1.0), (4.0, 1.0))
PERIODS = 5
SEED = 20260045
IBU_ITERATIONS, IBU_TOL = 10_000, 1e-12  # multi-freq-ldpy's defaults


def design_file(attribute: str, lifetime: float, report: float, link: float, time_limit: float,
                run: int = 0) -> tuple[Path, dict]:
    """The cached two-layer design of one cell (designed when missing) and its summary; ``run`` > 0: a repeat."""
    from mechdesign.design import load_problem
    from mechdesign.design.two_layer import design_two_layer

    tag = "inf" if math.isinf(link) else f"{link:.6f}"
    repeat = f"-run{run}" if run else ""
    path = DESIGNS / f"{attribute}-{lifetime:g}-{report:g}-link{tag}{repeat}.mech.json"
    info = path.with_suffix(".summary.json")
    if not path.exists():
        DESIGNS.mkdir(parents=True, exist_ok=True)
        source = PROBLEMS / f"{ATTRIBUTES[attribute]}.toml"
        problem = load_problem(source).problem.with_(epsilon=lifetime)
        start = time.process_time()
        wall = time.monotonic()
        design = design_two_layer(problem, report, link_epsilon=link, time_limit=time_limit)
        summary = {**design.summary(), "cpu_seconds": time.process_time() - start,
                   "wall_seconds": time.monotonic() - wall, "time_limit": time_limit,
                   "permanent_outputs": design.permanent.shape[1], "report_outputs": design.reports.shape[1],
                   "load": list(os.getloadavg())}
        design.save(path, problem_file=source)
        info.write_text(json.dumps(summary, indent=2, default=float))
    return path, json.loads(info.read_text())


def median_design(attribute: str, lifetime: float, report: float, link: float, time_limit: float,
                  repeats: int) -> tuple[Path, dict, list[float]]:
    """The cell designed ``repeats`` times: the run of median n·MSE (the lower median for an even count: a run's
    own file and summary, never an average of designs), and every run's n·MSE in run order."""
    runs = [design_file(attribute, lifetime, report, link, time_limit, run) for run in range(repeats)]
    values = [info["report_mse_factor_fixed_records"] for _, info in runs]
    middle = statistics.median_low(values)
    path, info = runs[values.index(middle)]
    return path, info, values


def records(attribute: str, labels: tuple[str, ...]) -> np.ndarray:
    """All 48,842 Adult records of the attribute as codes into ``labels``."""
    from mechdesign import load_adult
    from mechdesign.deploy._io import encode_labels

    return encode_labels(load_adult([attribute])[attribute], labels)


def simulate_file(path: Path, attribute: str, keys: int, workdir: Path) -> dict[str, list[float]]:
    """n·SSE per period of our file through ``privatize --memo-key`` (T periods per key) and two decoders."""
    from mechdesign.deploy.analysis import estimate_frequencies
    from mechdesign.mechfile import read_mechanism_file

    loaded = read_mechanism_file(path)
    labels = loaded.mechanism.inputs
    x = records(attribute, labels)
    n = x.size
    truth = np.bincount(x, minlength=len(labels)) / n
    data = workdir / f"{attribute}.csv"
    data.write_text("id,value\n" + "".join(f"u{i},{labels[v]}\n" for i, v in enumerate(x)))
    reported = loaded.reported
    index = {label: k for k, label in enumerate(reported.outputs)}
    errors: dict[str, list[float]] = {"unbiased": [], "ml": []}
    for key in range(keys):
        key_file = workdir / f"key{key}"
        key_file.unlink(missing_ok=True)
        _cli("memo-key", str(key_file))
        for period in range(PERIODS):
            out = workdir / f"period-{key}-{period}.csv"
            out.unlink(missing_ok=True)
            _cli("privatize", str(path), "--data", str(data), "--column", "value", "--user-column", "id",
                 "--memo-key", str(key_file), "--seed", str(SEED + 101 * key + period), "--out", str(out))
            values = [line.rsplit(",", 1)[1] for line in out.read_text().splitlines()[1:]]
            counts = np.bincount([index[v] for v in values], minlength=len(index))
            linear = estimate_frequencies(reported, counts, "linear", reference=loaded.guarantee["prior"])
            ml = estimate_frequencies(reported, counts, "ml", replicates=0)
            errors["unbiased"].append(n * float(np.sum((linear.unbiased - truth) ** 2)))
            errors["ml"].append(n * float(np.sum((ml.frequencies - truth) ** 2)))
    return errors


def _cli(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "mechdesign", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"mechdesign {args[0]} failed: {done.stderr.strip()}")


def simulate_chain(name: str, x: np.ndarray, size: int, lifetime: float, report: float, keys: int,
                   seed: int) -> dict[str, list[float]]:
    """n·SSE per period of a chain (permanent layer once per person and key, fresh reports each period)."""
    from multi_freq_ldpy.estimators.Histogram_estimator import IBU

    chain = longitudinal_protocol(name, size, lifetime, report)
    p_star, q_star = chain.support
    n = x.size
    truth = np.bincount(x, minlength=size) / n
    rng = np.random.default_rng(seed)
    channel = np.full((size, size), q_star)
    np.fill_diagonal(channel, p_star)
    errors: dict[str, list[float]] = {"unbiased": [], "ibu": []}
    for _ in range(keys):
        if name == "l-grr":  # GRR: keep the value with p, else a uniform other one
            keep = rng.random(n) < chain.p1
            other = (x + rng.integers(1, size, n)) % size
            permanent = np.where(keep, x, other)
        else:  # unary: bit x with p₁, every other bit with q₁
            permanent = rng.random((n, size)) < chain.q1
            permanent[np.arange(n), x] = rng.random(n) < chain.p1
        for _ in range(PERIODS):
            if name == "l-grr":
                keep = rng.random(n) < chain.p2
                other = (permanent + rng.integers(1, size, n)) % size
                counts = np.bincount(np.where(keep, permanent, other), minlength=size).astype(np.float64)
            else:  # each bit kept with p₂ if set, raised with q₂ if not
                bits = np.where(permanent, rng.random((n, size)) < chain.p2, rng.random((n, size)) < chain.q2)
                counts = bits.sum(axis=0).astype(np.float64)
            unbiased = (counts / n - q_star) / (p_star - q_star)
            ibu = IBU(size, channel, counts / counts.sum(), IBU_ITERATIONS, IBU_TOL, "max_abs")
            errors["unbiased"].append(n * float(np.sum((unbiased - truth) ** 2)))
            errors["ibu"].append(n * float(np.sum((ibu - truth) ** 2)))
    return errors


def _mean_se(values: list[float]) -> tuple[float, float]:
    """The mean over every period, and its standard error across keys: the T periods of one key share the
    permanent draws, so only the keys' means are independent."""
    means = [statistics.fmean(values[k:k + PERIODS]) for k in range(0, len(values), PERIODS)]
    return statistics.fmean(values), statistics.stdev(means) / math.sqrt(len(means)) if len(means) > 1 else math.nan


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attributes", nargs="*", default=list(ATTRIBUTES))
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per design (default 300)")
    parser.add_argument("--keys", type=int, default=6, help="memoization keys per cell, T = 5 periods each")
    parser.add_argument("--repeats", type=int, default=1,
                        help="designs per cell: the table shows the median run's value with [min, max] (default 1)")
    parser.add_argument("--repeat-attributes", nargs="*", default=None,
                        help="attributes designed --repeats times (default: all); the others once")
    parser.add_argument("--table", action="store_true", help="only rewrite the table from results/two_layer.json")
    parser.add_argument("--unlinked-from-results", action="store_true",
                        help="take the link ε = ∞ column from results/two_layer.json instead of designing it again "
                             "(the memoized single-layer design, which the joint design does not change)")
    parser.add_argument("--cells", nargs="*", default=None, metavar="ATTRIBUTE:LIFETIME:REPORT",
                        help="only these cells, their rows merged into results/two_layer.json (docstring)")
    args = parser.parse_args()
    if args.table:
        print(table(read_rows("two_layer")))
        return
    cells = None if args.cells is None else [_cell(text) for text in args.cells]
    previous = _previous_protocol(args) if cells is not None else None
    carried = {(r["attribute"], r["epsilon_lifetime"], r["epsilon_report"]): r for r in read_rows("two_layer")} \
        if args.unlinked_from_results else {}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for a_index, attribute in enumerate(args.attributes):
            from mechdesign.design import load_problem

            problem = load_problem(PROBLEMS / f"{ATTRIBUTES[attribute]}.toml").problem
            size = problem.size
            x = records(attribute, problem.prior.labels)
            for b_index, (lifetime, report) in enumerate(BUDGETS):
                if cells is not None and (attribute, lifetime, report) not in cells:
                    continue
                chains = {name: longitudinal_protocol(name, size, lifetime, report) for name in LONGITUDINAL}
                link = min(chain.link_epsilon for chain in chains.values())
                repeats = args.repeats if args.repeat_attributes is None or attribute in args.repeat_attributes \
                    else 1
                path, info, runs = median_design(attribute, lifetime, report, link, args.time_limit, repeats)
                if carried:
                    old = carried[(attribute, lifetime, report)]
                    free = {"report_mse_factor_fixed_records": old["unlinked_mse"],
                            "time_limit": old.get("unlinked_time_limit", 300.0)}
                else:
                    _, free = design_file(attribute, lifetime, report, math.inf, args.time_limit)
                ours = simulate_file(path, attribute, args.keys, Path(scratch))
                theirs = {name: simulate_chain(name, x, size, lifetime, report, args.keys,
                                               SEED + 1000 * a_index + 10 * b_index + i)
                          for i, name in enumerate(LONGITUDINAL)}
                best = min(chains, key=lambda name: chains[name].mse)
                best_ibu = min(theirs, key=lambda name: statistics.fmean(theirs[name]["ibu"]))
                row: dict[str, Any] = {
                    "attribute": attribute, "size": size, "epsilon_lifetime": lifetime, "epsilon_report": report,
                    "link_budget": link, "lifetime_epsilon": info["lifetime_epsilon"],
                    "report_epsilon": info["report_epsilon"], "link_epsilon": info["link_epsilon"],
                    "two_layer_mse": info["report_mse_factor_fixed_records"], "two_layer_mse_runs": runs,
                    "two_layer_mse_min": min(runs), "two_layer_mse_max": max(runs),
                    "single_layer_bound": info["single_layer_bound"], "bound_status": info["bound_status"],
                    "ratio_to_bound": info["ratio"], "target": info["single_layer_at_link_mse"],
                    "method": info["method"], "permanent_outputs": info["permanent_outputs"],
                    "report_outputs": info["report_outputs"], "design_cpu_seconds": info["cpu_seconds"],
                    "design_wall_seconds": info["wall_seconds"], "design_load": info["load"][0],
                    "unlinked_mse": free["report_mse_factor_fixed_records"],
                    "unlinked_time_limit": free["time_limit"], "design_time_limit": info["time_limit"],
                    "candidates": info["candidates"],
                    "periods": len(ours["unbiased"])}
                row["simulated_unbiased"], row["simulated_unbiased_se"] = _mean_se(ours["unbiased"])
                row["simulated_ml"], row["simulated_ml_se"] = _mean_se(ours["ml"])
                for name in LONGITUDINAL:
                    key = name.replace("-", "_")
                    row[key] = chains[name].mse
                    row[f"{key}_link"] = chains[name].link_epsilon
                    row[f"{key}_simulated"], row[f"{key}_simulated_se"] = _mean_se(theirs[name]["unbiased"])
                    row[f"{key}_ibu"], row[f"{key}_ibu_se"] = _mean_se(theirs[name]["ibu"])
                row["best_chain"], row["best_chain_mse"] = best, chains[best].mse
                row["best_chain_ibu"], row["best_chain_ibu_mse"] = best_ibu, statistics.fmean(theirs[best_ibu]["ibu"])
                row["lead"] = chains[best].mse / row["two_layer_mse"]
                row["lead_post_processed"] = row["best_chain_ibu_mse"] / row["simulated_ml"]
                row["target_lead"] = chains[best].mse / row["target"]
                row["equal_chain"], row["equal_chain_mse"] = _equal_chain(problem.ball, lifetime, report, link)
                row["equal_lead"] = row["equal_chain_mse"] / row["two_layer_mse"]
                row["link_bound"] = link_bound(problem.prior.probabilities, link).bound \
                    if size <= MAX_LINK_BOUND_SIZE else None
                row["why"] = _why(row)
                rows.append(row)
                print(f"{attribute:>15} ({lifetime:g}, {report:g}) link {link:.4g}: two-layer "
                      f"{row['two_layer_mse']:.4g} (sim {row['simulated_unbiased']:.4g} ± "
                      f"{row['simulated_unbiased_se']:.2g}, ML {row['simulated_ml']:.4g}); bound "
                      f"{row['single_layer_bound']:.4g}, target {row['target']:.4g}, "
                      f"link ∞ {row['unlinked_mse']:.4g} | best chain {best} {chains[best].mse:.4g} (IBU {best_ibu} "
                      f"{row['best_chain_ibu_mse']:.4g}) | lead {row['lead']:.2f}× / {row['lead_post_processed']:.2f}×",
                      flush=True)
    if previous is not None and cells is not None:
        path = _merged(previous, rows, cells)
    else:
        path = write_results("two_layer", rows, keys=args.keys, periods=PERIODS, time_limit=args.time_limit,
                             repeats=args.repeats, repeat_attributes=args.repeat_attributes or list(ATTRIBUTES),
                             load=list(os.getloadavg()))
    print(f"wrote {path}")
    print(table(read_rows("two_layer")))  # every row of the file, the merged ones included


def _cell(text: str) -> tuple[str, float, float]:
    """``ATTRIBUTE:LIFETIME:REPORT`` as a cell of the table, or exit with a one-line error naming the rule."""
    parts = text.split(":")
    budgets = {(f"{lifetime:g}", f"{report:g}"): (lifetime, report) for lifetime, report in BUDGETS}
    if len(parts) != 3 or parts[0] not in ATTRIBUTES or (parts[1], parts[2]) not in budgets:
        cells = ", ".join(f"{a}:{life:g}:{rep:g}" for a in ATTRIBUTES for life, rep in BUDGETS)
        raise SystemExit(f"cells must be among {cells}, got cells={text!r}")
    return (parts[0], *budgets[(parts[1], parts[2])])


def _previous_protocol(args: argparse.Namespace) -> dict[str, Any]:
    """results/two_layer.json, refused (exit) when this run's protocol differs from it: one table, one protocol."""
    previous: dict[str, Any] = json.loads((RESULTS / "two_layer.json").read_text())
    for name in ("time_limit", "repeats", "keys"):
        if previous.get(name) != getattr(args, name):
            raise SystemExit(f"{name} must equal results/two_layer.json's ({previous.get(name)!r}) to merge cells, "
                             f"got {name}={getattr(args, name)!r}")
    return previous


def _merged(previous: dict[str, Any], rows: list[dict[str, Any]], cells: list[tuple[str, float, float]]) -> Path:
    """results/two_layer.json with ``rows`` in place of the old rows of their cells, the others as they were."""
    fresh = {(r["attribute"], r["epsilon_lifetime"], r["epsilon_report"]): r for r in rows}
    merged = [fresh.pop((r["attribute"], r["epsilon_lifetime"], r["epsilon_report"]), r) for r in previous["rows"]]
    merged += list(fresh.values())
    extra = {key: value for key, value in previous.items() if key not in ("benchmark", "machine", "rows", "rerun")}
    reruns = [*previous.get("rerun", []), {"cells": [list(cell) for cell in cells], "load": list(os.getloadavg()),
                                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]
    return write_results("two_layer", merged, **extra, rerun=reruns)


def _why(row: dict[str, Any]) -> str:
    """The measured reason a cell's lead at equal three levels is below 2× (empty when it is not).

    First a proof where one exists: every report of a two-layer design with link level λ is λ-LDP, so the
    certified λ-LDP bound (:mod:`mechdesign.design.two_layer._link_bound`, N ≤ 10) bounds every design; if the
    chain is within 2× of it, no design reaches 2×. Otherwise the measured split: the single-layer design at the
    per-report and link budgets (a design's value) against the chain, and what the permanent layer costs on top.
    """
    chain = row["equal_chain_mse"]
    if row["equal_lead"] >= 2.0:
        return ""
    bound = row.get("link_bound")
    if bound is not None and chain / bound < 2.0:
        level = f"{row['link_budget']:.3g}"
        return (f"proven: a design at link ε {level} has {level}-LDP reports, and every {level}-LDP mechanism has "
                f"n·MSE ≥ {significant(bound)} (certified): the chain is only {chain / bound:.2f}× above it")
    if chain / row["target"] < 2.0:
        return (f"the single-layer design at the per-report and link budgets is itself only "
                f"{chain / row['target']:.2f}× below the chain")
    why = (f"the single-layer design at the per-report and link budgets leads {chain / row['target']:.2f}×; the "
           f"permanent layer at the lifetime budget costs {row['two_layer_mse'] / row['target']:.2f}× more")
    starts = _random_starts(row)
    if starts is not None:  # bench_two_layer_starts.py: the joint search from random permanent layers
        why += (f"; from {starts['starts']} random permanent layers the joint search ends at "
                f"{significant(starts['best'])} to {significant(starts['worst'])}, none at or below the "
                f"{significant(starts['needed_for_2x'])} 2× needs (a search, not a proof)")
    return why


def _random_starts(row: dict[str, Any]) -> dict[str, Any] | None:
    """The summary of results/two_layer_starts.json for the row's cell at its link budget, if it was run."""
    path = RESULTS / "two_layer_starts.json"
    if not path.exists():
        return None
    saved = json.loads(path.read_text())
    cell = f"{row['attribute']}:{row['epsilon_lifetime']:g}:{row['epsilon_report']:g}"
    found = [s for s in saved["summary"] if s["cell"] == cell]
    runs = [r for r in saved["rows"] if f"{r['attribute']}:{r['epsilon_lifetime']:g}:{r['epsilon_report']:g}" == cell]
    if not found or any(r["link_budget"] != row["link_budget"] for r in runs):
        return None
    return found[0]


def _equal_chain(ball: Any, lifetime: float, report: float, link: float) -> tuple[str, float]:
    """The best chain at the design's three levels: L-GRR, L-OSUE and L-SUE recalibrated for PML over the file's
    ball with p₂ capped by the link budget (:mod:`mechdesign.design.two_layer._calibrated`,
    ``bench_two_layer_calibrated.py``), and its unbiased n·MSE."""
    from mechdesign.design.two_layer._calibrated import calibrated_chain

    chains = {name: calibrated_chain(name, ball, lifetime, report, link) for name in LONGITUDINAL}
    best = min(chains, key=lambda name: chains[name].mse)
    return best, chains[best].mse


def _at_design_levels(row: dict[str, Any]) -> str:
    """The best chain at the design's three levels (:func:`_equal_chain`) and our lead over it."""
    if "equal_chain" not in row:  # results written before the column was stored
        from mechdesign.design import load_problem

        ball = load_problem(PROBLEMS / f"{ATTRIBUTES[row['attribute']]}.toml").problem.ball
        row = {**row, **dict(zip(("equal_chain", "equal_chain_mse"), _equal_chain(
            ball, row["epsilon_lifetime"], row["epsilon_report"], row["link_budget"]), strict=True))}
    mse = row["equal_chain_mse"]
    return f"{row['equal_chain'].upper()} {significant(mse)} ({mse / row['two_layer_mse']:.2f}×)"


def _spread(row: dict[str, Any]) -> str:
    """`` [min, max] of R runs`` after a median of several designs (nothing for one run)."""
    runs = row.get("two_layer_mse_runs", [])
    if len(runs) < 2:
        return ""
    return f" [{significant(min(runs))}, {significant(max(runs))} of {len(runs)}]"


def table(rows: list[dict[str, Any]]) -> str:
    """The docs' table (results/two_layer_table.csv and .md): one period's n·MSE at equal three levels."""
    cells = [[f"{r['attribute']} ({r['size']})", f"({r['epsilon_lifetime']:g}, {r['epsilon_report']:g})",
              f"{r['link_budget']:.3g}",
              f"{significant(r['two_layer_mse'])}{_spread(r)} (×{r['ratio_to_bound']:.2f}; sim. "
              f"{significant(r['simulated_unbiased'])} / ML {significant(r['simulated_ml'])})",
              significant(r["target"]), significant(r["unlinked_mse"]),
              f"{r['best_chain'].upper()} {significant(r['best_chain_mse'])} "
              f"(IBU {significant(r['best_chain_ibu_mse'])})",
              f"{r['lead']:.2f}× / {r['lead_post_processed']:.2f}×",
              (_why(r) if "equal_lead" in r else r["why"]) or "—", _at_design_levels(r)]
             for r in rows]
    return write_table("two_layer", ["attribute (N)", "(lifetime ε, per-report ε)", "link ε (smallest chain's)",
                                     "two-layer ε-PML design: n·MSE exact, median of R runs [min, max of R] "
                                     "(÷ certified bound; simulated unbiased / ML)",
                                     "single-layer design at the per-report and link ε", "link ε = ∞ (memoized)",
                                     "best chain, unbiased (its IBU, simulated)",
                                     "lead: unbiased / post-processed",
                                     "below 2× at equal three levels: measured reason",
                                     "best chain at the design's three levels, PML-calibrated (our lead)"], cells)


if __name__ == "__main__":
    main()

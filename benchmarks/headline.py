"""The README's headline results, and the figures the documentation quotes, generated from the benchmarks' results.

One row per claim: the task (data and budget), what mechdesign does (the estimator and the privacy notion named),
what it is compared with (idem), the side information each side's decoder is given, what was measured (formulas,
in-memory runs or whole processes), the measured result, and the results file it is read from. No row compares a
decoder given the file's ball with one that is not. Every number is computed here from ``benchmarks/results/*.json``;
rerunning a benchmark and then this script updates the table.

Figures quoted in the documentation's prose are written as Sphinx substitutions (``|name|``) into
``benchmarks/results/figures.rst``, which ``docs/conf.py`` puts in front of every page (``rst_prolog``):
the prose then never holds a number typed by hand. ``tests/test_docs_figures.py`` checks that the table and the
substitutions are what this script writes from the results files today.

Run: ``python benchmarks/headline.py`` → ``benchmarks/results/headline_table.{csv,md}`` and ``figures.rst``, and
the README's headline table replaced by the Markdown one (``tests/test_readme.py`` checks that the README quotes it
verbatim); the docs' performance page includes the CSV.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _common import RESULTS, read_rows, significant

ORACLES = {"grr", "oue", "olh", "subset_selection", "hadamard"}


def _range(values: list[float]) -> str:
    return f"{min(values):.2f}–{max(values):.2f}×"


def _lead(values: list[float]) -> str:
    """A range of ratios (the peers' n·MSE / mechdesign's), saying where the peers' error is the lower one."""
    below = sum(v < 1 for v in values)
    if not below:
        return f"{_range(values)} lower n·MSE"
    return (f"the peers' n·MSE ÷ mechdesign's: {_range(values)} (below 1, the peers' mean the lower, in {below} of "
            f"{len(values)} cells)")


def _peers_summary() -> tuple[dict, list[dict], str]:
    summary = json.loads((RESULTS / "peers.json").read_text())
    cells = summary["summary"]
    adult = [c["dataset"] for c in sorted(cells, key=lambda c: c["size"]) if not c["dataset"].startswith("zipf")]
    zipf = " and Zipf counts" if any(c["dataset"].startswith("zipf") for c in cells) else ""
    epsilons = ", ".join(f"{e:g}" for e in dict.fromkeys(c["epsilon"] for c in cells))
    task = (f"frequencies decoded from the same records (Adult {', '.join(dict.fromkeys(adult))}{zipf}; N = "
            f"{min(c['size'] for c in cells)} to {max(c['size'] for c in cells)}; ε = {epsilons}; "
            f"{summary['repetitions']} privatizations a cell")
    return summary, cells, task


def peers() -> list[str]:
    summary, cells, task = _peers_summary()
    version = summary["peer_versions"]["multi-freq-ldpy"]
    return [f"{task}; data at P̂, at the ball's edge and 1.25 β from P̂)",
            "A-optimal ε-PML design over the ball; `decode`'s default `linear` (projected onto the simplex) / "
            "`--method ml`",
            f"multi-freq-ldpy {version}'s ε-LDP oracles (GRR, SS, SUE, OUE, OLH), each cell's best with MI, IBU, "
            "the projection or mechdesign's ML on their reports",
            f"`linear`: {_lead([c['lead linear'] for c in cells])}; `ml`: {_lead([c['lead ml'] for c in cells])}",
            "peers"]


def peers_ball() -> list[str]:
    summary, cells, task = _peers_summary()
    inside = [c for c in cells if c["data"] != "outside"]
    outside = [c for c in cells if c["data"] == "outside"]
    version = summary["peer_versions"]["multi-freq-ldpy"]
    result = _lead([c["lead ml within ball"] for c in inside])
    if outside:
        result += f"; data 1.25 β from P̂: {_lead([c['lead ml within ball'] for c in outside])}"
    return [f"{task}; data at P̂ and at the ball's edge)",
            "A-optimal ε-PML design over the ball; `decode --method ml --within-ball`",
            f"multi-freq-ldpy {version}'s ε-LDP oracles' reports decoded by the same ML within the same ball, each "
            "cell's best oracle", result, "peers"]


def _calibrated(problem: str, epsilon: float) -> object:
    """The best ε-LDP oracle calibrated to a problem file's ball at ``epsilon`` (calibrated-baselines.md §1–2)."""
    from mechdesign.design import load_problem
    from mechdesign.design.baselines import best_calibrated

    loaded = load_problem(RESULTS.parents[1] / "problems" / f"{problem}.toml").problem
    return best_calibrated(loaded.prior, epsilon, loaded.radius)


def estimation() -> list[str]:
    rows = read_rows("estimation")
    ratios, same, attributes = [], [], []
    for cell in dict.fromkeys((r["attribute"], r["epsilon"]) for r in rows):
        found = [r for r in rows if (r["attribute"], r["epsilon"]) == cell]
        design = next(r["mse_factor"] for r in found if r["mechanism"] == "pml_aopt")
        same.append(min(r["mse_factor"] for r in found if r["mechanism"] in ORACLES) / design)
        ratios.append(_calibrated(f"adult-{cell[0]}-estimation", cell[1]).mse / design)  # type: ignore[attr-defined]
        attributes.append(cell[0])
    epsilons = ", ".join(f"{e:g}" for e in dict.fromkeys(r["epsilon"] for r in rows))
    return [f"frequencies of one Adult attribute ({', '.join(dict.fromkeys(attributes))}; ε = {epsilons}, δ = 1e-6)",
            "A-optimal ε-PML design over the ball, efficient linear decoder",
            "best ε-LDP frequency oracle (GRR, OUE, OLH, SS, HR) calibrated to the ball (the same guarantee: the "
            "largest ε₀ at which it is ε-PML over it), its own estimator",
            f"{_range(ratios)} lower n·MSE (against the best oracle at ε, a stronger guarantee: {_range(same)})",
            "estimation"]


def native_country() -> list[str]:
    row = next(r for r in read_rows("estimation_priced_master") if r["epsilon"] == 1.0)
    peer = _calibrated("adult-native-country-estimation", 1.0)
    return [f"frequencies of {row['size']} categories (Adult native-country, ε = 1, {row['time_limit']:g} s)",
            f"A-optimal ε-PML design over the ball by the priced engine, efficient linear decoder: n·MSE "
            f"{significant(row['value_median'])}, certified within {row['relative_gap_median']:.1%}",
            f"{peer.name.replace('_', ' ')} calibrated to the ball (ε₀ = {peer.epsilon0:.3g}: the same "  # type: ignore[attr-defined]
            f"guarantee), the best ε-LDP oracle, its own estimator: {significant(peer.mse)}",  # type: ignore[attr-defined]
            f"{peer.mse / row['value_median']:.2f}× lower n·MSE", "estimation_priced_master"]  # type: ignore[attr-defined]


_LARGE = ("zipf", "english")  # the grid's large-alphabet problems, zipf-N and english-N


def _kind(task: str) -> str:
    """A grid task's kind: "zipf" for zipf-1000, "english" for english-10000, the name itself for Adult's."""
    return task.split("-")[0]


def large() -> list[str]:
    """The large alphabets at ε = 1: the grid's cells from N = 1,000 on (``design_grid.json``, issue 60)."""
    rows = sorted((r for r in read_rows("design_grid") if "error" not in r and r["epsilon"] == 1.0
                   and r["N"] >= 1_000 and _kind(r["task"]) in _LARGE), key=lambda r: r["nmse"])
    sizes = sorted({r["N"] for r in rows})
    gaps = [100 * r["gap"] for r in rows]
    limits = sorted({r["time_limit_s"] for r in rows})
    families = ", ".join(sorted({r["calibrated_family"].replace("_", " ") for r in rows}))
    same = ", ".join(sorted({r["same_family"].replace("_", " ") for r in rows}))
    return [f"frequencies of {sizes[0]:,} to {sizes[-1]:,} categories (Zipf counts and English words, ε = 1; "
            f"the whole design command at a {limits[0]:g}–{limits[-1]:g} s limit)",
            f"symmetric A-optimal ε-PML design over the ball (a structured file), efficient linear decoder: n·MSE "
            f"{significant(rows[0]['nmse'])} to {significant(rows[-1]['nmse'])}, certified within "
            f"{min(gaps):.0f}–{max(gaps):.0f} %",
            f"the best ε-LDP oracle calibrated to the ball ({families}, items on rows in frequency order; the same "
            f"guarantee), its own estimator: {significant(min(r['calibrated_nmse'] for r in rows))} to "
            f"{significant(max(r['calibrated_nmse'] for r in rows))}",
            f"{_range([r['calibrated_ratio'] for r in rows])} lower n·MSE (against {same} at ε, a stronger "
            f"guarantee: {_range([r['same_ratio'] for r in rows])})",
            "design_grid"]


def records() -> list[str]:
    ratios = []
    for r in read_rows("records_mse"):
        ldp = [r["spl_mse"], r["smp_mse"], r["rsfd_mse"], *([r["ldp_joint_mse"]] if r["ldp_joint_mse"] ==
                                                            r["ldp_joint_mse"] else [])]
        ratios.append(min(ldp) / min(r["product_mse"], r["joint_mse"], r["sampled_mse"]))
    return ["marginals of whole records (Adult race, sex and race, sex, education; record-level ε = 0.5, 1, 2)",
            "best of the product, joint and attribute-sampled ε-PML designs over the joint ball, efficient decoders",
            "best ε-LDP record protocol (SPL, SMP, RS+FD; best oracle per attribute, its own estimator) or ε-LDP "
            "joint design (efficient decoder)",
            f"{_range(ratios)} lower n·MSE", "records_mse"]


def repeated() -> list[str]:
    rows = read_rows("releases")
    last = max(r["releases"] for r in rows)
    fresh = next(r for r in rows if r["design"] == "adult-race-estimation" and r["kind"] == "fresh"
                 and r["releases"] == last)
    memo = next(r for r in rows if r["design"] == "adult-race-estimation" and r["kind"] == "memoized"
                and r["releases"] == last)
    return [f"{last} reports of one unchanged value (the quick start's design, ε = 1)",
            "memoized releases (a keyed pseudo-random function of user and value): the account over the ball",
            "the same design drawn afresh each time (exact account, certified bound)",
            f"{memo['epsilon']:.3f} vs {fresh['epsilon']:.1f} nats (T·ε = {last} is no bound under PML)", "releases"]


def two_layer() -> list[str]:
    rows = read_rows("two_layer")
    equal = {(r["attribute"], r["epsilon_lifetime"], r["epsilon_report"]): r for r in read_rows("two_layer_calibrated")}
    attributes = ", ".join(dict.fromkeys(r["attribute"] for r in rows))
    best = sorted({equal[_cell(r)]["best_at_table_levels"].upper() for r in rows})
    at_levels = [dict(r, lead=equal[_cell(r)]["lead_at_table_levels"]) for r in rows]
    return [f"one period of a longitudinal collection (Adult {attributes}; lifetime, per-report and linkability ε)",
            "two-layer ε-PML design (memoized W₁, fresh W₂) at the smallest chain's link level, efficient decoder",
            "best of L-GRR, L-OSUE, L-SUE (RAPPOR), their unbiased estimators: at the same three levels (p₂ capped by "
            f"the link level; {' and '.join(best)} best in every cell), and at the same lifetime and per-report "
            "levels with each chain's own link level",
            f"at the same three levels: {_two_layer_result(at_levels, reasons=False)}. At each chain's own (looser) "
            f"link level: {_two_layer_result(rows)}", "two_layer"]


def _cell(row: dict) -> tuple:
    return (row["attribute"], row["epsilon_lifetime"], row["epsilon_report"])


def _two_layer_result(rows: list[dict], reasons: bool = True) -> str:
    """The lead where it holds (≥ 2×, issue 45's target), the cells below it and behind, with the reason's split."""

    def span(group: list[dict]) -> str:  # a factor above 1 either way: the lead, or how much higher ours is
        factors = [r["lead"] if r["lead"] >= 1.0 else 1.0 / r["lead"] for r in group]
        low, high = min(factors), max(factors)
        return f"{low:.3g}×" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g}–{high:.3g}×"

    def cells(group: list[dict]) -> str:
        return ", ".join(f"{r['attribute']} ({r['epsilon_lifetime']:g}, {r['epsilon_report']:g})" for r in group)

    groups = [([r for r in rows if r["lead"] >= 2.0], "lower n·MSE"),
              ([r for r in rows if 1.0 <= r["lead"] < 2.0], "lower, below 2×"),
              ([r for r in rows if r["lead"] < 1.0], "higher n·MSE")]
    parts = [f"{span(group)} {what} in {len(group)} of {len(rows)} cells ({cells(group)})"
             for group, what in groups if group]
    short = [r for r in rows if r["lead"] < 2.0]
    if short and reasons:
        capped = sum(r["target_lead"] < 2.0 for r in short)
        parts.append(f"below 2×, the single-layer design at the per-report and link budgets is itself within 2× of "
                     f"the chain in {capped} of {len(short)}; in the rest the permanent layer costs the difference")
    return "; ".join(parts)


def privatize() -> list[str]:
    rows = [r for r in read_rows("privatize") if r["N"] == 16]
    ours = next(r for r in rows if r["method"] == "mechdesign table (secure AES-CTR)")
    numpy = next(r for r in rows if r["method"] == "numpy inverse-CDF (seeded PCG64)")
    peer = next(r for r in rows if r["method"].startswith("multi-freq-ldpy"))
    rate = ours["records_per_second"]
    return ["privatizing 10⁷ records in memory (k-RR, N = 16, one core; no start-up, no file)",
            f"exact 2⁻⁶⁴ table sampler, secure AES-CTR stream: {rate / 1e6:.0f} M records/s",
            f"numpy inverse-CDF {numpy['records_per_second'] / 1e6:.1f} M/s; multi-freq-ldpy's client "
            f"{peer['records_per_second'] / 1e6:.1f} M/s",
            f"{rate / numpy['records_per_second']:.0f}× / {rate / peer['records_per_second']:.0f}× faster", "privatize"]


def _speed(kind: str, mode: str) -> tuple[dict, dict]:
    rows = [r for r in read_rows("speed_peers") if r["format"] == kind and r["mode"] == mode]
    return (next(r for r in rows if r["side"] == "mechdesign"), next(r for r in rows if r["side"] != "mechdesign"))


def _large() -> str:
    """mechdesign alone on the large Parquet files (the column alone, and user ids with it), if measured."""
    if not (RESULTS / "speed_peers_large.json").exists():
        return ""
    rows = read_rows("speed_peers_large")
    row = next(r for r in rows if r["columns"] == "race" and r["mode"] == "plain")
    ids = next((r for r in rows if r["columns"] == "id,race" and r["mode"] == "plain"), None)
    with_ids = f", {ids['records_per_cpu_second'] / 1e6:.1f} M with user ids" if ids else ""
    return (f"; alone on {row['records']:,} records of Parquet (the column alone): "
            f"{row['records_per_cpu_second'] / 1e6:.1f} M records per CPU second{with_ids}")


def speed() -> list[str]:
    ours, peer = _speed("csv", "plain")
    memo, peer_memo = _speed("csv", "memoized")
    parquet, peer_parquet = _speed("parquet", "plain")
    memo_parquet, peer_memo_parquet = _speed("parquet", "memoized")
    repeats = json.loads((RESULTS / "speed_peers.json").read_text())["repeats"]
    return [f"privatizing {ours['records']:,} records of a table, each side one whole process (start-up, read, "
            f"privatize, write; median of {repeats} runs)",
            f"`mechdesign privatize` (the file re-verified, data check, secure AES-CTR stream): "
            f"{ours['cpu_median']:.2f} s CPU from CSV, {parquet['cpu_median']:.2f} s from Parquet; memoized two-layer "
            f"file {memo['cpu_median']:.2f} s (CSV), {memo_parquet['cpu_median']:.2f} s (Parquet){_large()}",
            f"a script with multi-freq-ldpy's GRR client per record, pandas reading and writing: "
            f"{peer['cpu_median']:.2f} s CSV, {peer_parquet['cpu_median']:.2f} s Parquet; L-GRR with a memo table "
            f"{peer_memo['cpu_median']:.2f} s (CSV), {peer_memo_parquet['cpu_median']:.2f} s (Parquet)",
            f"{peer['cpu_median'] / ours['cpu_median']:.0f}× less CPU (CSV), "
            f"{peer_parquet['cpu_median'] / parquet['cpu_median']:.0f}× (Parquet), "
            f"{peer_memo['cpu_median'] / memo['cpu_median']:.0f}× (memoized CSV), "
            f"{peer_memo_parquet['cpu_median'] / memo_parquet['cpu_median']:.0f}× (memoized Parquet)", "speed_peers"]


def sparse() -> list[str]:
    rows = {r["method"]: r for r in read_rows("sparse")}
    ratio = rows["csh-tighter-quad"]["threshold"] / rows["gshm-exact"]["threshold"]
    # k is a user's keys for GSHM and every histogram's keys for CSH: one k serves both only where a user may touch
    # every key ([S]'s setting), so the row says so (docs/howto/calibrate.rst, mechdesign.noise.sparse._contributions).
    return [f"sparse histogram threshold where a user may touch every key (k = {rows['gshm-exact']['k']:,} keys per "
            "user and keys in all, [S]'s setting; ε = 0.349, δ = 1e-5, (ε, δ)-DP)",
            "correlated stability histogram (CSH, Theorem 12 with the proven C4*, exact new-key integral)",
            "Gaussian sparse histogram mechanism (GSHM), exact analysis",
            f"{ratio:.2f}× the threshold (only there: with few keys per user, GSHM at a user's k is lower)", "sparse"]


FORMULAS = "exact n·MSE of both estimators (formulas)"


@dataclass(frozen=True)
class Row:
    """One row of the headline table: a function reading its results file, and the conditions of the comparison.

    ``cells`` returns [task, mechdesign, compared with, result, results file stem]; ``side_information`` is what
    each side's decoder is given (no row compares a decoder given the ball with one that is not) and ``measured``
    the process boundary (formulas, in-memory runs or whole processes). A new row is one more entry of ``ROWS``.
    """

    cells: Callable[[], list[str]]
    side_information: str
    measured: str


ROWS = [
    Row(estimation, "none on either side", f"{FORMULAS}; 50 privatizations agree"),
    Row(peers, "none on either side", "in memory: the same records privatized and decoded by each library's code"),
    Row(peers_ball, "the file's ball, given to both decoders",
        "in memory: the same records privatized and decoded by each library's code"),
    Row(native_country, "none on either side", FORMULAS),
    Row(large, "none on either side", FORMULAS),
    Row(records, "none on either side", FORMULAS),
    Row(two_layer, "none on either side", FORMULAS),
    Row(repeated, "— (a privacy account)", "the exact account over the ball (certified), both sides"),
    Row(speed, "— (sampling)", "whole processes, CPU time of the process tree, the two sides alternating"),
    Row(privatize, "— (sampling)", "in memory, one core, after start-up, both sides"),
    Row(sparse, "— (a calibration)", "exact analyses, both sides"),
]

HEADER = ["task", "mechdesign", "compared with", "side information", "measured", "result", "results file"]


PEER_HEADER = ["problem", "N", "ε", "lead over the best peer of the same guarantee", "that peer (ε₀)",
               "lead over the best oracle at ε", "certified gap"]


def _lead_cell(row: dict, side: str) -> str:
    """An oracle's n·MSE over the design's; "tie" where both are 0 (the identity is ε-PML: nothing to estimate)."""
    if row["nmse"] == 0 and row[f"{side}_nmse"] == 0:
        return "tie"
    ratio = row[f"{side}_ratio"]
    return "∞×" if ratio == float("inf") else f"{ratio:.2f}×"


def peer_table_files() -> dict[Path, str]:
    """The short table: each grid cell's lead over the best ε-LDP oracle calibrated to the ball (the same guarantee)
    and over the best at the same ε (a stronger one), from ``design_grid.json`` (benchmarks/bench_design_grid.py)."""
    rows = [r for r in read_rows("design_grid") if "error" not in r]
    # Zipf counts by N, then the English words by N, then the rest (Adult's attributes) in the file's order
    rows.sort(key=lambda r: (_LARGE.index(_kind(r["task"])), r["N"]) if _kind(r["task"]) in _LARGE
              else (len(_LARGE), 0))
    cells = []
    for r in rows:
        level = r["calibrated_epsilon0"]
        level = "∞" if level in ("inf", float("inf")) else f"{float(level):.3g}"
        gap = r["gap"] if r["gap"] == r["gap"] else None  # NaN: a dense engine's bound not reported
        cells.append([r["task"], f"{r['N']:,}", f"{r['epsilon']:g}", _lead_cell(r, "calibrated"),
                      f"{r['calibrated_family'].replace('_', ' ')} ({level})", _lead_cell(r, "same"),
                      "—" if gap is None else f"{100 * gap:.1f} %"])
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([PEER_HEADER, *cells])
    # the README's form: a row a problem, a column an ε, each cell the lead over the same guarantee's best peer and,
    # in brackets, over the best oracle at ε
    epsilons = sorted({r["epsilon"] for r in rows})
    header = ["problem", "N", *(f"ε = {e:g}" for e in epsilons)]
    lines = []
    for task in dict.fromkeys(r["task"] for r in rows):
        found = {r["epsilon"]: r for r in rows if r["task"] == task}
        lines.append([task, f"{next(iter(found.values()))['N']:,}",
                      *(f"{_lead_cell(found[e], 'calibrated')} ({_lead_cell(found[e], 'same')})" if e in found
                        else "—" for e in epsilons)])
    markdown = "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                          *("| " + " | ".join(row) + " |" for row in lines)]) + "\n"
    return {RESULTS / "peer_table.csv": buffer.getvalue(), RESULTS / "peer_table.md": markdown}


def table_files() -> dict[Path, str]:
    """The headline table as CSV (the docs include it) and Markdown (the README quotes it)."""
    cells, links = [], []
    for row in ROWS:
        task, ours, theirs, result, name = row.cells()
        conditions = [task, ours, theirs, row.side_information, row.measured, result]
        cells.append([*conditions, f"benchmarks/results/{name}.csv"])
        links.append([*conditions, f"[{name}.csv](benchmarks/results/{name}.csv)"])
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([HEADER, *cells])
    markdown = "\n".join(["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER),
                          *("| " + " | ".join(row) + " |" for row in links)]) + "\n"
    return {RESULTS / "headline_table.csv": buffer.getvalue(), RESULTS / "headline_table.md": markdown}


# ----------------------------------------------------------------------------------------- figures for the docs
def _count(items: list[str]) -> str:
    """'SS + IBU (9 cells), OLH + ML (3 cells)': each value and how often, most frequent first."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return ", ".join(f"{k} ({v} cell{'s' if v > 1 else ''})" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def _ratio_range(values: list[float]) -> str:
    return f"{min(values):.2f}–{max(values):.2f}"


def peers_figures() -> dict[str, str]:
    """The figures the decode how-to and the performance page quote from results/peers.json."""
    summary, cells, _ = _peers_summary()
    by_data = {d: [c for c in cells if c["data"] == d] for d in ("prior", "edge", "outside")}
    inside = by_data["prior"] + by_data["edge"]

    def better(first: str, second: str, group: list[dict]) -> int:
        """Cells where ``first`` has a lower mean than ``second`` by more than two standard errors of the difference."""
        return sum(c[second] - c[first] > 2 * (c[f"{first} se"] ** 2 + c[f"{second} se"] ** 2) ** 0.5 for c in group)

    out = {
        "peers-repetitions": str(summary["repetitions"]), "peers-cells": str(len(cells)),
        "peers-version": summary["peer_versions"]["multi-freq-ldpy"],
        "peers-lead-linear": _range([c["lead linear"] for c in cells]),
        "peers-lead-ml": _range([c["lead ml"] for c in cells]),
        "peers-lead-ball": _range([c["lead ml within ball"] for c in inside]),
        "peers-lead-ball-outside": _range([c["lead ml within ball"] for c in by_data["outside"]]),
        "peers-no-side-best": _count([c["peer_no_side_decoder"] for c in cells]),
        "peers-ball-best": _count([c["peer_ball_decoder"] for c in cells]),
        "peers-ml-better": str(better("ml", "linear", cells)),
        "peers-linear-better": str(better("linear", "ml", cells)),
    }
    for dataset in dict.fromkeys(c["dataset"] for c in cells):  # the leads by attribute
        mine = [c for c in cells if c["dataset"] == dataset]
        out[f"lead-linear-{dataset}"] = _range([c["lead linear"] for c in mine])
        out[f"lead-ball-{dataset}"] = _range([c["lead ml within ball"] for c in mine if c["data"] != "outside"])
        # what the post-processing to the simplex gains: unbiased n·MSE / post-processed n·MSE, each side's best
        out[f"simplex-gain-peers-{dataset}"] = _ratio_range([c["peer_unbiased"] / c["peer_no_side"] for c in mine])
        out[f"simplex-gain-linear-{dataset}"] = _ratio_range([c["linear (unprojected)"] / c["linear"] for c in mine])
    worst = max(cells, key=lambda c: c["ml"] / c["linear"])
    out["ml-over-linear-worst"] = (f"{worst['ml'] / worst['linear']:.2f}× ({worst['dataset']}, ε = "
                                   f"{worst['epsilon']:g}, data {worst['data']})")
    for data, group in by_data.items():  # what the ball buys (and costs) mechdesign's decoder, by data set
        out[f"ball-over-linear-{data}"] = _ratio_range([c["linear"] / c["ml within ball"] for c in group])
        out[f"ball-better-{data}"] = str(better("ml within ball", "linear", group))
        out[f"ball-worse-{data}"] = str(better("linear", "ml within ball", group))
        out[f"cells-{data}"] = str(len(group))
    return out


def speed_figures() -> dict[str, str]:
    """The figures of the whole-process benchmark (results/speed_peers*.json)."""
    out = {}
    for name, tag in (("speed_peers", "speed"), ("speed_peers_before", "speed-before")):
        if not (RESULTS / f"{name}.json").exists():
            continue
        saved = json.loads((RESULTS / f"{name}.json").read_text())
        rows = saved["rows"]
        loads = [x for r in rows for x in (r["load_before"], r["load_after"])]
        out[f"{tag}-records"] = f"{rows[0]['records']:,}"
        out[f"{tag}-load"] = f"{min(loads):.1f}–{max(loads):.1f}"
        out[f"{tag}-repeats"] = str(saved["repeats"])
        out[f"{tag}-numpy"] = saved.get("versions", {}).get("numpy", "not recorded")
        for kind in ("csv", "parquet"):
            for mode in ("plain", "memoized"):
                ours = next(r for r in rows if (r["format"], r["mode"], r["side"]) == (kind, mode, "mechdesign"))
                peer = next(r for r in rows if (r["format"], r["mode"]) == (kind, mode) and r["side"] != "mechdesign")
                out[f"{tag}-{kind}-{mode}"] = f"{ours['cpu_median']:.2f}"
                out[f"{tag}-{kind}-{mode}-peer"] = f"{peer['cpu_median']:.2f}"
                out[f"{tag}-{kind}-{mode}-ratio"] = f"{peer['cpu_median'] / ours['cpu_median']:.1f}×"
    if (RESULTS / "speed_peers_large.json").exists():
        for row in read_rows("speed_peers_large"):
            tag = f"speed-large-{row['columns'].replace(',', '-')}-{row['mode']}"
            out[tag] = f"{row['records_per_cpu_second'] / 1e6:.1f}"
            out[f"{tag}-cpu"] = f"{row['cpu_median']:.1f}"
            low, high = sorted((row["load_before"], row["load_after"]))
            out[f"{tag}-load"] = f"{low:.1f}–{high:.1f}"
            out["speed-large-records"] = f"{row['records']:,}"
        # Rows kept from an earlier run (``--merge``) carry their own repeats; the page quotes the race row's.
        race = next(r for r in read_rows("speed_peers_large") if (r["columns"], r["mode"]) == ("race", "plain"))
        out["speed-large-repeats"] = str(race.get("repeats", json.loads(
            (RESULTS / "speed_peers_large.json").read_text())["repeats"]))
    return out


def stage_figures() -> dict[str, str]:
    """The Parquet copy and privatize taken apart (results/parquet_stages.json, results/privatize_stages.json)."""
    out: dict[str, str] = {}
    if (RESULTS / "parquet_stages.json").exists():
        rows = read_rows("parquet_stages")
        ns = {(r["stage"], r["columns"], r["option"]): r["ns_per_record"] for r in rows}
        ids = [r["ns_per_record"] for r in rows if r["stage"] == "read" and r["columns"] == "id"]
        out["stage-records"] = f"{rows[0]['records']:,}"
        out["stage-repeats"] = str(rows[0]["repeats"])
        out["stage-load"] = f"{min(r['load'] for r in rows):.1f}–{max(r['load'] for r in rows):.1f}"
        out["stage-read-id"] = f"{ns['read', 'id', 'iter_batches 2^20 id alone']:.1f}"
        out["stage-read-id-options"] = f"{min(ids):.1f}–{max(ids):.1f}"
        out["stage-read-race"] = f"{ns['read', 'race', 'iter_batches 2^20 column alone']:.1f}"
        out["stage-read-id-none"] = f"{ns['read-back', 'id', 'plain NONE']:.1f}"
        out["stage-read-id-delta"] = f"{ns['read-back', 'id', 'delta Snappy (privatize)']:.1f}"
        out["stage-write-id-delta"] = f"{ns['write', 'id', 'delta Snappy (privatize)']:.1f}"
        plain = [v for (stage, column, option), v in ns.items() if stage == "write" and column == "id"
                 and not option.startswith("delta")]
        out["stage-write-id-plain"] = f"{min(plain):.1f}–{max(plain):.1f}"
        delta = [v for (stage, column, option), v in ns.items() if stage == "write" and column == "id"
                 and option.startswith("delta")]
        out["stage-write-id-deltas"] = f"{min(delta):.1f}–{max(delta):.1f}"
        codec = [r["ns_per_record"] for r in rows if r["stage"] == "codec" and r["columns"] == "id"]
        out["stage-codec-id"] = f"{codec[0]:.1f}" if codec else "not measured"
        out["stage-write-race"] = f"{ns['write', 'race', 'NONE, no statistics (privatize)']:.1f}"
        out["stage-write-race-snappy"] = f"{ns['write', 'race', 'Snappy (privatize before)']:.1f}"
        out["stage-copy"] = f"{ns['copy', 'id,race', next(o for (s, _, o) in ns if s == 'copy')]:.1f}"
    if (RESULTS / "privatize_stages.json").exists():
        rows = read_rows("privatize_stages")
        out["privatize-stages-records"] = f"{rows[0]['records']:,}"
        out["privatize-stages-repeats"] = str(rows[0]["repeats"])
        loads = [x for r in rows for x in (r["load_before"], r["load_after"])]
        out["privatize-stages-load"] = f"{min(loads):.1f}–{max(loads):.1f}"
        for r in rows:
            tag = re.sub(r"[^a-z]+", "-", f"{r['mode']} {r['stage']}".lower()).strip("-")
            out[f"stage-{tag}"] = f"{r['ns_per_record']:.1f}"
    return out


def two_layer_figures() -> dict[str, str]:
    """The repeated-collection how-to's figures from results/two_layer*.json: the cells where the 2× target is met
    (at equal three levels, and at the chains' own link levels), the designs' repeats and load."""
    saved = json.loads((RESULTS / "two_layer.json").read_text())
    rows = saved["rows"]
    equal = {(r["attribute"], r["epsilon_lifetime"], r["epsilon_report"]): r for r in read_rows("two_layer_calibrated")}
    loads = [r["design_load"] for r in rows]
    merge = json.loads((RESULTS / "two_layer_merge.json").read_text())
    merged = {}
    for cell in dict.fromkeys((r["epsilon_lifetime"], r["epsilon_report"]) for r in merge["rows"]):
        runs = [r for r in merge["rows"] if (r["epsilon_lifetime"], r["epsilon_report"]) == cell]
        tag = f"{cell[0]:g}-{cell[1]:g}"
        merged[f"two-layer-merge-{tag}-before"] = significant(next(r for r in runs if r["outputs"] ==
                                                                   r["engine_outputs"])["w2_mse"])
        merged[f"two-layer-merge-{tag}-after"] = significant(next(r for r in runs if r["outputs"] ==
                                                                  2 * min(x["outputs"] for x in runs))["w2_mse"])
    merged["two-layer-merge-seconds"] = f"{merge['reports_seconds']:g}"
    starts = json.loads((RESULTS / "two_layer_starts.json").read_text())  # bench_two_layer_starts.py
    for s in starts["summary"]:
        tag = s["cell"].replace(":", "-")
        merged |= {f"two-layer-starts-{tag}-count": str(s["starts"]),
                   f"two-layer-starts-{tag}-best": significant(s["best"]),
                   f"two-layer-starts-{tag}-worst": significant(s["worst"]),
                   f"two-layer-starts-{tag}-design": significant(s["design_mse"]),
                   f"two-layer-starts-{tag}-needed": significant(s["needed_for_2x"]),
                   f"two-layer-starts-{tag}-seconds": f"{starts['seconds']:g}"}
    return {**merged, "two-layer-met-at-levels": str(sum(equal[_cell(r)]["lead_at_table_levels"] >= 2.0 for r in rows)),
            "two-layer-met-own-link": str(sum(r["lead"] >= 2.0 for r in rows)),
            "two-layer-cells": str(len(rows)), "two-layer-repeats": str(saved.get("repeats", 1)),
            "two-layer-load": f"{min(loads):.1f}–{max(loads):.1f}"}


def figures_file() -> dict[Path, str]:
    """``benchmarks/results/figures.rst``: one Sphinx substitution per figure the documentation's prose quotes."""
    figures = {**peers_figures(), **speed_figures(), **stage_figures(), **two_layer_figures()}
    lines = [".. Generated by benchmarks/headline.py from benchmarks/results/*.json: do not edit.", ""]
    lines += [f".. |{name}| replace:: {value}" for name, value in figures.items()]
    return {RESULTS / "figures.rst": "\n".join(lines) + "\n"}


def render() -> dict[Path, str]:
    """Every file this script writes, and its content, from today's results (tests/test_docs_figures.py)."""
    return {**table_files(), **peer_table_files(), **figures_file()}


README = RESULTS.parents[1] / "README.md"


def readme_with_table(text: str, table: str, columns: list[str] | None = None) -> str:
    """The README with a table (the run of table lines starting at the header of ``columns``, the headline's by
    default) replaced by ``table``."""
    lines = text.splitlines(keepends=True)
    header = "| " + " | ".join((columns or HEADER)[:2]) + " |"
    start = next((i for i, line in enumerate(lines) if line.startswith(header)), None)
    if start is None:
        raise SystemExit(f"README.md has no headline table (a line starting {header!r})")
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "".join([*lines[:start], table, *lines[end:]])


def main() -> None:
    files = render()
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    table = files[RESULTS / "headline_table.md"]
    text = readme_with_table(README.read_text(encoding="utf-8"), table)
    text = readme_with_table(text, files[RESULTS / "peer_table.md"], ["problem", "N"])
    README.write_text(text, encoding="utf-8")
    print(table)


if __name__ == "__main__":
    main()

"""Decoding against the peers' own code at equal side information (issues 40 and 44): multi-freq-ldpy beside mechdesign.

The same records are privatized by multi-freq-ldpy 0.2.5 (Arcolezi et al., the LDP frequency oracles GRR, SS,
SUE, OUE and OLH, each record through the library's own ``*_Client`` function; :mod:`_peers`) and by an A-optimal
mechdesign design (:class:`~mechdesign.deploy.sampling.Privatizer`, the sampler behind ``mechdesign
privatize``). Every comparison is made at **equal side information**:

* **none on either side** (the CLI's default): the peers' reports decoded by the library's aggregators — ``MI``
  (the unbiased estimate clipped at 0 and renormalised) and ``IBU`` (the iterative Bayesian update, the library's
  defaults: 10 000 iterations, tolerance 1e-12) — by the Euclidean projection of the unbiased estimate onto the
  simplex (Norm-Sub of Wang et al., NDSS 2020) and by mechdesign's certified maximum likelihood over the simplex
  run on the peer's reports (:func:`_peers.peer_channel`); against mechdesign's ``decode --method linear``
  (projected) and ``--method ml`` on the design's outputs;
* **the ball on both sides**: the peers' reports decoded by the same maximum likelihood restricted to the design
  file's ball B_β(P̂) (:func:`mechdesign.deploy.analysis.maximum_likelihood` with ``ball``), against
  ``decode --method ml --within-ball`` on the design's outputs. The ball is the PML guarantee's own assumption
  (``privatize`` refuses data outside it unless told otherwise); it is side information, and a decoder given it
  is compared only with decoders given it.

Data: Adult race (5), education (16), native-country (42), all 48 842 records (and, with ``--datasets zipf-64``,
the Zipf N = 64 table of problems/zipf-64.toml); ε ∈ {0.5, 1, 2} nats. Three data sets per attribute, to measure
what the ball costs when data leave it: the records themselves (their frequencies are the design's prior P̂), the
records **at the ball's edge** (⌊nβ/2⌋ records of the most frequent category relabelled, in turn, to each of the
others: ℓ1 distance ≤ β from P̂, within 2/n of the edge) and **just outside it** (⌊1.25 nβ/2⌋ records moved: ℓ1
distance 1.25 β, which ``privatize``'s data check refuses).

Designs: ``estimation_mse`` (A-optimal) at δ = 1e-6 from problems/adult-*-estimation.toml and problems/zipf-64.toml,
``solve(time_limit=60)``, cached in benchmarks/designs/peers/ (ignored by git; the table states each file's
sha256 prefix, its value tr J⁻¹ − 1 and the certified lower bound; a rerun without the cache designs again).

Metric: n × Σ_x (p̂_x − f_x)² against the records' frequencies f (fixed records: only the mechanisms' coins are
random), ``--repetitions`` seeded repetitions (numpy SeedSequence per (data set, ε) and repetition; the peers'
clients draw from NumPy's global state and numba's, both seeded from it), mean ± standard error and median. A
repetition privatizes the records once and draws again only those moved to the edge or outside (common random
numbers across the three data sets: each is still privatized by the same client, record by record). The first
repetition of each cell also runs the library's complete aggregators (``*_Aggregator_MI`` and ``*_Aggregator_IBU``
on the reports) and checks that they return exactly what ``MI``/``IBU`` return on the support counts computed here,
and that the channel's support pattern gives the same support counts.

Run: ``python benchmarks/bench_peers.py [--repetitions 20] [--workers 2]`` (needs ``pip install
mechdesign[bench]``); results in benchmarks/results/peers.{json,csv,md} and peers_table.csv.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import hashlib
import json
import math
import sys
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import _peers as peers  # noqa: E402
from _common import RESULTS, write_results  # noqa: E402

DATASETS = {"race": "adult-race-estimation", "education": "adult-education-estimation",
            "native-country": "adult-native-country-estimation", "zipf-64": "zipf-64"}
EPSILONS = (0.5, 1.0, 2.0)
DATA = ("prior", "edge", "outside")
MOVES = {"prior": 0.0, "edge": 1.0, "outside": 1.25}   # ℓ1 distance from P̂ in radii (module docstring)
DESIGN_LIMIT = 60.0
SEED = 20260040
DESIGNS = ROOT / "benchmarks" / "designs" / "peers"
ML_TOL, ML_ITERATIONS = 1e-10, 10_000  # decode --method ml's defaults (estimate_frequencies)
ML_GAP_REFUSED = 1e-8   # a peer's ML fit left further below its maximum than this (nats per record) stops the run
WORST_GAP = [0.0]       # the largest certified gap of the peers' ML fits in this process's current cell
MECHDESIGN = ("linear (unprojected)", "linear", "ml", "ml within ball")


# ---------------------------------------------------------------------------------------------------- designs
def design_file(dataset: str, epsilon: float) -> Path:
    """The cached A-optimal design of one cell (designed with a 60-s limit when missing)."""
    from mechdesign import load_problem, solve

    path = DESIGNS / f"{dataset}-eps{epsilon:g}.mech.json"
    if not path.exists():
        DESIGNS.mkdir(parents=True, exist_ok=True)
        source = ROOT / "problems" / f"{DATASETS[dataset]}.toml"
        problem = load_problem(source).problem.with_(epsilon=epsilon, utility="estimation_mse")
        solve(problem, baselines=False, time_limit=DESIGN_LIMIT).save(path, problem_file=source)
    return path


def records(dataset: str, labels: tuple[str, ...]) -> np.ndarray:
    """The records as codes into ``labels`` (Adult: all 48 842; Zipf: the problem file's counts)."""
    if dataset == "zipf-64":
        counts = tomllib.loads((ROOT / "problems" / "zipf-64.toml").read_text())["data"]["counts"]
        return np.repeat(np.arange(len(counts)), counts)
    from mechdesign import load_adult
    from mechdesign.deploy._io import encode_labels

    return encode_labels(load_adult([dataset])[dataset], labels)


def moved(x: np.ndarray, prior: np.ndarray, radius: float, factor: float) -> np.ndarray:
    """⌊n·factor·β/2⌋ records of the most frequent category relabelled in turn to the others (ℓ1 move ≤ factor·β)."""
    top = int(np.argmax(prior))
    others = np.array([i for i in range(prior.size) if i != top])
    count = math.floor(x.size * factor * radius / 2)
    out = x.copy()
    out[np.flatnonzero(x == top)[:count]] = others[np.arange(count) % others.size]
    return out


# ------------------------------------------------------------------------------------------------------ decoders
def maximum_likelihood(matrix: np.ndarray, counts: np.ndarray, ball: Any = None) -> np.ndarray:
    """mechdesign's certified ML (``decode --method ml [--within-ball]``'s solver and stopping rule) on any channel."""
    from mechdesign.deploy.analysis import maximum_likelihood as fit

    result = fit(matrix, counts, None if ball is None else ball.center.probabilities, ball=ball, tol=ML_TOL,
                 max_iterations=ML_ITERATIONS)
    # The certificate bounds what the fit leaves below the maximum, per record. A fit stopped by the iteration cap
    # slightly above ML_TOL changes no error measured here (n · gap nats in all); its gap is reported, a larger one
    # refused.
    if not result.gap <= ML_GAP_REFUSED:
        raise RuntimeError(f"ML did not reach its certificate: gap {result.gap}")
    WORST_GAP[0] = max(WORST_GAP[0], float(result.gap))
    return result.frequencies


def mechdesign_estimates(mechanism: Any, counts: np.ndarray, ball: Any) -> dict[str, np.ndarray]:
    """mechdesign's decoders at the file's prior (``decode --method linear|ml [--within-ball]``)."""
    from mechdesign.deploy.analysis import estimate_frequencies

    linear = estimate_frequencies(mechanism, counts, "linear", reference=ball.center.probabilities)
    ml = estimate_frequencies(mechanism, counts, "ml", replicates=0)  # the errors' bootstrap is not measured here
    inside = estimate_frequencies(mechanism, counts, "ml", ball=ball, replicates=0)
    return {"linear (unprojected)": linear.unbiased, "linear": linear.frequencies, "ml": ml.frequencies,
            "ml within ball": inside.frequencies}


def peer_decodings(name: str, reports: list[Any], size: int, epsilon: float, ball: Any,
                   check: bool) -> dict[str, Any]:
    """One privatization's reports by the peer's client, decoded by every decoder (``check``: the first repetition)."""
    counts = peers.peer_counts(name, reports, size, epsilon)
    estimates = peers.peer_estimates(name, counts, len(reports), size, epsilon)
    if check:
        peers.check_aggregators(name, reports, size, epsilon, estimates)
    if check and not np.array_equal(peers.supports(name, reports, size, epsilon).sum(axis=0), counts):
        raise RuntimeError(f"{name}: the channel's supports do not give the library's support counts")
    matrix, seen = peers.peer_channel(name, reports, size, epsilon)
    estimates["ML"] = maximum_likelihood(matrix, seen)
    estimates["ML within ball"] = maximum_likelihood(matrix, seen, ball)
    return estimates


# ------------------------------------------------------------------------------------------------------- cells
def peers_cache(dataset: str, epsilon: float, repetitions: int) -> list[list[Any]] | None:
    """The peers' errors of a cell from a run with at least ``repetitions`` repetitions and the same seed, if any.

    Repetition r's coins depend on (seed, data set, ε, r) alone, so the first ``repetitions`` of a longer run are
    exactly what a run of ``repetitions`` draws: the cache of the longest such run, cut to its first ones.
    """
    runs = {int(path.stem.split("-r")[-1].split("-s")[0]): path
            for path in DESIGNS.glob(f"peers3-{dataset}-eps{epsilon:g}-r*-s{SEED}.json")}
    longest = max((r for r in runs if r >= repetitions), default=None)
    if longest is None:
        return None
    return [[*key, values[:repetitions]] for *key, values in json.loads(runs[longest].read_text())]


def run_cell(dataset: str, epsilon_index: int, repetitions: int) -> list[dict[str, Any]]:
    """Every estimator's error on one (dataset, ε) cell, for each of its data sets.

    The data sets differ only in the records moved to the edge or outside, so each repetition privatizes the
    records themselves once and draws again only the moved ones (common random numbers: every data set's reports are
    still one privatization of its records by the same client, and the coins of the records they share are shared).
    """
    from mechdesign.core import L1Ball
    from mechdesign.deploy.sampling import Privatizer
    from mechdesign.mechfile import read_mechanism_file

    start = time.process_time()
    WORST_GAP[0] = 0.0
    epsilon = EPSILONS[epsilon_index]
    path = design_file(dataset, epsilon)
    loaded = read_mechanism_file(path)
    mechanism = loaded.mechanism
    prior = np.asarray(loaded.guarantee["prior"], dtype=np.float64)
    radius = float(loaded.guarantee["radius"])
    ball = L1Ball(prior, radius)
    base = records(dataset, mechanism.inputs)
    sets = {data: moved(base, prior, radius, MOVES[data]) for data in DATA}
    changed = {data: np.flatnonzero(x != base) for data, x in sets.items()}
    size, n = prior.size, base.size
    truth = {data: np.bincount(x, minlength=size) / n for data, x in sets.items()}
    errors: dict[tuple[str, str, str], list[float]] = {}
    sampler = Privatizer(mechanism)
    # The peers' errors are kept beside the designs (they cost most of the run): a rerun with the same repetitions
    # measures only mechdesign's decoders again.
    cache = DESIGNS / f"peers3-{dataset}-eps{epsilon:g}-r{repetitions}-s{SEED}.json"
    cached = peers_cache(dataset, epsilon, repetitions)
    for r in range(repetitions):
        sequence = np.random.SeedSequence([SEED, list(DATASETS).index(dataset), epsilon_index, r])
        peer_seed, ours_seed = sequence.spawn(2)
        if cached is None:
            peers.seed_peers(int(peer_seed.generate_state(1)[0]))
            for name in peers.PEERS:
                common = peers.peer_reports(name, base, size, epsilon)
                for data, x in sets.items():
                    reports = list(common)
                    for i, report in zip(changed[data], peers.peer_reports(name, x[changed[data]], size, epsilon),
                                         strict=True):
                        reports[i] = report
                    for label, estimate in peer_decodings(name, reports, size, epsilon, ball, r == 0).items():
                        errors.setdefault((data, f"peer {label}", name), []).append(
                            n * float(np.sum((estimate - truth[data]) ** 2)))
        rng = np.random.default_rng(ours_seed)
        common_outputs = sampler.sample_indices(base, rng)
        for data, x in sets.items():
            outputs = common_outputs.copy()
            outputs[changed[data]] = sampler.sample_indices(x[changed[data]], rng)
            counts = np.bincount(outputs, minlength=mechanism.shape[1])
            for label, estimate in mechdesign_estimates(mechanism, counts, ball).items():
                errors.setdefault((data, "mechdesign", label), []).append(
                    n * float(np.sum((estimate - truth[data]) ** 2)))
    if cached is None:
        cache.write_text(json.dumps([[*key, values] for key, values in errors.items() if key[1] != "mechdesign"]))
    else:
        errors |= {(data, family, name): values for data, family, name, values in cached}
    cpu = time.process_time() - start
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    utility = loaded.utility or {}
    rows = []
    for (data, family, estimator), values in errors.items():
        v = np.asarray(values)
        rows.append({"dataset": dataset, "size": size, "epsilon": epsilon, "data": data, "records": n,
                     "radius": radius, "l1_from_prior": float(np.abs(truth[data] - prior).sum()), "family": family,
                     "estimator": estimator, "mean": float(v.mean()),
                     "standard_error": float(v.std(ddof=1) / np.sqrt(v.size)), "median": float(np.median(v)),
                     "q05": float(np.quantile(v, 0.05)), "q95": float(np.quantile(v, 0.95)), "repetitions": v.size,
                     "design": path.name, "design_sha256": digest, "design_value": utility.get("value"),
                     "design_lower_bound": utility.get("lower_bound"), "cell_cpu_seconds": round(cpu, 1),
                     "peers_from_cache": cached is not None,
                     "peer_ml_worst_gap": None if cached is not None else WORST_GAP[0]})
    return rows


# ------------------------------------------------------------------------------------------------------ tables
NO_SIDE = ("peer MI", "peer IBU", "peer projection", "peer ML")   # the peers' decoders given nothing
BALL = ("peer ML within ball",)                                   # given the file's ball


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per cell: at each level of side information, the peers' best (oracle, decoder) and mechdesign's."""
    cells: dict[tuple[str, float, str], list[dict[str, Any]]] = {}
    for row in rows:
        cells.setdefault((row["dataset"], row["epsilon"], row["data"]), []).append(row)
    out = []
    for (dataset, epsilon, data), group in cells.items():
        def best(families: tuple[str, ...], group: list[dict[str, Any]] = group) -> dict[str, Any]:
            return min((r for r in group if r["family"] in families), key=lambda r: r["mean"])

        unbiased, post, inside = best(("peer unbiased",)), best(NO_SIDE), best(BALL)
        ours = {r["estimator"]: r for r in group if r["family"] == "mechdesign"}
        line = {"dataset": dataset, "size": group[0]["size"], "epsilon": epsilon, "data": data,
                "l1_from_prior": group[0]["l1_from_prior"], "radius": group[0]["radius"],
                "design": f"{group[0]['design']} ({group[0]['design_sha256']})",
                "peer_unbiased": unbiased["mean"], "peer_unbiased_se": unbiased["standard_error"],
                "peer_unbiased_oracle": unbiased["estimator"],
                "peer_no_side": post["mean"], "peer_no_side_se": post["standard_error"],
                "peer_no_side_decoder": f"{post['estimator']} + {post['family'].removeprefix('peer ')}",
                "peer_ball": inside["mean"], "peer_ball_se": inside["standard_error"],
                "peer_ball_decoder": f"{inside['estimator']} + ML within ball"}
        for label in MECHDESIGN:
            line[label] = ours[label]["mean"]
            line[f"{label} se"] = ours[label]["standard_error"]
        line["lead linear"] = post["mean"] / ours["linear"]["mean"]
        line["lead ml"] = post["mean"] / ours["ml"]["mean"]
        line["lead ml within ball"] = inside["mean"] / ours["ml within ball"]["mean"]
        line["repetitions"] = group[0]["repetitions"]
        out.append(line)
    return out


HEADER = ["data set (N), ε, data (ℓ1 from P̂ / β)",
          "no side information: peers' best (oracle + decoder)", "mechdesign linear", "mechdesign ml",
          "lead: linear / ml",
          "ball on both sides: peers' best (oracle + ML within ball)", "mechdesign ml within ball",
          "lead: within ball", "design (sha256)"]


def table_cells(s: dict[str, Any]) -> list[str]:
    """One line of the table (markdown and CSV alike)."""
    return [f"{s['dataset']} ({s['size']}), {s['epsilon']:g}, {s['data']} ({s['l1_from_prior'] / s['radius']:.2f})",
            f"{s['peer_no_side']:.3g} ± {s['peer_no_side_se']:.2g} ({s['peer_no_side_decoder']})",
            f"{s['linear']:.3g} ± {s['linear se']:.2g}", f"{s['ml']:.3g} ± {s['ml se']:.2g}",
            f"{s['lead linear']:.2f}× / {s['lead ml']:.2f}×",
            f"{s['peer_ball']:.3g} ± {s['peer_ball_se']:.2g} ({s['peer_ball_decoder']})",
            f"{s['ml within ball']:.3g} ± {s['ml within ball se']:.2g}", f"{s['lead ml within ball']:.2f}×",
            s["design"]]


def markdown(lines: list[dict[str, Any]], note: str) -> str:
    """The results table (benchmarks/results/peers.md)."""
    head = "| " + " | ".join(HEADER) + " |\n" + "|---" * len(HEADER) + "|\n"
    return head + "".join("| " + " | ".join(table_cells(s)) + " |\n" for s in lines) + "\n" + note + "\n"


def compose_note(rows: list[dict[str, Any]], repetitions: int, seconds: float, load: str, workers: int) -> str:
    """The table's footnote: metric, repetitions, versions, designs, CPU per cell, load."""
    from importlib.metadata import version

    cells = {(r["dataset"], r["epsilon"]): r for r in rows}.values()
    # A cell whose peers' errors came from the cache spent CPU on mechdesign's decoders alone: not counted.
    cell_cpu = sorted(r["cell_cpu_seconds"] for r in cells if not r.get("peers_from_cache", False)) or [math.nan]
    cached = sum(r.get("peers_from_cache", False) for r in cells)
    return (f"n × Σ (p̂ − f)² against the records' frequencies, mean ± standard error over {repetitions} seeded "
            f"repetitions; lead = the peers' best mean / mechdesign's mean at the same side information (the best "
            f"of 20 noisy means without side information, of 5 with the ball, is biased low: the peers are "
            f"favoured). multi-freq-ldpy {version('multi-freq-ldpy')}, numba {version('numba')}, xxhash "
            f"{version('xxhash')}; designs: estimation_mse, 60-s limit, benchmarks/designs/peers/ (sha256 prefix in "
            f"the last column). CPU per (data set, ε), its three data sets together (time.process_time, both sides): "
            f"median "
            f"{cell_cpu[len(cell_cpu) // 2]:.0f} s, range {cell_cpu[0]:.0f}–{cell_cpu[-1]:.0f} s"
            f"{f' (not counting the {cached} whose peers came from the cache)' if cached else ''}; {workers} "
            f"workers, {seconds / 60:.0f} min wall, load average {load} on 2 cores (shared machine). "
            f"{gap_note(rows)}")


def gap_note(rows: list[dict[str, Any]]) -> str:
    """The worst certificate of the peers' ML fits measured in this run (a cached cell met ML_TOL or stopped)."""
    gaps = [r["peer_ml_worst_gap"] for r in rows if r.get("peer_ml_worst_gap") is not None]
    if not gaps or max(gaps) <= ML_TOL:
        return f"Every ML fit on the peers' reports met its certificate (gap ≤ {ML_TOL:g} nats per record)."
    return (f"ML fits on the peers' reports: largest certified gap {max(gaps):.1e} nats per record (the tolerance "
            f"{ML_TOL:g} not reached within {ML_ITERATIONS:,} iterations by some fits; they are kept below "
            f"{ML_GAP_REFUSED:g}).")


def table_csv(lines: list[dict[str, Any]]) -> str:
    """The same table as CSV (docs/howto/decode.rst and docs/performance.rst include it with ``csv-table``)."""
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([HEADER, *(table_cells(s) for s in lines)])
    return buffer.getvalue()


def write_tables(name: str, lines: list[dict[str, Any]], note: str) -> None:
    """benchmarks/results/<name>.md (markdown, with the note) and <name>_table.csv."""
    (RESULTS / f"{name}.md").write_text(markdown(lines, note))
    (RESULTS / f"{name}_table.csv").write_text(table_csv(lines))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--datasets", nargs="+", default=["race", "education", "native-country"],
                        choices=list(DATASETS))
    parser.add_argument("--name", default="peers", help="results file stem in benchmarks/results/")
    parser.add_argument("--tables-only", action="store_true",
                        help="rewrite the markdown and CSV tables from benchmarks/results/<name>.json")
    args = parser.parse_args(argv)
    if args.tables_only:
        saved = json.loads((RESULTS / f"{args.name}.json").read_text())
        lines = summary(saved["rows"])
        write_tables(args.name, lines, saved["note"])
        print(markdown(lines, saved["note"]))
        return
    from importlib.metadata import version

    for dataset in args.datasets:  # design serially first: the cells then only read the cache
        for epsilon in EPSILONS:
            design_file(dataset, epsilon)
    start = time.perf_counter()
    cells = [(d, e) for d in args.datasets for e in range(len(EPSILONS))]
    cells.sort(key=lambda c: -{"zipf-64": 4, "native-country": 3, "education": 2, "race": 1}[c[0]])
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for cell in pool.map(run_cell, *zip(*cells, strict=True), [args.repetitions] * len(cells)):
            rows.extend(cell)
            print(f"{cell[0]['dataset']} ε={cell[0]['epsilon']:g}: {cell[0]['cell_cpu_seconds']} s CPU", flush=True)
    lines = summary(rows)
    seconds = time.perf_counter() - start
    note = compose_note(rows, args.repetitions, seconds, f"{os.getloadavg()[0]:.1f}", args.workers)
    write_results(args.name, rows, summary=lines, seed=SEED, repetitions=args.repetitions, note=note,
                  workers=args.workers,
                  peer_versions={"multi-freq-ldpy": version("multi-freq-ldpy"), "numba": version("numba"),
                                 "xxhash": version("xxhash")}, total_seconds=round(seconds, 1))
    write_tables(args.name, lines, note)
    print(markdown(lines, note))


if __name__ == "__main__":
    main()

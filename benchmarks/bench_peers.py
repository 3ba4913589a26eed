"""Decoding against the peers' own code (issue 40, item 3): multi-freq-ldpy's clients and aggregators beside mechdesign.

The same records are privatized by multi-freq-ldpy 0.2.5 (Arcolezi et al., the LDP frequency oracles GRR, SS,
SUE, OUE and OLH, each record through the library's own ``*_Client`` function) and by an A-optimal mechdesign
design (:class:`~mechdesign.deploy.sampling.sampler.Privatizer`, the sampler behind ``mechdesign privatize``), and
decoded by the library's aggregators — ``MI`` (the unbiased estimate clipped at 0 and renormalised: Wang et al.,
NDSS 2020, "Norm-Mul") and ``IBU`` (the iterative Bayesian update, Agrawal & Aggarwal PODS 2001, with the library's
defaults: 10 000 iterations, tolerance 1e-12 on max |Δp|, uniform start) — and by mechdesign's decoders
(:func:`mechdesign.deploy.analysis.decode.estimate_frequencies`, the API behind ``mechdesign decode``): the
efficient linear decoder at the file's prior before and after the simplex projection (``linear``; the projection is
Norm-Sub of Wang et al. 2020), the constrained maximum-likelihood decoder (``ml``) and the same within the file's
ball (``ml --within-ball``). The peers' unbiased estimate ``(support count − n q*)/(n (p* − q*))`` is computed
from the support counts the aggregators use, with the library's own p* and q*.

Data: Adult race (5), education (16), native-country (42), all 48 842 records, and a Zipf table with N = 64
(problems/zipf-64.toml, m = 100 000 records); ε ∈ {0.5, 1, 2} nats. Two data sets per attribute: the records
themselves (their frequencies are the design's prior P̂) and the records **moved to the edge of the ball**:
⌊n β/2⌋ records of the most frequent category relabelled, in turn, to each of the others, so that the records'
frequencies sit at ℓ1 distance ≤ β from P̂, within ``1/n`` of the ball's edge (the mechanism file's radius β).

Designs: ``estimation_mse`` (A-optimal) at δ = 1e-6 from problems/adult-*-estimation.toml and problems/zipf-64.toml,
``solve(time_limit=60)``, cached in benchmarks/designs/peers/ (ignored by git; the table states each file's
sha256 prefix, its value tr J⁻¹ − 1 and the certified lower bound; a rerun without the cache designs again).

Metric: n × Σ_x (p̂_x − f_x)² against the records' frequencies f (fixed records: only the mechanisms' coins are
random), ``--repetitions`` seeded repetitions (numpy SeedSequence per cell and repetition; the peers' clients draw
from NumPy's global state and numba's, both seeded from it), mean ± standard error and median. The first
repetition of each cell also runs the library's complete aggregators (``*_Aggregator_MI`` and ``*_Aggregator_IBU``
on the reports) and checks that they return exactly what ``MI``/``IBU`` return on the support counts computed here.

Run: ``python benchmarks/bench_peers.py [--repetitions 50] [--workers 2]`` (needs ``pip install
mechdesign[bench]``); results in benchmarks/results/peers.{json,csv,md}.
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

from _common import RESULTS, write_results  # noqa: E402

DATASETS = {"race": "adult-race-estimation", "education": "adult-education-estimation",
            "native-country": "adult-native-country-estimation", "zipf-64": "zipf-64"}
EPSILONS = (0.5, 1.0, 2.0)
DATA = ("prior", "edge")
PEERS = ("GRR", "SS", "SUE", "OUE", "OLH")
DESIGN_LIMIT = 60.0
SEED = 20260040
DESIGNS = ROOT / "benchmarks" / "designs" / "peers"
IBU_ITERATIONS, IBU_TOL = 10_000, 1e-12  # the library's defaults


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
    from mechdesign.datasets import load_adult
    from mechdesign.deploy._io import encode_labels

    return encode_labels(load_adult([dataset])[dataset], labels)


def moved_to_edge(x: np.ndarray, prior: np.ndarray, radius: float) -> np.ndarray:
    """⌊nβ/2⌋ records of the most frequent category relabelled in turn to the others (ℓ1 move 2⌊nβ/2⌋/n ≤ β)."""
    top = int(np.argmax(prior))
    others = np.array([i for i in range(prior.size) if i != top])
    moved = math.floor(x.size * radius / 2)
    out = x.copy()
    out[np.flatnonzero(x == top)[:moved]] = others[np.arange(moved) % others.size]
    return out


# ------------------------------------------------------------------------------------------------------ peers
def _seed_peers(seed: int) -> None:
    """The library's clients draw from NumPy's global state (plain Python) and numba's (jitted): seed both."""
    from numba import njit

    @njit(cache=False)
    def seed_numba(value: int) -> None:
        np.random.seed(value)  # noqa: NPY002 (numba's own state, which the jitted clients draw from)

    np.random.seed(seed)  # noqa: NPY002 (the global state that the library's plain-Python clients draw from)
    seed_numba(seed)


def peer_support(name: str, size: int, epsilon: float) -> tuple[float, float]:
    """(p*, q*) exactly as multi-freq-ldpy 0.2.5's aggregators compute them."""
    e = math.exp(epsilon)
    if name == "GRR":
        p = e / (e + size - 1)
        return p, (1 - p) / (size - 1)
    if name == "SS":
        d = int(max(1, np.rint(size / (e + 1))))
        return d * e / (d * e + size - d), ((d - 1) * (d * e) + (size - d) * d) / ((size - 1) * (d * e + size - d))
    if name == "SUE":
        p = math.exp(epsilon / 2) / (math.exp(epsilon / 2) + 1)
        return p, 1 - p
    if name == "OUE":
        return 0.5, 1 / (e + 1)
    g = round(e) + 1  # OLH: the library's int(round(exp(epsilon))) + 1
    return e / (e + g - 1), 1 / g


def peer_reports(name: str, x: np.ndarray, size: int, epsilon: float) -> list[Any]:
    """One report per record from the library's own client function."""
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    values = x.tolist()
    if name == "GRR":
        return [GRR.GRR_Client(v, size, epsilon) for v in values]
    if name == "SS":
        return [SS.SS_Client(v, size, epsilon) for v in values]
    if name in ("SUE", "OUE"):
        return [UE.UE_Client(v, size, epsilon, name == "OUE") for v in values]
    return [LH.LH_Client(v, size, epsilon, True) for v in values]


def peer_counts(name: str, reports: list[Any], size: int, epsilon: float) -> np.ndarray:
    """The support counts the library's aggregators build (the same sums, vectorised; OLH by :func:`xxh32_short`)."""
    if name == "GRR":
        return np.bincount(np.asarray(reports), minlength=size).astype(np.float64)
    if name == "SS":
        return np.bincount(np.concatenate(reports), minlength=size).astype(np.float64)
    if name in ("SUE", "OUE"):
        return np.sum(np.asarray(reports), axis=0)
    g = round(math.exp(epsilon)) + 1
    values = np.array([value for value, _ in reports], dtype=np.uint64)
    seeds = np.array([seed for _, seed in reports], dtype=np.int64).view(np.uint64)
    return np.array([np.count_nonzero(xxh32_short(str(v).encode(), seeds) % np.uint64(g) == values)
                     for v in range(size)], dtype=np.float64)


_PRIMES = tuple(np.uint64(p) for p in (2654435761, 2246822519, 3266489917, 374761393))
_LOW32 = np.uint64(0xFFFFFFFF)


def xxh32_short(key: bytes, seeds: np.ndarray) -> np.ndarray:
    """XXH32 of one key shorter than 4 bytes under many seeds (the library hashes ``str(v)`` with a 64-bit seed,
    which python-xxhash reduces mod 2³²): the reference algorithm's path for inputs below 4 bytes (xxHash
    specification, "XXH32 algorithm description", steps 1, 4 (one byte at a time) and 6 (avalanche)), vectorised.
    :func:`check_aggregators` compares the result with the library's own loop over ``xxhash.xxh32`` once per cell.
    """
    prime1, prime2, prime3, prime5 = _PRIMES
    h = ((seeds & _LOW32) + prime5 + np.uint64(len(key))) & _LOW32
    for byte in key:
        h = (h + np.uint64(byte) * prime5) & _LOW32
        h = ((((h << np.uint64(11)) | (h >> np.uint64(21))) & _LOW32) * prime1) & _LOW32
    h ^= h >> np.uint64(15)
    h = (h * prime2) & _LOW32
    h ^= h >> np.uint64(13)
    h = (h * prime3) & _LOW32
    return h ^ (h >> np.uint64(16))


def peer_estimates(name: str, counts: np.ndarray, records: int, size: int, epsilon: float) -> dict[str, np.ndarray]:
    """The unbiased estimate, the library's MI (clip + renormalise) and its IBU, from the support counts."""
    from multi_freq_ldpy.estimators.Histogram_estimator import IBU, MI

    p, q = peer_support(name, size, epsilon)
    channel = np.full((size, size), q)
    np.fill_diagonal(channel, p)
    return {"unbiased": (counts - records * q) / (records * (p - q)), "MI": MI(counts, records, p, q),
            "IBU": IBU(size, channel, counts / counts.sum(), IBU_ITERATIONS, IBU_TOL, "max_abs")}


def check_aggregators(name: str, reports: list[Any], size: int, epsilon: float, ours: dict[str, np.ndarray]) -> None:
    """The library's complete aggregators return what :func:`peer_estimates` returned."""
    from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, SS, UE

    if name in ("SUE", "OUE"):
        mi = UE.UE_Aggregator_MI(reports, epsilon, name == "OUE")
        ibu = UE.UE_Aggregator_IBU(reports, size, epsilon, name == "OUE")
    else:
        module, extra = {"GRR": (GRR, ()), "SS": (SS, ()), "OLH": (LH, (True,))}[name]
        mi = getattr(module, f"{module.__name__.rsplit('.', 1)[1]}_Aggregator_MI")(reports, size, epsilon, *extra)
        ibu = getattr(module, f"{module.__name__.rsplit('.', 1)[1]}_Aggregator_IBU")(reports, size, epsilon, *extra)
    for label, theirs in (("MI", mi), ("IBU", ibu)):
        if not np.allclose(theirs, ours[label], rtol=0, atol=1e-12):
            raise RuntimeError(f"{name} {label}: the library's aggregator differs from MI/IBU on our support counts")


# ------------------------------------------------------------------------------------------------- mechdesign
MECHDESIGN = ("linear (unprojected)", "linear", "ml", "ml within ball")


def mechdesign_estimates(mechanism: Any, counts: np.ndarray, ball: Any) -> dict[str, np.ndarray]:
    """mechdesign's decoders at the file's prior (``decode --method linear|ml [--within-ball]``)."""
    from mechdesign.deploy.analysis.decode import estimate_frequencies

    linear = estimate_frequencies(mechanism, counts, "linear", reference=ball.center.probabilities)
    ml = estimate_frequencies(mechanism, counts, "ml", replicates=0)  # the errors' bootstrap is not measured here
    inside = estimate_frequencies(mechanism, counts, "ml", ball=ball, replicates=0)
    return {"linear (unprojected)": linear.unbiased, "linear": linear.frequencies, "ml": ml.frequencies,
            "ml within ball": inside.frequencies}


# ------------------------------------------------------------------------------------------------------- cells
def run_cell(dataset: str, epsilon_index: int, data_index: int, repetitions: int) -> list[dict[str, Any]]:
    """Every estimator's error on one (dataset, ε, data) cell."""
    from mechdesign.core.uncertainty import L1Ball
    from mechdesign.deploy.file.column import read_mechanism_file
    from mechdesign.deploy.sampling.sampler import Privatizer

    start = time.process_time()
    epsilon, data = EPSILONS[epsilon_index], DATA[data_index]
    path = design_file(dataset, epsilon)
    loaded = read_mechanism_file(path)
    mechanism = loaded.mechanism
    prior = np.asarray(loaded.guarantee["prior"], dtype=np.float64)
    radius = float(loaded.guarantee["radius"])
    ball = L1Ball(prior, radius)
    x = records(dataset, mechanism.inputs)
    if data == "edge":
        x = moved_to_edge(x, prior, radius)
    size, n = prior.size, x.size
    truth = np.bincount(x, minlength=size) / n
    errors: dict[tuple[str, str], list[float]] = {}
    sampler = Privatizer(mechanism)
    # The peers' errors are kept beside the designs (they cost most of the run): a rerun with the same repetitions
    # measures only mechdesign's decoders again.
    cache = DESIGNS / f"peers-{dataset}-eps{epsilon:g}-{data}-r{repetitions}-s{SEED}.json"
    cached = json.loads(cache.read_text()) if cache.exists() else None
    for r in range(repetitions):
        sequence = np.random.SeedSequence([SEED, list(DATASETS).index(dataset), epsilon_index, data_index, r])
        peer_seed, ours_seed = sequence.spawn(2)
        if cached is None:
            _seed_peers(int(peer_seed.generate_state(1)[0]))
            for name in PEERS:
                reports = peer_reports(name, x, size, epsilon)
                estimates = peer_estimates(name, peer_counts(name, reports, size, epsilon), n, size, epsilon)
                if r == 0:
                    check_aggregators(name, reports, size, epsilon, estimates)
                for label, estimate in estimates.items():
                    errors.setdefault((f"peer {label}", name), []).append(n * float(np.sum((estimate - truth) ** 2)))
        outputs = sampler.sample_indices(x, np.random.default_rng(ours_seed))
        counts = np.bincount(outputs, minlength=mechanism.shape[1])
        for label, estimate in mechdesign_estimates(mechanism, counts, ball).items():
            errors.setdefault(("mechdesign", label), []).append(n * float(np.sum((estimate - truth) ** 2)))
    if cached is None:
        cache.write_text(json.dumps([[family, name, values] for (family, name), values in errors.items()
                                     if family != "mechdesign"]))
    else:
        errors |= {(family, name): values for family, name, values in cached}
    cpu = time.process_time() - start
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    utility = loaded.utility or {}
    rows = []
    for (family, estimator), values in errors.items():
        v = np.asarray(values)
        rows.append({"dataset": dataset, "size": size, "epsilon": epsilon, "data": data, "records": n,
                     "radius": radius, "l1_from_prior": float(np.abs(truth - prior).sum()), "family": family,
                     "estimator": estimator, "mean": float(v.mean()), "standard_error": float(v.std(ddof=1) /
                                                                                           np.sqrt(v.size)),
                     "median": float(np.median(v)), "q05": float(np.quantile(v, 0.05)),
                     "q95": float(np.quantile(v, 0.95)), "repetitions": v.size, "design": path.name,
                     "design_sha256": digest, "design_value": utility.get("value"),
                     "design_lower_bound": utility.get("lower_bound"),
                     "cell_cpu_seconds": round(cpu, 1)})
    return rows


# ------------------------------------------------------------------------------------------------------ tables
def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per cell: the peers' best unbiased and post-processed oracles, mechdesign's decoders, the leads."""
    cells: dict[tuple[str, float, str], list[dict[str, Any]]] = {}
    for row in rows:
        cells.setdefault((row["dataset"], row["epsilon"], row["data"]), []).append(row)
    out = []
    for (dataset, epsilon, data), group in cells.items():
        unbiased = min((r for r in group if r["family"] == "peer unbiased"), key=lambda r: r["mean"])
        post = min((r for r in group if r["family"] in ("peer MI", "peer IBU")), key=lambda r: r["mean"])
        ours = {r["estimator"]: r for r in group if r["family"] == "mechdesign"}
        line = {"dataset": dataset, "size": group[0]["size"], "epsilon": epsilon, "data": data,
                "design": f"{group[0]['design']} ({group[0]['design_sha256']})",
                "peer_unbiased": unbiased["mean"], "peer_unbiased_se": unbiased["standard_error"],
                "peer_unbiased_oracle": unbiased["estimator"], "peer_post": post["mean"],
                "peer_post_se": post["standard_error"],
                "peer_post_oracle": f"{post['estimator']} + {post['family'].split()[1]}"}
        for label in MECHDESIGN:
            line[label] = ours[label]["mean"]
            line[f"{label} se"] = ours[label]["standard_error"]
            line[f"lead {label}"] = post["mean"] / ours[label]["mean"]
        line["repetitions"] = group[0]["repetitions"]
        out.append(line)
    return out


def markdown(lines: list[dict[str, Any]], note: str) -> str:
    """The results table (benchmarks/results/peers.md; docs/howto/decode.rst includes it)."""
    head = ("| data set (N), ε, data | peer's best unbiased | peer's best post-processed | mechdesign linear "
            "unprojected / linear / ml / ml within ball | lead of linear / ml / ml within ball |\n"
            "|---|---|---|---|---|\n")
    body = ""
    for s in lines:
        body += (f"| {s['dataset']} ({s['size']}), {s['epsilon']:g}, {s['data']} | "
                 f"{s['peer_unbiased']:.3g} ± {s['peer_unbiased_se']:.2g} ({s['peer_unbiased_oracle']}) | "
                 f"{s['peer_post']:.3g} ± {s['peer_post_se']:.2g} ({s['peer_post_oracle']}) | "
                 + " / ".join(f"{s[k]:.3g}" for k in MECHDESIGN) + " | "
                 + " / ".join(f"{s['lead ' + k]:.2f}×" for k in MECHDESIGN[1:]) + " |\n")
    return head + body + "\n" + note + "\n"


def compose_note(rows: list[dict[str, Any]], repetitions: int, seconds: float, load: str, workers: int) -> str:
    """The table's footnote: metric, repetitions, versions, designs, CPU per cell, load."""
    from importlib.metadata import version

    cell_cpu = sorted(r["cell_cpu_seconds"] for r in {(r["dataset"], r["epsilon"], r["data"]): r
                                                     for r in rows}.values())
    return (f"n × Σ (p̂ − f)² against the records' frequencies, mean ± standard error over {repetitions} seeded "
            f"repetitions; lead = the peers' best post-processed mean / mechdesign's mean (the best of ten noisy "
            f"means is biased low: the peers are favoured). multi-freq-ldpy {version('multi-freq-ldpy')}, numba "
            f"{version('numba')}, xxhash {version('xxhash')}; designs: estimation_mse, 60-s limit, "
            f"benchmarks/designs/peers/ (sha256 prefix in the CSV). CPU per cell (time.process_time, both sides): "
            f"median {cell_cpu[len(cell_cpu) // 2]:.0f} s, range {cell_cpu[0]:.0f}–{cell_cpu[-1]:.0f} s; "
            f"{workers} workers, {seconds / 60:.0f} min wall, load average {load} on 2 cores (shared machine).")


def table_csv(lines: list[dict[str, Any]]) -> str:
    """The same table as CSV (docs/howto/decode.rst includes it with ``csv-table``)."""
    out = ['"data set (N), ε, data","peers\' best unbiased","peers\' best post-processed","linear unprojected",'
           '"linear","ml","ml within ball","lead: linear","lead: ml","lead: ml within ball","design (sha256)"']
    for s in lines:
        cells = [f"{s['dataset']} ({s['size']}), {s['epsilon']:g}, {s['data']}",
                 f"{s['peer_unbiased']:.3g} ± {s['peer_unbiased_se']:.2g} ({s['peer_unbiased_oracle']})",
                 f"{s['peer_post']:.3g} ± {s['peer_post_se']:.2g} ({s['peer_post_oracle']})"]
        cells += [f"{s[k]:.3g} ± {s[k + ' se']:.2g}" for k in MECHDESIGN]
        cells += [f"{s['lead ' + k]:.2f}×" for k in MECHDESIGN[1:]] + [s["design"]]
        out.append(",".join(f'"{c}"' for c in cells))
    return "\n".join(out) + "\n"


def write_tables(name: str, lines: list[dict[str, Any]], note: str) -> None:
    """benchmarks/results/<name>.md (markdown, with the note) and <name>_table.csv."""
    (RESULTS / f"{name}.md").write_text(markdown(lines, note))
    (RESULTS / f"{name}_table.csv").write_text(table_csv(lines))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--name", default="peers", help="results file stem in benchmarks/results/")
    parser.add_argument("--tables-only", action="store_true",
                        help="rewrite the markdown and CSV tables from benchmarks/results/<name>.json")
    parser.add_argument("--load", help="with --tables-only: the load average to state, if the run did not record it")
    args = parser.parse_args(argv)
    if args.tables_only:
        saved = json.loads((RESULTS / f"{args.name}.json").read_text())
        lines = summary(saved["rows"])
        note = saved.get("note") or compose_note(saved["rows"], saved["repetitions"], saved["total_seconds"],
                                                  args.load or "not recorded", saved.get("workers", 2))
        write_tables(args.name, lines, note)
        print(markdown(lines, note))
        return
    from importlib.metadata import version

    for dataset in args.datasets:  # design serially first: the cells then only read the cache
        for epsilon in EPSILONS:
            design_file(dataset, epsilon)
    start = time.perf_counter()
    cells = [(d, e, k) for d in args.datasets for e in range(len(EPSILONS)) for k in range(len(DATA))]
    cells.sort(key=lambda c: -{"zipf-64": 4, "native-country": 3, "education": 2, "race": 1}[c[0]])
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for cell in pool.map(run_cell, *zip(*cells, strict=True), [args.repetitions] * len(cells)):
            rows.extend(cell)
            print(f"{cell[0]['dataset']} ε={cell[0]['epsilon']:g} {cell[0]['data']}: "
                  f"{cell[0]['cell_cpu_seconds']} s CPU", flush=True)
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

"""Four probes of the certified bound where its gap is largest (issue 60; offline, not shipped).

``bench_dual_form.py`` found that at ε = 4 the engine's form of the bound comes within 1.5 % of the optimum where every
vertex can be listed, and named two losses: family C2's reach (its branch and bound at the form's own multipliers) and
the multipliers the engine chooses. The first two ask whether a change would close one of them; the third
where the bound's time goes.

``--c2`` (rows ``c2_roots`` and ``high_sets``, ``results/bound_probes_c2.json``): family C2's reach
(:func:`mechdesign.design.symmetric._reach._family_c2`) at the diagonal form's optimal (w, λ)
(``bench_dual_form.form_at``: its dual over the listed vertices, Zipf counts with m = 2,000 records, N = 12, 14, 16,
ε = 2 and 4), started from its shipped roots (8 × 16 intervals of the two masses) and from one box per high set H
(every H of mass below β/2 listed, each with 16 intervals of the low set's mass), each with the shipped budget of
12,000 boxes, against C2's exact largest value over the listed vertices. Real counts let a box fill its high set's
mass with slivers of inputs at the level h (up to e^ε), which the listed roots cannot. Rows ``high_sets`` count the
high sets on the Zipf priors where the symmetric engine runs (N ≥ 64; up to 10⁵ counted, ``None`` beyond).

``--bundle`` (``results/bound_probes_bundle.json``): the multipliers chosen jointly. A 60-s design of the symmetric
engine (Zipf counts, m = 2·10⁵, seed of ``bench_time_limit.zipf_counts``), its bound alone (``--bound-seconds``), and
from the best (w, λ) that bound evaluated (at its best scale) a trust-region bundle method over (w, λ) together for
``--probe-seconds`` of CPU: the master maximises the Σψ form Σ_k s_k(2(1 − P̂_k)√w_k + w_k + P̂_k²) − Σ_k s_k λ_k − t
with t above every pooled column's Σ_k s_k(w_k D_k − λ_k μ_k) (cvxpy, Clarabel; the box |Δw_k| ≤ Δ·w_k, |Δλ_k| ≤
Δ·|λ_k|), and each candidate is evaluated soundly (the reach's bound, at its best scale): a step is kept when it
raises the bound by 10⁻⁴ of it (Δ × 1.5), else Δ × 0.6; the reach's vertices join the pool either way.

``--polish`` (``results/bound_probes_polish_<sizes>.json``): where the bound's time goes. A 60-s design as above (N =
``--polish-sizes``), its bound alone (``--polish-seconds``) with every call of the reach logged (its (w, λ), slack,
CPU and the time its deadline left), then each call's (w, λ) evaluated again with the reach run to its end (slack
10⁻⁴, 120 s): the bound each gave within the bound's time and the bound it gives run to the end, at its best scale.

``--combination`` (``results/bound_probes_combination.json``): the bound's aggregate, taken apart. A 60-s design as
above at each ``--cells`` N:ε, its bound alone (``--bound-seconds``) with every cut kept with its λ, then at the
aggregate's own combination W = Σ_i μ_i w_i (its μ of each cut; the caps' part ν left out, as a vertex's v_x² reaches
far above a cap): (a) the reach at λ = Σ_i μ_i λ_i — by sublinearity at most the combination of the cuts' reaches,
less where their maxima lie at different vertices — its bound at W, and the aggregate again with that cut; (b) λ
from the LP over the design's types at W: the LP's value V (a lower estimate of max_J Σ_x W_x J_xx: the types are
mechanisms' columns), the bound at W if the reach came down to V (no λ can do better at W with those columns: the
room λ leaves), and the bound at that λ; (c) at the LP's λ, each family's reach against its best vertex, and C2's
with four times its boxes. (a) asks whether the aggregate's combination, evaluated itself, beats it; (b) and (c)
which of λ and the reach holds the bound at W.

Run: ``python benchmarks/bench_bound_probes.py --c2`` (about 4 minutes of CPU), ``--bundle`` (about 6),
``--polish`` (about 8) and ``--combination`` (about 3 a cell).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import git_commit, write_results
from bench_dual_form import form_at

from mechdesign import Deadline
from mechdesign.core import Prior
from mechdesign.design import DesignProblem
from mechdesign.design.polytope._vertices import diagonal_caps
from mechdesign.design.symmetric import _bound, _reach
from mechdesign.design.symmetric._columns import Columns
from mechdesign.design.symmetric._engine import SymmetricEngine, certify
from mechdesign.design.symmetric._instance import Instance

_LOW_INTERVALS = 16       # intervals of the low set's mass under each listed high set (as the shipped roots)
_HIGH_SETS_MOST = 100_000  # high sets counted at most


def high_sets(p: np.ndarray, sizes: np.ndarray, half: float, most: int = _HIGH_SETS_MOST) -> np.ndarray | None:
    """Every count vector a ≠ 0 with a ≤ ``sizes`` and Σ a p < ``half`` (C2's high sets; rows), None past ``most``."""
    order = np.argsort(-p, kind="stable")
    found: list[np.ndarray] = []
    current = np.zeros(p.size, dtype=np.int64)

    def walk(i: int, mass: float) -> bool:
        if i == p.size:
            found.append(current.copy())
            return len(found) <= most
        k = order[i]
        count = 0
        while count <= sizes[k] and mass + count * p[k] < half:
            current[k] = count
            if not walk(i + 1, mass + count * p[k]):
                return False
            count += 1
        current[k] = 0
        return True

    if not walk(0, 0.0):
        return None
    listed = np.array(found)
    return listed[listed.sum(axis=1) > 0]


def type_roots(instance: Instance) -> list[_reach._Box]:
    """C2's roots with the high set fixed: the empty one and each listed high set, × 16 intervals of M_L ∈ [0, 1]."""
    p, s = instance.probabilities, instance.sizes.astype(np.int64)
    listed = high_sets(p, s, instance.radius / 2)
    assert listed is not None
    edges = np.linspace(0.0, 1.0, _LOW_INTERVALS + 1)
    roots = []
    for high in np.vstack([np.zeros(s.size, dtype=np.int64), listed]):
        mass = float(high @ p)
        lo, hi = np.vstack([high, np.zeros_like(high)]), np.vstack([high, s - high])
        roots += [_reach._Box((mass, mass, float(edges[j]), float(edges[j + 1])), lo, hi)
                  for j in range(_LOW_INTERVALS)]
    return roots


def c2_row(size: int, epsilon: float) -> dict[str, object]:
    form = form_at(size, epsilon)
    instance = form.instance
    listed = high_sets(instance.probabilities, instance.sizes.astype(np.int64), instance.radius / 2)
    row: dict[str, object] = {"probe": "c2_roots", "N": size, "epsilon": epsilon,
                              "vertices": int(form.vectors.shape[1]), "diagonal_form": form.value,
                              "c2_exact": float(form.values[form.labels == "C2"].max()),
                              "high_sets": None if listed is None else len(listed), "budget": _reach._BUDGET_C2}
    for name, roots in (("shipped", None), ("listed", type_roots(instance))):
        tick = time.process_time()
        bound, _ = _reach._family_c2(instance, form.w, form.lam, Deadline(900.0), roots=roots)
        row[f"c2_{name}_roots"], row[f"c2_{name}_cpu_s"] = bound, round(time.process_time() - tick, 2)
    return row


def count_rows() -> list[dict[str, object]]:
    import bench_time_limit

    rows: list[dict[str, object]] = []
    for size in (64, 96, 256):
        for samples in (48_842, 200_000):
            counts = bench_time_limit.zipf_counts(size, samples=samples)
            problem = DesignProblem.from_delta(Prior.from_counts(counts), 4.0, 1e-6, "estimation_mse",
                                               samples=samples)
            instance = Instance.from_problem(problem)
            listed = high_sets(instance.probabilities, instance.sizes.astype(np.int64), problem.radius / 2)
            rows.append({"probe": "high_sets", "N": size, "records": samples, "cells": instance.count,
                         "half_radius": problem.radius / 2, "high_sets": None if listed is None else len(listed)})
    return rows


def designed(size: int, epsilon: float, design_seconds: float):  # type: ignore[no-untyped-def]
    """A symmetric design of ``design_seconds`` on Zipf counts (m = 2·10⁵): (instance, engine result, n·MSE)."""
    import bench_time_limit

    counts = bench_time_limit.zipf_counts(size, samples=200_000)
    problem = DesignProblem.from_delta(Prior.from_counts(counts), epsilon, 1e-6, "estimation_mse",
                                       samples=sum(counts))
    result = SymmetricEngine().run(problem, None, Deadline(design_seconds))
    return Instance.from_problem(problem), result, certify(problem, result)[2]


def soundly(instance: Instance) -> Callable[[np.ndarray, np.ndarray, float], float]:
    """The bound on tr J⁻¹ at (w, λ), no cell capped, given ``spent`` = Σ_x λ_x + r̄(w, λ), at its best scale."""
    s = instance.sizes.astype(np.float64)
    caps = diagonal_caps(instance.probabilities, instance.epsilon, instance.radius) * (1.0 + 1e-15)
    none = np.zeros(instance.count, dtype=bool)

    def sound(w: np.ndarray, lam: np.ndarray, spent: float) -> float:
        return _bound._at_scale(instance, w, none, caps, spent, float((s * np.abs(lam)).sum()) * instance.a)

    return sound


def bundle_row(size: int, epsilon: float, design_seconds: float, bound_seconds: float,
               probe_seconds: float) -> dict[str, object]:
    import cvxpy as cp

    instance, result, nmse = designed(size, epsilon, design_seconds)
    evaluated: list[tuple[np.ndarray, np.ndarray, float]] = []
    record = _bound._record

    def keep(ledger, inst, w, lam, spent):  # type: ignore[no-untyped-def]
        evaluated.append((w.copy(), lam.copy(), spent))
        record(ledger, inst, w, lam, spent)

    with mock.patch.object(_bound, "_record", keep):
        alone = _bound.symmetric_bound(instance, result.columns, result.weights, deadline=Deadline(bound_seconds))
    s, p = instance.sizes.astype(np.float64), instance.probabilities
    sound = soundly(instance)

    def evaluate(w: np.ndarray, lam: np.ndarray) -> tuple[float, float, Columns]:
        reached, found = _reach.reach(instance, w, lam, Deadline(120.0), slack=1e-4)
        spent = float((s * lam).sum()) + reached
        return sound(w, lam, spent), spent, found

    w_c, lam_c, _ = max(evaluated, key=lambda cut: sound(*cut))
    best, spent, found = evaluate(w_c, lam_c)
    centre = best
    # the centre at its best scale (r is homogeneous: the bound at (σw, σλ) spends σ·spent)
    scales = np.exp(np.linspace(-1.0, 1.0, 41))
    sigma = float(scales[int(np.argmax([sound(g * w_c, g * lam_c, g * spent) for g in scales]))])
    w_c, lam_c = sigma * w_c, sigma * lam_c
    pool = Columns.of_types(result.columns).extend(found)
    radius, trajectory, clock = 0.2, [], time.process_time()
    while time.process_time() - clock < probe_seconds:
        w, lam, t = cp.Variable(instance.count, nonneg=True), cp.Variable(instance.count), cp.Variable()
        psi = cp.sum(cp.multiply(s, cp.multiply(2.0 * (1.0 - p), cp.sqrt(w)) + w + p**2))
        constraints = [t >= (pool.second * s) @ w - (pool.means * s) @ lam,
                       cp.abs(w - w_c) <= radius * (w_c + 1e-3 * w_c.mean()),
                       cp.abs(lam - lam_c) <= radius * (np.abs(lam_c) + 1e-3 * np.abs(lam_c).mean())]
        master = cp.Problem(cp.Maximize(psi - s @ lam - t), constraints)
        master.solve(solver=cp.CLARABEL)
        if w.value is None:
            break
        w_n, lam_n = np.maximum(np.asarray(w.value), 0.0), np.asarray(lam.value)
        value, _, found = evaluate(w_n, lam_n)
        pool = pool.extend(found)
        serious = value > best + 1e-4 * abs(best)
        trajectory.append({"cpu_s": round(time.process_time() - clock, 1), "model": float(master.value) - 1.0,
                           "bound": value - 1.0, "kept": bool(serious), "radius": radius, "pool": len(pool)})
        print(trajectory[-1], flush=True)
        if serious:
            best, w_c, lam_c = value, w_n, lam_n
            radius = min(1.5 * radius, 1.0)
        else:
            radius = max(0.6 * radius, 1e-3)
    return {"probe": "bundle", "N": size, "cells": instance.count, "epsilon": epsilon,
            "design_seconds": design_seconds, "design_nmse": nmse, "engine_bound": float(result.upper_bound),
            "bound_seconds": bound_seconds, "bound_alone": alone.value - 1.0, "best_cut": centre - 1.0,
            "probe_seconds": probe_seconds, "bundle_bound": best - 1.0, "steps": len(trajectory),
            "kept": sum(1 for step in trajectory if step["kept"]), "trajectory": trajectory}


def polish_row(size: int, epsilon: float, design_seconds: float, bound_seconds: float) -> dict[str, object]:
    instance, result, nmse = designed(size, epsilon, design_seconds)
    calls: list[dict[str, object]] = []
    shipped = _bound.reach

    def logged(inst, w, lam, deadline=None, slack=0.0):  # type: ignore[no-untyped-def]
        tick = time.process_time()
        reached, found = shipped(inst, w, lam, deadline, slack)
        calls.append({"w": w.copy(), "lam": lam.copy(), "reach": reached, "slack": slack,
                      "cpu_s": round(time.process_time() - tick, 2),
                      "left_s": None if deadline is None else round(max(deadline.remaining(), 0.0), 2)})
        return reached, found

    with mock.patch.object(_bound, "reach", logged):
        alone = _bound.symmetric_bound(instance, result.columns, result.weights, deadline=Deadline(bound_seconds))
    s, p = instance.sizes.astype(np.float64), instance.probabilities
    bound_at = soundly(instance)

    def sound(w: np.ndarray, lam: np.ndarray, reached: float) -> float:  # in n·MSE
        return bound_at(w, lam, float((s * lam).sum()) + reached) - 1.0

    out = []
    for call in calls:
        w, lam = call.pop("w"), call.pop("lam")
        assert isinstance(w, np.ndarray) and isinstance(lam, np.ndarray)
        positive = w > 0
        tick = time.process_time()
        reached, _ = shipped(instance, w, lam, Deadline(120.0), 1e-4)
        out.append({**call, "power_of_p": float(np.polyfit(np.log(p[positive]), np.log(w[positive]), 1)[0]),
                    "bound": sound(w, lam, float(call["reach"])), "reach_to_end": reached,
                    "reach_to_end_cpu_s": round(time.process_time() - tick, 2), "bound_to_end": sound(w, lam, reached)})
    return {"probe": "polish", "N": size, "cells": instance.count, "epsilon": epsilon, "design_nmse": nmse,
            "bound_seconds": bound_seconds, "bound_alone": alone.value - 1.0,
            "best_call_to_end": max(call["bound_to_end"] for call in out), "calls": out}


def combination_row(size: int, epsilon: float, design_seconds: float, bound_seconds: float) -> dict[str, object]:
    from scipy.optimize import linprog

    instance, result, nmse = designed(size, epsilon, design_seconds)
    lams: list[np.ndarray] = []
    record = _bound._record

    def keep(ledger, inst, w, lam, spent):  # type: ignore[no-untyped-def]
        if ledger is not None and np.isfinite(spent):
            lams.append(lam.copy())
        record(ledger, inst, w, lam, spent)

    kept: list[list[_bound._Cut]] = []
    aggregate = _bound._aggregate

    def keep_cuts(inst, cuts, caps):  # type: ignore[no-untyped-def]
        kept.append(cuts)
        return aggregate(inst, cuts, caps)

    with mock.patch.object(_bound, "_record", keep), mock.patch.object(_bound, "_aggregate", keep_cuts):
        alone = _bound.symmetric_bound(instance, result.columns, result.weights, deadline=Deadline(bound_seconds))
    cuts = kept[-1] if kept else []
    assert len(cuts) == len(lams)
    if not cuts:  # no round of λ fitted the bound's time: nothing to take apart
        return {"probe": "combination", "N": size, "cells": instance.count, "epsilon": epsilon,
                "design_nmse": nmse, "bound_seconds": bound_seconds, "bound_alone": alone.value - 1.0, "cuts": 0}
    s, p = instance.sizes.astype(np.float64), instance.probabilities
    caps = diagonal_caps(p, instance.epsilon, instance.radius) * (1.0 + 1e-15)
    sound = soundly(instance)
    ws = np.array([cut.w for cut in cuts]).T
    scales = np.maximum(s @ ws, 1e-300)
    found = _bound._combination(instance, ws / scales, np.array([cut.spent for cut in cuts]) / scales, caps)
    assert found is not None
    mu = np.maximum(found[0], 0.0) / scales
    w, lam = ws @ mu, np.array(lams).T @ mu
    before = aggregate(instance, cuts, caps)
    row = {"probe": "combination", "N": size, "cells": instance.count, "epsilon": epsilon,
           "high_share": instance.high / instance.a, "design_nmse": nmse, "bound_seconds": bound_seconds,
           "bound_alone": alone.value - 1.0, "cuts": len(cuts), "aggregate": before - 1.0}
    if not float(w.max(initial=0.0)) > 0:  # the caps alone: no combination of cuts to take apart
        return row

    def cut_at(lam: np.ndarray, boxes: float = 1.0) -> tuple[float, float, dict[str, list[float]]]:
        families = {}
        budgets = {"_BUDGET_A": _reach._BUDGET_A, "_BUDGET_C1": _reach._BUDGET_C1, "_BUDGET_C2": _reach._BUDGET_C2}
        with mock.patch.multiple(_reach, **{name: int(boxes * value) for name, value in budgets.items()}):
            slack = 1e-4 * abs(before)
            for name, family in (("B", lambda: _reach._family_b(instance, w, lam)),
                                 ("C1", lambda: _reach._family_c1(instance, w, lam, Deadline(600.0), slack)),
                                 ("A", lambda: _reach._family_a(instance, w, lam, Deadline(600.0), slack)),
                                 ("C2", lambda: _reach._family_c2(instance, w, lam, Deadline(600.0), slack))):
                reached, points = family()
                vertex = (float((points.second @ (s * w) - points.means @ (s * lam)).max())
                          if points is not None and len(points) else float("nan"))
                families[name] = [reached, vertex]
        spent = float((s * lam).sum()) + max(r for r, _ in families.values())
        return spent, sound(w, lam, spent) - 1.0, families

    spent_c, bound_c, _ = cut_at(lam)
    after = aggregate(instance, [*cuts, _bound._Cut(w, spent_c, float((s * np.abs(lam)).sum()) * instance.a
                                                   + abs(spent_c))], caps)
    pool = Columns.of_types(result.columns)
    lp = linprog(-(pool.second @ (s * w)), A_eq=pool.means.T, b_eq=np.ones(instance.count), bounds=(0, None),
                 method="highs")
    lam_lp = -np.asarray(lp.eqlin.marginals) / s
    spent_lp, bound_lp, families = cut_at(lam_lp)
    _, _, families_4 = cut_at(lam_lp, 4.0)
    return {**row, "combined_lambda": {"spent": spent_c, "bound_at_w": bound_c, "aggregate_after": after - 1.0},
            "lp_lambda": {"pool_value": -float(lp.fun), "bound_if_reach_at_pool_value": sound(w, lam_lp, -float(lp.fun))
                          - 1.0, "spent": spent_lp, "bound_at_w": bound_lp},
            "families_at_lp_lambda": families, "families_at_lp_lambda_4x_boxes": families_4}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--c2", action="store_true", help="family C2's reach from listed high sets")
    parser.add_argument("--bundle", action="store_true", help="(w, λ) by a trust-region bundle method")
    parser.add_argument("--polish", action="store_true", help="each reach call of the bound run to its end")
    parser.add_argument("--polish-sizes", type=int, nargs="+", default=[256, 1000], help="--polish: N (256 1000)")
    parser.add_argument("--polish-seconds", type=float, nargs="+", default=[30.0, 45.0],
                        help="--polish: the bound's seconds at each N (30 45)")
    parser.add_argument("--combination", action="store_true", help="the aggregate's combination taken apart")
    parser.add_argument("--cells", nargs="+", default=["256:4", "1000:4", "2000:2"],
                        help="--combination: N:ε each (256:4 1000:4 2000:2)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 14, 16], help="--c2: N (12 14 16)")
    parser.add_argument("--size", type=int, default=256, help="--bundle: N (256)")
    parser.add_argument("--design-seconds", type=float, default=60.0)
    parser.add_argument("--bound-seconds", type=float, default=30.0)
    parser.add_argument("--probe-seconds", type=float, default=240.0)
    args = parser.parse_args(argv)
    command = " ".join(["python", "benchmarks/bench_bound_probes.py", *(argv if argv is not None else sys.argv[1:])])
    if args.c2:
        rows = [c2_row(size, epsilon) for size in args.sizes for epsilon in (2.0, 4.0)] + count_rows()
        for row in rows:
            print({k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
        write_results("bound_probes_c2", rows, command=command, commit=git_commit())
    if args.bundle:
        row = bundle_row(args.size, 4.0, args.design_seconds, args.bound_seconds, args.probe_seconds)
        print({k: v for k, v in row.items() if k != "trajectory"}, flush=True)
        write_results("bound_probes_bundle", [row], command=command, commit=git_commit())
    if args.polish:
        rows = [polish_row(size, 4.0, args.design_seconds, seconds)
                for size, seconds in zip(args.polish_sizes, args.polish_seconds, strict=True)]
        for row in rows:
            print({k: v for k, v in row.items() if k != "calls"}, flush=True)
        write_results("bound_probes_polish_" + "_".join(map(str, args.polish_sizes)), rows, command=command,
                      commit=git_commit())
    if args.combination:
        rows = []
        for cell in args.cells:
            size, epsilon = cell.split(":")
            rows.append(combination_row(int(size), float(epsilon), args.design_seconds, args.bound_seconds))
            print(rows[-1], flush=True)
        write_results("bound_probes_combination", rows, command=command, commit=git_commit())
    if not (args.c2 or args.bundle or args.polish or args.combination):
        parser.error("--c2, --bundle, --polish or --combination: choose a probe")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

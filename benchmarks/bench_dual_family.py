"""How far each dual family can certify the A-optimal design, where every vertex is enumerated (issue 18) [D].

The structured bound (:mod:`mechdesign.design.estimation._bound`) takes Y in the family diag(D) + P̂aᵀ + aP̂ᵀ, whose
pricing the separable oracle bounds. This script measures the family's own limit, and that of richer families, on
a prior small enough to enumerate: native-country's 11 largest counts with the rest as one category (N = 12,
ε = 1, native-country's radius; 57,360 vertices). For each family it maximises the dual

    2 tr Y^{1/2} − 2Σa + Σb − S,    S = max_v vᵀ(Y − P̂aᵀ − aP̂ᵀ)v + b·v over every enumerated vertex v,

by cutting planes (Clarabel; each round adds the 4N vertices of largest value at the new point). The value reported
is T²/R at the best exactly evaluated point (T = tr Y^{1/2}, R = 2Σa − Σb + S), which is a valid lower bound on
the optimal tr J⁻¹. The richer families add c_i u_i u_iᵀ with free c_i, where the u_i are eigenvectors of the
residual of J*⁻² (J* the enumerated optimum) after its least-squares fit in the family.

Two further families use that lift vectors are non-negative and bounded, 0 ≤ v_x ≤ c_x = min(e^ε, 1/P̂_x), so
that terms outside the structure are bounded by separable ones without any sign condition on Y's spectrum:

* "− N, N ≥ 0 entrywise": Y = Y_f − N with N ≥ 0 (zero diagonal): vᵀNv ≥ 0 for v ≥ 0, so vᵀYv ≤ vᵀY_f v. Y may have
  a larger tr Y^{1/2} than any member of the family while its pricing is the family's.
* "RLT: + M⁺ − M⁻": Y = Y_f + M⁺ − M⁻ with M⁺, M⁻ ≥ 0, priced through the McCormick (RLT) inequalities
  v_x v_y ≤ c_x v_y and v_x v_y ≥ c_x v_y + c_y v_x − c_x c_y: vᵀYv ≤ vᵀY_f v + (M⁺ᵀc − M⁻ᵀc − M⁻c)·v + cᵀM⁻c,
  still separable.

A term with c < 0 keeps the pricing separable through −|c|(u·v)² = min_t (|c|t² − 2|c|t u·v), which gives
S ≤ min_t S(D, b − 2|c|tu) + |c|t². The script also evaluates that relaxation, at the best point of the family with
the bottom eigenvector, on a grid of 4,001 values of t.

Run: ``python benchmarks/bench_dual_family.py``; results in benchmarks/results/dual_family.{json,csv}.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from _common import write_results

from mechdesign import load_problem
from mechdesign.core import Prior
from mechdesign.design import DesignProblem
from mechdesign.design.estimation import design_estimation, fit_structure
from mechdesign.design.polytope import column_vertices, pricing_counts

PROBLEM = Path(__file__).resolve().parents[1] / "problems" / "adult-native-country.toml"
SIZE, EPSILON = 12, 1.0


def _family_limit(vertices: np.ndarray, prior: np.ndarray, start: np.ndarray,
                  directions: list[np.ndarray], rounds: int = 40, *, cap: np.ndarray | None = None,
                  entrywise: str = "") -> tuple[float, dict[str, np.ndarray | float]]:
    """The best exactly evaluated dual bound of the family with the given extra directions, and its point.

    ``entrywise``: "" (none), "negative" (Y − N, N ≥ 0) or "rlt" (Y + M⁺ − M⁻ with the McCormick bounds from ``cap``).
    """
    import cvxpy as cp

    n = prior.size
    if entrywise:
        assert cap is not None and np.all(vertices >= 0) and np.all(vertices <= cap[:, None] * (1 + 1e-12))
    squares = vertices**2
    work, best, point = start, -np.inf, {}
    for _ in range(rounds):
        d, a, b, s = cp.Variable(n), cp.Variable(n), cp.Variable(n), cp.Variable()
        coefficients = [cp.Variable() for _ in directions]
        y = cp.diag(d) + prior[:, None] @ a[None, :] + a[:, None] @ prior[None, :]
        linear: Any = 0
        constant: Any = 0
        if entrywise:
            minus = cp.Variable((n, n), nonneg=True)
            plus = cp.Variable((n, n), nonneg=True) if entrywise == "rlt" else np.zeros((n, n))
            y = y + plus - minus
            if entrywise == "rlt":
                linear, constant = plus.T @ cap - minus.T @ cap - minus @ cap, cap @ minus @ cap
        quad = (work**2).T @ d + work.T @ (b + linear) + constant
        for c, u in zip(coefficients, directions, strict=True):
            y = y + c * np.outer(u, u)
            quad = quad + c * (u @ work) ** 2
        z = cp.Variable((n, n), symmetric=True)
        box = [cp.abs(b) <= 1e4, cp.abs(d) <= 1e4] + [cp.abs(c) <= 1e4 for c in coefficients]
        program = cp.Problem(cp.Maximize(2 * cp.trace(z) - 2 * cp.sum(a) + cp.sum(b) - s),
                             [cp.bmat([[(y + y.T) / 2, z], [z, np.eye(n)]]) >> 0, s >= quad, *box])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            program.solve(solver="CLARABEL")
        dv, av, bv = (np.asarray(var.value, dtype=np.float64) for var in (d, a, b))
        cv = [float(c.value) for c in coefficients]
        yv = np.diag(dv) + np.outer(prior, av) + np.outer(av, prior)
        yv = yv + sum((c * np.outer(u, u) for c, u in zip(cv, directions, strict=True)), np.zeros((n, n)))
        shift, constant_value = np.zeros(n), 0.0
        if entrywise:
            minus_value = np.maximum(np.asarray(minus.value, dtype=np.float64), 0.0)
            plus_value = (np.maximum(np.asarray(plus.value, dtype=np.float64), 0.0) if entrywise == "rlt"
                          else np.zeros((n, n)))
            yv = yv + plus_value - minus_value
            if entrywise == "rlt":
                shift = plus_value.T @ cap - minus_value.T @ cap - minus_value @ cap
                constant_value = float(cap @ minus_value @ cap)
        root = float(np.sqrt(np.maximum(np.linalg.eigvalsh(0.5 * (yv + yv.T)), 0.0)).sum())
        values = dv @ squares + (bv + shift) @ vertices + constant_value + sum(
            (c * (u @ vertices) ** 2 for c, u in zip(cv, directions, strict=True)), np.zeros(vertices.shape[1]))
        r = 2 * float(av.sum()) - float(bv.sum()) + float(values.max())
        value = root * root / r if r > 0 else -np.inf
        if value > best:
            best, point = value, {"d": dv, "a": av, "b": bv, "c": np.array(cv), "root": root}
        if float(program.value) - (2 * root - r) < 1e-7 * abs(float(program.value)):
            break  # the model's value is attained: no vertex is violated
        work = np.hstack([work, vertices[:, np.argsort(-values)[:4 * n]]])
    return best, point


def main() -> None:
    base = load_problem(PROBLEM).problem
    counts = np.sort(pricing_counts(base.prior))[::-1]
    counts = np.concatenate([counts[:SIZE - 1], [counts[SIZE - 1:].sum()]])
    problem = DesignProblem(Prior.from_counts(counts), EPSILON, base.radius, "estimation_mse")
    result = design_estimation(problem, baselines=False, gap_tolerance=1e-10)
    prior, matrix = problem.prior.probabilities, result.mechanism.matrix
    mass = prior @ matrix
    columns, mass = matrix[:, mass > 0] / mass[mass > 0], mass[mass > 0]
    j_inverse = np.linalg.inv((columns * mass) @ columns.T)
    optimum = float(np.trace(j_inverse))
    vertices = column_vertices(prior, EPSILON, base.radius).vectors()
    diagonal, vector, _ = fit_structure(j_inverse @ j_inverse, prior, psd=False)
    residual = j_inverse @ j_inverse - (np.diag(diagonal) + np.outer(prior, vector) + np.outer(vector, prior))
    _, eigenvectors = np.linalg.eigh(0.5 * (residual + residual.T))
    families = {
        "diag(D) + P̂aᵀ + aP̂ᵀ": [],
        "+ c·uuᵀ, u top eigenvector of the residual": [eigenvectors[:, -1]],
        "+ c·uuᵀ, u bottom eigenvector": [eigenvectors[:, 0]],
        "+ top and bottom eigenvectors": [eigenvectors[:, -1], eigenvectors[:, 0]],
        "+ 3 bottom eigenvectors": list(eigenvectors[:, :3].T),
        "+ all N eigenvectors (the full dual)": list(eigenvectors.T),
        "− N, N ≥ 0 entrywise": [],
        "RLT: + M⁺ − M⁻ (McCormick on 0 ≤ v ≤ c)": [],
    }
    cap = np.minimum(np.exp(EPSILON), 1.0 / prior)
    rows = []
    for name, directions in families.items():
        clock = time.process_time()
        entrywise = "negative" if name.startswith("− N") else "rlt" if name.startswith("RLT") else ""
        value, point = _family_limit(vertices, prior, columns, directions, cap=cap, entrywise=entrywise)
        rows.append({"family": name, "exact_S": True, "bound": value,
                     "relative_gap": (optimum - value) / (optimum - 1.0),
                     "coefficients": [round(float(c), 6) for c in np.atleast_1d(point.get("c", []))],
                     "cpu": time.process_time() - clock})
        print(rows[-1], flush=True)
        if name == "+ c·uuᵀ, u bottom eigenvector" and point["c"][0] < 0:
            u, kappa = eigenvectors[:, 0], -float(point["c"][0])
            d, a, b = point["d"], point["a"], point["b"]
            projections = u @ vertices
            grid = np.linspace(projections.min(), projections.max(), 4001)
            squares = d @ vertices**2
            relaxed = min(float((squares + (b - 2 * kappa * t * u) @ vertices).max()) + kappa * t * t for t in grid)
            r = 2 * float(a.sum()) - float(b.sum()) + relaxed
            value = point["root"] ** 2 / r
            rows.append({"family": name + ", S by the min-over-t relaxation", "exact_S": False, "bound": value,
                         "relative_gap": (optimum - value) / (optimum - 1.0), "coefficients": [-kappa], "cpu": 0.0})
            print(rows[-1], flush=True)
    print(write_results("dual_family", rows, size=SIZE, epsilon=EPSILON, radius=base.radius,
                        vertices=int(vertices.shape[1]), optimum_trace_inverse=optimum,
                        load=os.getloadavg()))


if __name__ == "__main__":
    main()

"""Does the bound lose at ε = 4 for want of off-diagonal terms of low rank? (issue 60; offline, not shipped).

The symmetric engine's bound (:mod:`mechdesign.design.symmetric._bound`) is Φ(D) − Σ_x w_x J_xx with D = diag(w): of the
design's J it sees the diagonal alone. Its proof (:mod:`mechdesign.design.polytope._matrix`) holds for every Y ⪰ 0
[D]: over every J with J P̂ = 1 and J ⪰ 11ᵀ,

    tr J⁻¹ ≥ Φ(Y) − ⟨Y, J⟩,      Φ(Y) = 1ᵀY1 + |P̂|² + 2 tr (Π Y Πᵀ)^½,      Π = I − P̂1ᵀ,

(tr J⁻¹ + tr YJ = 1ᵀY1 + |P̂|² + ‖K^{+½}Πᵀ‖² + ‖K^½ Y^½‖², and the same Cauchy–Schwarz step), with equality at
Y = J⁻² (checked here on every design). A bound that priced Y = D + Σ_i a_i a_iᵀ (a_i constant on cells, so that the
reach stays a search over the cells' counts: r(Y, λ) = max_v q(v) + Σ_i (a_i·v)² − λ·v, one more linear form of the
counts per term) needs a non-separable pricing — the work item 1 of the issue's notes. Before building it, this asks
how much such a Y can give at all, at the one J where the answer is cheap to compute: the design's own. For each
cell, a design of the symmetric engine (``--design-seconds``, the grid's Zipf draw, one BLAS thread), its J built
densely from its types (orbit averages: Q_k/s_k on the diagonal, (S_k² − Q_k)/(s_k(s_k − 1)) within a cell, μ_k μ_l
across), and the largest Φ(Y) − ⟨Y, J⟩ over Y = D (the engine's form), D + aaᵀ (best of three starts) and
D + aaᵀ + bbᵀ (L-BFGS on log w and a, b per cell, dense eigendecompositions). No bound of a form can certify the
design better than that form's value at the design's J (the optimum over mechanisms is at most the design's, and
the form's best bound at most its value at any achievable J), so a small gain from rank 1 and 2 over the diagonal
says that the structure the diagonal misses is not of low rank.

Run: ``python benchmarks/bench_offdiagonal_form.py`` (cells 256:4 and 1000:4, 100-s designs; about 25 minutes of
CPU, 19 of them the forms at N = 1,000); ``--cells 256:4 --design-seconds 30`` for a quick look. Writes
``results/offdiagonal_form.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_design_grid
from _common import write_results

from mechdesign import Deadline
from mechdesign.design.symmetric._engine import SymmetricEngine, certify
from mechdesign.design.symmetric._instance import Instance, TypeTable

_STARTS = 3          # random starts of a in the rank-1 form (the parametrisation is not concave)
_ITERATIONS = 3000   # L-BFGS iterations at most


def dense_information(instance: Instance, types: TypeTable, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """J = Σ_t θ_t E[v vᵀ] over each type's orbit (permutations inside the cells), N × N, and each input's cell."""
    sizes = instance.sizes
    cell = np.repeat(np.arange(instance.count), instance.cells.sizes)
    mu = types.means()
    second = types.a * types.high[:, None] ** 2 + types.b * types.low[:, None] ** 2   # Q_tk
    total = mu * sizes                                                                # S_tk
    across = (mu * weights[:, None]).T @ mu
    within = np.where(sizes > 1, (weights @ (total**2 - second)) / np.maximum(sizes * (sizes - 1), 1.0), 0.0)
    information = across[np.ix_(cell, cell)]
    same = cell[:, None] == cell[None, :]
    information[same] = np.broadcast_to(within[cell][:, None], information.shape)[same]
    information[np.diag_indices(cell.size)] = ((weights @ second) / sizes)[cell]
    return information, cell


class Form:
    """Φ(Y) − ⟨Y, J⟩ and its gradient in Y (dense)."""

    def __init__(self, information: np.ndarray, p: np.ndarray) -> None:
        n = p.size
        self.information = information
        self.project = np.eye(n) - np.outer(p, np.ones(n))
        self.constant = float(p @ p)

    def __call__(self, y: np.ndarray) -> tuple[float, np.ndarray]:
        m = self.project @ y @ self.project.T
        values, vectors = np.linalg.eigh(0.5 * (m + m.T))
        roots = np.sqrt(np.maximum(values, 0.0))
        inverse = np.where(roots > 1e-7, 1.0 / np.maximum(roots, 1e-300), 0.0)
        gradient = np.ones_like(y) + self.project.T @ (vectors * inverse) @ vectors.T @ self.project
        return float(y.sum()) + self.constant + 2.0 * float(roots.sum()) - float((y * self.information).sum()), \
            gradient - self.information


def best_form(form: Form, cell: np.ndarray, count: int, rank: int, start: np.ndarray,
              seed: int) -> tuple[np.ndarray, float]:
    """L-BFGS on (log w, a_1 … a_rank) per cell from ``start`` (its missing factors random): the maximiser and value."""

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        w = np.exp(x[:count])
        y = np.diag(w[cell])
        factors = [x[count * (i + 1):count * (i + 2)][cell] for i in range(rank)]
        for a in factors:
            y += np.outer(a, a)
        f, g = form(y)
        parts = [np.bincount(cell, np.diag(g), count) * w]
        parts += [np.bincount(cell, 2.0 * g @ a, count) for a in factors]
        return -f, -np.concatenate(parts)

    extra = count * (rank + 1) - start.size
    x0 = np.concatenate([start, 0.1 * np.random.default_rng(seed).normal(size=extra)])
    found = minimize(negative, x0, jac=True, method="L-BFGS-B", options={"maxiter": _ITERATIONS})
    return found.x, -float(found.fun)


def row(size: int, epsilon: float, design_seconds: float) -> dict[str, object]:
    problem = bench_design_grid.zipf_problem(size, epsilon)
    instance = Instance.from_problem(problem)
    clock = time.process_time()
    result = SymmetricEngine().run(problem, None, Deadline(design_seconds))
    design_cpu = time.process_time() - clock
    nmse = float(certify(problem, result)[2])
    information, cell = dense_information(instance, result.columns, result.weights)
    p = np.repeat(instance.probabilities, instance.cells.sizes)
    form = Form(information, p)
    inverse = np.linalg.inv(information)
    trace = float(np.trace(inverse))
    exact = form(inverse @ inverse)[0]              # Y = J⁻²: the form's equality case
    count = instance.count
    clock = time.process_time()
    tight = (1.0 - instance.probabilities) ** 2 / np.maximum(np.diag(information)[np.unique(cell, return_index=True)[1]]
                                                              - 1.0, 1e-3) ** 2
    diagonal_x, diagonal = best_form(form, cell, count, 0, np.log(np.maximum(tight, 1e-12)), 0)
    rank1_x, rank1 = max((best_form(form, cell, count, 1, diagonal_x, seed) for seed in range(_STARTS)),
                         key=lambda found: found[1])
    _, rank2 = best_form(form, cell, count, 2, rank1_x, _STARTS)
    return {"N": size, "epsilon": epsilon, "cells": count, "design_seconds": design_seconds,
            "design_cpu_s": round(design_cpu, 1), "types": len(result.columns), "design_nmse": nmse,
            "trace_minus_one": trace - 1.0, "equality_at_inverse_square": exact - 1.0,
            "diagonal_form": diagonal - 1.0, "rank1_form": rank1 - 1.0, "rank2_form": rank2 - 1.0,
            "diagonal_loss": 1.0 - (diagonal - 1.0) / (trace - 1.0),
            "rank1_loss": 1.0 - (rank1 - 1.0) / (trace - 1.0), "rank2_loss": 1.0 - (rank2 - 1.0) / (trace - 1.0),
            "forms_cpu_s": round(time.process_time() - clock, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=["256:4", "1000:4"], help="N:ε of the grid's Zipf cells")
    parser.add_argument("--design-seconds", type=float, default=100.0)
    parser.add_argument("--name", default="offdiagonal_form")
    args = parser.parse_args(argv)
    rows = []
    for cell in args.cells:
        size, epsilon = cell.split(":")
        rows.append(row(int(size), float(epsilon), args.design_seconds))
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in rows[-1].items()}, flush=True)
    command = " ".join(["python benchmarks/bench_offdiagonal_form.py", *(argv if argv is not None else sys.argv[1:])])
    write_results(args.name, rows, command=command)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The engines of the sub-convex utilities: the vertex LP ([E] eq. 40, reference pml-design.md §3.3) three ways.

With U(W) = Σ_y μ(W[:,y]) and μ sublinear, each column is c = θ·v with v in the column polytope, and

    max Σ_k θ_k μ(v_k)   s.t.   Σ_k θ_k v_k = 1_N,  θ ≥ 0,     W* = [θ_k v_k]_{θ_k > 0}.

* :class:`EnumerationEngine` ("enumeration"): every candidate column in one LP (HiGHS; ``solver="CLARABEL"``: cvxpy
  + Clarabel, then a HiGHS crossover for a basic solution).
* :class:`ColumnGenerationEngine` ("column_generation"): the same list priced exactly in NumPy, the master LP in one
  HiGHS model (:mod:`._colgen`).
* :class:`ListEngine` ("list"): the list, then one of the two by its length (``FULL_LP_LIMIT``).
* :class:`PricingEngine` ("pricing"): no list, the counting oracle of :mod:`mechdesign.design.polytope._count_pricer`.

For the multipliers λ of any master and r ≥ r*(λ) (the best reduced cost, or a proven bound on it), λ + r·P̂ is
dual feasible, so U* ≤ Σ_x λ_x + max(r, 0): every engine's ``upper_bound`` is such a bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from mechdesign._deadline import Deadline
from mechdesign._errors import SolverError
from mechdesign.design._certificate import finish_seconds
from mechdesign.design._engines import EngineResult, Start
from mechdesign.design._problem import DesignProblem
from mechdesign.design.polytope._count_pricer import pricing_counts

if TYPE_CHECKING:
    from mechdesign.design._utility import Utility
    from mechdesign.design.polytope._vertices import ColumnVertices

__all__ = ["ColumnGenerationEngine", "EnumerationEngine", "ListEngine", "PricingEngine", "enumerable", "priceable",
           "solve_all"]

FULL_LP_LIMIT = 3000      # candidate columns solved in one LP; above this, column generation
LIST_LIMIT = 20           # general radius (family C2): enumerating beyond 20 categories explodes
_CHUNK = 100_000
# Column generation runs to a gap 1000× below the tolerance (while time remains): optimal mechanisms then agree
# with enumeration to ~1e-10, and the certified status has room for the repair's tiny utility cost.
_INNER = 1e-3
_EPS = np.finfo(np.float64).eps


def enumerable(problem: DesignProblem) -> bool:
    """Whether the candidate columns can be listed: N ≤ MAX_SIZE, and N ≤ LIST_LIMIT for a general radius."""
    from mechdesign.design.polytope._vertices import MAX_SIZE

    general = problem.radius >= 2 * problem.prior.min and problem.radius > 0
    return problem.size <= MAX_SIZE and not (general and problem.size > LIST_LIMIT)


def list_limit(problem: DesignProblem) -> int:
    """The most categories a list is built for at this radius (``LIST_LIMIT`` for family C2, else MAX_SIZE)."""
    from mechdesign.design.polytope._vertices import MAX_SIZE

    general = problem.radius >= 2 * problem.prior.min and problem.radius > 0
    return LIST_LIMIT if general else MAX_SIZE


def priceable(problem: DesignProblem) -> bool:
    """Counts to price (the prior's, or :func:`~mechdesign.design.polytope.coarse_counts` beyond the table)."""
    from mechdesign.design.polytope._count_pricer import coarse_counts, level_function

    if not problem.utility.sublinear or level_function(problem.utility) is None:
        return False
    counts = pricing_counts(problem.prior)
    return counts is not None and coarse_counts(counts) is not None


def _refuse_list(problem: DesignProblem) -> bool | str:
    if not problem.utility.sublinear:
        return f"utility must be sub-convex for the vertex LP, got utility={problem.utility.kind!r}"
    if not enumerable(problem):
        return (f"prior must have at most {list_limit(problem)} entries to enumerate candidate columns (use "
                f"method='pricing' with a count prior), got prior={problem.size}")
    return True


class _Vertex:
    """What the vertex-LP engines share: the master solver, the time the certificate needs, the tolerance."""

    name = ""

    def __init__(self, *, solver: str = "HIGHS", basic: bool = True, max_candidates: int = 5_000_000,
                 gap_tolerance: float = 1e-7, progress: bool = False,
                 finish: Callable[[int], float] | None = None) -> None:
        self.solver, self.basic, self.max_candidates = solver, basic, max_candidates
        self.gap_tolerance, self.progress = gap_tolerance, progress
        # The certificate's time and the caller's, for M outputs (the search leaves them before the deadline).
        self.finish = finish if finish is not None else (lambda outputs: 0.0)

    def _seconds(self, problem: DesignProblem) -> Callable[[int], float]:
        return lambda outputs: finish_seconds(problem.size, outputs) + self.finish(outputs)

    def _result(self, problem: DesignProblem, columns: np.ndarray, theta: np.ndarray, bound: float, iterations: int,
                candidates: int, name: str, deadline: Deadline) -> EngineResult:
        """The weights above 1e-9 of the largest, polished when the polish fits before the deadline."""
        # Dropping dust costs only utility, never privacy: the rows are renormalized and the result re-certified.
        used = theta > 1e-9 * theta.max()
        outputs = int(np.count_nonzero(used))
        fits = deadline.remaining() > self._seconds(problem)(outputs) + finish_seconds(problem.size, outputs,
                                                                                        polish=True)
        weights = _polish(columns[:, used], theta[used]) if fits else theta[used]
        return EngineResult(columns[:, used], weights, bound, iterations, candidates, name, self.solver)


class PricingEngine(_Vertex):
    """Column generation priced by the counting oracle (count priors; MI and f-informations), no list."""

    name = "pricing"

    def accepts(self, problem: DesignProblem) -> bool | str:
        """True for a count prior (≤ 14,141 categories) and mutual information or an f-information."""
        if priceable(problem):
            return True
        return ("method must be 'pricing' only for a prior given by counts (or rational probabilities), at most "
                "14,141 categories (the knapsack table holds N·(m + 1) ≤ 2·10⁸ entries, at least one record each) "
                "and mutual information or an f-information utility, got method='pricing'")

    def run(self, problem: DesignProblem, start: Start, deadline: Deadline) -> EngineResult:
        """Column generation from ``start`` with the count oracle (coarse counts beyond the table)."""
        from mechdesign.design.information._colgen import CountOracle, generate
        from mechdesign.design.polytope._count_pricer import CoarseOracle, CountPricer, coarse_counts, level_function

        counts = pricing_counts(problem.prior)
        scaled = coarse_counts(counts) if counts is not None else None
        level = level_function(problem.utility)
        if counts is None or scaled is None or level is None:
            raise ValueError(str(self.accepts(problem)))
        batch = max(4, min(16, problem.size // 2))
        pricer = CountPricer(scaled, problem.epsilon, problem.radius, level)
        oracle: CountOracle | CoarseOracle = CountOracle(pricer, batch=batch)
        if scaled is not counts:  # beyond the table: the search prices rescaled counts, the bound stays proven
            oracle = CoarseOracle(pricer, CountPricer(counts, problem.epsilon, problem.radius, level), batch=batch)
        out = generate(problem, oracle, start.columns, start.theta, deadline=deadline, finish=self._seconds(problem),
                       basis=start.basis, gap_tolerance=self.gap_tolerance * _INNER, progress=self.progress)
        return self._result(problem, out.columns, out.theta, out.upper_bound, out.iterations, out.columns.shape[1],
                            self.name, deadline)


class EnumerationEngine(_Vertex):
    """Every candidate column in one LP."""

    name = "enumeration"

    def accepts(self, problem: DesignProblem) -> bool | str:
        """True when the candidate columns can be listed (:func:`enumerable`)."""
        return _refuse_list(problem)

    def run(self, problem: DesignProblem, start: Start, deadline: Deadline) -> EngineResult:
        """The LP over the whole list (k-RR with the identity's bound if it cannot finish in time)."""
        return self._run(problem, start, deadline, self.name)

    def _run(self, problem: DesignProblem, start: Start, deadline: Deadline, name: str) -> EngineResult:
        from mechdesign.design.polytope._vertices import vertices_over

        cv = vertices_over(problem.prior, problem.epsilon, problem.radius, max_candidates=self.max_candidates)
        values = _column_values(problem.utility, cv)
        if name == "list":
            name = "enumeration" if cv.count <= FULL_LP_LIMIT else "column_generation"
        if name == "column_generation":
            return self._generate(problem, cv, values, start, deadline)
        return self._enumerate(problem, cv, values, start, deadline)

    def _enumerate(self, problem: DesignProblem, cv: ColumnVertices, values: np.ndarray, start: Start,
                   deadline: Deadline) -> EngineResult:
        from mechdesign.design.information._colgen import identity_duals
        from mechdesign.design.information._master import TIME_LIMIT

        vectors = np.column_stack([cv.vectors(), np.ones(problem.size)])
        values = np.append(values, float(problem.utility.column_values_at(np.ones(problem.size), problem.prior)[0]))
        until = deadline.before(self._seconds(problem)(problem.size))
        try:
            theta, duals, _ = solve_all(vectors, values, self.solver, self.basic, until)
        except SolverError as exc:  # the LP did not finish in the time left: k-RR stands, with the identity's bound
            if exc.status != TIME_LIMIT and not until.expired():
                raise
            bound = float(math.fsum(identity_duals(problem)) * (1 + 4 * _EPS) + 4 * _EPS)
            return self._result(problem, start.columns, start.theta, bound, 0, cv.count, "enumeration", deadline)
        reduced = values - duals @ vectors
        bound = math.fsum(duals) + max(float(reduced.max()), 0.0)
        scale = float(np.abs(values).max()) + float(np.abs(duals).sum()) * float(vectors.max())
        bound += (8 * problem.size + 64) * np.finfo(float).eps * (1.0 + scale + abs(bound))
        return self._result(problem, vectors, theta, bound, 1, cv.count, "enumeration", deadline)

    def _generate(self, problem: DesignProblem, cv: ColumnVertices, values: np.ndarray, start: Start,
                  deadline: Deadline) -> EngineResult:
        from mechdesign.design.information._colgen import ListOracle, generate

        oracle = ListOracle(cv.vectors, cv.dot, values, batch=max(2 * problem.size, 10))
        out = generate(problem, oracle, start.columns, start.theta, deadline=deadline, finish=self._seconds(problem),
                       basis=start.basis, gap_tolerance=self.gap_tolerance * _INNER, progress=self.progress)
        return self._result(problem, out.columns, out.theta, out.upper_bound, out.iterations, cv.count,
                            "column_generation", deadline)


class ColumnGenerationEngine(EnumerationEngine):
    """The candidate list priced exactly in NumPy, the master LP in one HiGHS model."""

    name = "column_generation"

    def run(self, problem: DesignProblem, start: Start, deadline: Deadline) -> EngineResult:
        """Column generation over the whole list."""
        return self._run(problem, start, deadline, self.name)


class ListEngine(EnumerationEngine):
    """The list, then one LP up to ``FULL_LP_LIMIT`` candidates and column generation beyond (``method="auto"``)."""

    name = "list"

    def run(self, problem: DesignProblem, start: Start, deadline: Deadline) -> EngineResult:
        """Enumeration or column generation by the list's length; the result names the one that ran."""
        return self._run(problem, start, deadline, self.name)


def _column_values(utility: Utility, vertices: ColumnVertices) -> np.ndarray:
    out = np.empty(vertices.count)
    for start in range(0, vertices.count, _CHUNK):
        stop = min(start + _CHUNK, vertices.count)
        out[start:stop] = utility.column_values_at(vertices.vectors(np.arange(start, stop)), vertices.prior)
    return out


def _polish(columns: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Weights solving Σ θ_k v_k = 1 to float precision on the chosen columns (least squares), if positive.

    The LP's weights meet the rows only to its 1e-10 tolerance; renormalizing those rows later bends the
    columns off the privacy boundary by as much, which the certificate then repairs at a utility cost of
    ~1e-9. Columns at the boundary stay exactly there when the rows already sum to 1.
    """
    refined, *_ = np.linalg.lstsq(columns, np.ones(columns.shape[0]), rcond=None)
    residual = float(np.abs(columns @ refined - 1.0).max())
    if np.all(refined > 0) and residual <= 1e-13 and np.allclose(refined, theta, rtol=1e-6, atol=1e-12):
        return refined
    return theta


def solve_all(vectors: np.ndarray, values: np.ndarray, name: str, basic: bool,
              deadline: Deadline | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """The vertex LP over every column: (θ, duals λ, optimum), HiGHS or Clarabel (+ a HiGHS crossover)."""
    if name == "CLARABEL":
        from mechdesign.design.polytope._lp import solve_vertex_lp

        theta, duals, objective = solve_vertex_lp(vectors, values, "CLARABEL")
        if not basic:
            return theta, duals, objective
        support = theta > 1e-9 * theta.max()  # crossover on the support (plus the duals' tight columns)
        tight = values - duals @ vectors >= -1e-7 * max(1.0, abs(objective))
        keep = support | tight
        theta_b, duals_b, objective_b = solve_all(vectors[:, keep], values[keep], "HIGHS", basic, deadline)
        full = np.zeros(vectors.shape[1])
        full[keep] = theta_b
        return full, duals_b, objective_b
    from mechdesign.design.information._master import Master

    master = Master(vectors.shape[0])
    master.add(vectors, values)
    return master.solve(deadline.limit() if deadline is not None else math.inf)

"""The joint design for whole records: one mechanism over the product alphabet.

A record x = (x_1, …, x_d) is a letter of X = X_1 × … × X_d (N = ∏ N_i letters, mixed-radix order of
:mod:`mechdesign.core._record_prior`). The joint design is ONE mechanism W with N rows, ε-PML for every prior in
the joint ball B_β(P̂) ([E] eq. 31 on X, β = β*(δ, m, N) of eq. 37), designed by the single-attribute
engines ([E] eq. 40) for what the analyst decodes:

* ``"marginals"`` — the L-optimal criterion (``Utility.estimation_linear``) with L the stacked
  marginalisation maps (:func:`~mechdesign.core.marginal_map`): on n fixed records the decoded
  marginals have total MSE (tr(L J⁺ Lᵀ) − tr(L diag(P̂) Lᵀ))/n (:mod:`mechdesign.core._fisher`, eq. L), the
  scale of :attr:`ProductDesign.mse <mechdesign.records.ProductDesign>` and of ``record_baselines``;
* ``"joint"`` — A-optimal (``estimation_mse``): the full joint table, total MSE (tr J⁻¹ − 1)/n;
* ``"mi"`` — mutual information (column generation with counting pricing).

**Unobserved letters.** The engines take a full-support estimate (their lift vectors are normalised by
P̂·c); a joint P̂ often has zeros (Adult race × sex × education: 6 of 160 cells), and those letters must
still be privatizable. The design is therefore run on P̃ = (n + z)/(m + Z), one pseudo-record on each of
the Z unobserved letters (z their indicator), over the ball of radius β̃ = β + ‖P̃ − P̂‖₁ = β + 2Z/(m + Z)
(rounded up; clipped at 2). By the triangle inequality B_β(P̂) ⊆ B_β̃(P̃), so a mechanism ε-PML over the
design ball is ε-PML over the joint ball: the detour costs a little utility, never privacy. (One
pseudo-record, not a fraction: the counting pricer's knapsack tables grow with the count total.)

**A product start.** Beyond the sizes the estimation engine enumerates (N > 16), its local-search pricing
rarely finds the outer-product columns c_1 ⊗ … ⊗ c_d that decode marginals well: on Adult race × sex ×
education (N = 160, ε = 1) 60 s of search ended at 10× the product design's MSE. The columns of a product
design that is ε-PML over the design ball (:func:`~mechdesign.records.design_product`; the given
``start``, or one designed on P̃) are therefore offered to the engine's first master (``seeds`` of
:func:`~mechdesign.design.estimation.design_estimation`; the 1,500 heaviest, to keep the master's
K × K systems small): with all of them the master's optimum would be at most the product's value; with the
heaviest it lands near it, and the search goes on from there.

**The guarantee** is recomputed from the final matrix, solver-free: the capacity over the joint ball B_β(P̂)
(:func:`~mechdesign.core.capacity` on :meth:`~mechdesign.core._record_prior.JointBall.dense`, exact greedy, rounded
toward privacy). The utilities are recomputed at P̂ from the matrix (:mod:`mechdesign.core._fisher`); the engine's
status, value, bound and gap refer to its own problem (P̃ over B_β̃(P̃); P̂ over B_β(P̂) without zeros).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._deadline import Deadline
from mechdesign._numerics import round_up
from mechdesign.core._fisher import trace_inverse_fisher, weighted_trace_inverse_fisher
from mechdesign.core._leakage import certified_capacity
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._prior import Prior
from mechdesign.core._quantities import marginal_map
from mechdesign.core._record_capacity import product_capacity
from mechdesign.core._record_codes import joint_labels
from mechdesign.core._record_prior import JointPrior
from mechdesign.design._certificate import finish_seconds, repair
from mechdesign.design._utility import Utility
from mechdesign.records._product import ProductDesign, design_product
from mechdesign.records._setup import RecordResult, check_design_inputs, record_guarantee

__all__ = ["JOINT_DESIGN_LIMIT", "OBJECTIVES", "JointDesign", "design_joint", "marginal_weights",
           "mutual_information"]

#: What each objective asks of the engines (module docstring).
OBJECTIVES = ("marginals", "joint", "mi")
#: Largest joint alphabet designed jointly: a dense N × N Fisher information per master iteration, and the
#: engines certified up to N = 256 (MI) and a few hundred (estimation); larger records use the product design.
JOINT_DESIGN_LIMIT = 1024
_SEED_ENTRIES = 2 * 10**7  # largest N × ∏ M_i of a product offered as seeds (160 MB of float64)
# At most this many product columns (the heaviest under P̃) seed the master, whose interior point steps factor a
# K × K matrix. Adult race × sex × education, ε = 1, 60 s: all 10,131 took ~3 GB and did not finish; the heaviest
# 640 (78 % of the mass) ended at MSE 72.4, the heaviest 1,500 (92 %) at 69.1, below the product's 69.3.
_SEED_COLUMNS = 1500


@dataclass(frozen=True)
class JointDesign(RecordResult):
    """One mechanism over the product alphabet with its record-level guarantee (module docstring).

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂ (m records).
    mechanism : Mechanism
        W, inputs = the joint labels (:func:`~mechdesign.core.joint_labels`, mixed-radix order).
    epsilon : float
        The record-level guarantee: capacity of W over B_β(P̂), recomputed from W, rounded up, ≤ ``target``.
    target : float
        The requested record-level budget ε.
    radius : float
        β of the joint ball.
    delta : float or None
        The δ behind ``radius`` (eq. 37), if it was given.
    objective : str
        One of :data:`OBJECTIVES`.
    mse : float
        tr(L J⁺ Lᵀ) − tr(L diag(P̂) Lᵀ) at P̂, L the marginal maps: n × the total MSE of the decoded marginals
        on n records (``inf`` if a marginal is not identifiable).
    joint_mse : float or None
        tr J⁻¹ − 1 at P̂ (n × the total MSE of the decoded joint table) when rank W = N, else ``None``.
    information : float
        I(X; Y) in nats at P̂.
    status : str
        The engine's status ("optimal" or "feasible") on its problem (module docstring).
    value : float
        The engine's certified value of its utility (at the design centre).
    bound : float
        The engine's proven bound on the optimum (lower for the estimation criteria, upper for MI).
    gap : float
        The engine's certified gap, ``|value − bound|``.
    design_radius : float
        β̃, the radius the engine designed over (β, or β + 2Z/(m + Z) with Z unobserved letters).
    seconds : float
        CPU seconds of the design and its checks (a product start designed here included).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 (capacity), eq. 31 (ball), eq. 37 (radius) and eq. 40 (the design problem).
    """

    design = "joint"  # the record file's kind of design (RecordResult)
    prior: JointPrior
    mechanism: Mechanism
    epsilon: float
    target: float
    radius: float
    delta: float | None
    objective: str
    mse: float
    joint_mse: float | None
    information: float
    status: str
    value: float
    bound: float
    gap: float
    design_radius: float
    seconds: float

    @property
    def matrix(self) -> np.ndarray:
        """W[x, y] = P(y | x), rows in mixed-radix order."""
        return self.mechanism.matrix

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: attributes, the record-level guarantee, the matrix and the utilities.

        Returns
        -------
        dict
            ``guarantee`` holds only the record-level ε; ``engine`` the design engine's own status.
        """
        return {
            "attributes": list(self.attributes),
            "alphabets": [list(a) for a in self.prior.alphabets],
            "guarantee": record_guarantee(self),
            "inputs": list(self.mechanism.inputs), "outputs": list(self.mechanism.outputs),
            "matrix": self.matrix.tolist(),
            "utility": {"kind": "marginal_mse", "value": self.mse, "joint_mse": self.joint_mse,
                        "mutual_information": self.information, "objective": self.objective},
            "engine": {"status": self.status, "value": self.value, "bound": self.bound, "gap": self.gap,
                       "design_radius": self.design_radius, "seconds": self.seconds},
        }




    @property
    def mechanisms(self) -> tuple[Mechanism, ...]:
        """The one mechanism over the product alphabet."""
        return (self.mechanism,)

    def utility_block(self) -> dict[str, Any]:
        """The file's utility block: the marginals' n·MSE, the objective, the engine's status and the joint MSE.

        Returns
        -------
        dict
            ``kind``, ``value``, ``objective``, ``status`` and, where finite, ``joint_mse``.
        """
        utility: dict[str, Any] = {"kind": "marginal_mse", "value": self.mse, "objective": self.objective,
                                   "status": self.status}
        if self.joint_mse is not None and math.isfinite(self.joint_mse):
            utility["joint_mse"] = self.joint_mse
        return utility

    def __repr__(self) -> str:
        return (f"JointDesign({self.objective}: record ε={self.epsilon:.6g} ≤ {self.target:.6g} over "
                f"β={self.radius:.4g}, {self.matrix.shape[0]}×{self.matrix.shape[1]}, marginal MSE "
                f"{self.mse:.6g}/n, {self.status})")


def marginal_weights(prior: JointPrior) -> tuple[np.ndarray, tuple[str, ...]]:
    """L stacking the marginalisation maps of the attributes with ≥ 2 letters, and its row names.

    An attribute with one letter has a known marginal (it is 1): its row would add 1ᵀJ⁺1 − 1ᵀdiag(P̂)1 = 0
    to the MSE and is left out.

    Parameters
    ----------
    prior : JointPrior
        The joint prior (its alphabets give L's shape; N ≥ 2).

    Returns
    -------
    weights : numpy.ndarray of float64, shape (Σ N_i, N)
        Row (i, a) is the indicator of the joint letters whose attribute i is a (mixed-radix columns).
    names : tuple of str
        ``"attribute=value"`` for each row.

    Examples
    --------
    >>> weights, names = marginal_weights(JointPrior.from_table([[3, 1], [0, 4]], ["u", "v"]))
    >>> weights.astype(int).tolist(), names
    ([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]], ('u=0', 'u=1', 'v=0', 'v=1'))
    """
    kept = [i for i, n in enumerate(prior.sizes) if n >= 2]
    if not kept:
        raise v.fail("prior", "have an attribute with at least 2 letters", prior.sizes)
    letters = np.indices(prior.sizes).reshape(prior.dimension, -1)
    sub = np.ravel_multi_index(tuple(letters[kept]), tuple(prior.sizes[i] for i in kept))
    weights = marginal_map([prior.sizes[i] for i in kept])[:, sub]
    names = tuple(f"{prior.attributes[i]}={a}" for i in kept for a in prior.alphabets[i])
    return weights, names


def mutual_information(matrix: Any, prior: np.ndarray) -> float:
    """I(X; Y) in nats of a row-stochastic ``matrix`` at the probability vector ``prior`` (zeros allowed)."""
    w = np.asarray(matrix, dtype=np.float64)
    q = prior @ w
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, w * np.log(w / q), 0.0)
    return float(max(prior @ terms.sum(axis=1), 0.0))


def _design_prior(prior: JointPrior, labels: tuple[str, ...], radius: float) -> tuple[Prior, float]:
    """P̃ (one pseudo-record per unobserved letter) and β̃ with B_β(P̂) ⊆ B_β̃(P̃) (module docstring)."""
    counts = np.zeros(prior.size, dtype=np.int64)
    counts[prior.indices] = prior.counts
    unobserved = int(np.count_nonzero(counts == 0))
    if unobserved == 0:
        return Prior.from_counts(counts, labels), radius
    counts[counts == 0] = 1
    shift = 2.0 * unobserved / (prior.samples + unobserved)  # ‖P̃ − P̂‖₁, exactly in real arithmetic
    return Prior.from_counts(counts, labels), min(2.0, round_up(radius + shift, terms=4))


def _utility(objective: str, weights: np.ndarray, names: tuple[str, ...]) -> Utility:
    if objective == "marginals":
        return Utility.estimation_linear(weights, names)
    return Utility("estimation_mse" if objective == "joint" else "mutual_information")


def design_joint(prior: JointPrior, epsilon: float, *, delta: float | None = None, radius: float | None = None,
                 objective: str = "marginals", time_limit: float = 60.0,
                 start: ProductDesign | None = None, deadline: Deadline | None = None) -> JointDesign:
    """One ε-PML mechanism over the product alphabet, record-level guarantee recomputed (module docstring).

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂ (zeros allowed: every letter of the product alphabet gets a row).
    epsilon : float
        The record-level budget ε > 0 (nats).
    delta : float, optional
        Failure probability: β = β*(δ, m, N) of [E] eq. 37 on the joint alphabet (clipped to 2).
    radius : float, optional
        A given β ∈ [0, 2] instead of ``delta`` (exactly one of the two).
    objective : {"marginals", "joint", "mi"}
        The utility: L-optimal for every marginal, A-optimal for the joint table, or mutual information.
    time_limit : float
        Seconds for the whole design (wall clock; at the limit the engine returns its best certified design,
        status "feasible", with its gap): a product start designed here, the engine, and the joint certificate.
    start : ProductDesign, optional
        A product design of the same prior whose heaviest columns start the engine (N > 16, estimation
        objectives; module docstring), used when it is ε-PML over the design ball (always when every letter
        is observed); otherwise, and by default, a product design is made on P̃ over the design ball.
    deadline : Deadline, optional
        The end of the whole design (:class:`~mechdesign.Deadline`; the CLI's, counted from the command's
        start), replacing ``time_limit``: the product start, the engine and the joint certificate all end by it.

    Returns
    -------
    JointDesign
        The mechanism, its record-level ε (≤ ``epsilon``), its utilities at P̂ and the engine's status.

    Raises
    ------
    TypeError
        If ``prior`` is not a :class:`JointPrior`.
    ValueError
        If ``epsilon`` ≤ 0, ``objective`` is unknown, not exactly one of ``delta``/``radius`` is given,
        N < 2 or N > :data:`JOINT_DESIGN_LIMIT`.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 (capacity), eq. 31 (ball), eq. 37 (radius), eq. 40 (design problem).

    Examples
    --------
    >>> prior = JointPrior.from_table([[40, 10], [0, 50]], attributes=["a", "b"])   # one unobserved letter
    >>> design = design_joint(prior, 1.0, radius=0.1)
    >>> design.epsilon <= 1.0, design.matrix.shape[0], design.design_radius > 0.1
    (True, 4, True)
    """
    eps, limit = check_design_inputs(prior, epsilon, time_limit)
    if objective not in OBJECTIVES:
        raise v.fail("objective", f"be one of {list(OBJECTIVES)}", objective)
    if deadline is None:
        deadline = Deadline(limit)
    if not 2 <= prior.size <= JOINT_DESIGN_LIMIT:
        raise v.fail("the joint alphabet", f"have 2 to {JOINT_DESIGN_LIMIT} letters for a joint design (use "
                     "design_product beyond)", prior.size)
    from mechdesign.core._threads import single_thread

    # Matrices of a few hundred columns: BLAS threads only contend (pyproject.toml); on a loaded 2-core machine the
    # two Fisher traces after the engine take 1.9 s with two threads, enough to push a run past a 30-s limit.
    with single_thread():
        return _design_joint(prior, eps, delta, radius, objective, start, deadline)


def _design_joint(prior: JointPrior, eps: float, delta: float | None, radius: float | None, objective: str,
                  start: ProductDesign | None, deadline: Deadline) -> JointDesign:
    """:func:`design_joint` past its checks, on one BLAS thread."""
    ball = prior.ball(delta, radius=radius)
    clock = time.process_time()
    labels = joint_labels(prior.alphabets)
    weights, names = marginal_weights(prior)
    design_prior, design_radius = _design_prior(prior, labels, ball.radius)
    from mechdesign.design.estimation._engine import ENUMERATE_UP_TO

    seeds = None  # the enumerated engine sees every vertex: no seeds
    if objective != "mi" and prior.size > ENUMERATE_UP_TO:
        seeds = _product_seeds(prior, design_prior, design_radius, eps, start, max(deadline.remaining(), 1e-9))
    # After the engine: the capacity over the joint ball (and a repair if float noise needs one) and the two
    # Fisher traces, about as long as the engine's own certificate.
    after = finish_seconds(prior.size, 8 * prior.size)
    result = _run_engine(design_prior, eps, design_radius, _utility(objective, weights, names),
                         deadline.before(after), seeds)
    joint_ball = ball.dense()
    outputs = [f"y{k}" for k in range(result.mechanism.matrix.shape[1])]
    # Decided, and stated, on the capacity as a certificate states it (rounded up), not on the raw float value, and
    # of the matrix the design returns: from_matrix renormalizes the rows, which moves the capacity by an ulp.
    mechanism = Mechanism.from_matrix(result.mechanism.matrix, labels, outputs)
    achieved = certified_capacity(mechanism.matrix, joint_ball)
    if achieved > eps:  # B_β(P̂) ⊆ the design ball, so only float noise of the two priors' ulps can: post-process
        mechanism = Mechanism.from_matrix(repair(mechanism.matrix, joint_ball, eps)[0], labels, outputs)
        achieved = certified_capacity(mechanism.matrix, joint_ball)
    p_hat = prior.dense()
    mse = weighted_trace_inverse_fisher(mechanism.matrix, p_hat, weights) - float(p_hat @ np.sum(weights**2, axis=0))
    joint = trace_inverse_fisher(mechanism.matrix, p_hat) - 1.0
    return JointDesign(prior, mechanism, achieved, eps, ball.radius, delta, objective, mse,
                       joint if np.isfinite(joint) else None, mutual_information(mechanism.matrix, p_hat),
                       result.status, result.utility, result.upper_bound, result.gap, design_radius,
                       time.process_time() - clock)


def _product_seeds(prior: JointPrior, design_prior: Prior, design_radius: float, epsilon: float,
                   start: ProductDesign | None, time_limit: float) -> np.ndarray | None:
    """The columns of a product design ε-PML over B_β̃(P̃): ``start`` if it is, else one designed on P̃."""
    smoothed = JointPrior.from_table(np.asarray(design_prior.counts).reshape(prior.sizes), prior.attributes,
                                     prior.alphabets)
    ball = smoothed.ball(radius=design_radius)
    if start is not None and not (isinstance(start, ProductDesign) and start.prior.sizes == prior.sizes):
        raise TypeError(f"start must be a ProductDesign of the same attributes, got start={start!r}"[:200])
    if start is None or product_capacity([f.matrix for f in start.factors], ball).epsilon > epsilon:
        start = design_product(smoothed, epsilon, radius=design_radius, time_limit=time_limit)
    factors = [f.matrix for f in start.factors]
    if prior.size * np.prod([w.shape[1] for w in factors]) > _SEED_ENTRIES:
        return None
    seeds = factors[0]
    for w in factors[1:]:
        seeds = np.kron(seeds, w)
    heaviest = np.argsort(-(design_prior.probabilities @ seeds), kind="stable")[:_SEED_COLUMNS]
    return seeds[:, heaviest]


def _run_engine(design_prior: Prior, epsilon: float, radius: float, utility: Utility, deadline: Deadline,
                seeds: np.ndarray | None) -> Any:
    """The certified design of the engine behind :func:`mechdesign.solve` for this utility, without baselines."""
    from mechdesign.design._problem import DesignProblem

    problem = DesignProblem(design_prior, epsilon, radius, utility, samples=design_prior.samples, name="joint")
    if utility.sublinear:
        from mechdesign.design._solver import design_dense

        return design_dense(problem, baselines=False, deadline=deadline)
    from mechdesign.design.estimation._engine import ENUMERATE_UP_TO, design_estimation

    # Beyond the enumerated sizes the Carathéodory reduction's HiGHS LP can stall past the time limit
    # (records/_product.py saw > 10 min on Adult education); it only trims outputs, J is the same.
    return design_estimation(problem, baselines=False, reduce=problem.size <= ENUMERATE_UP_TO,
                             deadline=deadline, seeds=seeds)

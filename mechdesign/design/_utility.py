"""Sub-convex utilities ([E] eq. 11): U(W) = Σ_y μ(W[:, y]) with μ sublinear.

μ is positively homogeneous and convex, and independent of the label y (reference/pml-design.md §3).

Column values μ(c) for a column c ≥ 0 and the estimated prior P̂:

=====================================  =====================================================
mutual information I(X;Y)              Σ_x P̂_x c_x log( c_x / (P̂·c) )
f-information Σ_y P_Y(y) D_f(P_X|y‖P̂)  (P̂·c) Σ_x P̂_x φ( c_x / (P̂·c) ), φ convex, φ(1) = 0
posterior guessing probability         max_x P̂_x c_x      (U = Σ_y max_x P(x, y))
hypothesis testing D(P₀W ‖ P₁W)        (P₀·c) log( (P₀·c) / (P₁·c) )   (KL between the output laws)
=====================================  =====================================================

Three further kinds are **not** sub-convex and are minimised (``sense = "minimize"``,
``sublinear = False``): ``estimation_mse`` (A-optimal: tr J⁻¹ − 1 with the Fisher information
J = W diag(1/P̂W) Wᵀ), ``estimation_linear`` (L-optimal: tr(L J⁺ Lᵀ) − tr(L diag(P̂) Lᵀ) for the
analyst's quantities Lp, :mod:`mechdesign.core._quantities`) and ``estimation_logdet`` (D-optimal:
−log det J); they are solved by :mod:`mechdesign.design.estimation._engine`, not by the vertex LP.

f-information kinds: total variation φ(t) = |t − 1|/2, χ² φ(t) = (t − 1)², squared Hellinger
φ(t) = (√t − 1)². A user-supplied μ (``Utility.custom``) must be sublinear; the vertex reduction of
:mod:`mechdesign.design._solver` is exact only then, and a cheap homogeneity check is run on first use.

One small class per utility behind the :class:`Utility` protocol (``kind``, ``column_values``, ``value``,
``to_dict``); ``Utility(kind)`` stays the factory and returns the class registered for ``kind``. A new
utility is a subclass with a ``kind`` and ``_columns`` and nothing else to edit.

Every column is evaluated at scale 1 (divided by its largest entry, then multiplied back: exact by
positive homogeneity), so columns of subnormal numbers such as (0, 0, 5e-324) never divide by zero.

Because μ is positively homogeneous, a column c = (P̂·c) v with P̂·v = 1 has μ(c) = (P̂·c) μ(v); the
design LP works with the lift vectors v (reference §3.3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._mechanism import MatrixLike, Mechanism, as_mechanism
from mechdesign.core._prior import Prior, PriorLike, as_prior

__all__ = ["UTILITY_KINDS", "ChiSquared", "Custom", "EstimationLinear", "EstimationLogDet", "EstimationMSE",
           "FInformation",
           "GuessingProbability", "Hellinger", "HypothesisTesting", "MutualInformation", "TotalVariation", "Utility"]


def _xlogy_ratio(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise x log(x / y) with 0 log(0 / y) = 0 (elementwise, y > 0 where x > 0)."""
    out = np.zeros(np.broadcast(x, y).shape)
    pos = np.broadcast_to(x > 0, out.shape)
    xb, yb = np.broadcast_to(x, out.shape), np.broadcast_to(y, out.shape)
    out[pos] = xb[pos] * np.log(xb[pos] / yb[pos])
    return out


class Utility:
    """A sub-convex utility U(W) = Σ_y μ(W[:, y]) ([E] eq. 11): the protocol and the factory.

    ``Utility("mutual_information")`` (any kind in :data:`UTILITY_KINDS` that needs no extra data)
    returns an instance of the class registered for that kind; :meth:`hypothesis_testing` and
    :meth:`custom` build the two kinds that carry data.

    Parameters
    ----------
    *args
        ``kind``, the name of the utility, one of :data:`UTILITY_KINDS` (subclasses take their own data).
    **kwargs
        ``kind`` may also be passed by keyword.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, or names a kind that needs data (use the class methods).

    References
    ----------
    .. [E] "Privacy Mechanism Design based on Empirical Distributions", eq. 11 (sub-convex utilities).

    Examples
    --------
    >>> u = Utility("mutual_information")
    >>> type(u).__name__, u.kind
    ('MutualInformation', 'mutual_information')
    >>> bool(abs(u.value([[1, 0], [0, 1]], [0.5, 0.5]) - np.log(2)) < 1e-12)
    True
    """

    kind: ClassVar[str]
    #: True for column-separable sublinear utilities (the vertex LP of :mod:`mechdesign.design._solver`);
    #: False for the estimation criteria, which :func:`mechdesign.design.estimation.design_estimation` solves.
    sublinear: ClassVar[bool] = True
    #: "maximize" (larger is better) or "minimize" (the estimation criteria: an error to make small).
    sense: ClassVar[str] = "maximize"
    _registry: ClassVar[dict[str, type[Utility]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            Utility._registry[cls.kind] = cls

    def __new__(cls, *args: Any, **kwargs: Any) -> Utility:
        """Dispatch ``Utility(kind)`` to the class registered for ``kind``."""
        if cls is not Utility:
            return super().__new__(cls)
        kind = args[0] if args else kwargs.get("kind")
        if not isinstance(kind, str) or kind not in Utility._registry:
            raise v.fail("kind", f"be one of {list(UTILITY_KINDS)}", kind)
        target = Utility._registry[kind]
        if target._needs_data:
            raise ValueError(f"kind {kind!r} needs data: use Utility.{kind}(...)")
        return target()

    _needs_data: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Instances are built by the factory or the subclasses; nothing to store by default."""

    def __repr__(self) -> str:
        return f"Utility({self.kind!r})"

    @classmethod
    def hypothesis_testing(cls, null: Any, alternative: Any) -> HypothesisTesting:
        """KL divergence D(P₀W ‖ P₁W) between the output laws under two hypotheses P₀ (null), P₁.

        μ(c) = (P₀·c) log((P₀·c) / (P₁·c)), sublinear as a perspective of a convex function ([E] eq. 11).

        Parameters
        ----------
        null : PriorLike
            P₀, the input distribution under the null hypothesis.
        alternative : PriorLike
            P₁, the input distribution under the alternative; must have full support and the size of P₀.

        Returns
        -------
        HypothesisTesting
            The utility, with ``kind = "hypothesis_testing"``.

        Raises
        ------
        ValueError
            If either is not a probability vector, P₁ has a zero entry, or the sizes differ.
        """
        return HypothesisTesting(null, alternative)

    @classmethod
    def custom(cls, function: Callable[[np.ndarray, np.ndarray], float]) -> Custom:
        """A user column utility μ(c, prior) → float; it must be positively homogeneous and convex.

        The vertex reduction of the design LP is exact only for sublinear μ ([E] eq. 11); homogeneity
        μ(2c) = 2μ(c) is spot-checked on a fixed column on first evaluation.

        Parameters
        ----------
        function : callable
            ``function(column, prior_probabilities) -> float``.

        Returns
        -------
        Custom
            The utility, with ``kind = "custom"``.

        Raises
        ------
        TypeError
            If ``function`` is not callable.
        """
        return Custom(function)

    @classmethod
    def estimation_linear(cls, weights: Any, names: Any = None) -> EstimationLinear:
        """L-optimality for the quantities Lp: n × the total MSE of their efficient unbiased decoder.

        tr(L J⁺ Lᵀ) − tr(L diag(P̂) Lᵀ) (:func:`mechdesign.core.weighted_trace_inverse_fisher`); L = I
        gives ``estimation_mse``. Maps for marginals, subsets and aggregates: :mod:`mechdesign.core._quantities`.

        Parameters
        ----------
        weights : array_like, shape (k, N)
            The map L (finite, not all zero).
        names : sequence of str, optional
            One distinct name per quantity (row of L); default "q0", "q1", ….

        Returns
        -------
        EstimationLinear
            The utility, with ``kind = "estimation_linear"``.

        Raises
        ------
        ValueError
            If ``weights`` is not a finite non-zero 2-D array, or ``names`` has the wrong length or repeats.
        """
        return EstimationLinear(weights, names)

    def check_size(self, size: int) -> None:
        """Raise ``ValueError`` if the utility's own data does not fit an alphabet of ``size`` categories.

        Called once by :class:`~mechdesign.design.DesignProblem`; kinds without data accept any size.

        Parameters
        ----------
        size : int
            N, the number of categories of the prior.

        Raises
        ------
        ValueError
            If the utility's data has the wrong size (``estimation_linear``: weights without N columns).
        """

    def column_values(self, columns: Any, prior: PriorLike) -> np.ndarray:
        """μ(c) for each column of ``columns`` (shape N or N×K, entries ≥ 0) under ``prior``.

        Parameters
        ----------
        columns
            Array of shape (N,) or (N, K), finite and non-negative.
        prior
            The estimate P̂ (anything :class:`~mechdesign.core.Prior` accepts).

        Returns
        -------
        numpy.ndarray
            Shape (K,): μ of each column.

        Raises
        ------
        ValueError
            If ``columns`` has the wrong number of rows, or a negative or non-finite entry.
        """
        return self.column_values_at(columns, as_prior(prior))

    def column_values_at(self, columns: Any, prior: Prior) -> np.ndarray:
        """:meth:`column_values` at a :class:`~mechdesign.core.Prior`, taken as it is (no coercion).

        The engines and the certificate hold the problem's prior, normalised once by
        :class:`~mechdesign.design.DesignProblem`; they call this.

        Parameters
        ----------
        columns
            Array of shape (N,) or (N, K), finite and non-negative.
        prior : Prior
            The estimate P̂.

        Returns
        -------
        numpy.ndarray
            Shape (K,): μ of each column.
        """
        p = prior.probabilities
        c = v.nonnegative_columns("columns", columns, p.size)
        scale = c.max(axis=0) if c.size else np.zeros(c.shape[1])
        out = np.zeros(c.shape[1])
        used = scale > 0  # μ(0) = 0 for a sublinear μ
        if np.any(used):
            out[used] = scale[used] * self._columns(c[:, used] / scale[used], p)
        return out

    def _columns(self, c: np.ndarray, p: np.ndarray) -> np.ndarray:
        """μ of each column of ``c`` (validated, every column with largest entry exactly 1)."""
        raise NotImplementedError

    def value(self, mechanism: MatrixLike, prior: PriorLike) -> float:
        """U(W) = Σ_y μ(W[:, y]) for the mechanism under ``prior`` (the estimate P̂; [E] eq. 11).

        Parameters
        ----------
        mechanism : Mechanism or array_like, shape (N, M)
            The mechanism W, ``matrix[x, y] = P(y | x)``.
        prior : PriorLike
            The estimate P̂ (N entries).

        Returns
        -------
        float
            The utility U(W).

        Raises
        ------
        ValueError
            If the mechanism or the prior is invalid, or their sizes differ.
        """
        mech = as_mechanism(mechanism)
        return self.value_at(mech, as_prior(prior))

    def value_at(self, mechanism: Mechanism, prior: Prior) -> float:
        """:meth:`value` of a :class:`~mechdesign.core.Mechanism` at a :class:`~mechdesign.core.Prior` (no coercion).

        The certificate holds the problem's prior, normalised once by :class:`~mechdesign.design.DesignProblem`, and
        calls this; the prior is checked against the mechanism's inputs only.

        Parameters
        ----------
        mechanism : Mechanism
            The mechanism W.
        prior : Prior
            The estimate P̂ (N entries).

        Returns
        -------
        float
            The utility U(W).
        """
        p = mechanism.matching_prior(prior)
        return float(np.sum(self.column_values_at(mechanism.matrix, p)))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in problem and mechanism files.

        Returns
        -------
        dict
            ``{"kind": ...}``, plus the data of kinds that carry it.
        """
        return {"kind": self.kind}


class MutualInformation(Utility):
    """I(X;Y): μ(c) = Σ_x P̂_x c_x log(c_x / (P̂·c))."""

    kind = "mutual_information"

    def _columns(self, c: np.ndarray, p: np.ndarray) -> np.ndarray:
        mass = p @ c
        return (p[:, None] * _xlogy_ratio(c, mass[None, :])).sum(axis=0)


class GuessingProbability(Utility):
    """Posterior guessing probability Σ_y max_x P(x, y): μ(c) = max_x P̂_x c_x."""

    kind = "guessing_probability"

    def _columns(self, c: np.ndarray, p: np.ndarray) -> np.ndarray:
        return (p[:, None] * c).max(axis=0)


class FInformation(Utility):
    """f-information Σ_y P_Y(y) D_f(P_X|y ‖ P̂): μ(c) = (P̂·c) Σ_x P̂_x φ(c_x / (P̂·c)), φ convex, φ(1) = 0."""

    @staticmethod
    def generator(t: np.ndarray) -> np.ndarray:
        """φ, applied elementwise."""
        raise NotImplementedError

    def _columns(self, c: np.ndarray, p: np.ndarray) -> np.ndarray:
        mass = p @ c
        out = np.zeros(c.shape[1])
        used = mass > 0
        out[used] = mass[used] * (p[:, None] * self.generator(c[:, used] / mass[used])).sum(axis=0)
        return out


class TotalVariation(FInformation):
    """f-information with φ(t) = |t − 1| / 2."""

    kind = "total_variation"

    @staticmethod
    def generator(t: np.ndarray) -> np.ndarray:
        """φ(t) = |t − 1| / 2, applied elementwise."""
        return 0.5 * np.abs(t - 1.0)


class ChiSquared(FInformation):
    """f-information with φ(t) = (t − 1)²."""

    kind = "chi_squared"

    @staticmethod
    def generator(t: np.ndarray) -> np.ndarray:
        """φ(t) = (t − 1)², applied elementwise."""
        return (t - 1.0) ** 2


class Hellinger(FInformation):
    """f-information with φ(t) = (√t − 1)² (squared Hellinger)."""

    kind = "hellinger"

    @staticmethod
    def generator(t: np.ndarray) -> np.ndarray:
        """φ(t) = (√t − 1)², applied elementwise."""
        return (np.sqrt(t) - 1.0) ** 2


class HypothesisTesting(Utility):
    """KL divergence D(P₀W ‖ P₁W) between the output laws under a null P₀ and an alternative P₁.

    μ(c) = (P₀·c) log((P₀·c) / (P₁·c)); P₁ must have full support.
    """

    kind = "hypothesis_testing"
    _needs_data = True

    def __init__(self, null: Any, alternative: Any) -> None:
        p0 = as_prior(null, "null").probabilities
        p1 = as_prior(alternative, "alternative", full_support=True).probabilities
        if p0.size != p1.size:
            raise v.fail("alternative", f"have {p0.size} entries like null", p1)
        self.null, self.alternative = p0, p1

    def __repr__(self) -> str:
        return f"Utility.hypothesis_testing({self.null.tolist()}, {self.alternative.tolist()})"

    def _columns(self, c: np.ndarray, p: np.ndarray) -> np.ndarray:
        if c.shape[0] != self.null.size:
            raise v.fail("columns", f"have {self.null.size} rows like the hypotheses", c.shape)
        return _xlogy_ratio(self.null @ c, self.alternative @ c)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``kind``, ``null`` and ``alternative``."""
        return {"kind": self.kind, "null": self.null.tolist(), "alternative": self.alternative.tolist()}


class Custom(Utility):
    """A user column function μ(c, prior) → float, which must be sublinear.

    Homogeneity μ(2c) = 2μ(c) is spot-checked on a fixed column when first evaluated.
    """

    kind = "custom"
    _needs_data = True

    def __init__(self, function: Callable[[np.ndarray, np.ndarray], float]) -> None:
        if not callable(function):
            raise TypeError(f"function must be callable, got function={function!r}")
        self.function = function

    def __repr__(self) -> str:
        return f"Utility.custom({self.function!r})"

    def _columns(self, c: np.ndarray, p: np.ndarray) -> np.ndarray:
        probe = np.linspace(0.5, 1.5, p.size)
        once, twice = float(self.function(probe, p)), float(self.function(2 * probe, p))
        if not np.isclose(twice, 2 * once, rtol=1e-9, atol=1e-12):
            raise v.fail("function", "be positively homogeneous (μ(2c) = 2μ(c))", (once, twice))
        return np.array([float(self.function(c[:, k].copy(), p)) for k in range(c.shape[1])])


class _Estimation(Utility):
    """Base of the estimation criteria: functions of the Fisher information J = W diag(1/q) Wᵀ at P̂.

    See :mod:`mechdesign.core._fisher`; to be minimised; not column-separable, so no ``column_values``.
    """

    sublinear = False
    sense = "minimize"

    def column_values_at(self, columns: Any, prior: Prior) -> np.ndarray:
        """Refuse: the estimation criteria are not sums over columns (always raises ``TypeError``)."""
        raise TypeError(f"utility kind {self.kind!r} is not a sum over columns (it is a function of the Fisher "
                        "information): use value(mechanism, prior)")


class EstimationMSE(_Estimation):
    """A-optimality: tr J⁻¹ − 1, the total MSE × n of the efficient decoder on n fixed records.

    (On n i.i.d. records the total MSE is (tr J⁻¹ − ‖P̂‖²)/n.) ``inf`` when rank W < N: some
    frequencies cannot be estimated at all. Smaller is better.

    >>> abs(Utility("estimation_mse").value(np.eye(3), [0.5, 0.3, 0.2])) < 1e-12   # no noise, no error
    True
    """

    kind = "estimation_mse"

    def value_at(self, mechanism: Mechanism, prior: Prior) -> float:
        """The A-criterion tr J⁻¹ − 1 for the mechanism at ``prior`` (``inf`` when rank W < N).

        Never below 0, its least value (J ⪯ diag(1/P̂): tr J⁻¹ ≥ 1): the identity's 1 − 1 computed as −2.2e-16 is 0.
        """
        from mechdesign.core._fisher import trace_inverse_fisher

        p = mechanism.matching_prior(prior).probabilities
        return max(trace_inverse_fisher(mechanism.matrix, p) - 1.0, 0.0)


class EstimationLinear(_Estimation):
    """L-optimality: tr(L J⁺ Lᵀ) − tr(L diag(P̂) Lᵀ), the total MSE × n of the decoded Lp on n fixed records.

    For the analyst's quantities Lp (L a k×N map: marginals, a subset of categories, aggregates;
    :mod:`mechdesign.core._quantities`). Only Lp needs to be identifiable (the rows of L in the range of J),
    not p: ``inf`` otherwise (:func:`mechdesign.core.weighted_trace_inverse_fisher`). L = I is
    ``estimation_mse``; rows of L may be shifted by multiples of 1ᵀ without changing the value. Smaller is
    better.

    >>> u = Utility.estimation_linear([[1.0, 0.0, 0.0]], names=["first"])
    >>> w = [[0.75, 0.25], [0.25, 0.75], [0.25, 0.75]]   # randomized response on "is it the first?", e^ε = 3
    >>> round(u.value(w, [0.2, 0.3, 0.5]), 12)   # e^ε/(e^ε − 1)², whatever the prior
    0.75
    """

    kind = "estimation_linear"
    _needs_data = True

    def __init__(self, weights: Any, names: Any = None) -> None:
        matrix = v.finite_array("weights", weights, 2)
        if not np.any(matrix):
            raise v.fail("weights", "have a non-zero entry", matrix)
        matrix.setflags(write=False)
        self.weights = matrix
        self.names = v.labels("names", names, matrix.shape[0], "q")

    def __repr__(self) -> str:
        return f"Utility.estimation_linear(<{self.weights.shape[0]}×{self.weights.shape[1]} weights>)"

    def check_size(self, size: int) -> None:
        """Raise ``ValueError`` unless L has one column per category."""
        if self.weights.shape[1] != size:
            raise v.fail("weights", f"have {size} columns (one per category)", self.weights.shape)

    def offset(self, prior: np.ndarray) -> float:
        """tr(L diag(P̂) Lᵀ) = Σ_x P̂_x ‖L[:, x]‖²: the part of tr(L J⁺ Lᵀ) that no mechanism removes."""
        return float(prior @ np.sum(self.weights**2, axis=0))

    def value_at(self, mechanism: Mechanism, prior: Prior) -> float:
        """The L-criterion tr(L J⁺ Lᵀ) − tr(L diag(P̂) Lᵀ) at ``prior`` (``inf`` when Lp is not identifiable)."""
        from mechdesign.core._fisher import weighted_trace_inverse_fisher

        p = mechanism.matching_prior(prior).probabilities
        self.check_size(p.size)
        return weighted_trace_inverse_fisher(mechanism.matrix, p, self.weights) - self.offset(p)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``kind``, ``weights`` (the rows of L) and ``names``."""
        return {"kind": self.kind, "weights": self.weights.tolist(), "names": list(self.names)}


class EstimationLogDet(_Estimation):
    """D-optimality: −log det J (the log volume of the estimator's confidence ellipsoid up to constants).

    ``inf`` when rank W < N. Smaller is better.

    >>> round(Utility("estimation_logdet").value(np.eye(2), [0.5, 0.5]), 10)   # J = diag(2, 2): −2 log 2
    -1.3862943611
    """

    kind = "estimation_logdet"

    def value_at(self, mechanism: Mechanism, prior: Prior) -> float:
        """The D-criterion −log det J for the mechanism at ``prior`` (``inf`` when rank W < N)."""
        from mechdesign.core._fisher import fisher_information

        p = mechanism.matching_prior(prior).probabilities
        if np.linalg.matrix_rank(mechanism.matrix, tol=1e-10) < p.size:
            return float("inf")
        sign, logdet = np.linalg.slogdet(fisher_information(mechanism.matrix, p))
        return -float(logdet) if sign > 0 else float("inf")


#: Every utility kind, in the order of the module table.
UTILITY_KINDS: tuple[str, ...] = tuple(Utility._registry)

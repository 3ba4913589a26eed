"""The design problem of [E] §V, eq. 40, and its feasible set as named groups of cvxpy constraints.

Maximize U(W, P̂) over mechanisms that are ε-PML for every prior in B_β(P̂) (reference/pml-design.md
§3.1–3.2).

Feasible-set forms (all per column c = W[:, y], a = e^ε, g(c) = min_{Q∈B} Q·c):

``fixed_prior`` (β = 0)
    c_i ≤ a P̂·c ([E] ref. [15], Lemma 1).
``proposition2`` (0 < β < 2 min P̂)
    c_i ≤ e^{ε′}(P̂·c + (β/2) c_i′) for all i, i′, with ε′ = log(e^ε / (1 + (β/2) e^ε)) ([E] Prop. 2, eq. 43).
``lifted`` (any β ∈ [0, 2]) [D]
    By LP duality of the inner maximization in g(c) = P̂·c − max{Σ w_i (c_i − min c) : 0 ≤ w ≤ P̂,
    Σ w ≤ β/2}: g(c) ≥ t ⇔ ∃ λ, η ≥ 0, ζ ≥ 0 with λ ≤ c_i, η + ζ_i ≥ c_i − λ (all i) and
    t ≤ P̂·c − (β/2)η − P̂·ζ; then c_i ≤ a t. At β = 2 this is exactly ε-LDP.

The inner approximation 𝓜(ε′, P̂) ⊆ 𝓜(ε, B_β(P̂)) ([E] eq. 44) is the fixed-prior form at ε′.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._numerics import EXP_CAP, exp_capped
from mechdesign.core._prior import Prior, PriorLike, as_prior
from mechdesign.core._sample_radius import design_radius
from mechdesign.core._uncertainty import L1Ball
from mechdesign.design._utility import Utility

__all__ = ["FORMS", "DesignProblem", "epsilon_prime_of"]

FORMS = ("fixed_prior", "proposition2", "lifted")


def epsilon_prime_of(epsilon: float, radius: float) -> float:
    """The inner-approximation budget ε′ = log(e^ε / (1 + (β/2) e^ε)) = ε − log(1 + (β/2) e^ε) ([E] eq. 43).

    ε′ may be negative (then the inner set 𝓜(ε′, P̂) of eq. 44 is empty). Huge ε is handled without
    overflow.

    Parameters
    ----------
    epsilon : float
        Budget ε ≥ 0 (nats).
    radius : float
        Ball radius β ∈ [0, 2].

    Returns
    -------
    float
        ε′ ≤ ε (equal at β = 0).

    Raises
    ------
    ValueError
        If ``epsilon`` < 0 or ``radius`` ∉ [0, 2].
    TypeError
        If an argument is not a real number.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions", eq. 43–44.

    Examples
    --------
    >>> round(epsilon_prime_of(1.0, 0.0), 12)
    1.0
    """
    eps, beta = v.epsilon(epsilon), v.radius(radius)
    if beta == 0:
        return eps
    if eps < EXP_CAP:
        return eps - math.log1p(beta / 2 * math.exp(eps))
    # log1p(β/2 e^ε) = ε + log(β/2) + log1p(2/(β e^ε)): ε cancels exactly (ε − (ε + log(β/2)) is 0 at ε = 1e308)
    return -math.log(beta / 2) - math.log1p(2 / beta * math.exp(-eps))


def _as_utility(utility: Utility | str) -> Utility:
    if isinstance(utility, Utility):
        return utility
    if isinstance(utility, str):
        return Utility(utility)
    raise TypeError(f"utility must be a Utility or a kind name, got utility={utility!r}")


@dataclass(frozen=True, eq=False)
class DesignProblem:
    """Prior estimate, radius β, budget ε and utility of one design ([E] eq. 40).

    maximize U(W, P̂) over W ∈ 𝓜(ε, B_β(P̂)), the mechanisms that are ε-PML for every prior in the ℓ1
    ball of radius β around P̂. Build directly with a radius, or with :meth:`from_delta` (β = β*(δ) of
    [E] eq. 37 from m samples; radii above 2 are clipped to 2, where the ball is the whole simplex and
    the design is ε-LDP). Validated on construction; frozen.

    Parameters
    ----------
    prior : Prior or array_like, shape (N,)
        The estimate P̂ (full support, N ≥ 2).
    epsilon : float
        Budget ε ≥ 0 (nats).
    radius : float
        Ball radius β ∈ [0, 2]; 0 is the fixed-prior problem, 2 is ε-LDP.
    utility : Utility or str
        The objective, or the name of a utility kind (default mutual information).
    delta : float, optional
        The failure probability behind ``radius`` (recorded, not used to compute it).
    samples : int, optional
        The sample size m behind ``radius`` (recorded).
    name : str
        A label for reports and files.

    Raises
    ------
    ValueError
        If ``prior`` lacks full support or has fewer than 2 entries, ``epsilon`` < 0, ``radius`` ∉ [0, 2],
        ``delta`` ∉ (0, 1], ``samples`` ≤ 0, ``utility`` names no known kind, or its data does not fit
        the prior (``estimation_linear`` weights without one column per category).
    TypeError
        If ``utility`` is neither a :class:`Utility` nor a string, or a number has the wrong type.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        §V, eq. 40 and eq. 37.

    Examples
    --------
    >>> problem = DesignProblem([0.4, 0.2, 0.2, 0.2], math.log(9 / 8))
    >>> problem.form, problem.size
    ('fixed_prior', 4)
    """

    prior: Prior
    epsilon: float
    radius: float = 0.0
    utility: Utility = field(default_factory=lambda: Utility("mutual_information"))
    delta: float | None = None
    samples: int | None = None
    name: str = "design"

    def __init__(self, prior: PriorLike, epsilon: float, radius: float = 0.0,
                 utility: Utility | str = "mutual_information", *, delta: float | None = None,
                 samples: int | None = None, name: str = "design") -> None:
        p = as_prior(prior, full_support=True)
        if p.size < 2:
            raise v.fail("prior", "have at least 2 categories", p.probabilities)
        object.__setattr__(self, "prior", p)
        object.__setattr__(self, "epsilon", v.epsilon(epsilon))
        object.__setattr__(self, "radius", v.radius(radius))
        object.__setattr__(self, "utility", _as_utility(utility))
        self.utility.check_size(p.size)
        object.__setattr__(self, "delta", None if delta is None else v.delta(delta))
        object.__setattr__(self, "samples", None if samples is None else v.positive_int("samples", samples))
        object.__setattr__(self, "name", str(name))

    @classmethod
    def from_delta(cls, prior: PriorLike, epsilon: float, delta: float,
                   utility: Utility | str = "mutual_information", *, samples: int | None = None,
                   name: str = "design") -> DesignProblem:
        """A problem whose radius is β*(δ) of [E] eq. 37, rounded up as files state it, clipped to 2.

        The radius is :func:`~mechdesign.core.design_radius`: β* rounded up twice, so that the file
        written from the design states the radius the design was certified at.

        Parameters
        ----------
        prior : Prior or array_like, shape (N,)
            The estimate P̂ (full support).
        epsilon : float
            Budget ε ≥ 0 (nats).
        delta : float
            Failure probability δ ∈ (0, 1].
        utility : Utility or str
            The objective (default mutual information).
        samples : int, optional
            The sample size m; default: the counts behind an empirical ``prior``.
        name : str
            A label for reports and files.

        Returns
        -------
        DesignProblem
            With ``delta`` and ``samples`` recorded.

        Raises
        ------
        ValueError
            If ``samples`` is missing for a prior without counts, or an argument is invalid (see the
            class).

        Examples
        --------
        >>> problem = DesignProblem.from_delta(Prior.from_counts([600, 400]), 1.0, 1e-6)
        >>> round(problem.radius, 6), problem.samples
        (0.170345, 1000)
        """
        p = as_prior(prior, full_support=True)
        m = samples if samples is not None else p.samples
        if m is None:
            raise ValueError("samples must be given when the prior is not built from counts, got samples=None")
        beta = design_radius(delta, m, p.size)  # β* rounded up toward privacy, as the file will state it
        return cls(p, epsilon, beta, utility, delta=delta, samples=m, name=name)

    @classmethod
    def covering(cls, priors: Any, epsilon: float, utility: Utility | str = "mutual_information", *,
                 center: PriorLike | None = None, name: str = "design") -> DesignProblem:
        """A problem over a ball covering a finite set of priors (:mod:`mechdesign.design._covering`).

        The engines need an ℓ1 ball (its worst case, vertices and pricing are closed forms); the smallest ball
        holding every prior (or one around ``center``) contains the set, so the design is ε-PML for each of them
        — conservatively: ``capacity(result.mechanism, priors)`` is its exact leakage over the set, at most ε.
        The utility is evaluated at the centre.

        Parameters
        ----------
        priors : array_like, shape (K, N)
            The priors, one per row.
        epsilon : float
            Budget ε ≥ 0 (nats).
        utility : Utility or str
            The objective.
        center : Prior or array_like, optional
            The ball's centre and the utility's prior (default: the ℓ1 Chebyshev centre of the priors).
        name : str
            A label for reports and files.

        Returns
        -------
        DesignProblem
            Over B_β(centre), β = max_k ‖Q_k − centre‖₁ rounded up.

        Examples
        --------
        >>> problem = DesignProblem.covering([[0.5, 0.3, 0.2], [0.3, 0.5, 0.2]], 1.0)
        >>> round(problem.radius, 6)
        0.2
        """
        from mechdesign.design._covering import covering_ball

        middle, radius = covering_ball(priors, None if center is None else as_prior(center).probabilities)
        return cls(middle, epsilon, radius, utility, name=name)

    @property
    def size(self) -> int:
        """N, the number of inputs."""
        return self.prior.size

    @cached_property
    def ball(self) -> L1Ball:
        """The uncertainty set B_β(P̂) ([E] eq. 40), built once per problem (the engines ask for it often)."""
        return L1Ball(self.prior, self.radius)

    @property
    def is_proposition2(self) -> bool:
        """0 ≤ β < 2 min P̂ ([E] Prop. 2)."""
        return self.radius < 2 * self.prior.min

    @property
    def epsilon_prime(self) -> float:
        """ε′ of [E] eq. 43 (the inner approximation's budget at the estimate)."""
        return epsilon_prime_of(self.epsilon, self.radius)

    @property
    def form(self) -> str:
        """The cheapest exact constraint form: fixed_prior, proposition2 or lifted."""
        if self.radius == 0:
            return "fixed_prior"
        return "proposition2" if self.is_proposition2 else "lifted"

    def with_(self, **changes: Any) -> DesignProblem:
        """A copy with some of epsilon, radius, utility, delta, samples, name changed (re-validated).

        Parameters
        ----------
        **changes
            New values by field name; the prior cannot be changed.

        Returns
        -------
        DesignProblem
            A new, validated problem.

        Raises
        ------
        TypeError
            If a key is not one of the fields above.
        ValueError
            If a new value is invalid.

        Examples
        --------
        >>> DesignProblem([0.5, 0.5], 1.0).with_(radius=2.0).form
        'lifted'
        """
        unknown = set(changes) - {"epsilon", "radius", "utility", "delta", "samples", "name"}
        if unknown:
            raise TypeError(f"changes must name fields of DesignProblem, got {sorted(unknown)}")
        field = {"epsilon": self.epsilon, "radius": self.radius, "utility": self.utility, "delta": self.delta,
                 "samples": self.samples, "name": self.name, **changes}
        return DesignProblem(self.prior, field["epsilon"], field["radius"], field["utility"], delta=field["delta"],
                             samples=field["samples"], name=field["name"])

    def constraints(self, matrix: Any, form: str | None = None) -> dict[str, list[Any]]:
        """Named cvxpy constraint groups stating W ∈ 𝓜(ε, B_β(P̂)) for a cvxpy expression ``matrix`` (N×M).

        Groups: ``row_sums``, ``nonnegative`` and one of ``fixed_prior``, ``proposition2`` (requires
        β < 2 min P̂) or ``lifted`` (any β, with auxiliary variables), chosen by ``form``
        (default :attr:`form`); the forms are stated in the module docstring.

        Parameters
        ----------
        matrix : cvxpy.Expression, shape (N, M)
            The mechanism variable.
        form : {'fixed_prior', 'proposition2', 'lifted'}, optional
            The constraint form; default :attr:`form` (the cheapest exact one).

        Returns
        -------
        dict of str to list
            Constraint group name → cvxpy constraints.

        Raises
        ------
        ValueError
            If ``form`` is unknown, ``'proposition2'`` with β ≥ 2 min P̂, or ``'fixed_prior'`` with β > 0.

        References
        ----------
        [E] ref. [15], Lemma 1 (fixed prior); [E] Prop. 2, eq. 43 (proposition2); reference §3.2 (lifted).
        """
        chosen = self.form if form is None else form
        if chosen not in FORMS:
            raise v.fail("form", f"be one of {list(FORMS)}", form)
        if chosen == "proposition2" and not self.is_proposition2:
            raise v.fail("form", f"not be 'proposition2' when radius >= 2 min P̂ = {2 * self.prior.min:.6g}", form)
        if chosen == "fixed_prior" and self.radius != 0:
            raise v.fail("form", "be 'fixed_prior' only for radius 0", form)
        groups = _stochastic(matrix)
        if chosen == "fixed_prior":
            groups["fixed_prior"] = _fixed_prior(matrix, self.prior.probabilities, self.epsilon)
        elif chosen == "proposition2":
            groups["proposition2"] = _proposition2(matrix, self.prior.probabilities, self.epsilon, self.radius)
        else:
            groups["lifted"] = _lifted(matrix, self.prior.probabilities, self.epsilon, self.radius)
        return groups

    def inner_constraints(self, matrix: Any) -> dict[str, list[Any]]:
        """The inner set 𝓜(ε′, P̂) ⊆ 𝓜(ε, B_β(P̂)) of [E] eq. 44: ε′-PML at the estimate.

        Parameters
        ----------
        matrix : cvxpy.Expression, shape (N, M)
            The mechanism variable.

        Returns
        -------
        dict of str to list
            Groups ``row_sums``, ``nonnegative`` and ``fixed_prior`` (at ε′ of eq. 43).

        Raises
        ------
        ValueError
            If ε′ < 0 (the inner set is empty).
        """
        eps_p = self.epsilon_prime
        if eps_p < 0:
            raise v.fail("epsilon", f"leave epsilon_prime = {eps_p:.6g} >= 0 (eq. 43) for the inner set", self.epsilon)
        groups = _stochastic(matrix)
        groups["fixed_prior"] = _fixed_prior(matrix, self.prior.probabilities, eps_p)
        return groups

    def guarantee_block(self) -> dict[str, Any]:
        """The guarantee block a design of this problem states in its mechanism file: ε-PML over the ball.

        Returns
        -------
        dict
            notion, epsilon, delta, radius, prior and samples (the writer recomputes the ε it states).
        """
        return {"notion": "pml", "epsilon": self.epsilon, "delta": self.delta, "radius": self.radius,
                "prior": self.prior.probabilities.tolist(), "samples": self.samples}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description of the problem.

        Returns
        -------
        dict
            name, labels, prior, epsilon, radius, delta, samples, utility (its own dict) and form.
        """
        return {"name": self.name, "labels": list(self.prior.labels), "prior": self.prior.probabilities.tolist(),
                "epsilon": self.epsilon, "radius": self.radius, "delta": self.delta, "samples": self.samples,
                "utility": self.utility.to_dict(), "form": self.form}


def _stochastic(matrix: Any) -> dict[str, list[Any]]:
    import cvxpy as cp

    return {"row_sums": [cp.sum(matrix, axis=1) == 1], "nonnegative": [matrix >= 0]}


def _fixed_prior(matrix: Any, prior: np.ndarray, epsilon: float) -> list[Any]:
    a = exp_capped(epsilon)
    mass = prior @ matrix
    return [matrix <= a * np.ones((prior.size, 1)) @ mass[None, :]]


def _proposition2(matrix: Any, prior: np.ndarray, epsilon: float, radius: float) -> list[Any]:
    eps_p = epsilon_prime_of(epsilon, radius)
    a = math.exp(eps_p)
    ones = np.ones((prior.size, 1))
    mass = ones @ (prior @ matrix)[None, :]
    return [matrix <= a * (mass + radius / 2 * ones @ matrix[k:k + 1, :]) for k in range(prior.size)]


def _lifted(matrix: Any, prior: np.ndarray, epsilon: float, radius: float) -> list[Any]:
    import cvxpy as cp

    n, m = matrix.shape
    a = exp_capped(epsilon)
    lam, eta, t = cp.Variable(m), cp.Variable(m, nonneg=True), cp.Variable(m)
    zeta = cp.Variable((n, m), nonneg=True)
    ones = np.ones((n, 1))
    return [
        ones @ lam[None, :] <= matrix,
        ones @ eta[None, :] + zeta >= matrix - ones @ lam[None, :],
        t <= prior @ matrix - radius / 2 * eta - prior @ zeta,
        matrix <= a * ones @ t[None, :],
    ]

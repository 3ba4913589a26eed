"""Repeated releases of a whole record: the record-level leakage of T reports of the same record.

A record x = (x_1, …, x_d) released T times with fresh randomness reveals, in the likelihood, only the count
vector of the T outputs (:mod:`mechdesign.core._repeated`), and the leakage is the capacity of the count
mechanism over the **joint** ball ([E] Def. 5, eq. 22–23 on X = ∏ X_i):

* **joint** design W (one mechanism over the joint alphabet): C_T(W) over the dense joint ball, exact or the
  certified relaxation of :func:`mechdesign.core.release_leakage`;
* **product** design W_1 ⊗ … ⊗ W_d: the T outputs of attribute i form a count vector n_i of its own, and the
  likelihood of (n_1, …, n_d) is the product of the attributes' likelihoods, so the T releases are the product
  mechanism C_T(W_1) ⊗ … ⊗ C_T(W_d), whose capacity :func:`~mechdesign.core.product_capacity`
  computes exactly;
* **attribute-sampled** design (each report releases one attribute i, chosen with probability π_i): the reports
  about attribute i form a count vector over its outputs, k_i of them with Σ k_i = T; π cancels from the
  likelihood ratio, so the leakage is the largest product capacity of C_{k_1}(W_1) ⊗ … ⊗ C_{k_d}(W_d) over the
  allocations (k_1, …, k_d) (C_0 is the constant mechanism).

Beyond what can be enumerated (more than ``max_outputs`` joint count outputs), a product or sampled design whose
product alphabet is small is bounded by the certified relaxation on its dense matrix, and otherwise only by the
trivial bounds of :mod:`mechdesign.core._repeated` (T ε_LDP, and −log(min P̂ − β/2) over the joint ball, infinite
when a letter is unobserved): memoize such releases instead.

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
Def. 5, eq. 22–23, eq. 31.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._record_capacity import product_capacity
from mechdesign.core._record_prior import JointPrior
from mechdesign.core._repeated import (
    ReleaseLeakage,
    count_mechanism,
    count_vectors,
    merged_mechanism,
    number_of_count_vectors,
    release_count,
    release_leakage,
)

__all__ = ["DENSE_LIMIT", "MAX_RECORD_OUTPUTS", "record_release_leakage"]

#: Letters × outputs of a product design's dense matrix up to which its relaxation bound is computed.
DENSE_LIMIT = 1 << 22
#: Count outputs of a product or sampled design evaluated exactly (each costs more than a single column's).
MAX_RECORD_OUTPUTS = 200_000


def record_release_leakage(prior: JointPrior, radius: float, releases: int, *,
                           factors: Sequence[Mechanism] = (), mechanism: Mechanism | None = None,
                           sampled: bool = False, max_outputs: int = MAX_RECORD_OUTPUTS) -> ReleaseLeakage:
    """The record-level leakage of ``releases`` fresh releases of one record ([E] Def. 5, eq. 22–23; module docstring).

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂ of the guarantee.
    radius : float
        β of the joint ball.
    releases : int
        T ≥ 1.
    factors : sequence of Mechanism
        W_1, …, W_d of a product or sampled design (empty for a joint design).
    mechanism : Mechanism, optional
        The joint mechanism of a joint design.
    sampled : bool
        ``factors`` are an attribute-sampled design's.
    max_outputs : int
        The largest number of count outputs evaluated exactly.

    Returns
    -------
    ReleaseLeakage
        ``epsilon`` ≥ L_T ≥ ``lower`` (nats); ``exact`` when every count output was evaluated.

    Examples
    --------
    >>> from mechdesign.design.polytope import randomized_response
    >>> prior = JointPrior.from_table([[40, 10], [5, 45]])
    >>> rr = randomized_response(2, 1.0)
    >>> account = record_release_leakage(prior, 2.0, 3, factors=[rr, rr])   # radius 2: LDP, 3 × (1 + 1)
    >>> account.exact, round(account.epsilon, 9)
    (True, 6.0)
    """
    releases = release_count(releases)
    ball = prior.ball(radius=radius)
    if mechanism is not None:
        return release_leakage(mechanism, ball.dense(), releases)
    if len(factors) != prior.dimension:
        raise v.fail("factors", f"give one mechanism per attribute ({prior.dimension})", len(factors))
    merged = [merged_mechanism(f) for f in factors]
    widths = [m.shape[1] for m in merged]
    if sampled:
        allocations = count_vectors(releases, prior.dimension)
        outputs = sum(math.prod(number_of_count_vectors(int(k), w) for k, w in zip(row, widths, strict=True))
                      for row in allocations)
    else:
        allocations = np.array([[releases] * prior.dimension])
        outputs = math.prod(number_of_count_vectors(releases, w) for w in widths)
    if outputs <= max_outputs:
        best = -math.inf
        for row in allocations:
            counted = [count_mechanism(m, int(k)).matrix for m, k in zip(merged, row, strict=True)]
            best = max(best, float(product_capacity(counted, ball).epsilon))
        return ReleaseLeakage(releases, best, _below(best), True, "enumeration", outputs, None)
    if prior.size * math.prod(widths) <= DENSE_LIMIT and not sampled:
        dense = merged[0].matrix
        for m in merged[1:]:
            dense = np.einsum("ij,kl->ikjl", dense, m.matrix).reshape(dense.shape[0] * m.shape[0], -1)
        account = release_leakage(dense, ball.dense(), releases, max_vectors=max_outputs)
        return ReleaseLeakage(releases, account.epsilon, account.lower, False, account.method, outputs, None)
    return _trivial_only(prior, radius, releases, merged, outputs, sampled)


def _trivial_only(prior: JointPrior, radius: float, releases: int, merged: list[Mechanism], outputs: int,
                  sampled: bool) -> ReleaseLeakage:
    """The trivial bounds only (module docstring): T times the LDP level, and the identity's leakage."""
    from mechdesign._numerics import round_up
    from mechdesign.core._leakage import ldp_epsilon

    levels = [ldp_epsilon(m) for m in merged]
    ldp = releases * (max(levels) if sampled else sum(levels))
    floor = (float(prior.probabilities.min()) if prior.observed == prior.size else 0.0) - radius / 2
    candidates = [("ldp", round_up(ldp, 2 * len(merged)) if math.isfinite(ldp) else math.inf)]
    if floor > 0:
        candidates.append(("identity", round_up(-math.log(floor), 4)))
    how, value = min(candidates, key=lambda item: item[1])
    return ReleaseLeakage(releases, value, 0.0, False, how, outputs, None)


def _below(value: float) -> float:
    """product_capacity is rounded up and within 1e-9 of the capacity (:mod:`~mechdesign.core._record_capacity`)."""
    return value if not math.isfinite(value) else float(value - 1e-9 * (1.0 + abs(value)))

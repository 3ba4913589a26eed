"""The best of the product, attribute-sampled and joint designs for the user's objective.

The three designs meet the same record-level budget ε over the same joint ball B_β(P̂) ([E] eq. 31 on the
product alphabet, β of eq. 37), each with its guarantee recomputed exactly; which decodes better depends on
the data. The joint design (:func:`~mechdesign.records.design_joint`) optimises over every
mechanism of the joint problem — the product mechanisms included when every letter is observed — so at its
optimum it is never worse for its own objective; but it stops at a few hundred letters and at its time
limit, and has N rows to store. The product (:func:`~mechdesign.records.design_product`) streams
attribute by attribute and reaches 10⁶ letters, but splits ε between the attributes. The sampled design
(:func:`~mechdesign.records.design_sampled`) has each record report one attribute at the whole ε
and wins where few records per attribute cost less than a split budget (three or more attributes at
larger ε). :func:`design_records` designs all three, compares them on the objective at P̂, and on a tie
prefers the simplest deployment: product (every record, one mechanism per column), then sampled (one
column per record), then joint (an N-row matrix).

Values compared (all at P̂, from the final matrices, :mod:`mechdesign.core._fisher`): ``"marginals"`` the n ×
total MSE of the decoded marginals (the product's is its per-attribute decoders', :attr:`ProductDesign.mse`);
``"joint"`` tr J⁻¹ − 1 of the whole mechanism (for the product, of W_1 ⊗ … ⊗ W_d; for the sampled design
``inf``: one-attribute reports leave the joint table unidentifiable, so it is never chosen); ``"mi"`` I(X; Y)
(for the sampled design Σ_i π_i I(X_i; Y_i): the attribute reported is independent of X, so
I(X; (I, Y)) = I(X; I) + Σ_i π_i I(X; Y | I = i) = Σ_i π_i I(X_i; Y_i), the mutual information of the lifted
N × Σ M_i matrix π_i W_i[x_i, y] without building it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce

import numpy as np

from mechdesign import _validation as v
from mechdesign.core._fisher import trace_inverse_fisher
from mechdesign.core._record_prior import JointPrior
from mechdesign.records._joint_design import OBJECTIVES, JointDesign, design_joint, mutual_information
from mechdesign.records._product import ProductDesign, design_product
from mechdesign.records._sampled import SampledDesign, design_sampled

__all__ = ["RecordDesigns", "design_records"]

#: Largest Kronecker product N × ∏ M_i built to score a product design on "joint" or "mi" (400 MB of float64).
_KRONECKER_ENTRIES = 5 * 10**7

#: The order in which designs are preferred on a tie: the simplest deployment first.
PREFERENCE = ("product", "sampled", "joint")


@dataclass(frozen=True)
class RecordDesigns:
    """The product, sampled and joint designs of one record problem, and which is best for the objective.

    Parameters
    ----------
    objective : str
        One of :data:`~mechdesign.records.OBJECTIVES`.
    joint : JointDesign
        The joint design.
    product : ProductDesign
        The product design (A-optimal factors, equal and optimised budget splits, the better kept).
    sampled : SampledDesign
        The attribute-sampled design (A-optimal factors at the whole ε, optimised π).
    joint_value, product_value, sampled_value : float
        Each design's value of the objective at P̂ (module docstring): an MSE factor (lower is better) or
        I(X; Y) in nats (higher is better).
    best : str
        ``"product"``, ``"sampled"`` or ``"joint"`` (on a tie the first in this order, :data:`PREFERENCE`).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        eq. 31 (ball), eq. 37 (radius), eq. 40 (the design problem).
    """

    objective: str
    joint: JointDesign
    product: ProductDesign
    sampled: SampledDesign
    joint_value: float
    product_value: float
    sampled_value: float
    best: str

    @property
    def design(self) -> JointDesign | ProductDesign | SampledDesign:
        """The best design (:attr:`best`)."""
        designs: dict[str, JointDesign | ProductDesign | SampledDesign] = {
            "joint": self.joint, "product": self.product, "sampled": self.sampled}
        return designs[self.best]

    @property
    def epsilon(self) -> float:
        """The best design's record-level guarantee (all three are ≤ the budget)."""
        return self.design.epsilon


def _product_value(objective: str, product: ProductDesign, prior: JointPrior) -> float:
    if objective == "marginals":
        return product.mse
    outputs = math.prod(f.matrix.shape[1] for f in product.factors)
    if prior.size * outputs > _KRONECKER_ENTRIES:
        raise v.fail("the product design", f"have at most {_KRONECKER_ENTRIES} entries N × ∏ M_i to be scored on "
                     f"objective={objective!r} (use 'marginals')", prior.size * outputs)
    matrix = reduce(np.kron, [f.matrix for f in product.factors])
    if objective == "joint":
        return trace_inverse_fisher(matrix, prior.dense()) - 1.0
    return mutual_information(matrix, prior.dense())


def _sampled_value(objective: str, sampled: SampledDesign, prior: JointPrior) -> float:
    if objective == "marginals":
        return sampled.mse
    if objective == "joint":
        return math.inf
    return float(sum(p * mutual_information(f.matrix, prior.marginal(i).probabilities)
                     for i, (f, p) in enumerate(zip(sampled.factors, sampled.probabilities, strict=True))))


def _best(objective: str, values: dict[str, float]) -> str:
    """The design with the best value; a later one in :data:`PREFERENCE` only if strictly better."""
    sign = -1.0 if objective == "mi" else 1.0
    best = PREFERENCE[0]
    for name in PREFERENCE[1:]:
        if sign * values[name] < sign * values[best]:
            best = name
    return best


def design_records(prior: JointPrior, epsilon: float, *, delta: float | None = None, radius: float | None = None,
                   objective: str = "marginals", time_limit: float = 60.0) -> RecordDesigns:
    """Design the product, sampled and joint mechanisms at record-level ε and keep the best for ``objective``.

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂ (every marginal with full support, for the product's estimation factors).
    epsilon : float
        The record-level budget ε > 0 (nats).
    delta : float, optional
        Failure probability: β = β*(δ, m, N) of [E] eq. 37 on the joint alphabet (clipped to 2).
    radius : float, optional
        A given β ∈ [0, 2] instead of ``delta`` (exactly one of the two).
    objective : {"marginals", "joint", "mi"}
        What the comparison (and the joint design) optimises (module docstring).
    time_limit : float
        Seconds for the joint engine, and for each factor design of the product and the sampled design.

    Returns
    -------
    RecordDesigns
        The three designs, their values and the best (product, then sampled, then joint on a tie).

    Raises
    ------
    TypeError
        If ``prior`` is not a :class:`JointPrior`.
    ValueError
        As :func:`~mechdesign.records.design_joint`,
        :func:`~mechdesign.records.design_product` and
        :func:`~mechdesign.records.design_sampled`, or when the product is too large to be scored
        on "joint" or "mi".

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, "Privacy Mechanism Design based on Empirical Distributions",
        Def. 5 (capacity), eq. 31 (ball), eq. 37 (radius), eq. 40 (design problem).

    Examples
    --------
    >>> prior = JointPrior.from_table([[40, 10], [5, 45]], attributes=["a", "b"])
    >>> designs = design_records(prior, 1.0, radius=0.1)
    >>> designs.best, designs.joint_value <= designs.sampled_value <= designs.product_value, designs.epsilon <= 1.0
    ('joint', True, True)
    """
    if objective not in OBJECTIVES:
        raise v.fail("objective", f"be one of {list(OBJECTIVES)}", objective)
    product = design_product(prior, epsilon, delta=delta, radius=radius, weights="optimise", time_limit=time_limit)
    sampled = design_sampled(prior, epsilon, delta=delta, radius=radius, time_limit=time_limit)
    joint = design_joint(prior, epsilon, delta=delta, radius=radius, objective=objective, time_limit=time_limit,
                         start=product)
    values = {"joint": {"marginals": joint.mse, "joint": math.inf if joint.joint_mse is None else joint.joint_mse,
                        "mi": joint.information}[objective],
              "product": _product_value(objective, product, prior),
              "sampled": _sampled_value(objective, sampled, prior)}
    return RecordDesigns(objective, joint, product, sampled, values["joint"], values["product"], values["sampled"],
                         _best(objective, values))

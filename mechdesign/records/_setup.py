"""What the record designs share (product, sampled, joint): their checked inputs, guarantee block and file.

Solver-free on purpose: :mod:`mechdesign.records._sampled` imports it, and deployment reads sampled record
files without the design engines.
"""

from __future__ import annotations

from typing import Any

from mechdesign import _validation as v
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._record_prior import JointPrior
from mechdesign.mechfile._save import FileSections, SavesFile

__all__ = ["RecordResult", "check_design_inputs", "record_guarantee"]


def check_design_inputs(prior: Any, epsilon: Any, time_limit: Any) -> tuple[float, float]:
    """A :class:`JointPrior`, the record-level budget ε > 0 and the engines' time limit > 0 (seconds)."""
    if not isinstance(prior, JointPrior):
        raise TypeError(f"prior must be a JointPrior, got prior={type(prior).__name__}")
    return v.positive("epsilon", epsilon), v.positive("time_limit", time_limit)


def record_guarantee(design: Any) -> dict[str, Any]:
    """The ``guarantee`` block of a record design's summary: the record-level ε only, with its ball."""
    return {"notion": "pml", "level": "record", "epsilon": design.epsilon, "target": design.target,
            "delta": design.delta, "radius": design.radius, "samples": design.prior.samples,
            "letters": design.prior.size}


class RecordResult(SavesFile):
    """The result protocol of the record designs (:class:`~mechdesign.mechfile.DesignOutcome`), written once.

    A product or sampled design states its per-attribute factors (and a sampled one its π); a joint design states one
    mechanism over the product alphabet. Each says which it is in ``design``.
    """

    design = ""  # "product", "sampled" or "joint": the subclass says
    prior: JointPrior
    mse: float
    factors: tuple[Any, ...]  # product and sampled designs (a joint design has ``mechanism`` instead)

    @property
    def attributes(self) -> tuple[str, ...]:
        """The attribute names, in order."""
        return self.prior.attributes

    @property
    def guarantee(self) -> dict[str, Any]:
        """The record-level guarantee the file states (the record ε only, with its ball)."""
        return record_guarantee(self)

    @property
    def mechanisms(self) -> tuple[Mechanism, ...]:
        """The mechanisms the file states: the factors W_1, …, W_d (a joint design states its one mechanism)."""
        return tuple(f.mechanism for f in self.factors)

    def utility_block(self) -> dict[str, Any]:
        """The file's utility block: the n·MSE of the decoded marginals.

        Returns
        -------
        dict
            ``kind`` ("marginal_mse") and ``value``.
        """
        return {"kind": "marginal_mse", "value": self.mse}

    def sections(self) -> FileSections:
        """The record file (:func:`mechdesign.mechfile.save` writes it).

        Returns
        -------
        FileSections
            The record file's content: kind, mechanism or factors (and π), guarantee and blocks.
        """
        joint = self.design == "joint"
        return FileSections("record", self.mechanisms[0] if joint else None, self.guarantee,
                            factors=None if joint else self.mechanisms, sampling=getattr(self, "probabilities", None),
                            prior=self.prior, utility=self.utility_block(), provenance={"design": self.design})

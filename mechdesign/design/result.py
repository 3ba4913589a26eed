"""Results of the design engine: :class:`DesignResult` and the :class:`Baseline` mechanisms beside it."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mechdesign.core.mechanism import Mechanism
from mechdesign.design.certificate import Certificate
from mechdesign.design.problem import DesignProblem

__all__ = ["BASELINE_LABELS", "Baseline", "DesignResult"]

# One description per baseline name, shared by summary(), the CLI and the docs.
BASELINE_LABELS = {"rr_ldp": "k-RR at the same ε (ε-LDP)", "rr_pml": "k-RR calibrated to the ball (largest ε₀)",
                   "optimal_ldp": "optimal ε-LDP (staircase LP)", "inner": "inner design at ε′ ([E] eq. 43-44)"}


@dataclass(frozen=True)
class Baseline:
    """One baseline mechanism with its utility, its capacity over the ball and the ratio design / baseline.

    ``parameter`` is ε₀ for the randomized responses and ε′ for the inner design.
    """

    name: str
    description: str
    mechanism: Mechanism
    utility: float
    ratio: float
    capacity: float
    parameter: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "utility": self.utility, "ratio": self.ratio,
                "capacity": self.capacity, "parameter": self.parameter}


@dataclass(frozen=True)
class DesignResult:
    """A certified design: the mechanism, its utility, a proven upper bound, baselines and timings.

    ``status`` is "optimal" when the gap to the upper bound is within ``gap_tolerance`` (relative to
    max(1, bound)), "feasible" otherwise (the mechanism is still certified; the gap is reported).
    """

    problem: DesignProblem
    mechanism: Mechanism
    utility: float
    upper_bound: float
    gap: float
    status: str
    certificate: Certificate
    solver: str
    method: str
    candidates: int
    iterations: int
    timings: dict[str, float]
    baselines: tuple[Baseline, ...] = field(default=())

    @property
    def outputs(self) -> int:
        """``|Y|``, the number of outputs (columns) of the designed mechanism."""
        return self.mechanism.shape[1]

    def baseline(self, name: str) -> Baseline:
        """The baseline called ``name`` (a key of ``BASELINE_LABELS``); ``KeyError`` if it was not computed."""
        for b in self.baselines:
            if b.name == name:
                return b
        raise KeyError(name)

    # The methods below are the Python side of ``mechdesign design``: the CLI prints summary() and writes
    # the file through file_sections()/save(), so both report and save exactly the same things.

    def __repr__(self) -> str:
        p = self.problem
        return (f"<DesignResult {p.name} ε={p.epsilon:.4g} β={p.radius:.3g}: {self.status}, "
                f"{p.utility.kind}={self.utility:.6g}, {self.outputs} outputs>")

    def summary(self) -> str:
        """A readable multi-line report: problem, guarantee, utility with its bound, outputs, baselines.

        Returns
        -------
        str
            The text ``mechdesign design`` prints (without the file line).

        Examples
        --------
        >>> import math
        >>> from mechdesign import DesignProblem, solve
        >>> problem = DesignProblem([0.4, 0.2, 0.2, 0.2], math.log(9 / 8), name="example1")
        >>> result = solve(problem, baselines=False)
        >>> result
        <DesignResult example1 ε=0.1178 β=0: optimal, mutual_information=0.0268223, 4 outputs>
        >>> print(result.summary().splitlines()[0])
        problem example1: N = 4, ε = 0.117783 nats
        """
        p, cert = self.problem, self.certificate
        regime = ("Proposition 2 regime" if p.is_proposition2
                  else f"general radius, beyond Proposition 2 (2 min P̂ = {2 * p.prior.min:.4g})")
        delta = f", δ = {p.delta:g} with m = {p.samples}" if p.delta is not None else ""
        kind = (f"(ε, δ) = ({p.epsilon:.6g}, {p.delta:g})-PML" if p.delta is not None
                else f"{p.epsilon:.6g}-PML for every prior within β of the estimate")
        # Lines stay under ~90 characters so that the report reads in a terminal and in the docs.
        lines = [
            f"problem {p.name}: N = {p.size}, ε = {p.epsilon:.6g} nats{delta}",
            f"  ℓ1 radius β = {p.radius:.6g} ({regime})",
            f"design: {p.utility.kind} = {self.utility:.10g} ({self.status})",
            f"  upper bound {self.upper_bound:.10g}, gap {self.gap:.2g}; {self.outputs} outputs; "
            f"{self.timings.get('total', 0.0):.2f} s",
            f"guarantee: {kind}",
            f"  certified capacity over the ball {cert.achieved_epsilon:.15g} <= {cert.epsilon:.15g}",
            f"  (mixing repair {cert.mixing_weight:.2g})",
        ]
        if self.baselines:
            lines.append(f"baselines, each certified over the same ball: {'utility':>10}  design/baseline")
            lines += [f"  {BASELINE_LABELS.get(b.name, b.name):<43} {b.utility:>10.6g}  {b.ratio:>9.3f}"
                      for b in self.baselines]
        return "\n".join(lines)

    def file_sections(self, problem_file: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
        """The ``guarantee``, ``utility``, ``baselines``, ``certificate`` and ``provenance`` blocks of the
        mechanism file (see ``mechdesign/deploy/mechanism.schema.json``).

        Parameters
        ----------
        problem_file : path, optional
            The TOML problem file the design came from; its name and SHA-256 go into the provenance.
        """
        p = self.problem
        provenance: dict[str, Any] = {"problem": p.name, "solver": self.solver, "method": self.method,
                                      "candidate_columns": self.candidates, "iterations": self.iterations}
        if problem_file is not None:
            source = Path(problem_file)
            provenance["problem_file"] = source.name
            provenance["problem_sha256"] = hashlib.sha256(source.read_bytes()).hexdigest()
        return {
            "guarantee": {"notion": "pml", "epsilon": p.epsilon, "delta": p.delta, "radius": p.radius,
                          "prior": p.prior.probabilities.tolist(), "samples": p.samples},
            "utility": {"kind": p.utility.kind, "value": self.utility, "upper_bound": self.upper_bound,
                        "gap": self.gap, "status": self.status},
            "baselines": {b.name: {k: val for k, val in b.to_dict().items() if k != "name"} for b in self.baselines},
            "certificate": self.certificate.to_dict(),
            "provenance": provenance,
        }

    def save(self, path: str | os.PathLike[str], *, problem_file: str | os.PathLike[str] | None = None) -> Path:
        """Write the certified mechanism file (atomically; the guarantee is recomputed before writing).

        Parameters
        ----------
        path : path
            Target file, conventionally ``<name>.mech.json``.
        problem_file : path, optional
            Problem file to record in the provenance (name and SHA-256).

        Returns
        -------
        Path
            The written file; check it with ``mechdesign verify`` or
            :func:`~mechdesign.deploy.mechfile.verify_mechanism_file`.

        Examples
        --------
        >>> import math, tempfile
        >>> from pathlib import Path
        >>> from mechdesign import DesignProblem, solve, verify_mechanism_file
        >>> result = solve(DesignProblem([0.4, 0.2, 0.2, 0.2], math.log(9 / 8)), baselines=False)
        >>> path = result.save(Path(tempfile.mkdtemp()) / "example1.mech.json")
        >>> verify_mechanism_file(path).holds
        True
        """
        # The one import from design into deploy (tests/test_architecture.py lists it): the file format
        # lives in deploy, which never imports design, so the graph stays acyclic.
        from mechdesign.deploy.mechfile import write_mechanism_file

        return write_mechanism_file(path, self.mechanism, **self.file_sections(problem_file))

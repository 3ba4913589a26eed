"""The result of a symmetric design: :class:`SymmetricDesign`, and :func:`design_symmetric`, its entry point."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from mechdesign import _validation as v
from mechdesign._deadline import Deadline
from mechdesign.core._symmetric import SymmetricMechanism
from mechdesign.design._problem import DesignProblem
from mechdesign.design._result import peer_lines
from mechdesign.design.baselines._calibrated import CalibratedOracle, calibrated_rows
from mechdesign.design.baselines._ldp_oracles import OracleComparison, compare_oracles
from mechdesign.design.symmetric._engine import SymmetricEngine, certify
from mechdesign.design.symmetric._generate import GAINING
from mechdesign.mechfile._save import FileSections, SavesFile

__all__ = ["SymmetricDesign", "design_symmetric"]

GAP_TOLERANCE = 1e-6   # "optimal" when the certified gap is at most this relative to the bound

_SEARCH_STOPS = {  # how the column generation ended (GenerationResult.stop), as the report words it
    "priced out": "the search is optimal over its candidates (priced out)",
    "stalled": "the search stalled (its master gained under 0.001 % in three rounds)",
    "deadline": "the search's time ran out",
    "budget": "the search filled the file's budget of types",
    "entered": "the search stopped: its master did not take the types priced below zero",
    "weights": "the search stopped: no positive weights took an entering type",
    "master": "the search stopped: a master failed",
}
_BOUND_SOURCES = {  # where the certified bound came from (SymmetricBound.source, or the engine's)
    "every type": "the bound is the Lagrangian over every type",
    "reach": "the bound is the diagonal's reach",
    "capped": "the bound is every cell's diagonal at its cap (the reach did not beat it in its time)",
    "floor": "the bound is the diagonal floor (the reach did not beat it in its time)",
    "relaxation": "the bound is the ball's semidefinite relaxation over the cells (above the diagonal's)",
}


@dataclass(frozen=True)
class SymmetricDesign(SavesFile):
    """A certified A-optimal design over cells: the mechanism, its n·MSE, a proven lower bound, the ε-LDP oracles.

    A :class:`~mechdesign.design.Design` (what :func:`mechdesign.solve` returns): ``utility`` is ``value``, ``bound``
    the lower bound, ``sense`` "minimize" and ``method`` "symmetric".

    Parameters
    ----------
    problem : DesignProblem
        The problem solved (``estimation_mse``, count prior).
    mechanism : SymmetricMechanism
        The types over the cells (:mod:`mechdesign.core._symmetric`).
    value : float
        n·MSE = tr J⁻¹ − 1 of the efficient decoder on n fixed records, recomputed from the types.
    bound : float
        A proven lower bound on the n·MSE of every mechanism that is ε-PML over the ball (not only symmetric ones).
    achieved : float
        The capacity over the ball recomputed type by type, rounded up (≤ ε).
    status : str
        "optimal" when ``value − bound ≤ 1e-6·bound`` (``gap_tolerance`` of :func:`design_symmetric`), else
        "feasible" (certified either way, gap reported).
    oracles : tuple of OracleComparison
        The ε-LDP frequency oracles at the same ε (closed forms; ε-LDP implies ε-PML over every ball).
    timings : dict of str to float
        Seconds per phase.
    steps : int
        Newton steps of the master.
    calibrated : tuple of CalibratedOracle
        The same oracle families calibrated to the ball: each at its largest ε₀ at which it is ε-PML over it
        (:func:`mechdesign.design.baselines.calibrated_oracles`; reference calibrated-baselines.md §1).
    diagnosis : dict
        Which side limits the gap: ``search``, how the column generation ended ("priced out", "stalled",
        "deadline", "budget", …), ``search_gain``, the relative gain of its last round, and ``bound``, the bound's
        source ("every type", "reach", "capped", "floor", "relaxation") — :meth:`gap_sources` words them.
    """

    problem: DesignProblem
    mechanism: SymmetricMechanism
    value: float
    bound: float
    achieved: float
    status: str
    oracles: tuple[OracleComparison, ...] = field(default=())
    timings: dict[str, float] = field(default_factory=dict)
    steps: int = 0
    calibrated: tuple[CalibratedOracle, ...] = field(default=())
    diagnosis: dict[str, Any] = field(default_factory=dict)

    sense = "minimize"   # class constants: the Design protocol's, the same for every symmetric design
    method = "symmetric"

    @property
    def utility(self) -> float:
        """``value`` under the name every :class:`~mechdesign.design.Design` shares: n·MSE = tr J⁻¹ − 1."""
        return self.value

    @property
    def gap(self) -> float:
        """Value − bound (≥ 0)."""
        return max(self.value - self.bound, 0.0)

    @property
    def relative_gap(self) -> float:
        """Gap / value: the design is within this fraction of the optimum."""
        return self.gap / self.value if self.value > 0 else 0.0

    def gap_sources(self) -> str | None:
        """Which side of a certified gap is loose, in words: how the search ended and where the bound came from.

        None for an optimal design (or one without a diagnosis). Measured (Zipf counts, N = 256, m = 2·10⁵): at
        ε = 2 the search was still improving at 120 s (n·MSE 62; 53 after 600 s), while the bound stayed at the
        diagonal floor; at ε = 4 the search stalls near 14.2 with types still priced below zero.
        """
        if self.status == "optimal" or not self.diagnosis:
            return None
        stop, gain = self.diagnosis.get("search"), float(self.diagnosis.get("search_gain") or math.nan)
        timed = stop == "deadline" and math.isfinite(gain) and gain > 0
        if timed and gain >= GAINING:
            search = (f"the search was still improving when its time ran out (n·MSE -{100 * gain:.2g} % in its last "
                      "round: more time helps)")
        elif timed:
            search = f"the search's time ran out (n·MSE -{100 * gain:.2g} % in its last round)"
        else:
            search = _SEARCH_STOPS.get(str(stop), f"the search ended ({stop})")
        bound = _BOUND_SOURCES.get(str(self.diagnosis.get("bound")), f"the bound is {self.diagnosis.get('bound')}")
        return f"{search}; {bound}"

    def best_oracle(self) -> OracleComparison | None:
        """The ε-LDP oracle with the smallest n·MSE."""
        finite = [o for o in self.oracles if math.isfinite(o.mse)]
        return min(finite, key=lambda o: o.mse) if finite else None

    def __repr__(self) -> str:
        return (f"<SymmetricDesign {self.problem.name} ε={self.problem.epsilon:g} β={self.problem.radius:.4g}: "
                f"{self.status}, n·MSE={self.value:.6g} (≥ {self.bound:.6g}), {self.mechanism.types} types over "
                f"{self.mechanism.cells.count} cells>")

    def summary(self) -> str:
        """The report ``mechdesign design`` prints."""
        cells = self.mechanism.cells
        lines = [f"{self.problem.name}: symmetric design over {cells.count:,} cells of equal counts "
                 f"(N = {cells.size:,}), {self.mechanism.types:,} types",
                 f"  guarantee: pml epsilon {self.achieved:.9g} <= {self.problem.epsilon:g} over the l1 ball of radius "
                 f"{self.problem.radius:.6g} (recomputed type by type, rounded up)",
                 f"  n·MSE of the efficient decoder (n fixed records): {self.value:.6g}; every epsilon-PML mechanism "
                 f"has at least {self.bound:.6g} (certified gap {100 * self.relative_gap:.3g} %, {self.status})"]
        sources = self.gap_sources()
        if sources is not None:
            lines.append(f"  the gap: {sources}")
        best = self.best_oracle()
        if best is not None:
            lines.append(f"  the best epsilon-LDP frequency oracle at the same epsilon: {best.name} n·MSE "
                         f"{best.mse:.6g} ({best.mse / self.value:.3g}x this design's; epsilon-LDP against epsilon-PML "
                         "over the ball)")
        lines += [f"  {line.strip()}" for line in peer_lines(self.calibrated, self.oracles, self.value)]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (``mechdesign design --json``), in the shape every engine's has.

        Returns
        -------
        dict
            ``problem``, ``method``, ``guarantee``, ``utility`` (``kind``, ``value``, ``lower_bound``, ``gap``,
            ``relative_gap``, ``status``, ``sense``, ``ldp_oracles`` by name, ``calibrated_oracles``),
            ``certificate``, ``baselines``, ``timings`` as :meth:`DesignResult.to_dict
            <mechdesign.design.DesignResult.to_dict>`; ``cells``, ``types``, ``steps``, ``oracles``, ``best_oracle``
            and ``best_calibrated``. Deprecated, removed in the next release: the top-level ``engine``, ``status``,
            ``value``, ``bound``, ``gap``, ``relative_gap``, ``achieved_epsilon`` and ``calibrated_oracles`` (each
            is now in ``method``, ``utility`` or ``certificate``).
        """
        best = self.best_oracle()
        blocks = self.file_sections()
        calibrated = self._calibrated_list()
        diagnosis = {key: (None if isinstance(val, float) and not math.isfinite(val) else val)
                     for key, val in self.diagnosis.items()}
        utility = {**blocks["utility"], "lower_bound": self.bound, "gap": self.gap, "relative_gap": self.relative_gap,
                   "status": self.status, "sense": self.sense, "gap_sources": diagnosis,
                   "ldp_oracles": {o.name: {k: val for k, val in o.to_dict().items() if k != "name"}
                                   for o in self.oracles},
                   "calibrated_oracles": calibrated}
        deprecated = {"engine": self.method, "status": self.status, "value": self.value, "bound": self.bound,
                      "gap": self.gap, "relative_gap": self.relative_gap, "achieved_epsilon": self.achieved,
                      "calibrated_oracles": calibrated}
        return {"problem": self.problem.to_dict(), "method": self.method, "guarantee": blocks["guarantee"],
                "utility": utility, "certificate": blocks["certificate"], "baselines": blocks["baselines"],
                "timings": self.timings, "cells": self.mechanism.cells.count, "types": self.mechanism.types,
                "steps": self.steps, "oracles": [o.to_dict() for o in self.oracles],
                "best_oracle": None if best is None else best.name,
                "best_calibrated": min(self.calibrated, key=lambda o: o.mse).name if self.calibrated else None,
                **deprecated}

    def file_sections(self) -> dict[str, dict[str, Any]]:
        """The guarantee, utility, certificate and baselines blocks of the structured file."""
        return {"guarantee": self.guarantee,
                "utility": {"kind": "estimation_mse", "value": self.value},
                "certificate": {"achieved_epsilon": self.achieved, "bound": self.bound, "gap": self.gap,
                                "status": self.status, "engine": "symmetric"},
                "baselines": {"oracles": {o.name: o.mse for o in self.oracles},
                              "calibrated_oracles": self._calibrated_list()}}

    def _calibrated_list(self) -> list[dict[str, Any]]:
        """The ``calibrated_oracles`` entries, in the same shape as every engine's (``CalibratedOracle.to_dict``)."""
        return [o.to_dict(self.value) for o in self.calibrated]

    @property
    def guarantee(self) -> dict[str, Any]:
        """The structured file's guarantee block: ε-PML over the ball (the writer recomputes it type by type)."""
        problem = self.problem
        return {"notion": "pml", "epsilon": problem.epsilon, "delta": problem.delta, "radius": problem.radius,
                "samples": self.mechanism.cells.samples}

    @property
    def mechanisms(self) -> tuple[SymmetricMechanism]:
        """The one mechanism the file states, as types over cells."""
        return (self.mechanism,)

    def sections(self) -> FileSections:
        """The structured mechanism file (:func:`mechdesign.mechfile.save` writes it).

        Returns
        -------
        FileSections
            The file's content: kind, mechanism(s), guarantee and blocks.
        """
        blocks = self.file_sections()
        return FileSections("structured", self.mechanism, blocks["guarantee"], utility=blocks["utility"],
                            baselines=blocks["baselines"], certificate=blocks["certificate"],
                            provenance={"problem": self.problem.name, "engine": "symmetric"})


def design_symmetric(problem: DesignProblem, *, time_limit: float = 60.0, deadline: Deadline | None = None,
                     progress: bool = False, seed: int = 0, sets: int | None = None, baselines: bool = True,
                     gap_tolerance: float = GAP_TOLERANCE) -> SymmetricDesign:
    """The A-optimal ε-PML-over-the-ball design by the symmetric engine, certified (:mod:`._engine`).

    Parameters
    ----------
    problem : DesignProblem
        ``estimation_mse`` with a count prior (:meth:`SymmetricEngine.accepts`).
    time_limit : float
        Seconds for the whole design (ignored when ``deadline`` is given).
    deadline : Deadline, optional
        The end of the run.
    progress : bool
        One line per phase on stderr.
    seed : int
        Seed of the random sets (the design is reproducible).
    sets : int, optional
        How many random sets (default 6K, between 600 and 4,000).
    baselines : bool
        Compare with the ε-LDP frequency oracles, at ε and calibrated to the ball (closed forms); ``False`` leaves
        ``oracles`` and ``calibrated`` empty.
    gap_tolerance : float
        "optimal" when the certified gap is at most this relative to the bound (default 1e-6).

    Returns
    -------
    SymmetricDesign

    Raises
    ------
    ValueError
        If the engine does not accept the problem (utility, prior not given by counts, ε = 0).

    Examples
    --------
    >>> from mechdesign.core import Prior
    >>> problem = DesignProblem(Prior.from_counts([9, 9, 6, 6, 6, 4, 4, 4, 4, 2, 2, 2]), 1.0, 0.05, "estimation_mse")
    >>> design = design_symmetric(problem)
    >>> round(design.value, 6), design.status
    (5.899274, 'optimal')
    """
    engine = SymmetricEngine()
    if engine.accepts(problem) is not True:
        raise v.fail("problem", "be an estimation_mse problem with a count prior and epsilon > 0 for the symmetric "
                     "engine", problem.name)
    limit = v.positive("time_limit", time_limit)
    deadline = deadline if deadline is not None else Deadline(limit)
    start = time.perf_counter()
    from mechdesign.core._threads import single_thread

    # The master's Newton systems are small and dense: BLAS threads only contend, as in the other designers
    # (pyproject.toml). At N = 12 (the example below) two threads spent 1.6-2.1 s of CPU on a 2-core machine, one 0.15.
    with single_thread():
        result = engine.run(problem, None, deadline, seed=seed, sets=sets, progress=progress)
        mechanism, achieved, value = certify(problem, result)
    bound = float(result.upper_bound if result.upper_bound is not None else 0.0)
    status = "optimal" if value - bound <= gap_tolerance * abs(bound) + 1e-12 else "feasible"
    compared = baselines and problem.epsilon < 700  # the oracles' closed forms are in e^ε
    oracles = compare_oracles(problem.prior, problem.epsilon, value) if compared else ()
    calibrated = calibrated_rows(problem.prior, problem.epsilon, problem.radius) if compared else ()
    timings = {**result.timings, "total": time.perf_counter() - start}
    return SymmetricDesign(problem, mechanism, value, bound, achieved, status, oracles, timings, result.iterations,
                           calibrated, dict(result.diagnosis))

"""Results of the design engines: the :class:`Design` protocol, :class:`DesignResult` and the baselines beside it.

Every engine's result is a :class:`Design` (what :func:`mechdesign.solve` returns): the dense engines' is a
:class:`DesignResult` (an N × M matrix, its certificate and baselines), the symmetric engine's a
:class:`~mechdesign.design.symmetric.SymmetricDesign` (types over cells).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mechdesign.core._mechanism import Mechanism
from mechdesign.core._symmetric import SymmetricMechanism
from mechdesign.design._certificate import Certificate
from mechdesign.design._problem import DesignProblem
from mechdesign.mechfile._save import FileSections, SavesFile, problem_provenance

__all__ = ["BASELINE_LABELS", "Baseline", "Design", "DesignResult", "SkippedBaseline", "peer_lines"]

_SHOWN = 10  # inseparable inputs named in the warning (the file lists them all)


def _percent(fraction: float) -> str:
    """A fraction as a percentage with two significant digits, never rounded up to 100 % (a lower bound)."""
    value = 100.0 * fraction
    if value >= 99.995:
        return f"{math.floor(value * 1000) / 1000:.3f} %" if value < 100.0 else "100 %"
    digits = max(0, 1 - math.floor(math.log10(value))) if value > 0 else 0
    floored = math.floor(value * 10**digits) / 10**digits
    return f"{floored:.{digits}f} %"


def _amount(value: float) -> str:
    """An n·MSE in a report: thousands separated, four significant digits below 1,000."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def peer_lines(calibrated: tuple[Any, ...], oracles: tuple[Any, ...], design_mse: float) -> list[str]:
    """The ε-LDP peers of an estimation design, one engine's report as another's (two lines, or none).

    The best oracle calibrated to the ball (the same guarantee: ε-PML over it, at its largest ε₀; reference
    calibrated-baselines.md §1) and the best oracle at the design's ε (ε-LDP: a stronger guarantee), with the ratio
    of each n·MSE to the design's.

    Parameters
    ----------
    calibrated : tuple of CalibratedOracle
        :func:`mechdesign.design.baselines.calibrated_oracles` rows (``name``, ``epsilon0``, ``mse``).
    oracles : tuple of OracleComparison
        The oracles at ε (:func:`mechdesign.design.baselines.compare_oracles`); an ``optimal_ldp`` row, a design
        rather than an oracle, is left out.
    design_mse : float
        The design's tr J⁻¹ − 1.

    Returns
    -------
    list of str
        E.g. ``best ε-LDP peer of the same guarantee: hadamard at ε₀ = 4.34, n·MSE 1,052 (design 1.35× better);``
        and ``  at the same ε: subset_selection n·MSE 3,674 (4.72×, a stronger guarantee)``; empty without rows.
    """
    same = [o for o in oracles if o.name != "optimal_ldp" and math.isfinite(o.mse)]
    if not calibrated or not same:
        return []
    peer, rival = min(calibrated, key=lambda o: o.mse), min(same, key=lambda o: o.mse)
    ratio = peer.mse / design_mse if design_mse > 0 else math.inf
    verdict = (f"design {ratio:.3g}× better" if ratio > 1 else "design ties" if ratio == 1
               else f"design {1 / ratio:.3g}× worse" if ratio > 0 else "the peer is exact")
    level = "∞" if math.isinf(peer.epsilon0) else f"{peer.epsilon0:.3g}"
    lines = [f"best ε-LDP peer of the same guarantee: {peer.name} at ε₀ = {level}, n·MSE {_amount(peer.mse)} "
             f"({verdict});",
             f"  at the same ε: {rival.name} n·MSE {_amount(rival.mse)} ({rival.ratio:.3g}×, a stronger guarantee)"]
    if 0 < ratio < 1:  # never silently: a mechanism of the same guarantee that this design did not reach
        lines.append(f"  warning: {peer.name} at ε₀ = {level} carries the same guarantee with less error; this design "
                     "did not reach it (raise --time-limit, or deploy that oracle)")
    return lines


@runtime_checkable
class Design(Protocol):
    """What every design result offers, whichever engine made it: :func:`mechdesign.solve` returns one.

    ``utility`` is the certified value (recomputed from the returned mechanism), ``bound`` a proven bound on the
    optimum in the same units — an upper bound when ``sense`` is "maximize", a lower bound when it is "minimize"
    (the estimation criteria) — and ``gap`` the distance between them (≥ 0); ``status`` is "optimal" when the gap
    is within the engine's tolerance, else "feasible" (certified either way). ``method`` names the engine that ran
    ("enumeration", "column_generation", "pricing", "estimation" …, "symmetric").

    Implemented by :class:`DesignResult` (a dense matrix) and :class:`~mechdesign.design.symmetric.SymmetricDesign`
    (types over cells of equal counts, :class:`~mechdesign.core.SymmetricMechanism`).

    References
    ----------
    .. [E] "Privacy Mechanism Design based on Empirical Distributions", eq. 40 (the design problem whose optimum
       ``bound`` bounds); reference/symmetric-designs.md §1 (the symmetric optimum).

    Examples
    --------
    >>> import math
    >>> from mechdesign import DesignProblem, solve
    >>> result = solve(DesignProblem([0.4, 0.2, 0.2, 0.2], math.log(9 / 8)), baselines=False)
    >>> isinstance(result, Design), result.method, result.status
    (True, 'enumeration', 'optimal')
    """

    @property
    def problem(self) -> DesignProblem:
        """The problem that was solved."""
        ...

    @property
    def mechanism(self) -> Mechanism | SymmetricMechanism:
        """The certified mechanism: a dense matrix or types over cells."""
        ...

    @property
    def utility(self) -> float:
        """The certified value of the utility (n·MSE for ``estimation_mse``)."""
        ...

    @property
    def bound(self) -> float:
        """A proven bound on the optimum: above it when ``sense`` is "maximize", below it when "minimize"."""
        ...

    @property
    def gap(self) -> float:
        """The certified gap between ``utility`` and ``bound``."""
        ...

    @property
    def status(self) -> str:
        """"optimal" or "feasible"."""
        ...

    @property
    def sense(self) -> str:
        """"maximize" or "minimize"."""
        ...

    @property
    def method(self) -> str:
        """The engine that ran."""
        ...

    @property
    def timings(self) -> dict[str, float]:
        """Wall-clock seconds per phase, ``total`` among them."""
        ...

    def summary(self) -> str:
        """The report ``mechdesign design`` prints.

        Returns
        -------
        str
            A few lines: the problem, the design's value with its bound and status, the guarantee, the baselines.
        """
        ...

    def to_dict(self) -> dict[str, Any]:
        """The JSON object ``mechdesign design --json`` prints, in one shape for every engine.

        Returns
        -------
        dict
            ``problem``, ``method``, ``guarantee``, ``utility`` (``kind``, ``value``, ``upper_bound`` or
            ``lower_bound``, ``gap``, ``status`` …), ``certificate``, ``baselines``, ``timings``.
        """
        ...

    def save(self, path: str | os.PathLike[str], *, problem_file: str | os.PathLike[str] | None = None,
             release: dict[str, Any] | None = None, key: str | None = None, force: bool = False,
             deadline: Any = None, provenance: dict[str, Any] | None = None) -> Path:
        """Write the certified mechanism file (:func:`mechdesign.mechfile.save`; a structured file for types).

        Parameters
        ----------
        path : path
            Target file, conventionally ``<name>.mech.json``.
        problem_file : path, optional
            The TOML problem file the design came from (name and SHA-256 recorded in the provenance).
        release : dict, optional
            The file's release policy; by default one release per run.
        key : str, optional
            The memoization key identifier a memoized file is bound to.
        force : bool
            Replace ``path`` if it exists.
        deadline : Deadline, optional
            When a "repeated" policy's T-release account must end.
        provenance : dict, optional
            Entries added to the provenance block.

        Returns
        -------
        Path
            The written file.
        """
        ...


# One description per baseline name, shared by summary(), the CLI and the docs.
BASELINE_LABELS = {"rr_ldp": "k-RR at the same ε (ε-LDP)", "rr_pml": "k-RR calibrated to the ball (largest ε₀)",
                   "optimal_ldp": "optimal ε-LDP (staircase LP)", "inner": "inner design at ε′ ([E] eq. 43-44)"}


def _linear_info(matrix: Any, prior: Any, utility: Any) -> dict[str, Any]:
    """The ``estimation_linear`` entries of the file's ``utility`` block (see ``DesignResult.estimation_info``)."""
    import numpy as np

    from mechdesign.core._fisher import linear_decoder, weighted_trace_inverse_fisher

    weights = utility.weights
    decoder = linear_decoder(matrix, prior, weights)
    q = prior @ matrix
    # n × covariance of the decoded Lp on n fixed records: G (diag q − Wᵀ diag(P̂) W) Gᵀ (core/_fisher.py, eq. L).
    variances = np.einsum("iy,yz,iz->i", decoder, np.diag(q) - matrix.T @ (prior[:, None] * matrix), decoder)
    trace = weighted_trace_inverse_fisher(matrix, prior, weights)
    return {"quantities": list(utility.names), "weights": weights.tolist(),
            "mse_factor_fixed_records": trace - utility.offset(prior),
            "mse_factor_iid": trace - float(np.sum((weights @ prior) ** 2)),
            "variance_factors_fixed_records": dict(zip(utility.names, variances.tolist(), strict=True))}


@dataclass(frozen=True)
class Baseline:
    """One baseline mechanism with its utility, its capacity over the ball and the ratio design / baseline.

    ``parameter`` is ε₀ for the randomized responses and ε′ for the inner design. ``ratio`` is
    design / baseline for maximised utilities and baseline / design for minimised ones (the estimation
    errors), so a ratio above 1 always means the design is better.
    """

    name: str
    description: str
    mechanism: Mechanism
    utility: float
    ratio: float
    capacity: float
    parameter: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of the ``baselines`` block of the mechanism file (everything but the matrix).

        Returns
        -------
        dict
            ``name``, ``description``, ``utility``, ``ratio``, ``capacity`` and ``parameter``.
        """
        return {"name": self.name, "description": self.description, "utility": self.utility, "ratio": self.ratio,
                "capacity": self.capacity, "parameter": self.parameter}


@dataclass(frozen=True)
class SkippedBaseline:
    """A baseline that was not computed, and why (the time limit, or a problem its engine refuses).

    ``solve(..., time_limit=T)`` caps the whole run: the design first, then the baselines in the time
    left. A baseline that is itself a design (``optimal_ldp``, ``inner``) and cannot be finished in that
    time is reported here instead of with a value that is not its optimum.
    """

    name: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON form in the ``baselines`` block of the mechanism file: ``{"skipped": reason}``.

        Returns
        -------
        dict
            ``skipped`` (the reason).
        """
        return {"skipped": self.reason}


@dataclass(frozen=True)
class DesignResult(SavesFile):
    """A certified design: the mechanism, its utility, a proven upper bound, baselines and timings.

    The design maximises a sub-convex utility U(W) ([E] eq. 11) subject to ε-PML for every prior in the
    ℓ1 ball B_β(P̂) ([E] eq. 31); the bound comes from the duals of the master LP (reference
    pml-design.md §3.3). ``status`` is "optimal" when the certified gap is at most
    ``gap_tolerance × |bound|`` (+ 1e-15 absolute), "feasible" otherwise (the mechanism is still
    certified; the gap is reported).

    ``sense`` is "maximize" for the sub-convex utilities and "minimize" for the estimation criteria
    (``estimation_mse``, ``estimation_logdet``); for the latter ``upper_bound`` holds a proven
    **lower** bound and ``gap = utility − bound``. ``rank`` is the rank of the matrix (frequencies
    are identifiable iff it equals N; a property). ``oracles`` lists the LDP frequency oracles compared with an
    estimation design (:mod:`mechdesign.design.baselines._ldp_oracles`), ``calibrated`` the same families calibrated
    to the ball (:func:`mechdesign.design.baselines.calibrated_oracles`).

    Parameters
    ----------
    problem : DesignProblem
        The problem that was solved (prior P̂, ε, radius β, utility).
    mechanism : Mechanism
        The certified mechanism W, ``matrix[x, y] = P(y | x)``.
    utility : float
        U(W) recomputed from the returned matrix (after the repair).
    upper_bound : float
        The proven bound on the optimum: an upper bound when ``sense`` is "maximize", a lower bound when
        it is "minimize".
    gap : float
        The certified gap between ``utility`` and ``upper_bound`` (≥ 0 up to rounding).
    status : str
        "optimal" or "feasible" (see above).
    certificate : Certificate
        The privacy and optimality certificate recomputed in NumPy from the matrix.
    solver : str
        The LP solver used, "HIGHS" or "CLARABEL".
    method : str
        The method used: "enumeration", "column_generation", "pricing" (or the estimation design's).
    candidates : int
        Number of candidate columns enumerated or priced.
    iterations : int
        Number of master-LP iterations.
    timings : dict of str to float
        Wall-clock seconds per phase (e.g. "lp", "certify", "baselines", "total").
    baselines : tuple of Baseline, optional
        The baseline mechanisms compared with the design (empty when not computed).
    sense : str, optional
        "maximize" (default) or "minimize".
    oracles : tuple, optional
        LDP frequency oracles compared with an estimation design (empty otherwise).
    skipped_baselines : tuple of SkippedBaseline, optional
        The baselines that were not computed in the time limit (or were refused), with the reason.
    calibrated : tuple, optional
        The LDP frequency oracles calibrated to the ball, each at its largest ε₀ at which it is ε-PML over it
        (``CalibratedOracle``; estimation designs only, with the oracles).

    References
    ----------
    .. [E] "Privacy Mechanism Design based on Empirical Distributions", eq. 11 (sub-convex utility),
       eq. 31 (the ℓ1 ball) and Def. 5, eq. 22–23 (the capacity that the certificate bounds by ε).
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
    sense: str = "maximize"
    oracles: tuple[Any, ...] = field(default=())
    skipped_baselines: tuple[SkippedBaseline, ...] = field(default=())
    calibrated: tuple[Any, ...] = field(default=())

    def identifiability(self) -> tuple[int, tuple[int, ...]]:
        """The matrix's rank and the inputs no decoder separates, from one SVD kept with the result.

        :func:`mechdesign.core.identifiability`, computed once: the report, the warning and the file all ask
        (five SVDs of the matrix were 24 s of a 10-s design at N = 1,000 on a loaded machine).

        Returns
        -------
        rank : int
            Singular values above 1e-10.
        inseparable : tuple of int
            Indices of the inputs whose frequencies cannot be separated (empty when the rank is N).
        """
        cached = self.__dict__.get("_identifiability")
        if cached is None:
            from mechdesign.core._fisher import identifiability
            from mechdesign.core._threads import single_thread

            with single_thread():  # BLAS threads only contend on a shared machine (pyproject.toml)
                rank, inseparable = identifiability(self.mechanism.matrix)
            cached = (rank, tuple(int(i) for i in inseparable))
            object.__setattr__(self, "_identifiability", cached)  # a cache, not a field: replace() drops it
        return cached

    def with_baselines(self, baselines: tuple[Baseline, ...], skipped: tuple[SkippedBaseline, ...],
                       oracles: tuple[Any, ...] = (), calibrated: tuple[Any, ...] = ()) -> DesignResult:
        """The result with its baselines and LDP oracles (at ε, calibrated) attached; the rank already taken is kept.

        Parameters
        ----------
        baselines, skipped, oracles, calibrated
            As the fields of the same names (``skipped`` is ``skipped_baselines``).

        Returns
        -------
        DesignResult
            A new result.
        """
        out = replace(self, baselines=baselines, skipped_baselines=skipped, oracles=oracles, calibrated=calibrated)
        if "_identifiability" in self.__dict__:
            object.__setattr__(out, "_identifiability", self.__dict__["_identifiability"])
        return out

    @property
    def bound(self) -> float:
        """``upper_bound`` under the name every :class:`Design` shares (a lower bound when ``sense`` is "minimize")."""
        return self.upper_bound

    @property
    def rank(self) -> int:
        """Rank of the matrix (singular values above 1e-10); the frequencies are identifiable iff it is N."""
        return self.identifiability()[0]

    @property
    def identifiable(self) -> bool:
        """True when the mechanism has rank N: every input frequency can be decoded."""
        return self.rank == self.problem.size

    @property
    def outputs(self) -> int:
        """``|Y|``, the number of outputs (columns) of the designed mechanism."""
        return self.mechanism.shape[1]

    def baseline(self, name: str) -> Baseline:
        """The baseline called ``name`` (a key of ``BASELINE_LABELS``).

        Parameters
        ----------
        name : str
            One of "rr_ldp", "rr_pml", "optimal_ldp", "inner".

        Returns
        -------
        Baseline
            The baseline with that name.

        Raises
        ------
        KeyError
            If no baseline called ``name`` was computed (e.g. ``solve(..., baselines=False)``, or it is in
            ``skipped_baselines``: the message then gives the reason).
        """
        for b in self.baselines:
            if b.name == name:
                return b
        for skipped in self.skipped_baselines:
            if skipped.name == name:
                raise KeyError(f"{name} was skipped: {skipped.reason}")
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
        bound = "upper bound" if self.sense == "maximize" else "lower bound"
        lines = [
            f"problem {p.name}: N = {p.size}, ε = {p.epsilon:.6g} nats{delta}",
            f"  ℓ1 radius β = {p.radius:.6g} ({regime})",
            f"design: {p.utility.kind} = {self.utility:.10g} ({self.status})",
            f"  {bound} {self.upper_bound:.10g}, gap {self.gap:.2g}; {self.outputs} outputs, rank {self.rank}; "
            f"{self.timings.get('total', 0.0):.2f} s",
        ]
        if self.status != "optimal":
            lines.append(f"  not proven optimal within the time limit: {self.gap_statement()}")
        lines += [
            f"guarantee: {kind}",
            f"  certified capacity over the ball {cert.achieved_epsilon:.15g} <= {cert.epsilon:.15g}",
            # verify prints the file's own value, recomputed: two numbers for one file unless told apart (issue 61)
            f"  (a bound for the designed matrix, mixing repair {cert.mixing_weight:.2g}; verify's 'achieved' is the "
            "file's own)",
        ]
        if self.baselines or self.skipped_baselines:
            ratio = "design/baseline" if self.sense == "maximize" else "baseline/design"
            lines.append(f"baselines, each certified over the same ball: {'utility':>10}  {ratio}")
            for b in self.baselines:
                label = BASELINE_LABELS.get(b.name, b.name)
                if b.name == "optimal_ldp" and self.sense == "minimize":
                    letter = "L" if p.utility.kind == "estimation_linear" else "A"
                    label = f"{letter}-optimal ε-LDP (the design at β = 2)"
                lines.append(f"  {label:<43} {b.utility:>10.6g}  {b.ratio:>9.3f}")
            lines += [f"  {BASELINE_LABELS.get(s.name, s.name)}: skipped ({s.reason})" for s in self.skipped_baselines]
        if self.oracles:
            lines.append(f"LDP frequency oracles at ε = {p.epsilon:.6g} (n × total MSE): {'mse':>10}  oracle/design")
            lines += [f"  {o.description.split(' (')[0]:<43} {o.mse:>10.6g}  {o.ratio:>9.3f}" for o in self.oracles]
            lines += peer_lines(self.calibrated, self.oracles, self.utility)
        warning = self.rank_warning()
        if warning:
            lines.append(warning)
        elif p.utility.kind == "estimation_linear":
            names = getattr(p.utility, "names", ())
            shown = ", ".join(names[:6]) + (", …" if len(names) > 6 else "")
            lines.append(f"decodes {len(names)} quantities Lp ({shown})"
                         + ("" if self.identifiable else f"; rank {self.rank} < N: not every frequency"))
        return "\n".join(lines)

    def gap_statement(self) -> str:
        """What the certified gap says about the optimum, in the direction that applies (one line).

        For a maximised utility the optimum is at most the bound, so the design is at most ``gap`` below it and
        attains at least ``utility / bound`` of it (when both are positive); for a minimised one (the estimation
        errors) the optimum is at least the bound, the design at most ``gap`` above it and within a factor
        ``utility / bound`` of it. The relative gap ``gap / |bound|`` alone said "within 1 (relative)" of a design
        at 0.2 % of its bound.

        Returns
        -------
        str
            E.g. "the optimum is at most 2.5589 (proven bound), 2.554 above this design's 0.0049052: the design
            attains at least 0.19 % of the optimum".

        Examples
        --------
        >>> import math
        >>> from mechdesign import DesignProblem, solve
        >>> result = solve(DesignProblem([0.4, 0.2, 0.2, 0.2], math.log(9 / 8)), baselines=False)
        >>> result.gap_statement().startswith("the optimum is at most 0.02682231")
        True
        """
        value, bound, gap = self.utility, self.upper_bound, max(self.gap, 0.0)
        if not math.isfinite(bound):
            return f"no finite bound on the optimum was proven; this design's value is {value:.8g}"
        if self.sense == "maximize":
            text = f"the optimum is at most {bound:.8g} (proven bound), {gap:.3g} above this design's {value:.8g}"
            if value >= 0 and bound > 0:
                text += f": the design attains at least {_percent(value / bound)} of the optimum"
            return text
        text = f"the optimum is at least {bound:.8g} (proven bound), {gap:.3g} below this design's {value:.8g}"
        if bound > 0 and math.isfinite(value):
            text += f": the design is within a factor {value / bound:.4g} of the optimum"
        return text

    def rank_warning(self) -> str | None:
        """One line when the frequencies of some inputs cannot be separated by any decoder, else ``None``.

        Returns
        -------
        str or None
            The warning, naming the inseparable inputs and pointing to ``estimation_mse``; ``None`` also for an
            ``estimation_linear`` design whose quantities Lp are identifiable (finite utility), which is all
            it promises.
        """
        if self.identifiable or (self.problem.utility.kind == "estimation_linear" and self.utility < float("inf")):
            return None
        inseparable = self.identifiability()[1]
        labels = [self.problem.prior.labels[i] for i in inseparable[:_SHOWN]]
        more = f" and {len(inseparable) - _SHOWN:,} more" if len(inseparable) > _SHOWN else ""
        return (f"warning: the design has rank {self.rank} < N = {self.problem.size}: the frequencies of {labels}"
                f"{more} cannot be separated by any decoder; use [utility] kind = \"estimation_mse\" for a decodable "
                "mechanism")

    def estimation_info(self) -> dict[str, Any]:
        """Rank, identifiability, the two MSE conventions and the LDP-oracle comparison (file ``utility`` block).

        Returns
        -------
        dict
            ``sense``, ``rank``, ``identifiable`` (and ``inseparable_inputs``); for ``estimation_mse`` also
            n × total MSE for fixed records (tr J⁻¹ − 1) and i.i.d. records (tr J⁻¹ − ‖P̂‖²), the MSEs at
            n = ``samples``, the LDP oracles at ε (``ldp_oracles``, by name) and calibrated to the ball
            (``calibrated_oracles``, a list: ``name``, ``epsilon0``, ``mse``, ``ratio``, ``parameter``, ``mass``);
            for ``estimation_linear`` the quantities (``names``, the rows of L as ``weights``: what ``decode``
            needs), n × their total MSE for fixed records (the utility) and i.i.d. records (tr(L J⁺ Lᵀ) − ‖LP̂‖²),
            and n × the variance of each.
        """
        from mechdesign.core._fisher import trace_inverse_fisher

        problem = self.problem
        out: dict[str, Any] = {"sense": self.sense, "rank": self.rank, "identifiable": self.identifiable}
        if not self.identifiable:
            out["inseparable_inputs"] = [problem.prior.labels[i] for i in self.identifiability()[1]]
        if problem.utility.kind == "estimation_mse":
            p = problem.prior.probabilities
            trace = trace_inverse_fisher(self.mechanism.matrix, p)
            fixed = max(trace - 1.0, 0.0)  # never below 0, as the criterion's value (EstimationMSE.value_at)
            out["mse_factor_fixed_records"] = fixed             # n × total MSE, records' values fixed
            out["mse_factor_iid"] = trace - float(p @ p)        # n × total MSE, i.i.d. records
            if problem.samples:
                out["mse_fixed_records"] = fixed / problem.samples
                out["mse_iid"] = (trace - float(p @ p)) / problem.samples
            out["ldp_oracles"] = {o.name: {k: val for k, val in o.to_dict().items() if k != "name"}
                                  for o in self.oracles}
            out["calibrated_oracles"] = [o.to_dict(self.utility) for o in self.calibrated]
        if problem.utility.kind == "estimation_linear" and self.utility < float("inf"):
            out.update(_linear_info(self.mechanism.matrix, problem.prior.probabilities, problem.utility))
        return out

    def file_sections(self, problem_file: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
        """The ``guarantee``, ``utility``, ``baselines``, ``certificate`` and ``provenance`` file blocks.

        These are the blocks of the mechanism file (see ``mechdesign/mechfile/mechanism.schema.json``)
        besides the matrix itself.

        Parameters
        ----------
        problem_file : path, optional
            The TOML problem file the design came from; its name and SHA-256 go into the provenance.

        Returns
        -------
        dict of str to dict
            One JSON-ready dictionary per block, keyed by block name.
        """
        p = self.problem
        provenance: dict[str, Any] = {"problem": p.name, "solver": self.solver, "method": self.method,
                                      "candidate_columns": self.candidates, "iterations": self.iterations}
        provenance.update(problem_provenance(problem_file))
        return {
            "guarantee": self.guarantee,
            "utility": {"kind": p.utility.kind, "value": self.utility,
                        ("upper_bound" if self.sense == "maximize" else "lower_bound"): self.upper_bound,
                        "gap": self.gap, "status": self.status, **self.estimation_info()},
            "baselines": {**{b.name: {k: val for k, val in b.to_dict().items() if k != "name"} for b in self.baselines},
                          **{b.name: b.to_dict() for b in self.skipped_baselines}},
            "certificate": self.certificate.to_dict(),
            "provenance": provenance,
        }

    @property
    def guarantee(self) -> dict[str, Any]:
        """The guarantee block of the result's file: ε-PML over the ball of ``radius`` around the prior."""
        return self.problem.guarantee_block()

    @property
    def mechanisms(self) -> tuple[Mechanism, ...]:
        """The one mechanism the file states."""
        return (self.mechanism,)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (``mechdesign design --json``): the problem and the file's blocks, with the design.

        Returns
        -------
        dict
            ``problem``, ``method``, ``guarantee``, ``utility``, ``outputs``, ``rank``, ``certificate``,
            ``baselines``, ``timings`` (the keys every :class:`Design` prints, and ``outputs``, ``rank``).
        """
        sections = self.file_sections()
        return {"problem": self.problem.to_dict(), "method": self.method, "guarantee": sections["guarantee"],
                "utility": sections["utility"],
                "outputs": self.outputs, "rank": self.rank, "certificate": sections["certificate"],
                "baselines": sections["baselines"], "timings": self.timings}

    def sections(self) -> FileSections:
        """The result's mechanism file (:func:`mechdesign.mechfile.save` writes it).

        Returns
        -------
        FileSections
            The file's content: kind, mechanism(s), guarantee and blocks.
        """
        blocks = self.file_sections()
        return FileSections("column", self.mechanism, blocks["guarantee"], utility=blocks["utility"],
                            baselines=blocks["baselines"], certificate=blocks["certificate"],
                            provenance=blocks["provenance"])

"""``mechdesign design PROBLEM.toml``: the certified optimal mechanism, its baselines and its mechanism file.

A problem file with ``columns = [...]`` in ``[data]`` describes whole records
(:mod:`mechdesign.records._problem`): the record file is written with the record-level guarantee only. With
``[design] kind = "sampled"`` it is an attribute-sampled design (:mod:`mechdesign.records._sampled`): the factors
and the sampling probabilities π.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mechdesign._progress import say
from mechdesign.cli._io import add_force_argument, print_json, refuse_existing

if TYPE_CHECKING:
    from mechdesign._deadline import Deadline

COMMAND = ("design",)
DEFAULT_LIMIT = 60.0
#: The default limit of a two-layer problem: native-country's design at (4, 1), link 1.427, was n × 588–2,885
#: at 60 s (4 runs) against 221 at 300 s (benchmarks/results/two_layer_limit.csv).
TWO_LAYER_LIMIT = 300.0
HELP = "design the utility-optimal mechanism of a problem file (ε-PML over the ℓ1 ball), certify it, write it"
EXAMPLE = "mechdesign design problems/adult-relationship-estimation.toml --out designs/"  # estimation_mse: decodable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``mechdesign design`` to ``parser``."""
    from mechdesign.design import SOLVERS
    from mechdesign.design._solvers import METHODS

    parser.add_argument("problem", metavar="PROBLEM.toml", help="problem file (see problems/ for examples)")
    parser.add_argument("--out", metavar="DIR", default=".",
                        help="directory for the mechanism file <name>.mech.json (default: current directory)")
    parser.add_argument("--solver", choices=[s.lower() for s in SOLVERS], default="highs",
                        help="master LP solver (default highs, one persistent model; clarabel only with "
                             "--method enumeration, through cvxpy); for estimation utilities the default is "
                             "an interior point master and clarabel solves every master through cvxpy")
    parser.add_argument("--method", choices=METHODS, default="auto",
                        help="candidate columns: enumerated, priced from an enumerated list, or priced without a "
                             "list (count priors); estimation: the dense engine of the estimation utilities (a "
                             "convex program); symmetric: types over cells of equal counts, written as a "
                             "structured file (estimation_mse with a count prior); auto picks by size (symmetric "
                             "from 64 categories on where it applies, and from 17 where the counts tie into at "
                             "most a quarter as many cells)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                        help="time for the whole command, from its start to the file (default 60; 300 for a "
                             "two-layer problem, whose design runs the engine twice and designs the fresh layer): "
                             "the search stops early enough for the certificate and the file, and at the limit the "
                             "best certified mechanism is written with status 'feasible' and its certified gap; the "
                             "baselines run in the time left and those that cannot finish are reported as skipped")
    parser.add_argument("--no-baselines", action="store_true",
                        help="skip the baselines (k-RR, optimal ε-LDP, inner design): the design has the whole "
                             "time limit and the file's baselines block is empty")
    parser.add_argument("--progress", action="store_true",
                        help="print iteration, utility, bound and gap on stderr (default: when stderr is a terminal)")
    parser.add_argument("--memo-key", metavar="KEY",
                        help="with [release] policy memoized or two-layer: bind the file to this memoization key "
                             "(its id is written; privatize then refuses any other key)")
    add_force_argument(parser, "an existing <name>.mech.json")
    parser.add_argument("--json", action="store_true", help="print one JSON object")



def run(args: argparse.Namespace) -> int:
    """Run ``mechdesign design`` on the parsed ``args``; return the exit code.

    0 on success; failures are raised, and :func:`mechdesign.cli.main` maps them to exit codes. ``--time-limit``
    caps the whole command: one :class:`~mechdesign.Deadline`, counted from the command's start (the
    process's, from the command line: :func:`mechdesign.cli.command_started`), goes down to the engine, the
    certificate, the baselines and the file, which keep time for each other.
    """
    from mechdesign import _validation as v
    from mechdesign._deadline import Deadline
    from mechdesign.cli import command_started

    if args.time_limit is not None:
        v.positive("time_limit", args.time_limit)
    limit = DEFAULT_LIMIT if args.time_limit is None else args.time_limit
    deadline = Deadline(limit, started=command_started())
    from mechdesign.design._problemfile import load_problem
    from mechdesign.design._solver import design_dense
    from mechdesign.mechfile._format import write_seconds
    from mechdesign.records._problem import is_record_problem

    show = bool(args.progress or sys.stderr.isatty())
    source = Path(args.problem)
    if is_record_problem(source):
        return _run_record(args, source, deadline, show)
    loaded = load_problem(source)
    if args.memo_key is not None:
        if loaded.release.get("policy") not in ("memoized", "two-layer"):
            raise ValueError("memo_key must be given only with [release] policy \"memoized\" or \"two-layer\", got "
                             f"policy={loaded.release.get('policy', 'single')!r}")
        from mechdesign.deploy.sampling._memo import read_memo_key
        from mechdesign.mechfile._policy import key_id

        loaded.release["key"] = key_id(read_memo_key(args.memo_key))
    problem = loaded.problem
    destination = Path(args.out) / f"{problem.name}.mech.json"
    refuse_existing(destination, args.force)
    if loaded.release.get("policy") == "two-layer":
        if args.time_limit is None:  # see TWO_LAYER_LIMIT
            deadline = Deadline(TWO_LAYER_LIMIT, started=command_started())
        return _run_two_layer(args, loaded, destination, deadline, show)
    if _symmetric(args.method, problem, loaded.release):
        return _run_symmetric(args, loaded, destination, deadline, show)
    say(show, f"{problem.name}: N = {problem.size}, ε = {problem.epsilon:g}, radius = {problem.radius:.4g} "
              f"({problem.form}); solving the design{'' if args.no_baselines else ' and the baselines'} "
              f"(time limit {limit:g} s, {deadline.remaining():.3g} s left) …")
    size = problem.size
    _note_file_cap(show, size)
    start = time.perf_counter()
    releases = int(loaded.release.get("releases", 1)) if loaded.release.get("policy") == "repeated" else 1
    from mechdesign.core._repeated import release_seconds

    def reserve(outputs: int) -> float:  # the file, and the T-release account it states
        return write_seconds(size * outputs) + release_seconds(problem.ball, outputs, releases)
    result = design_dense(problem, solver=args.solver.upper(), method=args.method, baselines=not args.no_baselines,
                          progress=show, deadline=deadline, reserve=reserve)
    say(show, f"solved in {time.perf_counter() - start:.2f} s ({result.candidates:,} candidate columns, "
              f"{result.iterations} iterations, {result.status}); writing the mechanism file "
              f"({size} × {result.outputs}, {deadline.remaining():.3g} s left) …")
    policy = {k: val for k, val in loaded.release.items() if k != "report_epsilon"} or None
    cpu = time.process_time()
    with warnings.catch_warnings():  # a signed file's replacement was warned about before the solve
        warnings.simplefilter("ignore", UserWarning)
        target = result.save(destination, problem_file=source, release=policy, force=args.force, deadline=deadline)
    account = _account_note(target, loaded.release, time.process_time() - cpu)
    say(show, f"wrote {target} ({deadline.elapsed():.2f} s since the start of the command)")
    warning = result.rank_warning()
    if warning:
        print(f"mechdesign: {warning}", file=sys.stderr)
    if args.json:
        print_json({**result.to_dict(), "file": str(target), "release_check": None if account is None else account[1]})
        return 0
    print(result.summary())
    if account is not None:
        print(account[0])
    print(f"wrote {target}")
    return 0


def _account_note(target: Path, release: dict[str, object], seconds: float) -> tuple[str, dict[str, object]] | None:
    """What a repeated file's readers pay to check its ε_T (the line and the JSON), or ``None`` for other policies.

    Writing the file recomputed the account (``seconds`` of CPU, nearly all of the write): a reader's first load on
    another machine, or after an upgrade, recomputes it as well; later loads here reuse it
    (:mod:`mechdesign.mechfile._accounts`).
    """
    import json

    if release.get("policy") != "repeated":
        return None
    from mechdesign.mechfile._accounts import cache_folder

    stated = json.loads(target.read_text(encoding="utf-8"))["release"]
    folder = cache_folder()
    kept = f"kept in {folder.parent}" if folder is not None else "not kept: the cache is off"
    text = (f"release: {stated['releases']:,} fresh releases of the same value leak at most {stated['epsilon']:.9g} "
            f"nats (stated in the file); every reader checks that account from the matrix: about {seconds:.2g} s of "
            f"CPU on a first load of this file on a machine (verify, privatize, decode), nothing on later loads here "
            f"({kept})")
    return text, {"releases": stated["releases"], "epsilon": stated["epsilon"], "first_load_cpu_seconds": seconds,
                  "cached": folder is not None}


def _symmetric(method: str, problem: object, release: dict[str, object]) -> bool:
    """Whether the symmetric engine designs ``problem``: the choice :func:`mechdesign.solve` makes too.

    :func:`mechdesign.design.plan_method` decides, ``structured`` where a structured file can state the release
    policy.

    Raises
    ------
    ValueError
        If it is asked for a problem it does not accept or a release policy a structured file cannot state.
    """
    from mechdesign.design._solver import plan_method

    policy = release.get("policy", "single")
    structured = policy in ("single", "memoized")
    if method == "symmetric" and not structured:
        raise ValueError("method must not be 'symmetric' with [release] policy "
                         f"{policy!r}: a structured file states one release or memoization only, got "
                         "method='symmetric'")
    return plan_method(problem, method, structured=structured) == "symmetric"  # type: ignore[arg-type]


def _run_symmetric(args: argparse.Namespace, loaded: object, destination: Path, deadline: Deadline, show: bool) -> int:
    """The symmetric engine's design, written as a structured file (:mod:`mechdesign.mechfile._symmetric`)."""
    from mechdesign.design.symmetric import design_symmetric

    problem = loaded.problem  # type: ignore[attr-defined]
    say(show, f"{problem.name}: N = {problem.size:,}, ε = {problem.epsilon:g}, radius = {problem.radius:.4g}; "
              f"symmetric design over cells of equal counts ({deadline.remaining():.3g} s left) …")
    start = time.perf_counter()
    # the file's writing (the guarantee recomputed, the tables packed) keeps a tenth of the time, at most 30 s
    design = design_symmetric(problem, deadline=deadline.before(min(0.1 * deadline.remaining(), 30.0)),
                              progress=show, baselines=not args.no_baselines)
    say(show, f"designed in {time.perf_counter() - start:.2f} s ({design.status}); writing the structured file "
              f"({deadline.remaining():.3g} s left) …")
    from mechdesign.deploy.sampling._symmetric import SymmetricPrivatizer

    # a file that privatize would refuse (its quantised sampler past the stated ε) is never written
    SymmetricPrivatizer(design.mechanism).check(design.guarantee)
    policy = {k: val for k, val in loaded.release.items() if k != "report_epsilon"} or None  # type: ignore[attr-defined]
    with warnings.catch_warnings():  # a signed file's replacement was warned about before the solve
        warnings.simplefilter("ignore", UserWarning)
        target = design.save(destination, problem_file=args.problem, release=policy, force=args.force)
    say(show, f"wrote {target} ({deadline.elapsed():.2f} s since the start of the command)")
    if args.json:
        print_json({**design.to_dict(), "file": str(target), "file_bytes": target.stat().st_size})
        return 0
    print(design.summary())
    print(f"wrote {target} ({target.stat().st_size / (1 << 20):.3g} MiB)")
    return 0


def _run_two_layer(args: argparse.Namespace, loaded: object, destination: Path, deadline: Deadline, show: bool) -> int:
    """``[release] policy = "two-layer"``: lifetime, per-report, link budgets (:mod:`mechdesign.design.two_layer`)."""
    from mechdesign.design.baselines._longitudinal import LONGITUDINAL, longitudinal_protocol
    from mechdesign.design.two_layer import design_two_layer

    problem = loaded.problem  # type: ignore[attr-defined]
    release = loaded.release  # type: ignore[attr-defined]
    report = float(release["report_epsilon"])
    link = float(release.get("link_epsilon", math.inf))
    say(show, f"{problem.name}: two layers, lifetime ε = {problem.epsilon:g}, per-report ε = {report:g}, link "
              f"ε = {link:g}: the single-layer bound, then the permanent and the fresh layer "
              f"({deadline.remaining():.3g} s left) …")
    start = time.perf_counter()
    # After the design: the final mixing, the writer's recomputation of the three levels and the file (a few matrices
    # of at most a few hundred outputs). 3 % of a 60-s limit ended 8.5 s late at load 20 on 2 cores: 10 %, at least 2 s.
    design = design_two_layer(problem, report, link_epsilon=link, progress=show,
                              deadline=deadline.before(max(2.0, 0.1 * deadline.seconds)))
    say(show, f"designed in {time.perf_counter() - start:.2f} s ({design.method}); writing the mechanism file")
    with warnings.catch_warnings():  # a signed file's replacement was warned about before the solve
        warnings.simplefilter("ignore", UserWarning)
        target = design.save(destination, problem_file=args.problem, key=release.get("key"), force=args.force)
    # The ε-LDP longitudinal protocols at the same lifetime and per-report levels, each with its own link level.
    chains = {name: longitudinal_protocol(name, problem.size, problem.epsilon, report) for name in LONGITUDINAL}
    ldp = {name: chain.mse for name, chain in chains.items()}
    summary = {**design.to_dict(), "ldp_longitudinal_mse_factor": ldp,
               "ldp_longitudinal_link_epsilon": {name: chain.link_epsilon for name, chain in chains.items()},
               "file": str(target)}
    if args.json:
        print_json(summary)
        return 0
    bound = design.single_layer
    print(f"two-layer design {problem.name}: lifetime epsilon {design.lifetime_epsilon:.6g} (W1: "
          f"{design.permanent.shape[1]} outputs, memoized), per-report epsilon {design.report_epsilon:.6g} (W2: "
          f"{design.reports.shape[1]} outputs, fresh per report), linkability epsilon {design.link_epsilon:.6g}")
    print(f"  one period's decoded MSE: n x {design.mse:.6g} (fixed records; {design.method}); no mechanism at the "
          f"per-report epsilon does better than n x {design.bound:.6g} (the engine's certified lower bound, "
          f"{bound.status}): within a factor {design.ratio:.4g} of it")
    if design.target is not None:
        print(f"  the single-layer design at the per-report and link epsilons (a design's value, not a bound): "
              f"n x {design.target:.6g}")
    for name, chain in chains.items():
        linkable = "at least as unlinkable" if chain.link_epsilon <= design.link_epsilon else "more linkable"
        print(f"  {name.upper()} at the same lifetime and per-report epsilon-LDP: n x {chain.mse:.6g}, link epsilon "
              f"{chain.link_epsilon:.4g} ({linkable})")
    print(f"wrote {target}")
    return 0


def _note_file_cap(show: bool, size: int) -> None:
    """Say up front when a design with many outputs would make a file its readers refuse.

    A design's outputs are known only at its end (up to N + 1 for the sub-convex utilities; k-RR, where the search
    starts, has N): its file is checked exactly before it is written, and this note warns of that refusal early.
    """
    from mechdesign._files import max_file_bytes

    per_entry = 21  # a full-precision number and its separator, as the file writes them (k-RR at N = 2,000: 23)
    most = max_file_bytes() // (per_entry * size)
    if most <= size:
        say(show, f"note: a design of more than about {most:,} outputs would exceed the "
                  f"{max_file_bytes() / (1 << 20):g} MiB that verify and privatize read (MECHDESIGN_MAX_FILE_MB "
                  "raises it), and its file would be refused")


def _run_record(args: argparse.Namespace, source: Path, deadline: Deadline, show: bool) -> int:
    """``design`` of a record problem: product, joint or sampled design, record file with the record-level guarantee."""
    from mechdesign.records._problem import load_record_problem

    problem = load_record_problem(source)
    prior = problem.prior
    destination = Path(args.out) / f"{problem.name}.mech.json"
    refuse_existing(destination, args.force)
    radius = prior.radius(problem.delta) if problem.delta is not None else float(problem.radius or 0.0)
    say(show, f"{problem.name}: {prior.dimension} attributes {list(prior.attributes)}, N = {prior.size:,} "
              f"joint letters ({prior.observed:,} observed), m = {prior.samples:,}, record-level ε = "
              f"{problem.epsilon:g}, radius = {radius:.4g}; {problem.kind} design "
              f"({deadline.remaining():.3g} s left) …")
    start = time.perf_counter()
    limit = max(deadline.remaining(), 1e-9)  # the product and sampled designs' factor designs, each at most this
    design = _record_design(problem, limit, deadline)
    say(show, f"designed in {time.perf_counter() - start:.2f} s; writing the record file "
              f"({deadline.remaining():.3g} s left) …")
    with warnings.catch_warnings():  # a signed file's replacement was warned about before the design
        warnings.simplefilter("ignore", UserWarning)
        target = design.save(destination, provenance={"problem": problem.name}, force=args.force)
    epsilon, radius, utility = design.epsilon, design.radius, design.utility_block()
    seconds = time.perf_counter() - start
    if args.json:
        print_json({"problem": problem.name, "attributes": list(prior.attributes), "letters": prior.size,
                    "design": problem.kind, "guarantee": {"notion": "pml", "level": "record", "epsilon": epsilon,
                                                          "target": problem.epsilon, "delta": problem.delta,
                                                          "radius": radius, "samples": prior.samples},
                    "utility": utility, "seconds": seconds, "file": str(target)})
        return 0
    print(f"{problem.name}: record-level pml epsilon {epsilon:.6g} <= {problem.epsilon:g} over the joint ball of "
          f"{', '.join(prior.attributes)} (N = {prior.size:,}, radius {radius:.4g}); {_record_detail(design)}; "
          f"{seconds:.2f} s")
    print(f"wrote {target}")
    return 0


def _record_design(problem: Any, limit: float, deadline: Deadline) -> Any:
    """The product, attribute-sampled or joint design a record problem asks for (``[design] kind``)."""
    prior = problem.prior
    if problem.kind == "product":
        from mechdesign.records._product import design_product

        return design_product(prior, problem.epsilon, delta=problem.delta, radius=problem.radius,
                              factor=problem.factor, weights=problem.weights, time_limit=limit)
    if problem.kind == "sampled":
        from mechdesign.records._sampled import design_sampled

        return design_sampled(prior, problem.epsilon, delta=problem.delta, radius=problem.radius,
                              probabilities=problem.probabilities, time_limit=limit)
    from mechdesign.mechfile._format import write_seconds
    from mechdesign.records._joint_design import design_joint

    delta, radius = problem.delta, problem.radius
    # the record file of a joint design of N letters and M outputs (M up to 8N for the estimation objectives)
    return design_joint(prior, problem.epsilon, delta=delta, radius=None if delta is not None else radius,
                        objective=problem.objective, time_limit=limit,
                        deadline=deadline.before(write_seconds(8 * prior.size ** 2)))


def _record_detail(design: Any) -> str:
    """One phrase on what a record design is (printed after its guarantee)."""
    from mechdesign.records._joint_design import JointDesign
    from mechdesign.records._sampled import SampledDesign

    if isinstance(design, JointDesign):
        shape = design.mechanism.shape
        return f"joint mechanism {shape[0]} × {shape[1]} ({design.objective}), marginal MSE {design.mse:.6g}/n"
    if isinstance(design, SampledDesign):
        shares = ", ".join(f"{a} {p:.3g}" for a, p in zip(design.attributes, design.probabilities, strict=True))
        return f"attribute-sampled ({shares}; each record reports one attribute), marginal MSE {design.mse:.6g}/n"
    outputs = " × ".join(str(f.matrix.shape[1]) for f in design.factors)
    return f"product of {len(design.factors)} factors ({outputs} outputs), marginal MSE {design.mse:.6g}/n"

"""Mechanism files: the deployment contract (``shared/DESIGN.md``, "Mechanism file").

A mechanism file is one UTF-8 JSON object::

    {"format": {"name": "mechdesign.core.mechanism", "version": 2},
     "inputs": [...], "outputs": [...],
     "matrix": [[P(y|x) ...] ...],                 # rows = inputs, full-precision floats
     "guarantee": {"notion": "pml" | "ldp", "epsilon": ε, "delta": δ | null,
                   "radius": β | null, "prior": [P̂ ...] | null, "samples": m | null},
     "utility": {...} | null, "baselines": {...} | null, "certificate": {...} | null,
     "provenance": {"mechdesign": ..., "numpy": ..., "cvxpy": ..., ...},
     "sha256": "<hex>",
     "signature": {"algorithm": "ed25519", "public_key": ..., "value": ...}}   # optional

``sha256`` is the SHA-256 of the *canonical content*: the object without ``sha256`` and ``signature``, as
canonical bytes (:func:`canonical_bytes`): RFC 8785 (JCS) in format version 2, which any language reproduces
(``docs/client_spec.rst``), and Python's sorted ``json.dumps`` with ``repr`` floats in version 1, which is still
read (:mod:`mechdesign.mechfile._canonical`). New files are written as version 2. Floats are written with ``repr``,
so every matrix entry reads back bit for bit.

Loading never trusts the file: it checks the JSON Schema rules (``mechanism.schema.json``, shipped
in the package), the format version, the hash, row-stochasticity (|row sum − 1| ≤ 1e-9, entries
≥ 0), the labels, and **recomputes the guarantee from the matrix**:

* ``"ldp"``: ε_LDP(W) = max_y log(max_x W[x,y] / min_x W[x,y]) ≤ ε;
* ``"pml"``: C(W, B_β(P̂)) = max_y log(max_x W[x,y] / min_{Q∈B_β(P̂)} Q·W[:,y]) ≤ ε, the exact
  leakage capacity over the ℓ1 ball ([E] Def. 5, eq. 22–23; reference/pml-design.md §1.1). With δ
  from the file this is the (ε, δ)-PML guarantee of [E] Theorem 2.

The check has no allowance: a file holds only when ``achieved <= epsilon`` for the two floats exactly as
written and printed (``repr``), where ``achieved`` is the recomputed ε raised to an upper bound
(:func:`~mechdesign._numerics.round_up`: libm's error and the ulps by which other correct
implementations differ, so that every language reaches the same verdict; ``docs/client_spec.rst``). Writing
rounds toward privacy instead: a stated ε that the matrix misses by float noise (at most
:data:`GUARANTEE_SLACK`) is raised to the bound rounded up once more, and a radius from :data:`RADIUS_RTOL`
(relative) below β* to :func:`~mechdesign.core.design_radius` (β* rounded up twice, the radius
designs at δ use) is raised to the latter, so what is written verifies in every client. **The radius is bound
to δ and m**: with ``delta`` given, ``samples`` must be given too and ``radius ≥ min(round_up(β*(δ, m, N)), 2)``
([E] eq. 37, :func:`~mechdesign.core.required_radius`), so editing δ, m or the radius cannot
inflate the claim.

**What the hash and the signature protect.** ``sha256`` has no key: it detects accidents (a truncated
copy, an editor's stray keystroke), *not attackers*, who recompute it. Authenticity needs the optional
Ed25519 ``signature`` (:mod:`mechdesign.mechfile._signature`) checked against a public key obtained out of
band (``read_mechanism_file(path, public_key=...)``). Neither says the file fits the data it is applied to:
:mod:`mechdesign.deploy.analysis._datacheck` tests the data's frequencies against the ball.
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._errors import CertificateError, MechanismFileError
from mechdesign._files import atomic_path, check_write_size
from mechdesign._numerics import round_up
from mechdesign.core._leakage import ldp_epsilon, measure_capacity
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._sample_radius import design_radius, radius_for_delta
from mechdesign.core._uncertainty import L1Ball
from mechdesign.mechfile._format import (
    _JSON_INT_MAX,
    FORMAT_NAME,
    FORMAT_VERSION,
    GUARANTEE_SLACK,
    RADIUS_RTOL,
    READ_VERSIONS,
    FileChecker,
    ParsedFile,
    Verification,
    canonical_bytes,
    check_format_and_digest,
    check_radius,
    check_signature_keys,
    file_text,
    json_block,
    parse_file,
    provenance_versions,
    refuse_oversized,
)
from mechdesign.mechfile._policy import (
    ReleasePolicy,
    linkability,
    normalize_release,
    read_release,
    refuse_overstated,
    stated_link,
    stated_release,
)

__all__ = ["MechanismFile", "achieved_epsilon", "export_matrix", "read_mechanism_file", "verify_mechanism_file",
           "write_mechanism_file"]

_TOP_KEYS = ("format", "inputs", "outputs", "matrix", "guarantee", "utility", "baselines", "certificate",
             "provenance", "release", "sha256", "signature")
_GUARANTEE_KEYS = ("notion", "epsilon", "delta", "radius", "prior", "samples")
_OPTIONAL_BLOCKS = ("utility", "baselines", "certificate", "signature")


@dataclass(frozen=True, eq=False)
class MechanismFile:
    """A loaded (and by default re-verified) mechanism file, as returned by :func:`read_mechanism_file`.

    Parameters
    ----------
    mechanism
        The mechanism built from the file's ``matrix``, ``inputs`` and ``outputs``
        (``matrix[x, y] = P(y | x)``).
    guarantee
        The stated guarantee as in the file: ``notion`` ("pml" or "ldp"), ``epsilon``, ``delta``, ``radius``,
        ``prior`` and ``samples``. For "pml" it claims C(W, B_β(P̂)) ≤ ε, the leakage capacity over the ℓ1
        ball of ``radius`` β around ``prior`` P̂ ([E] Def. 5, eq. 22–23); for "ldp" it claims
        ε_LDP(W) = max_y log(max_x W[x,y] / min_x W[x,y]) ≤ ε.
    utility, baselines, certificate
        The optional blocks of the file (``None`` when absent or null).
    provenance
        Versions and other provenance recorded when the file was written.
    sha256
        The SHA-256 of the canonical content (:func:`canonical_bytes`), checked on loading.
    signature
        The Ed25519 signature block, or ``None``; checked only when a ``public_key`` is given to
        :func:`read_mechanism_file`.
    release
        The release policy (:mod:`mechdesign.mechfile._policy`): one release per run by default; "repeated",
        "memoized" or "two-layer" (then the matrix is the permanent layer and :attr:`reported` the per-report
        mechanism).

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    Def. 5, eq. 22–23 (leakage capacity); eq. 37 (the radius β*(δ, m, N) bound to ``delta`` and ``samples``).

    Examples
    --------
    >>> import tempfile
    >>> from mechdesign.design.polytope import randomized_response
    >>> path = write_mechanism_file(Path(tempfile.mkdtemp()) / "rr.json", randomized_response(2, 1.0, ["a", "b"]),
    ...                             guarantee={"notion": "ldp", "epsilon": 1.0})
    >>> loaded = read_mechanism_file(path)
    >>> loaded.mechanism.inputs, loaded.guarantee["notion"], loaded.signature is None
    (('a', 'b'), 'ldp', True)
    """

    mechanism: Mechanism
    guarantee: dict[str, Any]
    utility: dict[str, Any] | None
    baselines: dict[str, Any] | None
    certificate: dict[str, Any] | None
    provenance: dict[str, Any]
    sha256: str
    signature: dict[str, Any] | None = None
    release: ReleasePolicy = field(default_factory=ReleasePolicy)

    @property
    def reported(self) -> Mechanism:
        """The mechanism each report is drawn from: W₁W₂ for a two-layer file, the file's matrix W otherwise.

        One period's reports of a two-layer file are decoded through it (:mod:`mechdesign.mechfile._policy`).
        """
        if self.release.reports is None:
            return self.mechanism
        composed = self.mechanism.matrix @ self.release.reports.matrix
        return Mechanism.from_matrix(composed, self.mechanism.inputs, self.release.reports.outputs)


def achieved_epsilon(mechanism: Mechanism, guarantee: dict[str, Any]) -> float:
    """An upper bound on the ε the matrix achieves under the guarantee's notion: the value a verifier compares.

    The LDP level or the capacity over the ball (module docstring), raised by
    :func:`~mechdesign._numerics.round_up` over libm's error and the ulps other implementations differ by.
    """
    matrix = mechanism.matrix
    if np.all(matrix == matrix[0]):  # identical rows: Y is independent of X, exactly 0 (the ε = 0 design)
        return 0.0
    if guarantee["notion"] == "ldp":
        return round_up(ldp_epsilon(mechanism))
    return round_up(measure_capacity(mechanism, L1Ball(guarantee["prior"], guarantee["radius"])))


def release_achieved(mechanism: Mechanism, guarantee: dict[str, Any], policy: ReleasePolicy,
                     deadline: Any = None) -> tuple[float, bool] | None:
    """What a release policy states, recomputed from the matrices: (ε, exact), or ``None`` if it states nothing.

    "repeated": the leakage of T fresh releases of the same value over the ball
    (:func:`~mechdesign.core.release_leakage`: exact by enumeration, or the certified relaxation), or
    T·ε_LDP(W) for an "ldp" file (the LDP level of T releases, exactly). "two-layer": the per-report guarantee,
    the capacity of W₁W₂ ([E] Def. 5, eq. 22–23) or its LDP level. A ``deadline`` (a writer's time limit) bounds the
    T-release account, which is then exact only if it finished (:func:`~mechdesign.core.release_leakage`).
    """
    if policy.policy == "repeated":
        assert policy.releases is not None
        if guarantee["notion"] == "ldp":
            return round_up(policy.releases * achieved_epsilon(mechanism, guarantee)), True
        from mechdesign.core._repeated import release_leakage

        account = release_leakage(mechanism, L1Ball(guarantee["prior"], guarantee["radius"]), policy.releases,
                                  deadline=deadline)
        if account.method == "deadline":
            raise v.fail("time_limit", f"leave time for the {policy.releases}-release account the file states (the "
                         "time limit passed before any finite bound was certified, nothing written)",
                         deadline.seconds)
        return account.epsilon, account.exact
    if policy.policy == "two-layer":
        assert policy.reports is not None
        composed = Mechanism.from_matrix(mechanism.matrix @ policy.reports.matrix, mechanism.inputs,
                                         policy.reports.outputs)
        return achieved_epsilon(composed, guarantee), True
    return None


def release_checked(loaded: MechanismFile) -> tuple[float, bool] | None:
    """A loaded file's release statement recomputed as a reader checks it: (ε, exact), or ``None``.

    For a "repeated" PML file: the account this installation already recomputed for the same content, if any,
    else :func:`~mechdesign.core.release_leakage` with the stated ε_T as its ``target`` (a trivial bound
    or a relaxation that proves or disproves it, not the tightest account), then kept
    (:mod:`mechdesign.mechfile._accounts`). Other policies: :func:`release_achieved`.
    """
    policy, guarantee = loaded.release, loaded.guarantee
    if policy.policy != "repeated" or guarantee["notion"] != "pml":
        return release_achieved(loaded.mechanism, guarantee, policy)
    from mechdesign.core._repeated import release_leakage
    from mechdesign.mechfile._accounts import checked_account, reporter

    releases = policy.releases
    assert releases is not None

    def compute() -> tuple[float, bool]:
        account = release_leakage(loaded.mechanism, L1Ball(guarantee["prior"], guarantee["radius"]), releases,
                                  target=policy.epsilon, progress=reporter())
        return account.epsilon, account.exact

    return checked_account(loaded.sha256, releases, compute)


def release_spread(mechanism: Mechanism, guarantee: dict[str, Any], policy: ReleasePolicy) -> float:
    """How far another correct reader's recomputation of a release statement may lie above this one (nats).

    "repeated" under PML: the float error of the sums a(n), which grows with T
    (:func:`~mechdesign.core.account_spread`). "two-layer": the entries of W₁W₂ summed in another order
    and renormalised carry at most (2M₁ + M₂ + 2)u of relative error in each reader, and a log-ratio of two of them
    (or of an entry and the ball's worst case, a convex combination) at most twice that, so two readers differ by at
    most 4(2M₁ + M₂ + 2)u. Otherwise 0: one ``round_up`` covers the rest, as for the file's guarantee.
    """
    if policy.policy == "repeated" and guarantee["notion"] == "pml":
        from mechdesign.core._repeated import account_spread

        assert policy.releases is not None
        return account_spread(mechanism, policy.releases)
    if policy.policy == "two-layer":
        assert policy.reports is not None
        first, second = mechanism.shape[1], policy.reports.shape[1]
        return 4 * (2 * first + second + 2) * float(np.finfo(np.float64).eps / 2)
    return 0.0


def release_summary(policy: ReleasePolicy, recomputed: tuple[float, bool] | None,
                    permanent: Mechanism | None = None) -> dict[str, Any] | None:
    """The release policy's part of a :class:`Verification` (``None`` for one release per run).

    A two-layer policy (with ``permanent``, the file's W₁) adds its linkability level: ``link_achieved``
    (recomputed, ``inf`` when unbounded), ``link_epsilon`` (stated, or ``None``) and ``link_holds`` (``None`` when
    nothing is stated); ``holds`` then requires both statements.
    """
    if policy.policy == "single":
        return None
    out: dict[str, Any] = {"policy": policy.policy}
    if policy.releases is not None:
        out["releases"] = policy.releases
    if recomputed is not None:
        assert policy.epsilon is not None
        out.update(epsilon=policy.epsilon, achieved=recomputed[0], exact=recomputed[1],
                   holds=bool(recomputed[0] <= policy.epsilon))
    if policy.reports is not None and permanent is not None:
        link = linkability(permanent, policy)
        stated = policy.link_epsilon
        out.update(link_epsilon=stated, link_achieved=link, link_holds=None if stated is None else bool(link <= stated))
        out["holds"] = bool(out.get("holds", True) and out["link_holds"] is not False)
    return out


def _normalize_guarantee(guarantee: dict[str, Any], size: int) -> dict[str, Any]:
    if not isinstance(guarantee, dict):
        raise TypeError(f"guarantee must be a dict, got guarantee={v._show(guarantee)}")
    unknown = sorted(set(guarantee) - set(_GUARANTEE_KEYS))
    if unknown:
        raise v.fail("guarantee", f"only have keys {list(_GUARANTEE_KEYS)}", unknown)
    notion = guarantee.get("notion")
    if notion not in ("pml", "ldp"):
        raise v.fail("guarantee.notion", "be 'pml' or 'ldp'", notion)
    out: dict[str, Any] = {"notion": notion, "epsilon": v.epsilon(guarantee.get("epsilon"), "guarantee.epsilon")}
    delta, radius = guarantee.get("delta"), guarantee.get("radius")
    prior, samples = guarantee.get("prior"), guarantee.get("samples")
    out["delta"] = None if delta is None else v.delta(delta, "guarantee.delta")
    out["radius"] = None if radius is None else v.radius(radius, "guarantee.radius")
    if prior is not None:
        probabilities = getattr(prior, "probabilities", prior)
        prior = v.probability_vector("guarantee.prior", probabilities).tolist()
        if len(prior) != size:
            raise v.fail("guarantee.prior", f"have one entry per mechanism input ({size})", prior)
    out["prior"] = prior
    out["samples"] = None if samples is None else v.positive_int("guarantee.samples", samples)
    if out["samples"] is not None and out["samples"] > _JSON_INT_MAX:
        raise v.fail("guarantee.samples", "be at most 2^53 - 1 (the largest integer canonical JSON carries)", samples)
    if notion == "pml" and (out["prior"] is None or out["radius"] is None):
        raise v.fail("guarantee", "give 'prior' and 'radius' when notion is 'pml'", guarantee)
    return out


def write_mechanism_file(path: str | os.PathLike[str], mechanism: Mechanism, *, guarantee: dict[str, Any],
                         utility: dict[str, Any] | None = None, baselines: dict[str, Any] | None = None,
                         certificate: dict[str, Any] | None = None,
                         provenance: dict[str, Any] | None = None, release: Any = None,
                         deadline: Any = None) -> Path:
    """Write ``mechanism`` and its guarantee atomically (temp file + rename); return the path.

    The guarantee is recomputed from the matrix before writing; a file whose stated ε the matrix
    does not achieve is never written (:class:`~mechdesign.CertificateError`). For "pml" the check is
    C(W, B_β(P̂)) ≤ ε ([E] Def. 5, eq. 22–23); with ``delta`` the radius must be at least
    ``min(β*(δ, m, N), 2)`` ([E] eq. 37).

    Parameters
    ----------
    path
        The target file (written atomically; an existing file is replaced).
    mechanism
        The mechanism to write.
    guarantee
        The stated guarantee, a dict with keys among ``notion`` ("pml" or "ldp", required), ``epsilon``
        (required), ``delta``, ``radius``, ``prior`` (a probability vector or a ``Prior``) and ``samples``;
        missing keys are written as null. "pml" needs ``prior`` and ``radius``; ``delta`` with "pml" needs
        ``samples``.
    utility, baselines, certificate
        Optional blocks (dicts; NumPy values are converted to JSON), or ``None``.
    provenance
        Extra provenance entries, merged over the recorded versions of mechdesign, NumPy and CVXPY.
    release
        The release policy (:func:`~mechdesign.mechfile.normalize_release`): ``None`` for one release per
        run, ``{"policy": "repeated", "releases": T}``, ``{"policy": "memoized"}`` or ``{"policy": "two-layer",
        "reports": W₂}``. What it states (ε_T, the per-report ε) is recomputed and written rounded up.
    deadline
        A :class:`~mechdesign.Deadline` for the T-release account of a "repeated" policy (a design's time
        limit): cut by it, the account states the certified bound it reached (the relaxation's, or T·ε_LDP or the
        identity bound), and a file for which none is finite is refused (``ValueError`` naming ``time_limit``).

    Returns
    -------
    Path
        ``path``, now holding the file.

    Raises
    ------
    TypeError
        If ``mechanism`` is not a :class:`~mechdesign.core.Mechanism`, ``guarantee`` is not a
        dict, an optional block is neither a dict nor ``None``, or a guarantee value has the wrong type.
    ValueError
        If ``guarantee`` has unknown keys or invalid values (notion, ε, δ, radius, a prior of the wrong
        length, samples), or lacks ``prior``/``radius`` for "pml".
    MechanismFileError
        If ``delta`` is given for "pml" without ``samples``, the radius is below β*(δ, m, N), or two labels are
        the same text under Unicode NFC normalisation: the file would be refused on reading.
    CertificateError
        If the matrix does not achieve the stated ε. A stated ε missed by float noise only (at most
        :data:`GUARANTEE_SLACK`) is written as the achieved ε rounded up, and a radius at most
        :data:`RADIUS_RTOL` (relative) below β*(δ, m, N) as β* rounded up (twice: the bound every reader
        compares, and a margin over other implementations' evaluation): the file then verifies in every client.

    Examples
    --------
    >>> import tempfile
    >>> from mechdesign.design.polytope import randomized_response
    >>> rr = randomized_response(3, 1.0, ["a", "b", "c"])
    >>> out = write_mechanism_file(Path(tempfile.mkdtemp()) / "rr.json", rr,
    ...                            guarantee={"notion": "ldp", "epsilon": 1.0})
    >>> verify_mechanism_file(out).holds
    True
    """
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism, got mechanism={v._show(mechanism)}")
    refuse_oversized(mechanism.matrix, Path(path))  # before the guarantee's capacity: 0.7 s at 2,000 × 2,000
    check = FileChecker(Path(path))
    check.labels("inputs", list(mechanism.inputs))  # never write a file that would be refused
    check.labels("outputs", list(mechanism.outputs))
    stated = _round_toward_privacy(check, mechanism, _normalize_guarantee(guarantee, mechanism.shape[0]))
    content: dict[str, Any] = {
        "format": {"name": FORMAT_NAME, "version": FORMAT_VERSION},
        "inputs": list(mechanism.inputs),
        "outputs": list(mechanism.outputs),
        "matrix": mechanism.matrix.tolist(),
        "guarantee": stated,
        "utility": json_block("utility", utility),
        "baselines": json_block("baselines", baselines),
        "certificate": json_block("certificate", certificate),
        "provenance": {**provenance_versions(), **(json_block("provenance", provenance) or {})},
    }
    policy = normalize_release(release, mechanism.outputs, record=False)
    read_back = Mechanism.from_matrix(mechanism.matrix, mechanism.inputs, mechanism.outputs)
    recomputed = release_achieved(read_back, stated, policy, deadline)
    spread = release_spread(read_back, stated, policy)
    achieved, exact = recomputed or (None, True)
    link = None if policy.reports is None else linkability(read_back, policy)
    block = stated_link(stated_release(policy, achieved, exact, spread=spread), link).to_json()
    if block is not None:
        content["release"] = json_block("release", block)
    target = Path(path)
    text = file_text(content, target)  # refused here when the readers would refuse it, before anything is written
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    if recomputed is not None and policy.policy == "repeated" and stated["notion"] == "pml":
        from mechdesign.mechfile._accounts import remember_account

        assert policy.releases is not None
        remember_account(content["sha256"], policy.releases, recomputed)  # its readers here need not recompute it
    return target


def _round_toward_privacy(check: FileChecker, mechanism: Mechanism, stated: dict[str, Any]) -> dict[str, Any]:
    """The guarantee as written: radius and ε raised over float noise so that the file verifies in every client.

    A radius from a relative :data:`RADIUS_RTOL` below β*(δ, m, N) up to
    :func:`~mechdesign.core.design_radius` (β* rounded up twice: the bound readers compare, and a margin
    over a client's β*) becomes the latter, the radius designs at δ use; then ε, if the matrix misses it by float
    noise (:data:`GUARANTEE_SLACK`), becomes the achieved bound rounded up once more, the margin over a client
    whose own evaluation lies a few ulps above mechdesign's (``benchmarks/bench_client_agreement.py`` measures
    them). Anything further off is refused: the file would not hold.
    """
    out = dict(stated)
    size = mechanism.shape[0]
    if out["notion"] == "pml" and out["delta"] is not None and out["samples"] is not None and size >= 2:
        # The noise window is relative to β* itself: the rounding up adds some 1e-15 in absolute terms, which is
        # more than a relative 1e-12 of a small radius (m in the millions).
        beta = min(radius_for_delta(out["delta"], out["samples"], size), 2.0)
        written = design_radius(out["delta"], out["samples"], size)
        if beta * (1 - RADIUS_RTOL) <= out["radius"] < written:
            out["radius"] = written
    check_radius(check, out, size)  # never write a file that would be refused
    # The reader rebuilds the mechanism from the written floats (renormalising the rows again, a few ulps):
    # recompute ε on exactly that matrix, so the written claim is judged as the reader will judge it.
    read_back = Mechanism.from_matrix(mechanism.matrix, mechanism.inputs, mechanism.outputs)
    achieved = achieved_epsilon(read_back, out)
    if out["epsilon"] < round_up(achieved):
        # Float noise is judged on the same scale as the bound (round_up is monotone): at a huge ε its margin
        # alone exceeds an absolute 1e-12.
        if not achieved <= round_up(out["epsilon"] + GUARANTEE_SLACK):
            raised = (f" at the radius written, {out['radius']!r} (design at "
                      "mechdesign.core.design_radius(δ, m, N))") if out["radius"] != stated["radius"] else ""
            raise CertificateError(f"guarantee.epsilon must be >= the epsilon the matrix achieves{raised} "
                                   f"({achieved!r}), got guarantee.epsilon={out['epsilon']!r}")
        out["epsilon"] = round_up(achieved)
    return out


def _load(parsed: ParsedFile, public_key: Any = None) -> tuple[MechanismFile, float]:
    """Check everything but the guarantee of a parsed file; return the file and the achieved ε."""
    content = parsed.content
    check = FileChecker(parsed.name)
    if "attributes" in content or "factors" in content:
        raise check.fail("attributes", "be absent from a single-column mechanism file (this is a record file: read "
                         "it with mechdesign.mechfile.record.read_record_file; the CLI verbs take both)",
                         content.get("attributes", "factors"))
    missing = [k for k in _TOP_KEYS if k not in content and k not in (*_OPTIONAL_BLOCKS, "release")]
    if missing:
        raise check.fail("file", f"have the keys {missing}", sorted(content))
    extra = sorted(set(content) - set(_TOP_KEYS))
    if extra:
        raise check.fail("file", f"only have the keys {list(_TOP_KEYS)}", extra)
    digest = check_format_and_digest(check, content, READ_VERSIONS)
    inputs = check.labels("inputs", content["inputs"])
    outputs = check.labels("outputs", content["outputs"])
    rows = content["matrix"]
    if not isinstance(rows, list) or len(rows) != len(inputs):
        raise check.fail("matrix", f"be an array of {len(inputs)} rows (one per input)", rows)
    matrix = np.array([check.numbers(f"matrix[{i}]", row, len(outputs)) for i, row in enumerate(rows)])
    for i, row in enumerate(matrix):
        check.stochastic(f"matrix[{i}]", row)
    guarantee = content["guarantee"]
    check.object("guarantee", guarantee)
    if sorted(guarantee) != sorted(_GUARANTEE_KEYS):
        raise check.fail("guarantee", f"have exactly the keys {list(_GUARANTEE_KEYS)}", sorted(guarantee))
    if guarantee["notion"] not in ("pml", "ldp"):
        raise check.fail("guarantee.notion", "be 'pml' or 'ldp'", guarantee["notion"])
    check.number("guarantee.epsilon", guarantee["epsilon"], 0.0, math.inf)
    if guarantee["delta"] is not None:
        check.number("guarantee.delta", guarantee["delta"], 0.0, 1.0, open_low=True)
    if guarantee["radius"] is not None:
        check.number("guarantee.radius", guarantee["radius"], 0.0, 2.0)
    if guarantee["prior"] is not None:
        check.stochastic("guarantee.prior", check.numbers("guarantee.prior", guarantee["prior"], len(inputs)))
    samples = guarantee["samples"]
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples < 2**63):
        raise check.fail("guarantee.samples", "be a positive integer below 2^63 or null", samples)
    if guarantee["notion"] == "pml" and (guarantee["prior"] is None or guarantee["radius"] is None):
        raise check.fail("guarantee", "give 'prior' and 'radius' when notion is 'pml'",
                         {"prior": guarantee["prior"], "radius": guarantee["radius"]})
    check_radius(check, guarantee, len(inputs))
    for name in _OPTIONAL_BLOCKS:
        check.object(name, content.get(name), nullable=True)
    check_signature_keys(check, content.get("signature"))
    check.object("provenance", content["provenance"])
    if "release" in content and content["format"]["version"] != FORMAT_VERSION:
        raise check.fail("release", f"appear only in format version {FORMAT_VERSION} files", content["release"])
    mechanism = Mechanism.from_matrix(matrix, inputs, outputs)
    release = read_release(check, content.get("release"), tuple(outputs), record=False)
    loaded = MechanismFile(mechanism, dict(guarantee), content.get("utility"), content.get("baselines"),
                           content.get("certificate"), dict(content["provenance"]), digest, content.get("signature"),
                           release)
    if public_key is not None:
        from mechdesign.mechfile._keys import check_signature

        check_signature(parsed.name, content, canonical_bytes(content), public_key)
    return loaded, achieved_epsilon(mechanism, guarantee)


def read_mechanism_file(path: str | os.PathLike[str] | ParsedFile, *, verify: bool = True,
                        public_key: Any = None) -> MechanismFile:
    """Load a mechanism file, checking schema, version, hash, stochasticity, labels and the radius.

    With ``verify=True`` (default) the guarantee is recomputed from the matrix as well and a file
    that overstates it is refused: C(W, B_β(P̂)) ≤ ε for "pml" ([E] Def. 5, eq. 22–23),
    ε_LDP(W) ≤ ε for "ldp", exactly (no tolerance). With ``public_key`` (a PEM path, PEM bytes
    or an Ed25519 public key) the file must carry a valid Ed25519 signature by that key. Every failure of
    the file's content is a one-line :class:`~mechdesign.MechanismFileError` naming the field and
    the rule.

    Parameters
    ----------
    path
        The mechanism file (UTF-8 JSON; a FIFO or a device is read once, to its end), or the file already read
        by :func:`~mechdesign.mechfile.parse_file` (stdin, or a file whose kind was checked first).
    verify
        Recompute the guarantee from the matrix and refuse a file that overstates it.
    public_key
        If given, the Ed25519 public key (PEM path, PEM bytes or key object) that must have signed the file.

    Returns
    -------
    MechanismFile
        The loaded file.

    Raises
    ------
    MechanismFileError
        If the file is not valid JSON, breaks a schema rule, has another format version, fails its hash,
        is not row-stochastic, states a radius below β*(δ, m, N) ([E] eq. 37), overstates its guarantee
        (with ``verify``), or (with ``public_key``) is unsigned or wrongly signed.
    ValueError
        If ``public_key`` is not an Ed25519 public key.
    OSError
        If the file (or a ``public_key`` path) cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> from mechdesign.design.polytope import randomized_response
    >>> path = write_mechanism_file(Path(tempfile.mkdtemp()) / "rr.json", randomized_response(3, 1.0),
    ...                             guarantee={"notion": "ldp", "epsilon": 1.0})
    >>> read_mechanism_file(path).mechanism.shape
    (3, 3)
    """
    parsed = parse_file(path)
    loaded, achieved = _load(parsed, public_key)
    stated = loaded.guarantee["epsilon"]
    if verify and not achieved <= stated:
        raise MechanismFileError(f"{parsed.name}: guarantee.epsilon must be >= the {loaded.guarantee['notion']} "
                                 f"epsilon recomputed from the matrix ({achieved!r}), got guarantee.epsilon={stated!r}")
    if verify:
        refuse_overstated(parsed.name, loaded.release, release_checked(loaded),
                          f"the {loaded.release.policy} leakage recomputed from the matrices", loaded.mechanism)
    return loaded


def verify_mechanism_file(path: str | os.PathLike[str] | ParsedFile, *, public_key: Any = None) -> Verification:
    """Recompute a file's guarantee from its matrix; ``holds`` says whether the stated ε is met.

    Unlike :func:`read_mechanism_file`, a file that overstates its guarantee is reported (``holds`` is
    false), not refused. The achieved ε is the leakage capacity C(W, B_β(P̂)) of [E] Def. 5, eq. 22–23 for
    "pml" and ε_LDP(W) for "ldp".

    Parameters
    ----------
    path
        The mechanism file (UTF-8 JSON), or the file already read by
        :func:`~mechdesign.mechfile.parse_file`.
    public_key
        If given, the Ed25519 public key (PEM path, PEM bytes or key object) that must have signed the file.

    Returns
    -------
    Verification
        The stated and the achieved guarantee, and whether it holds.

    Raises
    ------
    MechanismFileError
        If the file is malformed or tampered (or, with ``public_key``, unsigned or wrongly signed).
    ValueError
        If ``public_key`` is not an Ed25519 public key.
    OSError
        If the file (or a ``public_key`` path) cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> from mechdesign.design.polytope import randomized_response
    >>> path = write_mechanism_file(Path(tempfile.mkdtemp()) / "rr.json", randomized_response(2, 1.0),
    ...                             guarantee={"notion": "ldp", "epsilon": 1.5})
    >>> check = verify_mechanism_file(path)
    >>> check.holds, round(check.achieved, 12), check.epsilon
    (True, 1.0, 1.5)
    """
    parsed = parse_file(path)
    loaded, achieved = _load(parsed, public_key)
    g = loaded.guarantee
    release = release_summary(loaded.release, release_checked(loaded), loaded.mechanism)
    holds = bool(achieved <= g["epsilon"]) and (release is None or release.get("holds", True))
    return Verification(parsed.name, g["notion"], float(g["epsilon"]), achieved,
                        None if g["delta"] is None else float(g["delta"]),
                        None if g["radius"] is None else float(g["radius"]),
                        holds, loaded.sha256, release)


def export_matrix(path: str | os.PathLike[str], mechanism: Mechanism, format: str | None = None) -> Path:
    """Export the bare matrix as ``"npz"`` (arrays matrix/inputs/outputs) or ``"csv"``.

    Row x holds ``matrix[x, y] = P(y | x)``, the row-stochastic matrix of the mechanism ([E] §II-A1, eq. 9).
    The CSV has a header ``input,<outputs…>`` and one row per input, floats in ``repr`` (exact).
    Exports carry no guarantee: share the JSON file for that.

    Parameters
    ----------
    path
        The target file (written atomically; an existing file is replaced).
    mechanism
        The mechanism to export.
    format
        "npz" or "csv" (case-insensitive); ``None`` takes the file suffix.

    Returns
    -------
    Path
        ``path``, now holding the export.

    Raises
    ------
    ValueError
        If the format (given or from the suffix) is neither "npz" nor "csv".
    TypeError
        If ``mechanism`` is not a :class:`~mechdesign.core.Mechanism`.

    Examples
    --------
    >>> import tempfile
    >>> from mechdesign.design.polytope import randomized_response
    >>> out = export_matrix(Path(tempfile.mkdtemp()) / "rr.csv", randomized_response(2, np.log(3), ["a", "b"]))
    >>> print(out.read_text(), end="")
    input,a,b
    a,0.75,0.25
    b,0.25,0.75
    """
    target = Path(path)
    kind = (format or target.suffix.lstrip(".")).lower()
    if kind not in ("npz", "csv"):
        raise v.fail("format", "be 'npz' or 'csv'", format or target.suffix)
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism, got mechanism={v._show(mechanism)}")
    text = None
    if kind == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["input", *mechanism.outputs])
        for label, row in zip(mechanism.inputs, mechanism.matrix.tolist(), strict=True):
            writer.writerow([label, *(repr(x) for x in row)])
        text = buffer.getvalue()
        check_write_size("matrix CSV", len(text.encode("utf-8")), target)  # assess reads it whole, capped
    with atomic_path(target) as tmp:
        if text is None:
            with tmp.open("wb") as handle:
                np.savez(handle, matrix=mechanism.matrix, inputs=np.array(mechanism.inputs, dtype=str),
                         outputs=np.array(mechanism.outputs, dtype=str))
        else:
            tmp.write_text(text, encoding="utf-8")
    return target

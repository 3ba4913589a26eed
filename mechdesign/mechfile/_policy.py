"""The release policy of a mechanism file: how often a person's value may be privatized, and what that costs.

Every guarantee in a file is **per release** unless the file's ``release`` block says otherwise. The block is part
of the canonical content, so the hash and the signature cover it, and ``verify`` recomputes every number it states:

* absent, or ``{"policy": "single"}``: each run of ``privatize`` on a person's value is one more release. T fresh
  releases of the same value leak what :func:`~mechdesign.core.release_leakage` computes, which for a PML
  design is *not* bounded by T·ε (``verify --releases T`` reports it).
* ``{"policy": "repeated", "releases": T, "epsilon": ε_T}``: the file also states the leakage of T fresh releases
  of the same value (or record), recomputed exactly (every count vector) or by the certified relaxation
  (:mod:`mechdesign.core._repeated_bound`), and required to be at most ε_T.
* ``{"policy": "memoized", "randomness": "mechdesign-memo-1"}``: the same (user, value) always gets the same
  output, drawn with a keyed pseudo-random function (:mod:`mechdesign.deploy.sampling._memo`); an unchanged value
  leaks exactly the file's ε however often it is reported. ``privatize`` refuses such a file without the key and
  the user column. An optional ``"key"`` (the key's identifier, :func:`key_id`) binds the file to one key: any
  other key is refused, so a deployment cannot silently draw a second set of outputs with a new key.
* ``{"policy": "two-layer", "randomness": "mechdesign-memo-1", "reports": {"outputs": [...], "matrix": W₂},
  "epsilon": ε_report}`` (single-column files): the file's matrix W₁ is the **permanent** layer, memoized per
  (user, value), and each report draws afresh from W₂[y₁, ·]. The file states two guarantees: the **lifetime**
  leakage of an unchanged value, however many reports, is at most the capacity of W₁ (any function of the
  memoized output and fresh noise is post-processing of it), which is ``guarantee.epsilon``; the **per-report**
  leakage is the capacity of W₁W₂ over the same ball, at most ε_report. An optional ``"link_epsilon"`` states the
  **linkability** level λ: the LDP level of W₂ on the permanent outputs W₁ produces
  (:func:`~mechdesign.core.link_level`), so that one report reveals the memoized output, which would
  link a person's reports, by at most λ. A file without it is read as before; ``verify`` prints its level (often
  ∞: reports close to a function of the memoized output).

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
Def. 5, eq. 22–23. Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR", CCS 2014 (permanent and instantaneous
randomized response); B. Ding, J. Kulkarni, S. Yekhanin, "Collecting telemetry data privately", NeurIPS 2017
(memoization).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._errors import CertificateError
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._repeated import MAX_RELEASES

__all__ = ["MEMO_SCHEME", "POLICIES", "ReleasePolicy", "key_id", "linkability", "normalize_release",
           "refuse_overstated", "stated_link", "stated_release"]

#: The policies a file may state.
POLICIES = ("single", "repeated", "memoized", "two-layer")
#: The keyed pseudo-random function of memoized draws (:mod:`mechdesign.deploy.sampling._memo`).
MEMO_SCHEME = "mechdesign-memo-1"
# A repeated-release account recomputed by the certified relaxation depends on the solver's path to a few parts in
# 10⁷; the writer states it rounded up by this much so that any reader's recomputation verifies it.
_RELAXATION_SLACK = 1e-5
_KEYS = {"single": ("policy",), "repeated": ("policy", "releases", "epsilon"),
         "memoized": ("policy", "randomness"), "two-layer": ("policy", "randomness", "reports", "epsilon")}
# Optional keys: the identifier of the key a memoized or two-layer file is bound to; a two-layer file's linkability.
_OPTIONAL = {"memoized": ("key",), "two-layer": ("key", "link_epsilon")}


@dataclass(frozen=True, eq=False)
class ReleasePolicy:
    """A file's release policy (module docstring), checked but not yet recomputed.

    Parameters
    ----------
    policy : {"single", "repeated", "memoized", "two-layer"}
        How a person's value may be privatized.
    releases : int or None
        T of a "repeated" policy.
    epsilon : float or None
        The stated ε_T ("repeated") or per-report ε ("two-layer").
    randomness : str or None
        The memoization scheme ("memoized", "two-layer").
    reports : Mechanism or None
        W₂ of a "two-layer" file (inputs = the file's outputs).
    key : str or None
        The identifier (:func:`key_id`) of the memoization key the file is bound to, or ``None``.
    link_epsilon : float or None
        The stated linkability level of a "two-layer" file (:func:`~mechdesign.core.link_level`), or
        ``None`` when the file states none.
    """

    policy: str = "single"
    releases: int | None = None
    epsilon: float | None = None
    randomness: str | None = None
    reports: Mechanism | None = None
    key: str | None = None
    link_epsilon: float | None = None

    @property
    def memoized(self) -> bool:
        """Whether draws must be memoized per (user, value): "memoized" and "two-layer"."""
        return self.policy in ("memoized", "two-layer")

    def to_json(self) -> dict[str, Any] | None:
        """The ``release`` block as written (``None`` for the default single release, which writes no block)."""
        if self.policy == "single":
            return None
        out: dict[str, Any] = {"policy": self.policy}
        if self.policy == "repeated":
            out.update(releases=self.releases, epsilon=self.epsilon)
        if self.memoized:
            out["randomness"] = self.randomness
            if self.key is not None:
                out["key"] = self.key
        if self.policy == "two-layer":
            assert self.reports is not None
            out["reports"] = {"outputs": list(self.reports.outputs), "matrix": self.reports.matrix.tolist()}
            out["epsilon"] = self.epsilon
            if self.link_epsilon is not None:
                out["link_epsilon"] = self.link_epsilon
        return out


def key_id(key: bytes) -> str:
    """The identifier of a memoization key: 32 hex digits of SHA-256("mechdesign-memo-1 key", 0, key).

    It names the key without revealing it (the key is 256 random bits; SHA-256 is one-way), so a file can be
    bound to the key it is deployed with.

    >>> key_id(bytes(32))
    '358cff7e00fbc918298572104ccea984'
    """
    import hashlib

    return hashlib.sha256(b"mechdesign-memo-1 key\x00" + key).hexdigest()[:32]


def read_release(check: Any, block: Any, outputs: tuple[str, ...], *, record: bool) -> ReleasePolicy:
    """The ``release`` block of a loaded file, checked against the schema's rules (one-line errors via ``check``).

    Parameters
    ----------
    check : FileChecker
        The loader's checker (its errors name the file, the field and the rule).
    block : Any
        The parsed ``release`` value (``None`` when absent).
    outputs : tuple of str
        The file's outputs (the inputs of a two-layer file's reports).
    record : bool
        A record file (no two-layer policy).
    """
    if block is None:
        return ReleasePolicy()
    check.object("release", block)
    policy = block.get("policy")
    allowed = [p for p in POLICIES if not (record and p == "two-layer")]
    if policy not in allowed:
        raise check.fail("release.policy", f"be one of {allowed}", policy)
    optional = _OPTIONAL.get(policy, ())
    if sorted(set(block) - set(optional)) != sorted(_KEYS[policy]):
        extra = f" and optionally {list(optional)}" if optional else ""
        raise check.fail("release", f"have exactly the keys {list(_KEYS[policy])}{extra} (policy {policy!r})",
                         sorted(block))
    key = block.get("key")
    if key is not None and not (isinstance(key, str) and len(key) == 32 and not set(key) - set("0123456789abcdef")):
        raise check.fail("release.key", "be 32 lowercase hex digits (the key's identifier, mechdesign memo-key)", key)
    if policy == "single":
        return ReleasePolicy()
    if policy == "repeated":
        releases = block["releases"]
        if isinstance(releases, bool) or not isinstance(releases, int) or not 1 <= releases <= MAX_RELEASES:
            raise check.fail("release.releases", f"be an integer in [1, {MAX_RELEASES}]", releases)
        epsilon = check.number("release.epsilon", block["epsilon"], 0.0, math.inf)
        return ReleasePolicy("repeated", releases=releases, epsilon=epsilon)
    if block["randomness"] != MEMO_SCHEME:
        raise check.fail("release.randomness", f"be {MEMO_SCHEME!r} (the memoization this mechdesign implements)",
                         block["randomness"])
    if policy == "memoized":
        return ReleasePolicy("memoized", randomness=MEMO_SCHEME, key=key)
    reports = block["reports"]
    check.object("release.reports", reports)
    if sorted(reports) != ["matrix", "outputs"]:
        raise check.fail("release.reports", "have exactly the keys ['outputs', 'matrix']", sorted(reports))
    labels = check.labels("release.reports.outputs", reports["outputs"])
    rows = reports["matrix"]
    if not isinstance(rows, list) or len(rows) != len(outputs):
        raise check.fail("release.reports.matrix", f"be an array of {len(outputs)} rows (one per output of the "
                         "file: the permanent layer's)", rows)
    matrix = np.array([check.numbers(f"release.reports.matrix[{i}]", row, len(labels)) for i, row in enumerate(rows)])
    for i, row in enumerate(matrix):
        check.stochastic(f"release.reports.matrix[{i}]", row)
    epsilon = check.number("release.epsilon", block["epsilon"], 0.0, math.inf)
    link = block.get("link_epsilon")
    link = None if link is None else check.number("release.link_epsilon", link, 0.0, math.inf)
    return ReleasePolicy("two-layer", epsilon=epsilon, randomness=MEMO_SCHEME,
                         reports=Mechanism.from_matrix(matrix, outputs, labels), key=key, link_epsilon=link)


def normalize_release(release: Any, outputs: tuple[str, ...], *, record: bool) -> ReleasePolicy:
    """A writer's ``release`` argument as a policy (the ε it states are filled in by :func:`stated_release`).

    Parameters
    ----------
    release : dict, ReleasePolicy or None
        ``None`` or ``{"policy": "single"}``; ``{"policy": "repeated", "releases": T}``; ``{"policy": "memoized"}``;
        ``{"policy": "two-layer", "reports": W₂}`` (a Mechanism or matrix over the file's outputs). An
        ``"epsilon"`` may be given: it must then be at least the recomputed value; so may a two-layer file's
        ``"link_epsilon"`` (filled in by :func:`stated_link` when absent and the level is finite).
    outputs : tuple of str
        The file's outputs.
    record : bool
        Whether the file is a record file (no two-layer policy).

    Raises
    ------
    ValueError, TypeError
        One line naming the key and the rule.
    """
    if release is None or isinstance(release, ReleasePolicy):
        return release or ReleasePolicy()
    if not isinstance(release, dict):
        raise TypeError(f"release must be a dict or None, got release={v._show(release)}")
    policy = release.get("policy")
    allowed = [p for p in POLICIES if not (record and p == "two-layer")]
    if policy not in allowed:
        raise v.fail("release.policy", f"be one of {allowed}", policy)
    keys = (*_KEYS[policy], *_OPTIONAL.get(policy, ()))
    extra = sorted(set(release) - set(keys))
    if extra:
        raise v.fail("release", f"only have the keys {list(keys)} (policy {policy!r})", extra)
    key = release.get("key")
    if key is not None and not (isinstance(key, str) and len(key) == 32 and not set(key) - set("0123456789abcdef")):
        raise v.fail("release.key", "be 32 lowercase hex digits (mechdesign.mechfile.key_id of the key)", key)
    epsilon = release.get("epsilon")
    epsilon = None if epsilon is None else v.epsilon(epsilon, "release.epsilon")
    if release.get("randomness", MEMO_SCHEME) != MEMO_SCHEME:
        raise v.fail("release.randomness", f"be {MEMO_SCHEME!r}", release.get("randomness"))
    if policy == "single":
        return ReleasePolicy()
    if policy == "repeated":
        releases = v.positive_int("release.releases", release.get("releases"))
        if releases > MAX_RELEASES:
            raise v.fail("release.releases", f"be at most {MAX_RELEASES}", releases)
        return ReleasePolicy("repeated", releases=releases, epsilon=epsilon)
    if policy == "memoized":
        return ReleasePolicy("memoized", randomness=MEMO_SCHEME, key=key)
    reports = release.get("reports")
    matrix = v.stochastic_matrix("release.reports", getattr(reports, "matrix", reports))
    if matrix.shape[0] != len(outputs):
        raise v.fail("release.reports", f"have one row per output of the file ({len(outputs)})", matrix.shape)
    mech = Mechanism.from_matrix(matrix, outputs, getattr(reports, "outputs", None))
    link = release.get("link_epsilon")
    link = None if link is None else v.epsilon(link, "release.link_epsilon")
    return ReleasePolicy("two-layer", epsilon=epsilon, randomness=MEMO_SCHEME, reports=mech, key=key,
                         link_epsilon=link)


def stated_release(policy: ReleasePolicy, achieved: float | None, exact: bool, spread: float = 0.0) -> ReleasePolicy:
    """The policy as a writer states it: ε_T or the per-report ε at least the recomputed value, as the guarantee.

    ``achieved`` is the recomputed leakage (``None`` for policies that state none), already an upper bound. A given
    ε that misses it by float noise only (:data:`~mechdesign.mechfile.GUARANTEE_SLACK`, on the bound's
    scale) is raised to ``achieved + spread`` rounded up, the margin every reader's evaluation clears, as the file's
    guarantee is; further below it is refused (:class:`~mechdesign.CertificateError`). ``spread`` is how far
    another correct evaluation may lie above ``achieved``: the float error of sums whose scale exceeds the value's,
    such as the T-release account's a(n) (:func:`~mechdesign.core.account_spread`); one ``round_up`` of
    the value does not cover it (at T = 365 a reader summing in another order lay 64 ulps above,
    ``benchmarks/bench_client_release_agreement.py``). A missing ε is filled in the same way, or, for a relaxation
    bound (which depends on the solver's path to a few parts in 10⁷), one part in 10⁵ above it.
    """
    from mechdesign._numerics import round_up
    from mechdesign.mechfile._format import GUARANTEE_SLACK

    if achieved is None:
        return policy
    if not math.isfinite(achieved):
        raise CertificateError(f"release.epsilon must be finite, got the recomputed {policy.policy} leakage "
                               f"{achieved!r} (unbounded: memoize the releases instead)")
    floor = round_up(achieved + spread) if exact else achieved + _RELAXATION_SLACK * (1.0 + achieved)
    stated = floor if policy.epsilon is None else policy.epsilon
    if stated < floor:
        if not achieved <= round_up(stated + GUARANTEE_SLACK):
            raise CertificateError(f"release.epsilon must be >= the recomputed {policy.policy} leakage "
                                   f"({achieved!r}), got release.epsilon={stated!r}")
        stated = floor
    return ReleasePolicy(policy.policy, policy.releases, float(stated), policy.randomness, policy.reports, policy.key,
                         policy.link_epsilon)


def stated_link(policy: ReleasePolicy, achieved: float | None) -> ReleasePolicy:
    """A two-layer policy with its linkability level as a writer states it (``achieved``: the recomputed level).

    As for ε (:func:`stated_release`): a given level that misses the recomputed one by float noise only is raised to
    it rounded up once more (the margin over another reader's evaluation, whose log and division may differ by an
    ulp); further below it is refused (:class:`~mechdesign.CertificateError`). A missing level is filled in
    when finite; an infinite one is stated by no key (JSON has no infinity), and a given level then refused.
    """
    import dataclasses

    from mechdesign._numerics import round_up
    from mechdesign.mechfile._format import GUARANTEE_SLACK

    if policy.policy != "two-layer" or achieved is None:
        return policy
    if not math.isfinite(achieved):
        if policy.link_epsilon is not None:
            raise CertificateError(f"release.link_epsilon must be >= the linkability level recomputed from the "
                                   f"reports (infinite: some report rules out a permanent output), got "
                                   f"release.link_epsilon={policy.link_epsilon!r}")
        return policy
    floor = round_up(achieved, 2)
    stated = floor if policy.link_epsilon is None else policy.link_epsilon
    if stated < floor:
        if not achieved <= round_up(stated + GUARANTEE_SLACK):
            raise CertificateError(f"release.link_epsilon must be >= the linkability level recomputed from the "
                                   f"reports ({achieved!r}), got release.link_epsilon={stated!r}")
        stated = floor
    return dataclasses.replace(policy, link_epsilon=float(stated))


def refuse_overstated(path: Any, policy: ReleasePolicy, recomputed: tuple[float, bool] | None, what: str,
                      permanent: Mechanism | None = None) -> None:
    """Refuse a file whose release statement is below its recomputed value (one line naming the field and rule).

    Parameters
    ----------
    path : path
        The file, as named in the error.
    policy : ReleasePolicy
        Its release policy.
    recomputed : tuple of (float, bool) or None
        The recomputed value (and whether exact), ``None`` for policies that state nothing.
    what : str
        The words naming what was recomputed (e.g. "the repeated leakage recomputed from the matrices").
    permanent : Mechanism, optional
        The file's matrix W₁: a two-layer file's stated linkability level is then recomputed and checked too.
    """
    from mechdesign._errors import MechanismFileError

    if recomputed is not None and not recomputed[0] <= (policy.epsilon or 0.0):
        raise MechanismFileError(f"{path}: release.epsilon must be >= {what} ({recomputed[0]!r}), got "
                                 f"release.epsilon={policy.epsilon!r}")
    if policy.link_epsilon is not None and permanent is not None:
        level = linkability(permanent, policy)
        if not level <= policy.link_epsilon:
            raise MechanismFileError(f"{path}: release.link_epsilon must be >= the linkability level recomputed "
                                     f"from the reports ({level!r}), got release.link_epsilon="
                                     f"{policy.link_epsilon!r}")


def linkability(permanent: Mechanism, policy: ReleasePolicy) -> float:
    """The recomputed linkability level of a two-layer policy (:func:`~mechdesign.core.link_level`)."""
    from mechdesign.core._linkability import link_level

    assert policy.reports is not None
    return link_level(permanent, policy.reports).epsilon

"""What T releases of one person's value cost under a file's release policy (``verify``/``assess --releases T``).

* one release per run ("single", "repeated"): T fresh releases, :func:`~mechdesign.core.release_leakage`
  over the file's ball (record files: :func:`~mechdesign.core.record_release_leakage` over the joint
  ball); an "ldp" file leaks exactly T·ε_LDP(W) over all priors;
* "memoized": the same (user, value) always gets the same output, so T reports of an unchanged value are **one**
  release: exactly the file's ε. (A person whose value changes k times releases k memoized outputs: the account of
  k releases bounds them when the values are one secret.)
* "two-layer": :func:`~mechdesign.core.report_leakage` of the permanent layer W₁ and T fresh reports of
  W₂, never above the capacity of W₁ (the lifetime guarantee).

``verify --changes c`` (memoized and two-layer files, :func:`changes_account`): c distinct values of one person are c
memoized outputs, the account of c releases of the memoized matrix; a two-layer file's linkability is unchanged.

References
----------
[E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
Def. 5, eq. 22–23.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mechdesign import _validation as v
from mechdesign._numerics import round_up
from mechdesign.core._repeated import ReleaseLeakage, release_count, release_leakage, report_leakage
from mechdesign.core._uncertainty import L1Ball
from mechdesign.mechfile._column import MechanismFile, achieved_epsilon
from mechdesign.mechfile._record import RecordFile

__all__ = ["ChangesAccount", "ReleaseAccount", "changes_account", "release_account"]


@dataclass(frozen=True)
class ReleaseAccount:
    """The leakage of T releases of one value under a file's policy (module docstring).

    Parameters
    ----------
    policy : str
        The file's release policy.
    releases : int
        T.
    epsilon : float
        An upper bound on the leakage of the T releases (nats), rounded toward privacy.
    lower : float
        A leakage attained by a real outcome (``epsilon`` itself when ``exact``, up to rounding).
    exact : bool
        Whether ``epsilon`` is the exact leakage (up to rounding).
    method : str
        How it was found: "enumeration", "relaxation", "ldp", "identity", "memoized" (one release), "permanent"
        (the lifetime bound of a two-layer file).
    outcomes : int
        The count vectors (outcomes up to order) of the T releases (0 for a memoized file).
    """

    policy: str
    releases: int
    epsilon: float
    lower: float
    exact: bool
    method: str
    outcomes: int

    def to_dict(self) -> dict[str, Any]:
        """The account as JSON values (``--json``)."""
        return {"policy": self.policy, "releases": self.releases, "epsilon": self.epsilon, "lower": self.lower,
                "exact": self.exact, "method": self.method, "outcomes": self.outcomes}

    def describe(self) -> str:
        """One line for the text output."""
        if self.method == "memoized":
            return (f"{self.releases:,} reports of an unchanged value (memoized: one release) leak exactly "
                    f"{self.epsilon:.6g} nats")
        what = ("reports (two layers: one memoized permanent output, fresh reports)" if self.policy == "two-layer"
                else "fresh releases of the same value")
        if self.exact:
            return (f"{self.releases:,} {what} leak {self.epsilon:.6g} nats (exact over "
                    f"{self.outcomes:,} count vectors)")
        how = {"relaxation": "certified relaxation", "ldp": "T times the LDP level",
               "identity": "1/(min P̂ − β/2)", "permanent": "the permanent layer's capacity"}.get(self.method,
                                                                                            self.method)
        return (f"{self.releases:,} {what} leak at most {self.epsilon:.9g} nats ({how}; a real outcome leaks "
                f"{self.lower:.9g})")


def _account(policy: str, leakage: ReleaseLeakage) -> ReleaseAccount:
    return ReleaseAccount(policy, leakage.releases, leakage.epsilon, leakage.lower, leakage.exact, leakage.method,
                          leakage.vectors)


def release_account(loaded: MechanismFile | RecordFile, releases: int, *,
                    radius: float | None = None, prior: Any = None) -> ReleaseAccount:
    """The leakage of ``releases`` releases of one person's value under the file's release policy.

    Parameters
    ----------
    loaded : MechanismFile or RecordFile
        A loaded file.
    releases : int
        T ≥ 1.
    radius, prior : optional
        Another ball than the file's (``assess``: the sample's estimate and β*(δ)); a JointPrior for a record
        file.

    Returns
    -------
    ReleaseAccount
        The account (module docstring).
    """
    releases = release_count(releases)
    policy = loaded.release.policy
    guarantee = loaded.guarantee
    if isinstance(loaded, RecordFile):
        from mechdesign.core._record_repeated import record_release_leakage

        joint = loaded.prior if prior is None else prior
        beta = float(guarantee["radius"]) if radius is None else radius
        if policy == "memoized":
            epsilon = loaded.recomputed_epsilon if prior is None and radius is None else None
            if epsilon is None:
                from mechdesign.mechfile._record import record_epsilon

                epsilon = record_epsilon(joint, beta, loaded.factors, loaded.mechanism,
                                         sampled=loaded.sampling is not None)
            return ReleaseAccount(policy, releases, float(epsilon), float(epsilon), True, "memoized", 0)
        leakage = record_release_leakage(joint, beta, releases, factors=loaded.factors, mechanism=loaded.mechanism,
                                         sampled=loaded.sampling is not None)
        return _account(policy, leakage)
    mechanism = loaded.mechanism
    if guarantee["notion"] == "ldp":  # over every prior: the LDP level of T releases is T times W's
        level = achieved_epsilon(loaded.reported if policy == "two-layer" else mechanism, guarantee)
        if policy == "memoized":
            return ReleaseAccount(policy, releases, level, level, True, "memoized", 0)
        if policy == "two-layer":
            lifetime = achieved_epsilon(mechanism, guarantee)
            value = min(round_up(releases * level, 2), lifetime)
            return ReleaseAccount(policy, releases, value, level, False, "ldp" if value < lifetime else "permanent", 0)
        value = round_up(releases * level, 2)
        return ReleaseAccount(policy, releases, value, releases * level, True, "ldp", 0)
    ball = L1Ball(guarantee["prior"] if prior is None else prior, guarantee["radius"] if radius is None else radius)
    if policy == "memoized":
        from mechdesign.core._leakage import capacity

        value = capacity(mechanism, ball)
        return ReleaseAccount(policy, releases, value, value, True, "memoized", 0)
    if policy == "two-layer":
        assert loaded.release.reports is not None
        return _account(policy, report_leakage(mechanism, loaded.release.reports, ball, releases))
    from mechdesign.mechfile._accounts import reporter

    return _account(policy, release_leakage(mechanism, ball, releases, progress=reporter()))


@dataclass(frozen=True)
class ChangesAccount:
    """What c distinct values of one person cost a memoized or two-layer file (``verify --changes c``).

    Memoization keys the output on the value: each distinct value a person holds gets its own memoized (permanent)
    output, drawn afresh, so c values are c releases of the file's matrix W (W₁ of a two-layer file). Their lifetime
    leakage is the account of c releases over the file's ball (:func:`~mechdesign.core.release_leakage`:
    exact, or a certified bound; c·ε_LDP for an "ldp" file) — under PML not c·ε, which is LOLOHA's composition
    bound for c memoized LDP values (Arcolezi, Pinzón, Palamidessi, Gambs, "Frequency estimation of evolving data
    under local differential privacy", EDBT 2023: each new hashed value costs ε∞). The linkability level of a
    two-layer file does not change: every report is drawn from one permanent output, and tells any two permanent
    outputs apart by at most λ, however many there are.

    Parameters
    ----------
    values : int
        c, the distinct values (the first and its c − 1 changes).
    lifetime : ReleaseAccount
        The account of c releases of the memoized layer.
    composition : float
        c × the file's ε: LOLOHA's bound for an LDP file, not a bound under PML.
    link : float or None
        The linkability level (two-layer files; ``inf`` when unbounded), else ``None``.
    """

    values: int
    lifetime: ReleaseAccount
    composition: float
    link: float | None

    def to_dict(self) -> dict[str, Any]:
        """The account as JSON values (``--json``)."""
        return {"values": self.values, "lifetime": self.lifetime.to_dict(), "composition": self.composition,
                "link_epsilon": self.link}

    def describe(self, notion: str) -> str:
        """One line for the text output."""
        account = self.lifetime
        exact = "exactly" if account.exact else "at most"
        how = "" if account.exact else f" ({account.method}; a real outcome leaks {account.lower:.6g})"
        bound = "LOLOHA's composition bound" if notion == "ldp" else "c times epsilon, no bound under PML"
        text = (f"{self.values:,} distinct values of one person ({self.values:,} memoized outputs): lifetime "
                f"{exact} {account.epsilon:.6g} nats{how}; {bound}: {self.composition:.6g}")
        if self.link is not None:
            text += (f"; linkability unchanged at {self.link:.6g} per report (each report is drawn from one "
                     "permanent output)")
        return text


def changes_account(loaded: MechanismFile, values: int) -> ChangesAccount:
    """What ``values`` distinct values of one person cost a memoized or two-layer file (:class:`ChangesAccount`).

    Raises
    ------
    ValueError
        If ``values`` is not a positive integer, or the file's release policy is not "memoized" or "two-layer"
        (fresh draws are accounted by :func:`release_account`).
    """
    values = v.positive_int("changes", values)
    policy = loaded.release.policy
    if policy not in ("memoized", "two-layer"):
        raise v.fail("changes", "be given only for a file whose release policy is memoized or two-layer (fresh "
                     "releases are counted by --releases)", values)
    guarantee = loaded.guarantee
    mechanism = loaded.mechanism
    if guarantee["notion"] == "ldp":
        level = achieved_epsilon(mechanism, guarantee)
        value = round_up(values * level, 2)
        lifetime = ReleaseAccount(policy, values, value, values * level, True, "ldp", 0)
    else:
        ball = L1Ball(guarantee["prior"], guarantee["radius"])
        lifetime = _account(policy, release_leakage(mechanism, ball, values))
    link = None
    if loaded.release.reports is not None:
        from mechdesign.core._linkability import link_level

        link = link_level(mechanism, loaded.release.reports).epsilon
    return ChangesAccount(values, lifetime, round_up(values * float(guarantee["epsilon"]), 2), link)

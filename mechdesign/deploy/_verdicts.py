"""What ``verify`` says about a file of each kind: its guarantee recomputed, the data check, the JSON and the text.

One function per kind, called by its adapter's :meth:`~mechdesign.deploy.Deployment.verify`:

* :func:`dense` — the file's notion (pml or ldp) recomputed from its matrix, the LDP level beside a PML guarantee,
  the release policy's statement, the account of T releases and of C changed values;
* :func:`structured` — the capacity recomputed from the types, the design's sizes and its LDP level;
* :func:`record` — the record-level guarantee over the joint ball (product: the exact capacity of W_1 ⊗ … ⊗ W_d;
  joint: the capacity of the joint matrix), the data check on the joint distribution.

With data, their distribution is checked against the file's ball (:mod:`mechdesign.deploy.analysis._datacheck`)
and, when the check passes or is overridden, the ε of the file's design at the data's own empirical distribution is
stated beside it (:func:`~mechdesign.deploy.analysis.epsilon_at_data` for a record file).
"""

from __future__ import annotations

import io
import statistics
from collections.abc import Sequence
from typing import Any

from mechdesign import _validation as v
from mechdesign.deploy._columns import column_order_hint, record_columns, single_column
from mechdesign.deploy._reports import Verdict

__all__ = ["dense", "record", "structured"]


def dense(deployment: Any, data: Any, columns: Sequence[str] | None, *,
          data_delta: float | None = None, override_data_check: bool = False, releases: int | None = None,
          changes: int | None = None) -> Verdict:
    """The verdict on a single-column file (dense matrix; policies single, repeated, memoized, two-layer)."""
    from mechdesign.core._leakage import ldp_level
    from mechdesign.deploy.analysis._repeated import changes_account, release_account
    from mechdesign.mechfile._column import verify_mechanism_file

    loaded = deployment.loaded
    result = deployment.verification or verify_mechanism_file(_parsed_again(deployment))
    account = None if releases is None else release_account(loaded, releases)
    changed = None if changes is None else changes_account(loaded, changes)
    ldp = ldp_level([loaded.mechanism]) if result.notion == "pml" else None
    check, at_data = None, None
    if data is not None:
        from mechdesign._numerics import round_up
        from mechdesign.core._leakage import epsilon_min
        from mechdesign.deploy._io import count_labels
        from mechdesign.deploy.analysis._datacheck import check_counts

        counts = count_labels(data, single_column(_given(columns)), loaded.mechanism.inputs, name="column",
                              file_name="data")
        check = check_counts(loaded.guarantee, counts, _data_delta(data_delta))
        if check.inside or override_data_check:
            at_data = round_up(epsilon_min(loaded.mechanism, check.frequencies), len(loaded.mechanism.inputs))
    summary = {"file": result.path, "notion": result.notion, "epsilon": result.epsilon, "achieved": result.achieved,
               "delta": result.delta, "radius": result.radius, "holds": result.holds, "sha256": result.sha256,
               "signature_checked": deployment.public_key is not None, "release": result.release,
               "data": _data_summary(check, at_data, override_data_check),
               "releases": None if account is None else account.to_dict(), "ldp": ldp,
               "changes": None if changed is None else changed.to_dict()}
    verdict = "holds" if result.achieved <= result.epsilon else "DOES NOT HOLD"
    extra = "" if result.notion == "ldp" else f", radius {result.radius!r}, delta {result.delta!r}"
    lines = [f"{result.path}: {result.notion} epsilon {result.epsilon!r} {verdict} (achieved {result.achieved!r}"
             f"{extra})" + _signature(deployment) + _data_text(check, at_data, override_data_check, ""),
             *_ldp_lines(ldp), *_release_lines(result.release, account)]
    if changed is not None:
        lines.append(f"  {changed.describe(result.notion)}")
    return Verdict(summary, tuple(lines), result, check, at_data)


def structured(deployment: Any, data: Any, columns: Sequence[str] | None, *,
               data_delta: float | None = None, override_data_check: bool = False, releases: int | None = None,
               changes: int | None = None) -> Verdict:
    """The verdict on a structured file: the capacity recomputed from its types, and the design's sizes.

    ``releases``, ``override_data_check`` and ``changes`` are refused (they need the dense matrix).
    """
    from mechdesign.mechfile._symmetric import verify_symmetric_file

    _refuse("releases", releases, "the leakage of T fresh releases is computed on the dense matrix")
    _refuse("changes", changes, "the account of C changed values is computed on the dense matrix")
    _refuse("override_data_check", override_data_check, "the data's own epsilon needs the dense matrix")
    loaded = deployment.loaded
    result = deployment.verification or verify_symmetric_file(_parsed_again(deployment))[0]
    check = None
    if data is not None:
        from mechdesign.deploy._io import count_labels
        from mechdesign.deploy.analysis._datacheck import check_counts

        counts = count_labels(data, single_column(_given(columns)), loaded.mechanism.inputs, name="column",
                              file_name="data")
        check = check_counts(deployment.guarantee, counts, _data_delta(data_delta))
    m = loaded.mechanism
    ldp = m.ldp_level()
    largest, median = _report_sizes(m)
    summary = {"file": result.path, "kind": "symmetric", "notion": "pml", "epsilon": result.epsilon,
               "achieved": result.achieved, "delta": result.delta, "radius": result.radius, "holds": result.holds,
               "sha256": result.sha256, "signature_checked": deployment.public_key is not None,
               "release": result.release, "data": _data_summary(check, None, False), "inputs": m.cells.size,
               "cells": m.cells.count, "types": m.types, "report_bytes_max": largest,
               "report_bytes_median": median, "ldp": ldp}
    verdict = "holds" if result.holds else "DOES NOT HOLD"
    lines = [f"{result.path}: pml epsilon {result.epsilon!r} {verdict} (achieved {result.achieved!r}, radius "
             f"{result.radius!r}, delta {result.delta!r})" + _signature(deployment)
             + _data_text(check, None, False, ""),
             f"  structured design: {m.cells.size:,} inputs in {m.cells.count:,} cells, {m.types:,} types "
             f"(placement mechdesign-agl-1); reports of at most {largest} bytes (median {median:g})"]
    if ldp == float("inf"):
        lines.append("  LDP level: infinite (a type puts some inputs at level 0, so its reports rule them out; "
                     "epsilon-PML over the ball is not epsilon-LDP)")
    else:
        lines.append(f"  LDP level: {ldp:.6g} nats (what the types guarantee for every prior; the epsilon above is "
                     "PML over the ball, not epsilon-LDP)")
    if result.release is not None:
        lines.append("  release policy: memoized (the same user and value always get the same report; privatize "
                     "needs --memo-key and --user-column)")
    return Verdict(summary, tuple(lines), result, check, None)


def record(deployment: Any, data: Any, columns: Sequence[str] | None, *,
           data_delta: float | None = None, override_data_check: bool = False, releases: int | None = None,
           changes: int | None = None) -> Verdict:
    """The verdict on a record file: the record-level guarantee (and the joint data check); ``changes`` refused."""
    from mechdesign.core._leakage import ldp_level

    if changes is not None:
        raise ValueError("changes must not be given with a record file (the account of C changed values is kept for "
                         f"a one-column memoized or two-layer file), got changes={changes!r}")
    from mechdesign.deploy.analysis._repeated import release_account
    from mechdesign.mechfile._record import record_verification

    loaded = deployment.loaded
    result = deployment.verification or record_verification(loaded, deployment.name)
    account = None if releases is None else release_account(loaded, releases)
    ldp = ldp_level(loaded.factors if loaded.mechanism is None else [loaded.mechanism],
                    sampled=loaded.sampling is not None)
    check, at_data = None, None
    if data is not None:
        from mechdesign.deploy.analysis._datacheck import check_joint_counts
        from mechdesign.deploy.analysis._record_assess import count_record_data, epsilon_at_data

        names = record_columns(_given(columns), loaded.attributes)
        with column_order_hint(names, loaded.attributes):
            letters, counts = count_record_data(loaded, data, names)
        check = check_joint_counts(loaded.prior, result.radius or 0.0, letters, counts, _data_delta(data_delta))
        if check.inside or override_data_check:
            at_data = epsilon_at_data(loaded, letters, counts)
    summary = {"file": result.path, "design": loaded.kind, "attributes": list(loaded.attributes),
               "letters": loaded.prior.size, "notion": "pml", "level": "record", "epsilon": result.epsilon,
               "achieved": result.achieved, "delta": result.delta, "radius": result.radius,
               "samples": loaded.prior.samples, "holds": result.holds, "sha256": result.sha256,
               "signature_checked": deployment.public_key is not None, "release": result.release,
               "data": _data_summary(check, at_data, override_data_check),
               "releases": None if account is None else account.to_dict(), "ldp": ldp}
    verdict = "holds" if result.holds else "DOES NOT HOLD"
    lines = [f"{result.path}: record-level pml epsilon {result.epsilon!r} {verdict} (achieved {result.achieved!r} "
             f"over the joint ball of {', '.join(loaded.attributes)}: N = {loaded.prior.size:,} letters, "
             f"{loaded.kind} design, radius {result.radius!r}, delta {result.delta!r})" + _signature(deployment)
             + _data_text(check, at_data, override_data_check, "joint "),
             *_ldp_lines(ldp, "record-level "), *_release_lines(result.release, account)]
    return Verdict(summary, tuple(lines), result, check, at_data, "record-level ")


# -- the parts of a verdict -------------------------------------------------------------------------------------------
def _given(columns: Sequence[str] | None) -> Sequence[str]:
    if columns is None:
        raise v.fail("columns", "be given with data (the data's column, or one per attribute of a record file)",
                     None)
    return columns


def _data_delta(data_delta: float | None) -> float:
    from mechdesign.deploy.analysis._datacheck import DATA_DELTA

    return DATA_DELTA if data_delta is None else data_delta


def _parsed_again(deployment: Any) -> Any:
    """The file's kept bytes parsed again (a file loaded to draw keeps no Verification; its reader checked it)."""
    from mechdesign.mechfile._format import parse_file

    return parse_file(io.BytesIO(deployment.data), deployment.name)


def _refuse(option: str, value: Any, why: str) -> None:
    if value not in (None, False):
        raise ValueError(f"{option} must not be given with a structured file ({why}; mechdesign export --dense "
                         f"writes the dense file of a small design), got {option}={value!r}")


def _signature(deployment: Any) -> str:
    return "; signature valid" if deployment.public_key is not None else ""


def _data_summary(data: Any, at_data: float | None, overridden: bool) -> dict[str, Any] | None:
    """The data check's outcome as the JSON output reports it (``None`` without data)."""
    if data is None:
        return None
    return {"records": data.records, "distance": data.distance, "divergence": data.divergence,
            "threshold": data.threshold, "data_delta": data.data_delta, "passed": data.inside,
            "overridden": not data.inside and overridden, "epsilon_at_data": at_data}


def _data_text(data: Any, at_data: float | None, overridden: bool, kind: str) -> str:
    """The data check's clause of the text verdict (empty without data)."""
    if data is None:
        return ""
    if not data.inside:
        refused = (f"; data: {data.records:,} records, {kind}data check REFUSED them"
                   + (" and was overridden" if overridden else "") + f" (divergence to the ball "
                   f"{data.divergence:.4g} > {data.threshold:.4g} at delta_d {data.data_delta:g}): the guarantee "
                   "does not cover them")
        if at_data is None:
            return refused
        return (f"{refused}; at their {kind}empirical distribution the {'record-level ' if kind else ''}epsilon is "
                f"{at_data:.6g}")
    return (f"; data: {data.records:,} records, {kind}divergence to the ball {data.divergence:.4g} <= "
            f"{data.threshold:.4g} at delta_d {data.data_delta:g}")


def _ldp_lines(ldp: dict[str, Any] | None, level: str = "") -> list[str]:
    if ldp is None:
        return []
    if ldp["impossible"] is not None:
        return [f"  {level}LDP level: infinite (output {ldp['impossible']['output']!r} is never drawn for input "
                f"{ldp['impossible']['input']!r}, so seeing it rules that input out; epsilon-PML over the ball is "
                "not epsilon-LDP)"]
    return [f"  {level}LDP level: {ldp['epsilon']:.6g} nats (what the matrix guarantees for every prior; the epsilon "
            "above is PML over the ball, not epsilon-LDP)"]


def _release_lines(release: dict[str, Any] | None, account: Any) -> list[str]:
    """The release policy's statement and the T-release account, one line each (nothing for a plain file)."""
    lines = []
    if release is not None:
        policy = release["policy"]
        if policy == "repeated":
            lines.append(f"  release policy: {release['releases']:,} fresh releases of the same value, stated "
                         f"epsilon {release['epsilon']!r} {'holds' if release['holds'] else 'DOES NOT HOLD'} "
                         f"(recomputed {release['achieved']!r}, {'exact' if release['exact'] else 'certified bound'})")
        elif policy == "two-layer":
            per_report = release["achieved"] <= release["epsilon"]
            lines.append(f"  release policy: two layers (memoized permanent layer, fresh reports): lifetime epsilon "
                         f"is the guarantee above; per-report epsilon {release['epsilon']!r} "
                         f"{'holds' if per_report else 'DOES NOT HOLD'} (recomputed {release['achieved']!r})")
            lines.append(f"  {_link_text(release)}")
        else:
            lines.append("  release policy: memoized (the same user and value always get the same output; privatize "
                         "needs --memo-key and --user-column)")
    if account is not None:
        lines.append(f"  {account.describe()}")
    return lines


def _link_text(release: dict[str, Any]) -> str:
    """The linkability line of a two-layer file: stated and recomputed, or the level of a file that states none."""
    from mechdesign.core._linkability import LinkLevel

    level = release["link_achieved"]
    meaning = LinkLevel(level, None).meaning()
    if release["link_epsilon"] is None:
        return f"linkability (not stated by the file): {meaning}"
    verdict = "holds" if release["link_holds"] else "DOES NOT HOLD"
    return f"linkability epsilon {release['link_epsilon']!r} {verdict} (recomputed {level!r}): {meaning}"


def _report_sizes(mechanism: Any) -> tuple[int, float]:
    """The largest and the median size in bytes of a structured design's reports (text form)."""
    from mechdesign.mechfile._placement import PlacementFamily

    family = PlacementFamily(mechanism.cells, mechanism.high_counts, mechanism.low_counts)
    sizes = [family.report_bytes(t) for t in range(mechanism.types)]
    return max(sizes), statistics.median(sizes)

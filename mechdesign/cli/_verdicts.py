"""What ``verify`` says about a file and the data: its exit code, the data check and its clauses in text and JSON.

Shared by the verb's drivers (dense and record files in :mod:`mechdesign.cli.verify`, structured files in
:mod:`mechdesign.cli._symmetric`), so that no driver takes the verb's module as an argument.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def data_summary(data: Any, at_data: float | None) -> dict[str, Any] | None:
    """The data check's outcome as the JSON output reports it (``None`` without ``--data``)."""
    if data is None:
        return None
    return {"records": data.records, "distance": data.distance, "divergence": data.divergence,
            "threshold": data.threshold, "data_delta": data.data_delta, "passed": data.inside,
            "overridden": not data.inside, "epsilon_at_data": at_data}

def data_text(data: Any, at_data: float | None, kind: str) -> str:
    """The data check's clause of the text verdict (empty without ``--data``)."""
    if data is None:
        return ""
    if not data.inside:
        return (f"; data: {data.records:,} records, {kind}data check REFUSED them and was overridden (divergence to "
                f"the ball {data.divergence:.4g} > {data.threshold:.4g} at delta_d {data.data_delta:g}): the "
                f"guarantee does not cover them; at their {kind}empirical distribution the "
                f"{'record-level ' if kind else ''}epsilon is {at_data:.6g}")
    return (f"; data: {data.records:,} records, {kind}divergence to the ball {data.divergence:.4g} <= "
            f"{data.threshold:.4g} at delta_d {data.data_delta:g}")

def checked(args: argparse.Namespace, check: Any) -> Any:
    """The data check at ``--data-delta``; a refusal is an error unless ``--override-data-check``."""
    from mechdesign.deploy.analysis._datacheck import DATA_DELTA, refusal

    data = check(DATA_DELTA if args.data_delta is None else args.data_delta)
    if not data.inside and not args.override_data_check:
        raise ValueError(refusal(data) + "; --override-data-check reports them anyway")
    return data

def exit_code(result: Any, level: str = "") -> int:
    """0 when every stated guarantee holds; else 1, after a one-line failure on stderr naming the first that fails."""
    if result.holds:
        return 0
    release = result.release or {}
    if not result.achieved <= result.epsilon:
        what = f"achieved {level}epsilon {result.achieved!r} exceeds stated {result.epsilon!r}"
    elif "achieved" in release and not release["achieved"] <= release["epsilon"]:
        what = f"recomputed {release['policy']} leakage {release['achieved']!r} exceeds release.epsilon " \
               f"{release['epsilon']!r}"
    else:
        what = f"recomputed linkability level {release.get('link_achieved')!r} exceeds release.link_epsilon " \
               f"{release.get('link_epsilon')!r}"
    print(f"mechdesign: failed: {result.path}: {what}", file=sys.stderr)
    return 1

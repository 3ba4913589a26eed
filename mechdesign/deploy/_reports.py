"""What a file read for a verb says: one JSON object and the text lines, the same for every kind of file.

:meth:`Deployment.verify <mechdesign.deploy.Deployment.verify>`, :meth:`~mechdesign.deploy.Deployment.decode_file`
and :meth:`~mechdesign.deploy.Deployment.assess` return a :class:`Report` (``verify`` its :class:`Verdict`): the
adapter of each kind fills it, and a caller — the CLI's verbs — prints ``summary`` (``--json``) or ``text``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Report", "Verdict"]


@dataclass(frozen=True)
class Report:
    """A verb's outcome for one file: the JSON object, the text, and the library's own result.

    Parameters
    ----------
    summary : dict
        The machine-readable outcome (``mechdesign VERB --json`` prints it).
    lines : tuple of str
        The outcome as text, one entry a line.
    result : Any
        The object computed: a :class:`~mechdesign.mechfile.Verification`, an
        :class:`~mechdesign.deploy.analysis.Estimate`, a
        :class:`~mechdesign.deploy.analysis._record_decode.RecordEstimate`, an :class:`~mechdesign.core.Assessment`
        or a :class:`~mechdesign.deploy.analysis._record_assess.RecordAssessment`.
    """

    summary: dict[str, Any]
    lines: tuple[str, ...]
    result: Any = None

    @property
    def text(self) -> str:
        """The lines, joined."""
        return "\n".join(self.lines)


@dataclass(frozen=True)
class Verdict(Report):
    """A file's guarantee recomputed (``result``: its :class:`~mechdesign.mechfile.Verification`) and the data check.

    Parameters
    ----------
    data : DataCheck or None
        The data check of the records given (``None`` without data). Data it refuses are reported, not raised: the
        caller refuses them unless it overrides the check (``mechdesign verify`` exits 2 without
        ``--override-data-check``).
    epsilon_at_data : float or None
        The ε at the data's own empirical distribution (the record-level one for a record file), when data were
        given and the check passed or was overridden; ``None`` for a structured file.
    level : str
        How the failure names the guarantee: ``""``, or ``"record-level "`` for a record file.
    """

    data: Any = None
    epsilon_at_data: float | None = None
    level: str = ""

    @property
    def failure(self) -> str | None:
        """Why the file fails, naming the first stated guarantee that the recomputed one misses (``None``: it holds)."""
        result = self.result
        if result.holds:
            return None
        release = result.release or {}
        if not result.achieved <= result.epsilon:
            return f"achieved {self.level}epsilon {result.achieved!r} exceeds stated {result.epsilon!r}"
        if "achieved" in release and not release["achieved"] <= release["epsilon"]:
            return (f"recomputed {release['policy']} leakage {release['achieved']!r} exceeds release.epsilon "
                    f"{release['epsilon']!r}")
        return (f"recomputed linkability level {release.get('link_achieved')!r} exceeds release.link_epsilon "
                f"{release.get('link_epsilon')!r}")

"""The one writer of design results: every result states its file as :class:`FileSections`, one function writes it.

Five kinds of design result reach a mechanism file — a single-column design
(:class:`~mechdesign.design._result.DesignResult`), a two-layer design
(:class:`~mechdesign.design.two_layer.TwoLayerDesign`), a symmetric design over cells
(:class:`~mechdesign.design.symmetric.SymmetricDesign`) and the record designs (product, attribute-sampled and joint:
:mod:`mechdesign.records`). Each says what its file holds (:meth:`DesignOutcome.sections`); :func:`save` refuses to
replace an existing file silently and hands the sections to the writer of that kind of file, which recomputes the
guarantee from the mechanism, solver-free, before anything is written
(:func:`~mechdesign.mechfile.write_mechanism_file`, :func:`~mechdesign.mechfile.write_symmetric_file`,
:func:`~mechdesign.mechfile.write_record_file`). The results' ``save`` methods are this function
(:class:`SavesFile`), so a result is written the same way from Python and from ``mechdesign design``.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = ["KINDS", "DesignOutcome", "FileSections", "SavesFile", "problem_provenance", "save"]

#: The kinds of mechanism file a design result can state.
KINDS = ("column", "structured", "record")


@dataclass(frozen=True)
class FileSections:
    """Everything a mechanism file states about one design, as the writer of its kind takes it.

    Parameters
    ----------
    kind : {"column", "structured", "record"}
        A dense file of one column's mechanism (single-layer or two-layer), a structured file of types over cells,
        or a record file (product, sampled or joint).
    mechanism : Any
        The matrix the file states: a :class:`~mechdesign.core.Mechanism` (a column file's W or W₁, a
        joint record design's W), a :class:`~mechdesign.core.SymmetricMechanism` (structured), or
        ``None`` for a record design of per-attribute factors.
    guarantee : dict
        The guarantee block (column and structured files), or for a record file the record-level ``epsilon``,
        ``radius`` and ``delta``.
    utility, baselines, certificate, provenance : dict or None
        The optional blocks.
    release : dict or None
        The release the design itself states (a two-layer design's W₂ and its budgets); ``None`` lets the caller
        choose (one release per run by default).
    factors : tuple or None
        A record design's per-attribute mechanisms.
    sampling : Any
        An attribute-sampled design's π.
    prior : Any
        A record design's :class:`~mechdesign.core.JointPrior`.
    """

    kind: Literal["column", "structured", "record"]
    mechanism: Any
    guarantee: dict[str, Any]
    utility: dict[str, Any] | None = None
    baselines: dict[str, Any] | None = None
    certificate: dict[str, Any] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    release: dict[str, Any] | None = None
    factors: tuple[Any, ...] | None = None
    sampling: Any = None
    prior: Any = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got kind={self.kind!r}")


@runtime_checkable
class DesignOutcome(Protocol):
    """What every design result offers: its guarantee, the mechanisms it states, a summary, its file.

    ``guarantee`` is the block the result's file states (recomputed by the writer, rounded toward privacy, before
    the file is written); ``mechanisms`` the matrices behind it (W; W₁ and W₂; the factors); ``to_dict`` a JSON-ready
    summary (``mechdesign design --json``); ``sections`` the file (:class:`FileSections`); ``save`` writes it
    (:func:`save`).
    """

    @property
    def guarantee(self) -> dict[str, Any]:
        """The guarantee block of the result's file."""
        ...

    @property
    def mechanisms(self) -> tuple[Any, ...]:
        """The mechanisms the file states, in the order it states them."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        ...

    def sections(self) -> FileSections:
        """The result's mechanism file (the problem file's provenance is added by :func:`save`)."""
        ...


def problem_provenance(problem_file: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The provenance entries of the TOML problem file a design came from: its name and SHA-256 (empty if none)."""
    if problem_file is None:
        return {}
    source = Path(problem_file)
    return {"problem_file": source.name, "problem_sha256": hashlib.sha256(source.read_bytes()).hexdigest()}


def save(result: DesignOutcome, path: str | os.PathLike[str], *, problem_file: str | os.PathLike[str] | None = None,
         release: dict[str, Any] | None = None, key: str | None = None, force: bool = False,
         deadline: Any = None, provenance: dict[str, Any] | None = None) -> Path:
    """Write the certified mechanism file of a design result (atomically; the guarantee is recomputed first).

    An existing file is never replaced silently, as in ``mechdesign design``: without ``force`` it is an error, and
    with ``force`` replacing a signed mechanism file warns (the new file is not signed).

    Parameters
    ----------
    result : DesignOutcome
        Any design result (:class:`DesignOutcome`).
    path : path
        Target file, conventionally ``<name>.mech.json``.
    problem_file : path, optional
        The TOML problem file the design came from (its name and SHA-256 go into the provenance).
    release : dict, optional
        The file's release policy (``{"policy": "memoized"}``, ``{"policy": "repeated", "releases": T}``;
        :mod:`mechdesign.mechfile._policy`); by default one release per run. A two-layer design states its own.
    key : str, optional
        The identifier of the memoization key a memoized or two-layer file is bound to
        (:func:`~mechdesign.mechfile.key_id`).
    force : bool
        Replace ``path`` if it exists.
    deadline : Deadline, optional
        When the T-release account of a "repeated" policy must end (``mechdesign design --time-limit``).
    provenance : dict, optional
        Entries added to the provenance block (e.g. the problem's name), over the result's own.

    Returns
    -------
    Path
        The written file; check it with ``mechdesign verify`` or
        :func:`~mechdesign.mechfile.verify_mechanism_file`.

    Raises
    ------
    ValueError
        If ``path`` exists and ``force`` is false, if ``release`` is given for a design that states its own, or if
        ``key`` comes without a memoized or two-layer release (nothing is written).
    CertificateError
        If the mechanism does not achieve the guarantee the sections state.

    Warns
    -----
    UserWarning
        When ``force`` replaces a signed mechanism file.

    Examples
    --------
    >>> import math, tempfile
    >>> from pathlib import Path
    >>> from mechdesign import DesignProblem, solve, verify_mechanism_file
    >>> result = solve(DesignProblem([0.4, 0.2, 0.2, 0.2], math.log(9 / 8)), baselines=False)
    >>> path = save(result, Path(tempfile.mkdtemp()) / "example1.mech.json")
    >>> verify_mechanism_file(path).holds
    True
    >>> result.save(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: path must not exist (it is an existing file; use force=True to replace it), got path=...
    >>> result.save(path, force=True) == path
    True
    """
    from mechdesign._files import refuse_replacing

    sections = result.sections()
    if sections.release is not None and release is not None:
        raise ValueError(f"release must not be given for a design that states its own release "
                         f"({sections.release.get('policy')!r}), got release={release!r}")
    stated = dict(sections.release if sections.release is not None else release or {}) or None
    if key is not None:
        if stated is None or stated.get("policy") not in ("memoized", "two-layer"):
            raise ValueError("key must be given only with a memoized or two-layer release, got key=" + repr(key))
        stated["key"] = key
    warning = refuse_replacing(path, force, name="path", hint="force=True")
    if warning:
        warnings.warn(warning, UserWarning, stacklevel=2)
    provenance = {**sections.provenance, **(provenance or {}), **problem_provenance(problem_file)}
    if sections.kind == "column":
        from mechdesign.mechfile._column import write_mechanism_file

        blocks = {name: block for name, block in (("utility", sections.utility), ("baselines", sections.baselines),
                                                  ("certificate", sections.certificate)) if block is not None}
        return write_mechanism_file(path, sections.mechanism, guarantee=sections.guarantee, **blocks,
                                    provenance=provenance, release=stated, deadline=deadline)
    if sections.kind == "structured":
        from mechdesign.mechfile._symmetric import write_symmetric_file

        return write_symmetric_file(path, sections.mechanism, guarantee=sections.guarantee,
                                    utility=sections.utility or {}, baselines=sections.baselines or {},
                                    certificate=sections.certificate or {}, provenance=provenance, release=stated)
    from mechdesign.mechfile._record_write import write_record_file

    g = sections.guarantee
    return write_record_file(path, sections.prior, epsilon=g["epsilon"], radius=g["radius"], delta=g.get("delta"),
                             factors=sections.factors, mechanism=sections.mechanism, sampling=sections.sampling,
                             utility=sections.utility, baselines=sections.baselines,
                             certificate=sections.certificate, provenance=provenance, release=stated)


class SavesFile:
    """The ``save`` method every design result shares: :func:`save` on itself."""

    def save(self, path: str | os.PathLike[str], *, problem_file: str | os.PathLike[str] | None = None,
             release: dict[str, Any] | None = None, key: str | None = None, force: bool = False,
             deadline: Any = None, provenance: dict[str, Any] | None = None) -> Path:
        """Write this result's certified mechanism file (:func:`mechdesign.mechfile.save`, same parameters).

        Parameters
        ----------
        path : path
            Target file, conventionally ``<name>.mech.json``.
        problem_file : path, optional
            The TOML problem file the design came from (name and SHA-256 recorded in the provenance).
        release : dict, optional
            The file's release policy; by default one release per run (a two-layer design states its own).
        key : str, optional
            The memoization key identifier a memoized or two-layer file is bound to.
        force : bool
            Replace ``path`` if it exists (replacing a signed file warns).
        deadline : Deadline, optional
            When a "repeated" policy's T-release account must end.
        provenance : dict, optional
            Entries added to the provenance block.

        Returns
        -------
        Path
            The written file.
        """
        return save(self, path, problem_file=problem_file, release=release, key=key,  # type: ignore[arg-type]
                    force=force, deadline=deadline, provenance=provenance)

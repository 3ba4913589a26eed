"""Structured mechanism files (kind ``"symmetric"``): a large-alphabet design in a few megabytes [D].

A symmetric mechanism (:mod:`mechdesign.core._symmetric`) over N inputs is stored without any matrix::

    {"format": {"name": "mechdesign.core.mechanism", "version": 2}, "kind": "symmetric",
     "placement": "mechdesign-agl-1",
     "inputs": [...], "counts": [n_x ...],            # one positive integer per input: the prior P̂ = n / m
     "types": {"high": [h_t ...], "low": [l_t ...], "weights": [θ_t ...],
               "high_counts": ["<base64>" ...], "low_counts": [null | "rest" | [[k, b], ...] ...],
               ["counts_code": "rice-1", "count_centres": [c_k ...], "count_rice": [r_k ...]]},
     "guarantee": {"notion": "pml", "epsilon": ε, "delta": δ | null, "radius": β, "prior": null,
                   "samples": m},
     "utility": ..., "baselines": ..., "certificate": ..., "provenance": ..., "release": ...,
     "sha256": "<hex>", "signature": ...}

The **cells** are rebuilt from ``counts`` by the rule of :meth:`~mechdesign.core.Cells.from_counts`
(part of the format), so no cell map can disagree with the inputs; ``guarantee.prior`` is null (the prior is
``counts`` / ``samples``) and ``samples`` must equal Σ counts. The count tables are bit-packed
(:mod:`mechdesign.mechfile._packed`), or, with the three optional ``types`` members, the high counts are Rice
codes around per-cell centres (:mod:`mechdesign.mechfile._rice`): the writer takes the shorter. The envelope is
the dense file's: RFC 8785 canonical bytes for ``sha256``
and the signature, the radius bound to δ and m ([E] eq. 37), the release policy (one release per run, or
memoized: the other policies need the dense matrix). ``placement`` names the family a report's seed refers to
(:mod:`mechdesign.mechfile._placement`).

**Loading never trusts the file**: schema, hash, signature policy, counts positive integers (one per input), every
count table within its cell (a + b ≤ s_k), rows summing to one within 1e-9, b = 0 where l = 0, and the guarantee
**recomputed from the compact form**: the capacity over B_β(P̂) ([E] Def. 5, eq. 22–23) is the largest type's PML
(:meth:`~mechdesign.core.SymmetricMechanism.capacity`, the grouped greedy rounded toward privacy), raised
once more by :func:`~mechdesign._numerics.round_up` as every file's achieved ε is; the file holds when that is at
most the stated ε. Solver-free, O(T·K log K).

References
----------
[D] reference/symmetric-designs.md. [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on
Empirical Distributions", Def. 5, eq. 22–23, eq. 37.
"""

from __future__ import annotations

import json
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
from mechdesign.core._cells import Cells
from mechdesign.core._sample_radius import design_radius, radius_for_delta
from mechdesign.core._symmetric import SymmetricMechanism
from mechdesign.mechfile._format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    GUARANTEE_SLACK,
    RADIUS_RTOL,
    FileChecker,
    ParsedFile,
    Verification,
    canonical_bytes,
    check_radius,
    check_signature_keys,
    json_block,
    parse_file,
    provenance_versions,
)
from mechdesign.mechfile._packed import low_form, pack_counts, unpack_low
from mechdesign.mechfile._placement import PLACEMENT_FAMILY
from mechdesign.mechfile._policy import ReleasePolicy, normalize_release, read_release
from mechdesign.mechfile._rice import CODE, read_high_counts, rice_members
from mechdesign.mechfile._symmetric_check import canonical_digest, type_capacities

__all__ = ["KIND", "SymmetricFile", "is_symmetric", "read_symmetric_file", "verify_symmetric_file",
           "write_symmetric_file"]

KIND = "symmetric"
_TOP_KEYS = ("format", "kind", "placement", "inputs", "counts", "types", "guarantee", "utility", "baselines",
             "certificate", "provenance", "release", "sha256", "signature")
_OPTIONAL = ("utility", "baselines", "certificate", "release", "signature")
_TYPE_KEYS = ("high", "low", "weights", "high_counts", "low_counts")
_RICE_KEYS = ("counts_code", "count_centres", "count_rice")  # all three or none (then the packed fields)
_CODES = (None, "packed", CODE)
_GUARANTEE_KEYS = ("notion", "epsilon", "delta", "radius", "prior", "samples")


def is_symmetric(parsed: ParsedFile) -> bool:
    """Whether a parsed file is a structured file (``"kind": "symmetric"``)."""
    return parsed.content.get("kind") == KIND


@dataclass(frozen=True, eq=False)
class SymmetricFile:
    """A loaded structured file (module docstring).

    Parameters
    ----------
    mechanism : SymmetricMechanism
        The types over the cells rebuilt from ``counts``.
    guarantee : dict
        As stated: ``notion`` ("pml"), ``epsilon``, ``delta``, ``radius``, ``prior`` (null) and ``samples`` (m).
    utility, baselines, certificate : dict or None
        Optional blocks.
    provenance : dict
        Provenance recorded by the writer.
    sha256 : str
        The checked hash of the canonical content.
    signature : dict or None
        The signature block (checked only against a given public key).
    release : ReleasePolicy
        "single" or "memoized".
    achieved : float
        The capacity recomputed from the compact form, rounded up (the ε a verifier compares).
    """

    mechanism: SymmetricMechanism
    guarantee: dict[str, Any]
    utility: dict[str, Any] | None
    baselines: dict[str, Any] | None
    certificate: dict[str, Any] | None
    provenance: dict[str, Any]
    sha256: str
    signature: dict[str, Any] | None = None
    release: ReleasePolicy = field(default_factory=ReleasePolicy)
    achieved: float = math.inf

    @property
    def prior(self) -> np.ndarray:
        """P̂ = counts / m over the inputs."""
        return self.mechanism.cells.item_counts() / self.mechanism.cells.samples


def achieved_capacity(mechanism: SymmetricMechanism, radius: float) -> float:
    """The capacity over B_β(P̂) recomputed from the types, raised by round_up (what a verifier compares).

    The largest of the types' PML (:func:`~mechdesign.mechfile.type_capacities`, the grouped
    greedy of :meth:`SymmetricMechanism.type_capacities` with one sort), raised once more.
    """
    return round_up(float(type_capacities(mechanism, radius).max()))


def write_symmetric_file(path: str | os.PathLike[str], mechanism: SymmetricMechanism, *, guarantee: dict[str, Any],
                         utility: dict[str, Any] | None = None, baselines: dict[str, Any] | None = None,
                         certificate: dict[str, Any] | None = None, provenance: dict[str, Any] | None = None,
                         release: Any = None, counts_code: str | None = None) -> Path:
    """Write a structured file atomically; its guarantee is recomputed first and rounded toward privacy.

    Parameters
    ----------
    path : str or os.PathLike
        The target file.
    mechanism : SymmetricMechanism
        The design.
    guarantee : dict
        ``epsilon``, ``radius`` and optionally ``notion`` ("pml", the only one), ``delta`` and ``samples`` (must be
        Σ counts when given; written as Σ counts).
    utility, baselines, certificate, provenance : dict, optional
        Blocks as in dense files.
    release : dict, optional
        ``None`` (one release per run) or ``{"policy": "memoized"}``.
    counts_code : {None, "packed", "rice-1"}
        How the high counts are written: None takes whichever is shorter (fixed-width fields on a tie).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ValueError
        For a guarantee with unknown keys or values, another notion, or a release policy other than single or
        memoized.
    CertificateError
        If the types do not achieve the stated ε (float noise up to :data:`GUARANTEE_SLACK` is rounded up, as
        for dense files).
    MechanismFileError
        If the radius is below β*(δ, m, N) ([E] eq. 37) or the file would be refused on reading.
    """
    if not isinstance(mechanism, SymmetricMechanism):
        raise TypeError(f"mechanism must be a SymmetricMechanism, got mechanism={v._show(mechanism)}")
    target = Path(path)
    check = FileChecker(target)
    cells = mechanism.cells
    stated = _normalize_guarantee(guarantee, cells.samples)
    size = cells.size
    if stated["delta"] is not None and size >= 2:
        beta = min(radius_for_delta(stated["delta"], cells.samples, size), 2.0)
        written = design_radius(stated["delta"], cells.samples, size)
        if beta * (1 - RADIUS_RTOL) <= stated["radius"] < written:
            stated["radius"] = written
    check_radius(check, stated, size)
    check.labels("inputs", list(mechanism.inputs))
    achieved = achieved_capacity(mechanism, stated["radius"])
    if stated["epsilon"] < round_up(achieved):
        if not achieved <= round_up(stated["epsilon"] + GUARANTEE_SLACK):
            raise CertificateError(f"guarantee.epsilon must be >= the epsilon the types achieve ({achieved!r}), "
                                   f"got guarantee.epsilon={stated['epsilon']!r}")
        stated["epsilon"] = round_up(achieved)
    policy = normalize_release(release, (), record=False)
    if policy.policy not in ("single", "memoized"):
        raise v.fail("release", "be None or {'policy': 'memoized'} for a structured file (the other policies are "
                     "recomputed on the dense matrix: export it with mechdesign export --dense)", release)
    if counts_code not in _CODES:
        raise v.fail("counts_code", f"be one of {list(_CODES)}", counts_code)
    sizes = cells.sizes
    content: dict[str, Any] = {
        "format": {"name": FORMAT_NAME, "version": FORMAT_VERSION}, "kind": KIND, "placement": PLACEMENT_FAMILY,
        "inputs": list(mechanism.inputs), "counts": cells.item_counts().tolist(),
        "types": {"high": mechanism.high.tolist(), "low": mechanism.low.tolist(),
                  "weights": mechanism.weights.tolist(),
                  "high_counts": [pack_counts(row, sizes) for row in mechanism.high_counts],
                  "low_counts": [low_form(a, b, sizes) for a, b in
                                 zip(mechanism.high_counts, mechanism.low_counts, strict=True)],
                  **rice_members(mechanism.high_counts, sizes, counts_code)},
        "guarantee": stated,
        "utility": json_block("utility", utility), "baselines": json_block("baselines", baselines),
        "certificate": json_block("certificate", certificate),
        "provenance": {**provenance_versions(), **(json_block("provenance", provenance) or {})},
    }
    block = policy.to_json()
    if block is not None:
        content["release"] = block
    body = "{\n" + ",\n".join(f" {json.dumps(key)}: {_compact(value)}" for key, value in content.items()) + "\n}\n"
    check_write_size("structured mechanism file", len(body.encode("utf-8")) + 80, target)
    content["sha256"] = canonical_digest(content)
    text = body[:-3] + f',\n "sha256": {json.dumps(content["sha256"])}\n}}\n'
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return target


def _compact(value: Any) -> str:
    """A value's JSON without spaces (a top-level key a line: the long arrays stay short)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _normalize_guarantee(guarantee: dict[str, Any], samples: int) -> dict[str, Any]:
    if not isinstance(guarantee, dict):
        raise TypeError(f"guarantee must be a dict, got guarantee={v._show(guarantee)}")
    unknown = sorted(set(guarantee) - set(_GUARANTEE_KEYS))
    if unknown:
        raise v.fail("guarantee", f"only have keys {list(_GUARANTEE_KEYS)}", unknown)
    if guarantee.get("notion", "pml") != "pml":
        raise v.fail("guarantee.notion", "be 'pml' for a structured file", guarantee.get("notion"))
    if guarantee.get("prior") is not None:
        raise v.fail("guarantee.prior", "be None for a structured file (the prior is counts / samples)", "given")
    if guarantee.get("samples") not in (None, samples):
        raise v.fail("guarantee.samples", f"be the sum of the counts ({samples})", guarantee.get("samples"))
    delta = guarantee.get("delta")
    return {"notion": "pml", "epsilon": v.epsilon(guarantee.get("epsilon"), "guarantee.epsilon"),
            "delta": None if delta is None else v.delta(delta, "guarantee.delta"),
            "radius": v.radius(guarantee.get("radius"), "guarantee.radius"), "prior": None, "samples": samples}


def _load(parsed: ParsedFile, public_key: Any = None) -> SymmetricFile:
    content = parsed.content
    check = FileChecker(parsed.name)
    missing = [k for k in _TOP_KEYS if k not in content and k not in _OPTIONAL]
    if missing:
        raise check.fail("file", f"have the keys {missing}", sorted(content))
    extra = sorted(set(content) - set(_TOP_KEYS))
    if extra:
        raise check.fail("file", f"only have the keys {list(_TOP_KEYS)} (a structured file)", extra)
    if content["kind"] != KIND:
        raise check.fail("kind", f"be {KIND!r}", content["kind"])
    if content["placement"] != PLACEMENT_FAMILY:
        raise check.fail("placement", f"be {PLACEMENT_FAMILY!r} (the placement family this mechdesign implements)",
                         content["placement"])
    digest = _format_and_digest(check, content)
    inputs = check.labels("inputs", content["inputs"])
    counts = content["counts"]
    if not isinstance(counts, list) or len(counts) != len(inputs):
        raise check.fail("counts", f"be an array of {len(inputs)} integers (one per input)",
                         len(counts) if isinstance(counts, list) else counts)
    bad = next((i for i, n in enumerate(counts) if type(n) is not int or n < 1), None)
    if bad is not None:
        raise check.fail(f"counts[{bad}]", "be a positive integer (every input's count in the prior)", counts[bad])
    try:
        cells = Cells.from_counts(np.array(counts, dtype=np.int64))
    except (ValueError, OverflowError) as exc:
        raise MechanismFileError(f"{parsed.name}: {exc}") from None
    types = content["types"]
    check.object("types", types)
    if sorted(types) not in (sorted(_TYPE_KEYS), sorted(_TYPE_KEYS + _RICE_KEYS)):
        raise check.fail("types", f"have exactly the keys {list(_TYPE_KEYS)}, or those and {list(_RICE_KEYS)}",
                         sorted(types))
    count = len(types["high"]) if isinstance(types["high"], list) else -1
    if count < 1:
        raise check.fail("types.high", "be a non-empty array (one level per type)", types["high"])
    arrays = {}
    for name in _TYPE_KEYS:  # the Rice members are per cell (checked by check_parameters)
        if not isinstance(types[name], list) or len(types[name]) != count:
            raise check.fail(f"types.{name}", f"be an array of {count} entries (one per type)", types[name])
    for name in ("high", "low", "weights"):
        values = np.array(types[name], dtype=np.float64) if all(type(x) is float for x in types[name]) else None
        if values is None or not (np.isfinite(values).all() and (values >= 0).all()):
            for t, x in enumerate(types[name]):  # the first bad entry named (all floats, finite, >= 0: none is)
                check.number(f"types.{name}[{t}]", x, 0.0, math.inf)
        arrays[name] = np.array(types[name], dtype=np.float64) if values is None else values
    try:
        high_counts = read_high_counts(types, cells.sizes)
        low_counts = unpack_low(types["low_counts"], high_counts, cells.sizes)
        # C order: the row sums Σ_t θ_t μ_tk are then added type after type (NumPy reduces a C-ordered axis 0 in
        # sequence; an F-ordered one pairwise), the order the client specification fixes for every reader.
        mechanism = SymmetricMechanism.from_types(cells, arrays["high"], arrays["low"], arrays["weights"],
                                                  np.ascontiguousarray(high_counts), np.ascontiguousarray(low_counts),
                                                  inputs)
    except ValueError as exc:
        raise MechanismFileError(f"{parsed.name}: {exc}") from None
    guarantee = _read_guarantee(check, content["guarantee"], cells, len(inputs))
    for name in ("utility", "baselines", "certificate"):
        check.object(name, content.get(name), nullable=True)
    check_signature_keys(check, content.get("signature"))
    check.object("provenance", content["provenance"])
    release = read_release(check, content.get("release"), (), record=False)
    if release.policy not in ("single", "memoized"):
        raise check.fail("release.policy", "be 'single' or 'memoized' in a structured file", release.policy)
    if public_key is not None:
        from mechdesign.mechfile._keys import check_signature

        check_signature(parsed.name, content, canonical_bytes(content), public_key)
    return SymmetricFile(mechanism, guarantee, content.get("utility"), content.get("baselines"),
                         content.get("certificate"), dict(content["provenance"]), digest, content.get("signature"),
                         release, achieved_capacity(mechanism, guarantee["radius"]))


def _format_and_digest(check: FileChecker, content: dict[str, Any]) -> str:
    """``format`` (name, version 2) and ``sha256`` against the canonical content, as for dense files."""
    fmt = content["format"]
    check.object("format", fmt)
    if fmt.get("name") != FORMAT_NAME:
        raise check.fail("format.name", f"be {FORMAT_NAME!r}", fmt.get("name"))
    if isinstance(fmt.get("version"), bool) or fmt.get("version") != FORMAT_VERSION:
        raise check.fail("format.version", f"be {FORMAT_VERSION} (structured files exist from version 2 on)",
                         fmt.get("version"))
    digest = content["sha256"]
    if not isinstance(digest, str) or len(digest) != 64 or set(digest) - set("0123456789abcdef"):
        raise check.fail("sha256", "be 64 lowercase hex digits", digest)
    try:
        actual = canonical_digest(content)
    except (TypeError, ValueError) as exc:
        raise check.fail("file", "be serializable as canonical JSON", str(exc)) from None
    if actual != digest:
        raise check.fail("sha256", f"match the canonical content (tampered or edited file; content hashes to "
                         f"{actual[:12]}…)", digest[:12] + "…")
    return digest


def _read_guarantee(check: FileChecker, guarantee: Any, cells: Cells, size: int) -> dict[str, Any]:
    check.object("guarantee", guarantee)
    if sorted(guarantee) != sorted(_GUARANTEE_KEYS):
        raise check.fail("guarantee", f"have exactly the keys {list(_GUARANTEE_KEYS)}", sorted(guarantee))
    if guarantee["notion"] != "pml":
        raise check.fail("guarantee.notion", "be 'pml' in a structured file", guarantee["notion"])
    check.number("guarantee.epsilon", guarantee["epsilon"], 0.0, math.inf)
    if guarantee["delta"] is not None:
        check.number("guarantee.delta", guarantee["delta"], 0.0, 1.0, open_low=True)
    check.number("guarantee.radius", guarantee["radius"], 0.0, 2.0)
    if guarantee["prior"] is not None:
        raise check.fail("guarantee.prior", "be null in a structured file (the prior is counts / samples)",
                         "an array" if isinstance(guarantee["prior"], list) else guarantee["prior"])
    if guarantee["samples"] != cells.samples or type(guarantee["samples"]) is not int:
        raise check.fail("guarantee.samples", f"be the sum of the counts ({cells.samples})", guarantee["samples"])
    check_radius(check, guarantee, size)
    return dict(guarantee)


def read_symmetric_file(path: str | os.PathLike[str] | ParsedFile, *, verify: bool = True,
                        public_key: Any = None) -> SymmetricFile:
    """Load a structured file, checking everything (module docstring); with ``verify`` refuse an overstated ε.

    Parameters
    ----------
    path : str, os.PathLike or ParsedFile
        The file, or the file already parsed (:func:`~mechdesign.mechfile.parse_file`).
    verify : bool
        Refuse a file whose recomputed capacity exceeds the stated ε.
    public_key : optional
        The Ed25519 public key that must have signed the file.

    Returns
    -------
    SymmetricFile

    Raises
    ------
    MechanismFileError
        One line naming the file, the field and the rule.
    """
    parsed = parse_file(path)
    loaded = _load(parsed, public_key)
    stated = loaded.guarantee["epsilon"]
    if verify and not loaded.achieved <= stated:
        raise MechanismFileError(f"{parsed.name}: guarantee.epsilon must be >= the pml epsilon recomputed from the "
                                 f"types ({loaded.achieved!r}), got guarantee.epsilon={stated!r}")
    return loaded


def verify_symmetric_file(path: str | os.PathLike[str] | ParsedFile, *,
                          public_key: Any = None) -> tuple[Verification, SymmetricFile]:
    """Recompute a structured file's guarantee: the :class:`Verification` (``holds``) and the loaded file."""
    parsed = parse_file(path)
    loaded = _load(parsed, public_key)
    g = loaded.guarantee
    release = None if loaded.release.policy == "single" else {"policy": loaded.release.policy}
    result = Verification(parsed.name, "pml", float(g["epsilon"]), loaded.achieved,
                          None if g["delta"] is None else float(g["delta"]), float(g["radius"]),
                          bool(loaded.achieved <= g["epsilon"]), loaded.sha256, release)
    return result, loaded

"""The format of mechanism files: constants, canonical bytes, the schema's rules as one-line checks.

Shared by the single-column files (:mod:`mechdesign.deploy.file.column`) and the record files
(:mod:`mechdesign.deploy.file.record`): the format name and versions, the JSON Schema shipped in the package, the
canonical bytes that ``sha256`` and the signature cover (:mod:`mechdesign.deploy.file.canonical`), the bounded
parse of a file, the hash and format checks, the radius bound to δ and m ([E] eq. 37), and
:class:`Verification`, the stated guarantee against the recomputed one. The layout of a file and what loading
checks are described in :mod:`mechdesign.deploy.file.column`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from importlib import metadata, resources
from typing import Any, BinaryIO

import numpy as np

from mechdesign import _validation as v
from mechdesign._files import read_bounded, to_jsonable
from mechdesign.core.estimation import radius_for_delta
from mechdesign.deploy.file.canonical import CANONICAL_FORMS
from mechdesign.errors import MechanismFileError

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "GUARANTEE_SLACK", "RADIUS_RTOL", "READ_VERSIONS", "FileChecker",
           "ParsedFile", "Verification", "canonical_bytes", "check_format_and_digest", "check_radius", "json_block",
           "parse_file", "pretty_json", "provenance_versions", "schema"]

FORMAT_NAME = "mechdesign.core.mechanism"
FORMAT_VERSION = 2     # written; its hash and signature cover RFC 8785 canonical JSON
READ_VERSIONS = (1, 2)  # read: version 1 hashes Python's own serialisation (mechdesign.deploy.file.canonical)
GUARANTEE_SLACK = 1e-12  # float noise a writer rounds ε up over (never a slack of the check, which is exact)
RADIUS_RTOL = 1e-12      # relative float noise a writer rounds the radius up over (to β*(δ, m, N))
_JSON_INT_MAX = 2**53 - 1  # RFC 8785 §3.2.2.3: integers beyond this have no canonical form (IEEE doubles)
_UNHASHED = ("sha256", "signature")  # the signature signs the same canonical bytes the hash covers


@dataclass(frozen=True)
class Verification:
    """The stated guarantee of a file against the one recomputed from its matrix.

    Parameters
    ----------
    path
        The file, as given to :func:`verify_mechanism_file`.
    notion
        "pml" or "ldp".
    epsilon
        The ε stated in the file.
    achieved
        The ε recomputed from the matrix (exact, solver-free): the leakage capacity C(W, B_β(P̂)) of
        [E] eq. 23 for "pml", ε_LDP(W) = max_y log(max_x W[x,y] / min_x W[x,y]) for "ldp".
    delta
        The stated δ, or ``None``.
    radius
        The stated ℓ1 radius β, or ``None``.
    holds
        Whether ``achieved <= epsilon``, exactly (the two floats as written and printed).
    sha256
        The file's (checked) SHA-256 of the canonical content.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    Def. 5, eq. 22–23.
    """

    path: str
    notion: str
    epsilon: float          # stated in the file
    achieved: float         # recomputed from the matrix (exact, solver-free)
    delta: float | None
    radius: float | None
    holds: bool             # achieved <= epsilon, exactly as printed
    sha256: str


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of format versions 1 and 2, as shipped in the package (and used by clients)."""
    text = resources.files("mechdesign.deploy.file").joinpath("mechanism.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def canonical_bytes(content: dict[str, Any]) -> bytes:
    """The canonical bytes of ``content`` without ``sha256`` and ``signature`` (what the hash and signature cover).

    RFC 8785 (JCS) for format version 2, Python's sorted ``json.dumps`` for version 1, chosen by
    ``content["format"]["version"]``; a version this mechdesign does not read is serialized as the current
    version (the loader refuses the version before it looks at the hash).

    Raises
    ------
    ValueError
        If the content has no canonical form (a non-finite number; in version 2 also an integer beyond
        ±(2^53 − 1) or a lone surrogate).
    TypeError
        If the content is not JSON.
    """
    body = {k: val for k, val in content.items() if k not in _UNHASHED}
    fmt = content.get("format")
    version = fmt.get("version") if isinstance(fmt, dict) else None
    if isinstance(version, bool) or version not in CANONICAL_FORMS:
        version = FORMAT_VERSION
    return CANONICAL_FORMS[version](body)


def provenance_versions() -> dict[str, Any]:
    """The versions a written file records in ``provenance``: mechdesign, NumPy and CVXPY (``None`` if absent)."""
    from mechdesign import __version__

    try:
        cvxpy_version: str | None = metadata.version("cvxpy")  # no import: cvxpy is slow to load
    except metadata.PackageNotFoundError:
        cvxpy_version = None
    return {"mechdesign": __version__, "numpy": np.__version__, "cvxpy": cvxpy_version}


def json_block(name: str, value: dict[str, Any] | None) -> dict[str, Any] | None:
    """An optional block of a file as JSON values (NumPy scalars and arrays converted), or ``None``."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict or None, got {name}={v._show(value)}")
    return to_jsonable(value)


def pretty_json(content: dict[str, Any]) -> str:
    """One top-level key per line and one matrix row per line (the hash does not depend on layout)."""
    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    lines = []
    for key, value in content.items():
        if key == "matrix":
            text = "[\n" + ",\n".join(f"  {dump(row)}" for row in value) + "\n ]"
        else:
            text = dump(value)
        lines.append(f" {dump(key)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


class FileChecker:
    """Hand validator of the schema's rules, with one-line errors naming the field and the rule."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path

    def fail(self, field: str, rule: str, value: Any) -> MechanismFileError:
        """The one-line error ``<path>: <field> must <rule>, got <field>=<value>``."""
        return MechanismFileError(f"{self.path}: {field} must {rule}, got {field}={v._show(value)}")

    def object(self, field: str, value: Any, nullable: bool = False) -> None:
        """``value`` must be a JSON object (or null when ``nullable``)."""
        if not (isinstance(value, dict) or (nullable and value is None)):
            raise self.fail(field, "be a JSON object" + (" or null" if nullable else ""), value)

    def number(self, field: str, value: Any, low: float, high: float, *, open_low: bool = False) -> float:
        """``value`` must be a finite number in [low, high] (or (low, high] with ``open_low``); returned as float."""
        try:  # an integer such as 10**400 does not fit a float: OverflowError, refused like infinity
            finite = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
        except OverflowError:
            finite = False
        if not finite:
            raise self.fail(field, "be a finite number", value)
        if value < low or value > high or (open_low and value == low):
            raise self.fail(field, f"lie in {'(' if open_low else '['}{low:g}, {high:g}]", value)
        return float(value)

    def labels(self, field: str, value: Any) -> list[str]:
        """``value`` must be a non-empty array of distinct strings."""
        if not isinstance(value, list) or not value or not all(isinstance(x, str) for x in value):
            raise self.fail(field, "be a non-empty array of strings", value)
        if len(set(value)) != len(value):
            raise self.fail(field, "hold distinct labels", value)
        return value

    def numbers(self, field: str, value: Any, size: int) -> np.ndarray:
        """``value`` must be an array of ``size`` numbers in [0, 1]; returned as float64."""
        if not isinstance(value, list) or len(value) != size:
            raise self.fail(field, f"be an array of {size} numbers", value)
        for j, x in enumerate(value):
            self.number(f"{field}[{j}]", x, 0.0, 1.0)
        return np.array(value, dtype=np.float64)

    def stochastic(self, field: str, row: np.ndarray) -> None:
        """``row`` must sum to one within the package's stochasticity tolerance (exact ``fsum``)."""
        total = math.fsum(row)
        if abs(total - 1.0) > v.STOCHASTIC_ATOL:
            raise self.fail(field, f"sum to 1 within {v.STOCHASTIC_ATOL:g} (sum is {total!r})", row)


@dataclass(frozen=True, eq=False)
class ParsedFile:
    """A mechanism file read once and parsed: its one JSON object and the name its errors give.

    Every reader takes one (:func:`~mechdesign.deploy.file.column.read_mechanism_file`,
    :func:`~mechdesign.deploy.file.record.read_record_file`, :func:`~mechdesign.deploy.file.record.is_record_file`),
    so a caller that must first know which kind of file it holds reads it once: a pipe, a FIFO or stdin cannot be
    read a second time (the second open of a FIFO waits forever for a writer; ``/dev/stdin`` reads empty).

    Parameters
    ----------
    name : str
        The path as given, or ``"<stdin>"``: the prefix of every error about the file.
    content : dict
        The JSON object. Readers copy what they keep and never change it.
    """

    name: str
    content: dict[str, Any]

    @property
    def is_record(self) -> bool:
        """Whether this is a record file (``attributes`` or ``factors``: :mod:`mechdesign.deploy.file.record`)."""
        return "attributes" in self.content or "factors" in self.content


def parse_file(source: str | os.PathLike[str] | BinaryIO | ParsedFile, name: str | None = None) -> ParsedFile:
    """Read a mechanism file once, with the size cap, and parse its one JSON object.

    Parameters
    ----------
    source : str, os.PathLike, binary stream or ParsedFile
        A path (a regular file, a FIFO or a device, read once to its end), a binary stream already open
        (``sys.stdin.buffer``), or an already parsed file, returned as it is.
    name : str, optional
        How errors name the file (default: the path, or the stream's name).

    Returns
    -------
    ParsedFile
        The JSON object and the file's name.

    Raises
    ------
    MechanismFileError
        One line naming the file and the rule, for a file over the size cap (``MECHDESIGN_MAX_FILE_MB``), not
        UTF-8, not valid JSON, nested too deeply, holding a non-finite constant, or not one JSON object.
    OSError
        If the path cannot be opened or read.
    """
    if isinstance(source, ParsedFile):
        return source
    if name is not None:
        shown = name
    else:  # a stream's name (a Path's .name is its last part only)
        shown = str(getattr(source, "name", "-")) if hasattr(source, "read") else str(source)

    def reject_constant(constant: str) -> float:
        raise ValueError(f"non-finite number {constant}")

    try:
        data = read_bounded(source, "mechanism file", json_object=True)
    except ValueError as exc:
        raise MechanismFileError(f"{shown}: {exc}") from None
    try:
        text = data.decode("utf-8")
        content = json.loads(text, parse_constant=reject_constant)
    except UnicodeDecodeError as exc:
        raise MechanismFileError(f"{shown}: must be UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise MechanismFileError(f"{shown}: must be valid JSON ({exc.msg} at line {exc.lineno} "
                                 f"column {exc.colno})") from None
    except RecursionError:
        raise MechanismFileError(f"{shown}: must be valid JSON of reasonable depth (nested too deeply)") from None
    except ValueError as exc:
        raise MechanismFileError(f"{shown}: must be valid JSON ({str(exc)[:80]})") from None
    if not isinstance(content, dict):
        raise MechanismFileError(f"{shown}: must hold one JSON object, got a {type(content).__name__}")
    return ParsedFile(shown, content)


def check_format_and_digest(check: FileChecker, content: dict[str, Any], versions: tuple[int, ...]) -> str:
    """Check ``format`` (name, one of ``versions``) and that ``sha256`` is the hash of the canonical content."""
    fmt = content["format"]
    check.object("format", fmt)
    if fmt.get("name") != FORMAT_NAME:
        raise check.fail("format.name", f"be {FORMAT_NAME!r}", fmt.get("name"))
    if isinstance(fmt.get("version"), bool) or fmt.get("version") not in versions:
        raise check.fail("format.version", f"be {' or '.join(map(str, versions))} (the versions this mechdesign "
                         "reads)", fmt.get("version"))
    digest = content["sha256"]
    if not isinstance(digest, str) or len(digest) != 64 or set(digest) - set("0123456789abcdef"):
        raise check.fail("sha256", "be 64 lowercase hex digits", digest)
    try:
        actual = hashlib.sha256(canonical_bytes(content)).hexdigest()
    except (TypeError, ValueError) as exc:
        raise check.fail("file", "be serializable as canonical JSON", str(exc)) from None
    if actual != digest:
        raise check.fail("sha256", f"match the canonical content (tampered or edited file; content hashes to "
                         f"{actual[:12]}…)", digest[:12] + "…")
    return digest


def check_radius(check: FileChecker, guarantee: dict[str, Any], size: int) -> None:
    """With δ stated, the radius must be at least β*(δ, m, N) of [E] eq. 37 (capped at 2, the whole simplex)."""
    delta, samples, radius = guarantee["delta"], guarantee["samples"], guarantee["radius"]
    if guarantee["notion"] != "pml" or delta is None:
        return
    if samples is None:
        raise check.fail("guarantee.samples", "be given when guarantee.delta is (the radius is checked against "
                         "β*(δ, m, N), [E] eq. 37)", samples)
    required = min(radius_for_delta(delta, samples, size), 2.0) if size >= 2 else 0.0
    if radius < required:
        raise check.fail("guarantee.radius", f"be >= β*(δ, m, N) of [E] eq. 37 (β*(δ={delta!r}, m={samples}, "
                         f"N={size}) = {required!r}), or the stated δ does not hold", radius)

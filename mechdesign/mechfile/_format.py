"""The format of mechanism files: constants, canonical bytes, the schema's rules as one-line checks.

Shared by the single-column files (:mod:`mechdesign.mechfile._column`) and the record files
(:mod:`mechdesign.mechfile._record`): the format name and versions, the JSON Schema shipped in the package, the
canonical bytes that ``sha256`` and the signature cover (:mod:`mechdesign.mechfile._canonical`), the bounded
parse of a file, the hash and format checks, the radius bound to δ and m ([E] eq. 37), and
:class:`Verification`, the stated guarantee against the recomputed one. The layout of a file and what loading
checks are described in :mod:`mechdesign.mechfile._column`.

**One verdict in every language.** A recomputed ε or β*(δ, m, N) is a float evaluation, and two correct
implementations differ in its last bits (libm's ``log``, the order of a sum): mechdesign and the TypeScript client
``clients/js`` differ by one ulp on about 5 % of random files (``benchmarks/bench_client_agreement.py``). No
verifier grants an allowance above what it recomputes; each compares an **upper bound**, the value raised by
:func:`~mechdesign._numerics.round_up` (``v + (|v| + 1)·12·2^-52``, the margin of every guarantee mechdesign
reports: some 24 units of roundoff, far above those ulps and above libm's error), against the statement: ε holds
when ``round_up(achieved) <= epsilon``, a radius is enough when ``radius >= min(round_up(β*), 2)``. A writer
states one more ``round_up`` of its own bound, so every correct client, whose bound is within a few ulps of
mechdesign's, verifies what mechdesign writes. Two verifiers can then disagree only on a file whose statement lies
within those few ulps of the bound, which no mechdesign writer produces.

**The text before the values** (:func:`parse_file`): at most ``MECHDESIGN_MAX_FILE_MB`` (64 MiB) read, arrays and
objects nested at most :data:`MAX_DEPTH` deep (checked on the text, before parsing: a parser's own limit depends
on its stack), and no key repeated within an object (parsers disagree on which copy wins, so the hash could cover
one value and another parser use the other).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from mechdesign import _validation as v
from mechdesign._errors import MechanismFileError
from mechdesign._files import check_write_size, max_file_bytes, read_bounded, to_jsonable
from mechdesign.core._sample_radius import required_radius
from mechdesign.mechfile._canonical import CANONICAL_FORMS, canonical_json, matrix_texts

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "GUARANTEE_SLACK", "MAX_DEPTH", "RADIUS_RTOL", "READ_VERSIONS",
           "SIGNATURE_KEYS", "FileChecker", "ParsedFile", "Verification", "canonical_bytes", "check_format_and_digest",
           "check_radius", "check_signature_keys", "file_text", "json_block", "nesting_depth", "parse_file",
           "pretty_json", "provenance_versions", "refuse_oversized", "schema", "write_seconds"]

FORMAT_NAME = "mechdesign.core.mechanism"
FORMAT_VERSION = 2     # written; its hash and signature cover RFC 8785 canonical JSON
READ_VERSIONS = (1, 2)  # read: version 1 hashes Python's own serialisation (mechdesign.mechfile._canonical)
GUARANTEE_SLACK = 1e-12  # float noise a writer rounds ε up over (never a slack of the check, which is exact)
RADIUS_RTOL = 1e-12      # relative float noise a writer rounds the radius up over (to β*(δ, m, N))
MAX_DEPTH = 256          # arrays and objects nested deeper are refused (a file needs 3; Python's json fails near 1000)
SIGNATURE_KEYS = ("algorithm", "public_key", "value")
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
        The ε recomputed from the matrix (solver-free), raised to an upper bound by
        :func:`~mechdesign._numerics.round_up`: the leakage capacity C(W, B_β(P̂)) of [E] eq. 23 for "pml",
        ε_LDP(W) = max_y log(max_x W[x,y] / min_x W[x,y]) for "ldp".
    delta
        The stated δ, or ``None``.
    radius
        The stated ℓ1 radius β, or ``None``.
    holds
        Whether ``achieved <= epsilon``, exactly (the two floats as written and printed), and the release
        policy's statement holds too.
    sha256
        The file's (checked) SHA-256 of the canonical content.
    release
        The release policy (:mod:`mechdesign.mechfile._policy`) with what it states recomputed: ``policy``, and
        for "repeated" and "two-layer" ``epsilon`` (stated), ``achieved``, ``exact`` and ``holds``; ``None`` for a
        file of one release per run.

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    Def. 5, eq. 22–23.
    """

    path: str
    notion: str
    epsilon: float          # stated in the file
    achieved: float         # recomputed from the matrix (solver-free), rounded up: an upper bound
    delta: float | None
    radius: float | None
    holds: bool             # achieved <= epsilon, exactly as printed (and the release statement holds)
    sha256: str
    release: dict[str, Any] | None = None


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of format versions 1 and 2, as shipped in the package (and used by clients)."""
    text = resources.files("mechdesign.mechfile").joinpath("mechanism.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def canonical_bytes(content: dict[str, Any], known: dict[int, bytes] | None = None) -> bytes:
    """The canonical bytes of ``content`` without ``sha256`` and ``signature`` (what the hash and signature cover).

    RFC 8785 (JCS) for format version 2, Python's sorted ``json.dumps`` for version 1, chosen by
    ``content["format"]["version"]``; a version this mechdesign does not read is serialized as the current
    version (the loader refuses the version before it looks at the hash). ``known`` passes canonical bytes of
    matrices already serialized (:func:`~mechdesign.mechfile.matrix_texts`) to version 2.

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
    if version == 2:
        return canonical_json(body, known)
    return CANONICAL_FORMS[version](body)


def provenance_versions() -> dict[str, Any]:
    """The versions a written file records in ``provenance``: mechdesign, NumPy and CVXPY (``None`` if absent)."""
    from importlib import metadata  # here: 20 ms of imports that only a writer needs

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


def file_text(content: dict[str, Any], path: Path, name: str = "mechanism file") -> str:
    """The text of a mechanism or record file: ``content`` with its ``sha256``, refused if its readers would refuse it.

    The size is checked (:func:`mechdesign._files.check_write_size`) before the canonical bytes are serialized (the
    slow part: 1.6 µs a number), so an oversized file costs no more than its layout. ``content`` must not hold
    ``sha256`` yet; it is added last, as the file's last key.
    """
    matrix = content.get("matrix")
    rows, known = None, None
    if isinstance(matrix, list) and matrix and all(type(row) is list for row in matrix):
        refuse_oversized(matrix, path, name)
        rows, canonical = matrix_texts(matrix)  # the numbers written once for both forms
        known = {id(matrix): canonical}
    body = pretty_json(content, rows)
    digest_line = ',\n "sha256": "' + "0" * 64 + '"'
    check_write_size(name, len(body.encode("utf-8")) + len(digest_line), path)
    content["sha256"] = hashlib.sha256(canonical_bytes(content, known)).hexdigest()
    return body[:-3] + f',\n "sha256": {json.dumps(content["sha256"])}\n}}\n'


_ESTIMATE_SLACK = 1.25  # a size estimated from sampled rows refuses only beyond this factor over the cap

def refuse_oversized(matrix: Any, path: Path, name: str = "mechanism file") -> None:
    """Refuse a matrix whose file would be far over the read cap, judged from a few of its rows.

    Writing every number of a 2,000 × 2,000 matrix (92 MB, 3 s under load) only to refuse the file wastes a deadline's
    time: up to 32 rows sampled evenly give the size within a few percent. Only a clear excess (beyond
    :data:`_ESTIMATE_SLACK` times the cap) is refused here; the exact size decides in :func:`file_text`.

    Parameters
    ----------
    matrix : array_like or list of lists
        The rows to be written.
    path : Path
        Where the file would be written.
    name : str, optional
        What is written.

    Raises
    ------
    ValueError
        If the estimated size is clearly over the cap.
    """
    count = len(matrix)
    if count == 0:
        return
    step = max(1, count // 32)
    sample = [list(map(float, matrix[k])) for k in range(0, count, step)]
    about = sum(len(json.dumps(row)) + 4 for row in sample) * count / len(sample)
    if about > _ESTIMATE_SLACK * max_file_bytes():
        check_write_size(name, int(about), path, about=True)


# Seconds per matrix entry to write a file (each number's repr 0.7 µs, its ECMAScript layout where it differs, the
# guarantee's capacity and the conversion to Python floats: 1.1 s at 1,000 × 1,000 on one core), and the margin on
# that estimate.
_WRITE_PER_ENTRY, _WRITE_MARGIN = 1.2e-6, 1.5


def write_seconds(entries: int) -> float:
    """Estimated wall seconds to write a mechanism file of ``entries`` matrix entries (a deadline's reserve).

    Parameters
    ----------
    entries : int
        Inputs × outputs (summed over the factors of a product).

    Returns
    -------
    float
        Seconds, scaled by :func:`mechdesign._deadline.contention`.
    """
    from mechdesign._deadline import contention

    return _WRITE_MARGIN * _WRITE_PER_ENTRY * float(entries) * contention() + 0.05


def pretty_json(content: dict[str, Any], matrix_rows: list[str] | None = None) -> str:
    """One top-level key per line and one matrix row per line (the hash does not depend on layout).

    ``matrix_rows``: the rows of ``content["matrix"]`` already written (:func:`matrix_texts`).
    """
    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    lines = []
    for key, value in content.items():
        if key == "matrix":
            rows = matrix_rows if matrix_rows is not None else [dump(row) for row in value]
            text = "[\n" + ",\n".join(f"  {row}" for row in rows) + "\n ]"
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
        # "café" typed as one code point or as e + U+0301 looks the same everywhere: two such labels make one
        # visible value two inputs (or outputs), and which one a record is read as depends on the keyboard.
        seen: dict[str, str] = {}
        for label in value:
            twin = seen.setdefault(unicodedata.normalize("NFC", label), label)
            if twin != label:
                raise self.fail(field, f"hold labels distinct under Unicode NFC normalisation ({twin!r} and "
                                f"{label!r} are the same text)", value)
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


# A JSON string, up to its closing quote or the end of the text (an escape skips one byte): exactly what a
# left-to-right scan of the text is inside (clients/js scans with a loop). Unrolled: the engine never backtracks.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


def nesting_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text: brackets counted outside strings.

    Checked on the text, before any parser sees it: Python's ``json`` recurses once per level (a RecursionError
    near 1000, depending on the caller's stack), so its own limit is no rule another language can follow.
    """
    brackets = np.frombuffer(_NOT_BRACKET.sub(b"", _STRING.sub(b"", data)), dtype=np.uint8)
    opens = (brackets == ord("{")) | (brackets == ord("["))
    deepest = depth = 0
    step = 1 << 20  # a text of brackets only: cumulative sums chunk by chunk, O(1 MiB) of memory
    for start in range(0, opens.size, step):
        levels = depth + np.cumsum(np.where(opens[start:start + step], 1, -1))
        deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
    return deepest


@dataclass(frozen=True, eq=False)
class ParsedFile:
    """A mechanism file read once and parsed: its one JSON object and the name its errors give.

    Every reader takes one (:func:`~mechdesign.mechfile._column.read_mechanism_file`,
    :func:`~mechdesign.mechfile._record.read_record_file`, :func:`~mechdesign.mechfile.is_record_file`),
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
        """Whether this is a record file (``attributes`` or ``factors``: :mod:`mechdesign.mechfile._record`)."""
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

    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items) and not repeated:
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    repeated.append(key)
                    break
                seen.add(key)
        return out

    try:
        data = read_bounded(source, "mechanism file", json_object=True)
    except ValueError as exc:
        raise MechanismFileError(f"{shown}: {exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MechanismFileError(f"{shown}: must be UTF-8 text ({exc.reason} at byte {exc.start})") from None
    depth = nesting_depth(data)
    if depth > MAX_DEPTH:
        raise MechanismFileError(f"{shown}: must be JSON nested at most {MAX_DEPTH} deep (arrays and objects "
                                 f"nest {depth} deep)")
    try:
        content = json.loads(text, parse_constant=reject_constant, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise MechanismFileError(f"{shown}: must be valid JSON ({exc.msg} at line {exc.lineno} "
                                 f"column {exc.colno})") from None
    except ValueError as exc:
        raise MechanismFileError(f"{shown}: must be valid JSON ({str(exc)[:80]})") from None
    if repeated:  # after a successful parse, as clients find it (a scan of the valid text)
        raise MechanismFileError(f"{shown}: must be JSON whose objects have distinct keys ({repeated[0]!r} is "
                                 "repeated in an object; parsers differ on which copy counts)")
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
    required = required_radius(delta, samples, size)
    if radius < required:
        raise check.fail("guarantee.radius", f"be >= β*(δ, m, N) of [E] eq. 37 (β*(δ={delta!r}, m={samples}, "
                         f"N={size}) = {required!r}, rounded up), or the stated δ does not hold", radius)


def check_signature_keys(check: FileChecker, signature: Any) -> None:
    """A signature block, when present, has exactly the schema's keys (whether or not a key is given to check it).

    The block is outside the hash: a field added to it would travel with a signed file unnoticed.
    """
    if isinstance(signature, dict) and sorted(signature) != sorted(SIGNATURE_KEYS):
        raise check.fail("signature", f"have exactly the keys {list(SIGNATURE_KEYS)}", sorted(signature))

"""Record files: mechanism files for whole records, with the **record-level** guarantee.

A record file is a mechanism file (format version 2, same canonical JSON, hash and signature) that adds

* ``attributes``: the d attribute names, and ``alphabets``: the labels of each attribute (X_1, …, X_d);
* either ``factors`` — a **product** design W = W_1 ⊗ … ⊗ W_d, one ``{"inputs", "outputs", "matrix"}`` per
  attribute (inputs = its alphabet) and no joint matrix (Adult's five attributes would need 6,720 × 10⁶
  entries) — or the usual ``inputs``/``outputs``/``matrix`` of a **joint** design, one mechanism over the
  product alphabet with inputs = :func:`~mechdesign.core.joint_labels` (row-major order) — or, for an
  **attribute-sampled** design (:mod:`mechdesign.records._sampled`), the ``factors`` together with ``sampling``:
  the d probabilities π_i (positive, summing to one) with which a record reports attribute i alone, through W_i;
* a guarantee of the record: ``{"notion": "pml", "level": "record", "epsilon", "delta", "radius",
  "prior": {"letters": [...], "counts": [...]}, "samples"}``, the prior being the sparse joint estimate
  P̂(x) = n_x/m (observed letter indices in mixed radix, increasing, with their counts summing to m).

Loading recomputes the record-level capacity C(W, B_β(P̂)) over the joint ball ([E] Def. 5, eq. 22–23 on
X = ∏ X_i), solver-free: :func:`~mechdesign.core.product_capacity` for a product, the dense
:func:`~mechdesign.core.capacity` on the joint ball for a joint design, and
:func:`~mechdesign.core.sampled_epsilon` = max_i C(W_i, B_β(P̂_i)) for a sampled design (π cancels
from its information density, so π does not enter the guarantee; it is hashed and signed all the same, since it
decides what is released and how well it decodes). A sampled file's output labels must not be empty: an empty
field (a null in Parquet) marks the attributes a record does not report. A file that overstates it is
refused, exactly as a single-column file (the check is exact; writing rounds toward privacy by at most
:data:`~mechdesign.mechfile.GUARANTEE_SLACK`). With δ stated the radius must be ≥ β*(δ, m, N) of [E]
eq. 37 with N = ∏ N_i, rounded up (:func:`~mechdesign.core.required_radius`). Factors carry no budget
of their own: per-attribute ε do not add up to a record guarantee under PML, so nothing here writes one. Files
are written by :func:`~mechdesign.mechfile.write_record_file`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign._errors import MechanismFileError
from mechdesign.core._mechanism import Mechanism
from mechdesign.core._record_codes import encode_labels, joint_labels
from mechdesign.core._record_prior import MAX_JOINT_SIZE, JointPrior
from mechdesign.mechfile._format import (
    FORMAT_VERSION,
    FileChecker,
    ParsedFile,
    Verification,
    canonical_bytes,
    check_format_and_digest,
    check_radius,
    check_signature_keys,
    parse_file,
)
from mechdesign.mechfile._policy import ReleasePolicy, read_release, refuse_overstated

__all__ = ["RECORD_KINDS", "RecordFile", "is_record_file", "read_record_file", "record_epsilon",
           "record_verification", "verify_record_file"]

RECORD_KINDS = ("product", "joint", "sampled")
_OPTIONAL = ("utility", "baselines", "certificate", "signature", "release")
_KEYS = {"product": ("format", "attributes", "alphabets", "factors", "guarantee", "provenance", "sha256"),
         "joint": ("format", "attributes", "alphabets", "inputs", "outputs", "matrix", "guarantee", "provenance",
                   "sha256"),
         "sampled": ("format", "attributes", "alphabets", "factors", "sampling", "guarantee", "provenance", "sha256")}
_GUARANTEE_KEYS = ("notion", "level", "epsilon", "delta", "radius", "prior", "samples")
_FACTOR_KEYS = ("inputs", "outputs", "matrix")


@dataclass(frozen=True, eq=False)
class RecordFile:
    """A loaded record file (:func:`read_record_file`): a product, joint or sampled design with its record guarantee.

    Parameters
    ----------
    kind : {"product", "joint", "sampled"}
        Product of per-attribute factors, one mechanism over the product alphabet, or per-attribute factors of
        which each record reports one, drawn with probabilities ``sampling``.
    prior : JointPrior
        The sparse joint estimate P̂ of the guarantee (attributes, alphabets, observed letters, counts).
    factors : tuple of Mechanism
        W_1, …, W_d for a product or sampled design (inputs = the alphabets); empty for a joint design.
    mechanism : Mechanism or None
        The joint mechanism (inputs = joint labels), ``None`` for a product.
    guarantee : dict
        As in the file: notion "pml", level "record", epsilon, delta, radius, prior, samples.
    utility, baselines, certificate : dict or None
        The optional blocks.
    provenance : dict
        Versions recorded when the file was written.
    sha256 : str
        The checked hash of the canonical content.
    signature : dict or None
        The Ed25519 signature block (checked only against a given public key).
    recomputed_epsilon : float or None
        The record-level capacity C(W, B_β(P̂)) recomputed from the file's design on loading
        (:func:`record_epsilon`, rounded toward privacy), whether or not it was compared with the stated ε;
        the privatizer bounds its sampled design's ε from it instead of computing a second capacity.
    sampling : numpy.ndarray or None
        π of a sampled design (read-only, d positive entries summing to one within 1e-9); ``None`` otherwise.
    release : ReleasePolicy
        The release policy (:mod:`mechdesign.mechfile._policy`): one release per run by default; "repeated"
        (the record-level leakage of T releases is stated) or "memoized".

    References
    ----------
    [E] Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical Distributions",
    Def. 5, eq. 22–23 (capacity), eq. 31 (ball), eq. 37 (radius), all on the joint alphabet.
    """

    kind: str
    prior: JointPrior
    factors: tuple[Mechanism, ...]
    mechanism: Mechanism | None
    guarantee: dict[str, Any]
    utility: dict[str, Any] | None
    baselines: dict[str, Any] | None
    certificate: dict[str, Any] | None
    provenance: dict[str, Any]
    sha256: str
    signature: dict[str, Any] | None = None
    recomputed_epsilon: float | None = None
    sampling: np.ndarray | None = None
    release: ReleasePolicy = field(default_factory=ReleasePolicy)

    @property
    def attributes(self) -> tuple[str, ...]:
        """The attribute names, in order."""
        return self.prior.attributes

    @property
    def alphabets(self) -> tuple[tuple[str, ...], ...]:
        """The labels of each attribute."""
        return self.prior.alphabets

    def encode(self, columns: Sequence[Any]) -> np.ndarray:
        """Attribute codes (d × m, int64) of records given column by column; unknown or missing values refused.

        Parameters
        ----------
        columns : sequence of array_like
            d columns of labels, in the order of :attr:`attributes` (the order matters: column i is read against
            alphabet i).

        Returns
        -------
        numpy.ndarray
            ``codes[i, r]`` = the index of record r's value in alphabet i.

        Raises
        ------
        ValueError
            If the number of columns is not d, their lengths differ, or a value is missing or unknown.
        """
        if isinstance(columns, str) or len(columns) != len(self.attributes):
            raise v.fail("columns", f"give one column per attribute of the record file {list(self.attributes)}",
                         len(columns) if not isinstance(columns, str) else columns)
        codes = [encode_labels(c, self.alphabets[i], f"column {self.attributes[i]!r}").astype(np.int64)
                 for i, c in enumerate(columns)]
        if len({c.size for c in codes}) > 1:
            raise v.fail("columns", "have equal lengths (one value per record)", [c.size for c in codes])
        return np.stack(codes)

    def letters(self, codes: np.ndarray) -> np.ndarray:
        """Joint letter indices (mixed radix, first attribute most significant) of d × m codes."""
        return np.ravel_multi_index(tuple(codes), self.prior.sizes)


def record_epsilon(prior: JointPrior, radius: float, factors: tuple[Mechanism, ...] = (),
                   mechanism: Mechanism | None = None, *, sampled: bool = False) -> float:
    """The record-level capacity C(W, B_β(P̂)) over the joint ball, solver-free and rounded toward privacy.

    Parameters
    ----------
    prior : JointPrior
        The joint estimate P̂.
    radius : float
        β ∈ [0, 2].
    factors : tuple of Mechanism
        W_1, …, W_d of a product design (empty for a joint design).
    mechanism : Mechanism, optional
        The joint mechanism (rows in the row-major order of the product alphabet).
    sampled : bool
        ``factors`` are those of an attribute-sampled design (whatever its π).

    Returns
    -------
    float
        ε in nats ([E] Def. 5, eq. 22–23): :func:`~mechdesign.core.product_capacity` for a
        product, :func:`~mechdesign.core.capacity` on the dense joint ball for a joint design,
        :func:`~mechdesign.core.sampled_epsilon` (max_i C(W_i, B_β(P̂_i))) for a sampled design.
    """
    if sampled:
        from mechdesign.core._record_capacity import sampled_epsilon

        return float(sampled_epsilon(prior, radius, factors))
    ball = prior.ball(radius=radius)
    if mechanism is None:
        from mechdesign.core._record_capacity import product_capacity

        if all(np.all(f.matrix == f.matrix[0]) for f in factors):  # Y independent of X: exactly 0
            return 0.0
        return float(product_capacity(list(factors), ball).epsilon)
    from mechdesign.core._leakage import measure_capacity

    if np.all(mechanism.matrix == mechanism.matrix[0]):
        return 0.0
    return float(measure_capacity(mechanism, ball.dense()))


def record_release_achieved(prior: JointPrior, radius: float, policy: ReleasePolicy,
                            factors: tuple[Mechanism, ...] = (), mechanism: Mechanism | None = None, *,
                            sampled: bool = False) -> tuple[float, bool] | None:
    """A record file's release statement recomputed: (ε_T, exact) for "repeated", else ``None``.

    The record-level leakage of T fresh releases of the same record over the joint ball
    (:func:`~mechdesign.core.record_release_leakage`).
    """
    if policy.policy != "repeated":
        return None
    from mechdesign.core._record_repeated import record_release_leakage

    assert policy.releases is not None
    account = record_release_leakage(prior, radius, policy.releases, factors=factors, mechanism=mechanism,
                                     sampled=sampled)
    return account.epsilon, account.exact


def is_record_file(path: str | os.PathLike[str] | ParsedFile) -> bool:
    """Whether ``path`` holds a record file (a JSON object with ``attributes``); unreadable files say no.

    Parameters
    ----------
    path : str, os.PathLike or ParsedFile
        A mechanism file, or one already read by :func:`~mechdesign.mechfile.parse_file` (read it so
        when it is read afterwards: a pipe, a FIFO or stdin can be read only once).

    Returns
    -------
    bool
        True for a record file; False otherwise (the single-column reader then reports any problem).
    """
    try:
        return parse_file(path).is_record
    except (MechanismFileError, OSError):
        return False


def _matrix(check: FileChecker, field: str, block: dict[str, Any], inputs: tuple[str, ...]) -> Mechanism:
    """A mechanism from ``inputs``/``outputs``/``matrix`` entries, checked like a single-column file."""
    given = tuple(check.labels(f"{field}inputs", block["inputs"]))
    if given != inputs:
        raise check.fail(f"{field}inputs", "equal the attribute's alphabet (joint labels for a joint design, "
                         "row-major)", list(given)[:6])
    outputs = check.labels(f"{field}outputs", block["outputs"])
    rows = block["matrix"]
    if not isinstance(rows, list) or len(rows) != len(inputs):
        raise check.fail(f"{field}matrix", f"be an array of {len(inputs)} rows (one per input)", rows)
    matrix = np.array([check.numbers(f"{field}matrix[{i}]", row, len(outputs)) for i, row in enumerate(rows)])
    for i, row in enumerate(matrix):
        check.stochastic(f"{field}matrix[{i}]", row)
    return Mechanism.from_matrix(matrix, inputs, outputs)


def _prior(check: FileChecker, content: dict[str, Any]) -> JointPrior:
    """The joint estimate from ``attributes``, ``alphabets`` and the guarantee's sparse prior."""
    attributes = check.labels("attributes", content["attributes"])
    alphabets = content["alphabets"]
    if not isinstance(alphabets, list) or len(alphabets) != len(attributes):
        raise check.fail("alphabets", f"be an array of {len(attributes)} alphabets (one per attribute)", alphabets)
    labels = tuple(tuple(check.labels(f"alphabets[{i}]", a)) for i, a in enumerate(alphabets))
    sizes = [len(a) for a in labels]
    if math.prod(sizes) > MAX_JOINT_SIZE:
        raise check.fail("alphabets", f"span at most {MAX_JOINT_SIZE} joint letters", math.prod(sizes))
    block = content["guarantee"]["prior"]
    check.object("guarantee.prior", block)
    if sorted(block) != ["counts", "letters"]:
        raise check.fail("guarantee.prior", "have exactly the keys ['letters', 'counts']", sorted(block))
    letters, counts = block["letters"], block["counts"]

    def integers(name: str, values: Any, low: int, high: int) -> np.ndarray:
        if not isinstance(values, list) or not values or not all(
                isinstance(x, int) and not isinstance(x, bool) and low <= x < high for x in values):
            raise check.fail(name, f"be a non-empty array of integers in [{low}, {high})", values)
        return np.array(values, dtype=np.int64)

    index = integers("guarantee.prior.letters", letters, 0, math.prod(sizes))
    number = integers("guarantee.prior.counts", counts, 1, 2**53)
    if index.size != number.size or np.any(np.diff(index) <= 0):
        raise check.fail("guarantee.prior.letters", "be increasing, one per count", letters)
    if int(number.sum()) != content["guarantee"]["samples"]:
        raise check.fail("guarantee.samples", "equal the sum of guarantee.prior.counts",
                         content["guarantee"]["samples"])
    codes = np.stack(np.unravel_index(index, sizes), axis=1).astype(np.int64).reshape(index.size, len(sizes))
    for array in (codes, number):
        array.setflags(write=False)
    return JointPrior(tuple(attributes), labels, codes, number)


def _load(parsed: ParsedFile, public_key: Any = None) -> RecordFile:
    """Check a parsed record file (everything but the stated-versus-achieved comparison).

    The record-level capacity is recomputed here, once, and kept in ``recomputed_epsilon``.
    """
    content = parsed.content
    check = FileChecker(parsed.name)
    # "sampling" decides: a product file given a "sampling" key is no product file (its guarantee is recomputed as
    # a sampled design's), and a sampled file without one is judged as the product of its factors.
    kind = "sampled" if "sampling" in content else "product" if "factors" in content else "joint"
    required = _KEYS[kind]
    missing = [k for k in required if k not in content]
    if missing:
        raise check.fail("file", f"have the keys {missing} (a {kind} record file)", sorted(content))
    extra = sorted(set(content) - set(required) - set(_OPTIONAL))
    if extra:
        raise check.fail("file", f"only have the keys {[*required, *_OPTIONAL]} (a {kind} record file)", extra)
    digest = check_format_and_digest(check, content, (FORMAT_VERSION,))
    guarantee = content["guarantee"]
    check.object("guarantee", guarantee)
    if sorted(guarantee) != sorted(_GUARANTEE_KEYS):
        raise check.fail("guarantee", f"have exactly the keys {list(_GUARANTEE_KEYS)}", sorted(guarantee))
    if guarantee["notion"] != "pml" or guarantee["level"] != "record":
        raise check.fail("guarantee", "have notion 'pml' and level 'record'",
                         {"notion": guarantee["notion"], "level": guarantee["level"]})
    check.number("guarantee.epsilon", guarantee["epsilon"], 0.0, math.inf)
    if guarantee["delta"] is not None:
        check.number("guarantee.delta", guarantee["delta"], 0.0, 1.0, open_low=True)
    check.number("guarantee.radius", guarantee["radius"], 0.0, 2.0)
    samples = guarantee["samples"]
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples < 2**53:
        raise check.fail("guarantee.samples", "be a positive integer below 2^53", samples)
    prior = _prior(check, content)
    check_radius(check, guarantee, prior.size)
    factors: tuple[Mechanism, ...] = ()
    mechanism = None
    sampling = None
    if kind != "joint":
        blocks = content["factors"]
        if not isinstance(blocks, list) or len(blocks) != prior.dimension:
            raise check.fail("factors", f"be an array of {prior.dimension} factors (one per attribute)", blocks)
        for i, block in enumerate(blocks):
            check.object(f"factors[{i}]", block)
            if sorted(block) != sorted(_FACTOR_KEYS):  # no per-attribute epsilon: it is no record guarantee
                raise check.fail(f"factors[{i}]", f"have exactly the keys {list(_FACTOR_KEYS)}", sorted(block))
        factors = tuple(_matrix(check, f"factors[{i}].", b, prior.alphabets[i]) for i, b in enumerate(blocks))
        if kind == "sampled":
            sampling = _sampling(check, content["sampling"], factors)
    else:
        mechanism = _matrix(check, "", content, joint_labels(prior.alphabets))
    for name in _OPTIONAL:
        if name != "release":
            check.object(name, content.get(name), nullable=True)
    check_signature_keys(check, content.get("signature"))
    check.object("provenance", content["provenance"])
    release = read_release(check, content.get("release"), (), record=True)
    if public_key is not None:
        from mechdesign.mechfile._keys import check_signature

        check_signature(parsed.name, content, canonical_bytes(content), public_key)
    epsilon = record_epsilon(prior, float(guarantee["radius"]), factors, mechanism, sampled=sampling is not None)
    return RecordFile(kind, prior, factors, mechanism, dict(guarantee), content.get("utility"),
                      content.get("baselines"), content.get("certificate"), dict(content["provenance"]), digest,
                      content.get("signature"), epsilon, sampling, release)


def _sampling(check: FileChecker, values: Any, factors: tuple[Mechanism, ...]) -> np.ndarray:
    """π of a sampled file (d positive probabilities summing to one); the factors' outputs must not be empty."""
    from mechdesign.core._record_capacity import check_probabilities

    if not isinstance(values, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in values):
        raise check.fail("sampling", f"be an array of {len(factors)} numbers (one per attribute)", values)
    try:
        pi = check_probabilities(values, len(factors))
    except ValueError:
        raise check.fail("sampling", f"be {len(factors)} positive probabilities summing to one within 1e-9",
                         values) from None
    for i, factor in enumerate(factors):
        if "" in factor.outputs:
            raise check.fail(f"factors[{i}].outputs", "not hold the empty string in a sampled file (an empty field "
                             "marks an unreported attribute)", list(factor.outputs)[:6])
    pi.setflags(write=False)
    return pi


def read_record_file(path: str | os.PathLike[str] | ParsedFile, *, verify: bool = True,
                     public_key: Any = None) -> RecordFile:
    """Load a record file, checking schema, hash, stochasticity, labels, the radius and (default) the guarantee.

    Parameters
    ----------
    path : str, os.PathLike or ParsedFile
        The record file, or the file already read by :func:`~mechdesign.mechfile.parse_file`.
    verify : bool
        Recompute the record-level capacity ([E] Def. 5, eq. 22–23 on the joint ball) and refuse a file whose
        stated ε is below it (exactly, no tolerance).
    public_key : optional
        An Ed25519 public key (PEM path, bytes or key) that must have signed the file.

    Returns
    -------
    RecordFile
        The loaded file.

    Raises
    ------
    MechanismFileError
        One line naming the field and the rule, for any malformed, tampered or overstated file.
    OSError
        If the file cannot be read.
    """
    parsed = parse_file(path)
    loaded = _load(parsed, public_key)
    stated, achieved = loaded.guarantee["epsilon"], loaded.recomputed_epsilon
    if verify and not (achieved is not None and achieved <= stated):
        raise MechanismFileError(f"{parsed.name}: guarantee.epsilon must be >= the record-level epsilon recomputed "
                                 f"from the {loaded.kind} design ({achieved!r}), got guarantee.epsilon={stated!r}")
    if verify:
        refuse_overstated(parsed.name, loaded.release, _release_of(loaded), f"the record-level leakage of "
                          f"{loaded.release.releases} releases recomputed from the {loaded.kind} design")
    return loaded


def verify_record_file(path: str | os.PathLike[str] | ParsedFile, *, public_key: Any = None) -> Verification:
    """Recompute a record file's record-level guarantee; ``holds`` says whether the stated ε is met.

    Parameters
    ----------
    path : str, os.PathLike or ParsedFile
        The record file, or the file already read by :func:`~mechdesign.mechfile.parse_file`.
    public_key : optional
        An Ed25519 public key that must have signed the file.

    Returns
    -------
    Verification
        Stated and achieved record-level ε ([E] Def. 5, eq. 22–23 on the joint ball), δ, radius, hash.

    Raises
    ------
    MechanismFileError
        If the file is malformed or tampered (an overstated file is reported, not refused).
    """
    parsed = parse_file(path)
    return record_verification(_load(parsed, public_key), parsed.name)


def record_verification(record: RecordFile, path: str | os.PathLike[str]) -> Verification:
    """The :class:`Verification` of an already loaded record file (its ``recomputed_epsilon``, or computed now).

    For callers that need the loaded file as well (``mechdesign verify``): one load, one capacity computation.
    """
    g = record.guarantee
    achieved = record.recomputed_epsilon
    if achieved is None:
        achieved = record_epsilon(record.prior, float(g["radius"]), record.factors, record.mechanism,
                                  sampled=record.sampling is not None)
    from mechdesign.mechfile._column import release_summary

    release = release_summary(record.release, _release_of(record))
    holds = bool(achieved <= g["epsilon"]) and (release is None or release.get("holds", True))
    return Verification(str(path), "pml", float(g["epsilon"]), achieved,
                        None if g["delta"] is None else float(g["delta"]), float(g["radius"]),
                        holds, record.sha256, release)


def _release_of(record: RecordFile) -> tuple[float, bool] | None:
    """The record file's release statement recomputed, or this installation's account of the same content.

    Kept by :mod:`mechdesign.mechfile._accounts`.
    """

    def compute() -> tuple[float, bool] | None:
        return record_release_achieved(record.prior, float(record.guarantee["radius"]), record.release,
                                       record.factors, record.mechanism, sampled=record.sampling is not None)

    if record.release.policy != "repeated":
        return compute()
    from mechdesign.mechfile._accounts import checked_account

    assert record.release.releases is not None
    return checked_account(record.sha256, record.release.releases, compute, "record")  # type: ignore[arg-type]

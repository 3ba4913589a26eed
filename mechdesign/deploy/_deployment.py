"""One deploy interface for every kind of mechanism file: load, check the data, privatize, count and decode.

A :class:`Deployment` is a mechanism file loaded the one way every entry point loads it — the Python API, Dask
(:mod:`mechdesign.dask`), Spark (:mod:`mechdesign.spark`) and ``mechdesign privatize`` — with the same rules and
the same one-line messages:

* the hash, the schema and the guarantee recomputed from the file (the readers of :mod:`mechdesign.mechfile`),
  and the *sampled* design's guarantee (quantised to 2⁻⁶⁴) checked again;
* the signature policy: ``require_signature=True`` or ``MECHDESIGN_REQUIRE_SIGNATURE=1`` refuses a file that no
  trusted ``public_key`` checked (:func:`signature_required`);
* the release policy and the memo-key binding (:mod:`mechdesign.deploy.sampling._policy_rule`): a memoized or
  two-layer file refuses to draw without its key and user ids, a file bound to a key refuses any other;
* the data check (:mod:`mechdesign.deploy.analysis._datacheck`): data outside the file's ball are refused unless
  the caller overrides, and then the ε at the data's own distribution is what holds.

One adapter per kind (dense, structured, record) supplies what differs: how labels become input codes, how codes
are drawn, how outputs are written and counted, and the ε at the data. The exchange format is Arrow: a batch of
records in, the same batch with the privatized columns out.

**The verbs that draw nothing** — ``mechdesign verify``, ``decode`` and ``assess``, one call each — load the file
with ``draws=False``: the same checks of the file, no sampler and no memo key (``verify=False`` keeps a file that
overstates its guarantee, for :meth:`Deployment.verify` to report). The adapter of each kind says what they print:
the verdict (:mod:`~mechdesign.deploy._verdicts`), the decode of a privatized table
(:mod:`~mechdesign.deploy._decode_file`) and the assessment on a sample (:mod:`~mechdesign.deploy._assess_file`).

**Keyed draws: one release, however often it is computed.** A lazy frame on a cluster is computed again when it is
reused, when a task fails or is run speculatively, and when a count is taken beside the copy that is written. With
fresh randomness each computation is another release of every record. Here every draw of a release is a keyed
pseudo-random function of (release key, file, record identity, value) — the PRF of memoized draws
(:class:`~mechdesign.deploy.sampling.MemoFunction`, CBC-MAC over AES-256⁻¹) with its own domain tag
(:data:`~mechdesign.deploy.sampling._memo.RELEASE_TAG`), the record identity in place of the user id — so every
computation of the same release gives the same bytes, on any engine, machine or partitioning:

* the **release key**: 32 secret bytes (a key file written by ``mechdesign memo-key``, or bytes). Given none, a
  fresh key is drawn from ``secrets`` for the call: the frame it returns is one release however often it is
  computed, and a second call is a second release (and says so). The same key on the CLI, the API, Dask and
  Spark gives byte-identical outputs.
* the **record identity**: the text of an id column (``id_column``: strings as written, integers in decimal), or,
  without one, the record's 0-based position in its input (the row number of the file), which the CLI and
  Dask (partitions with known offsets) know exactly and Spark reads from the file source's ``_metadata``
  (:mod:`mechdesign.spark`). An identity must be stable: the same record gets the same identity whenever it is
  computed. Two records with the same identity *and* the same value get the same output: that is one release of
  that pair (less leakage, never more); give unique ids.
* the **value** is part of the input, so a record whose value differs draws independently.

A memoized file's outputs are already a keyed function of (user, value) (its own key, its own binding); a
two-layer file's fresh reports of its permanent output are drawn with the release key on (record identity,
permanent output).

**Fresh draws: one release, written once.** A file privatized once, on one machine, needs no key: given none,
:func:`~mechdesign.deploy.privatize_file` draws every output afresh from the secure AES-CTR stream (or, for
research only, a seeded PCG64 stream) and writes the output once, atomically. That is the command line's default
(``--release-key`` switches it to keyed draws); its draws and samplers are the streams' own, so it costs nothing over
them. A second run is a second release of every record.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> import pyarrow as pa
>>> from mechdesign.design.polytope import randomized_response
>>> from mechdesign.mechfile import write_mechanism_file
>>> folder = Path(tempfile.mkdtemp())
>>> path = write_mechanism_file(folder / "rr.json", randomized_response(2, 1.0, ["no", "yes"]),
...                             guarantee={"notion": "ldp", "epsilon": 1.0})
>>> from mechdesign.deploy import load
>>> deployment = load(path)
>>> batch = pa.record_batch({"answer": ["yes", "no", "yes"]})
>>> first = deployment.privatize_batch(batch, ["answer"], key=bytes(32), first_row=0)
>>> first.equals(deployment.privatize_batch(batch, ["answer"], key=bytes(32), first_row=0))
True
"""

from __future__ import annotations

import io
import os
import secrets
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy import REQUIRE_SIGNATURE_VARIABLE  # defined where the CLI's help reads it without NumPy

if TYPE_CHECKING:
    from mechdesign.deploy._reports import Report, Verdict

__all__ = ["REQUIRE_SIGNATURE_VARIABLE", "Deployment", "Release", "release_key", "signature_required"]

_KINDS = ("dense", "structured", "record")
#: How errors name the arguments a caller may spell otherwise (:class:`Deployment`'s ``argument_names``).
ARGUMENT_NAMES = {"user_column": "user_column", "override_data_check": "override_data_check"}


def signature_required(require: bool | None, public_key: Any) -> bool:
    """Whether a signature is required: ``require``, or ``MECHDESIGN_REQUIRE_SIGNATURE`` = 1/true/yes.

    A policy without ``public_key`` is refused: a signature checked against the key it carries proves nothing.

    Raises
    ------
    ValueError
        One line: the variable holds something else than 1/0, true/false, yes/no; or a signature is required and
        no ``public_key`` is given.
    """
    from mechdesign._validation import environment, show_text

    raw, text = environment(REQUIRE_SIGNATURE_VARIABLE) or ("", "")
    text = text.lower() if text.isascii() else text  # ASCII case only: both languages fold it alike
    if text not in ("", "0", "1", "true", "false", "yes", "no"):
        raise ValueError(f"{REQUIRE_SIGNATURE_VARIABLE} must be 1 or 0 (true/false, yes/no), got "
                         f"{REQUIRE_SIGNATURE_VARIABLE}={show_text(raw)}")
    required = bool(require) or text in ("1", "true", "yes")
    if required and public_key is None:
        raise ValueError("public_key must be given when a signature is required (--require-signature or "
                         f"{REQUIRE_SIGNATURE_VARIABLE}=1): only a trusted key authenticates a file, got "
                         "public_key=None")
    return required


def release_key(key: Any = None, name: str = "key") -> bytes:
    """The 32 secret bytes of a release: ``key`` as given (bytes, or a key file's path), or fresh from ``secrets``.

    Raises
    ------
    ValueError, TypeError
        One line: bytes of another length, or a key file that is not one (:func:`read_memo_key`).
    """
    if key is None:
        return secrets.token_bytes(32)
    if isinstance(key, (bytes, bytearray)):
        if len(key) != 32:
            raise v.fail(name, "be 32 bytes (a release key)", f"{len(key)} bytes")
        return bytes(key)
    if isinstance(key, (str, os.PathLike)):
        from mechdesign.deploy.sampling._memo import read_memo_key

        return read_memo_key(key, name)
    raise TypeError(f"{name} must be 32 bytes or a key file's path (mechdesign memo-key KEY writes one), got "
                    f"{name}={type(key).__name__}")


def _key_id(key: bytes) -> str:
    from mechdesign.mechfile._policy import key_id

    return key_id(key)


@dataclass(frozen=True)
class Release:
    """What one privatized release states: the file, the guarantee and the randomness (no secret).

    Parameters
    ----------
    sha256 : str
        The file's hash.
    kind : str
        "dense", "structured" or "record".
    epsilon : float
        The guarantee that holds for the data privatized: the file's (or the sampled design's, if a hair above),
        or, when the data check refused the data and was overridden, the larger ε at the data's distribution.
    release_policy : str
        The file's release policy.
    generator : str
        The randomness, by name: ``"keyed-release-1"`` (keyed draws), ``"aes-ctr-secure"`` or ``"pcg64-seeded"``
        (fresh draws), after ``"memoized-mechdesign-memo-1+"`` when a memo key draws the memoized outputs.
    key_id : str or None
        The identifier of the release key (:func:`~mechdesign.mechfile.key_id`), never the key; ``None`` for fresh
        draws.
    identity : str or None
        ``"column:<name>"`` or ``"position"``: what identifies a record in keyed draws; ``None`` for fresh draws.
    data_check : DataCheck or None
        The check's outcome (``None`` when it was not run).
    """

    sha256: str
    kind: str
    epsilon: float
    release_policy: str
    generator: str
    key_id: str | None
    identity: str | None
    data_check: Any = None


class Deployment:
    """A mechanism file of any kind, loaded and checked as every entry point loads it (module docstring).

    The base of one adapter per kind of file (:mod:`mechdesign.deploy._kinds`): dense, structured and record files
    share this interface and differ only in how labels become codes, how codes are drawn and released, and how
    outputs are counted and decoded. :func:`~mechdesign.deploy.load` returns the file's adapter.

    Parameters
    ----------
    source : str, os.PathLike, bytes or ParsedFile
        The file (a path, its bytes, or a file already parsed). Its bytes are kept (:attr:`data`): what a
        cluster ships to its workers, which load and check it again.
    public_key : str, os.PathLike, bytes or key, optional
        The Ed25519 public key that must have signed the file (PEM path or bytes).
    require_signature : bool, optional
        Refuse a file without a signature checked by ``public_key``; also set by ``MECHDESIGN_REQUIRE_SIGNATURE=1``.
    memo_key : bytes or path, optional
        The key of memoized draws (required by a memoized or two-layer file; a file bound to a key refuses any
        other).
    name : str, optional
        How errors name the file (default: the path, or ``"<bytes>"``).
    data : bytes, optional
        The file's bytes when ``source`` is their parse (:func:`~mechdesign.deploy.load` reads once).
    draws : bool
        Load the file to draw from (default): the sampler compiled and its guarantee checked, the memo key asked
        for. ``False`` loads it for the verbs that draw nothing (verify, decode, assess), with the same checks of
        the file and no sampler: nothing can be drawn from it.
    verify : bool
        Refuse a file whose recomputed guarantee misses the stated one (default). ``False`` (with ``draws=False``)
        keeps it, for :meth:`verify` to report.
    argument_names : mapping of str to str, optional
        How errors name the arguments ``user_column`` and ``override_data_check`` (the command line gives its options
        ``--user-column`` and ``--override-data-check``); default: those names.

    Raises
    ------
    MechanismFileError
        One line: the file is malformed, fails its hash or its signature, or overstates its guarantee.
    CertificateError
        The sampled design (quantised to 2⁻⁶⁴) misses the file's guarantee.
    ValueError
        One line: a signature policy without a key; a memo key refused by the file's binding; ``verify=False`` or
        a memo key with a file loaded to be read.
    """

    #: "dense", "structured" or "record" (set by each adapter).
    kind: str = ""
    loaded: Any
    sampler: Any
    sampled_epsilon: float
    #: The sampled design's largest entry-wise deviation from the file's matrices (``None``: a structured file).
    max_deviation: float | None = None
    #: A two-layer file's per-report ε (of W₂'s sampled matrix); ``None`` for every other file.
    report_epsilon: float | None = None
    attributes: tuple[str, ...] = ("value",)

    def __init__(self, source: Any, *, public_key: Any = None, require_signature: bool | None = None,
                 memo_key: Any = None, name: str | None = None, data: bytes | None = None, draws: bool = True,
                 verify: bool = True, argument_names: Mapping[str, str] | None = None) -> None:
        required = signature_required(require_signature, public_key)
        _reading_rules(draws, verify, memo_key)
        from mechdesign.mechfile._format import ParsedFile

        self._data: bytes | None
        if data is not None and isinstance(source, ParsedFile):  # load(): read and parsed once already
            self._data, parsed = data, source
        else:
            self._data, parsed = _parsed(source, name)
        self._parsed = parsed
        self.name = parsed.name
        self.argument_names = {**ARGUMENT_NAMES, **(argument_names or {})}
        self.public_key = _public_key_bytes(public_key)
        self.required = required
        if draws:
            self._load(parsed, public_key)
        else:
            self._read(parsed, public_key, verify)
        self.memo = None
        if draws and (memo_key is not None or self.release.memoized):
            from mechdesign.deploy.sampling._policy_rule import memo_function

            self.memo = memo_function(memo_key, release=self.release, file_sha256=self.sha256, users=True,
                                      where=f"{self.name} (sha256 {self.sha256[:12]}…)", argument="memo_key",
                                      partner=self.argument_names["user_column"])

    @property
    def data(self) -> bytes:
        """The file's bytes: what a cluster ships to its workers, which load and check it again.

        A file given parsed (the command line's, read once from a path or stdin) is serialised again on first use
        only: a run on one machine never ships it.
        """
        if self._data is None:
            self._data = _canonical_bytes(self._parsed)
        return self._data

    # -- what each kind supplies ------------------------------------------------------------------------------------
    def _load(self, parsed: Any, public_key: Any) -> None:
        """Read the file (its reader checks everything), compile the sampler, check the sampled design's guarantee."""
        raise TypeError("Deployment is the base of one adapter per kind of file: mechdesign.deploy.load(file) "
                        "returns the file's")

    def _alphabet(self, position: int) -> tuple[str, ...]:
        """The input labels of the ``position``-th column."""
        raise NotImplementedError

    def input_counts(self, codes: np.ndarray, weights: Any = None) -> np.ndarray:
        """Counts of the inputs (a single-column file) or of the joint letters (a record file; dense in the letter).

        ``weights`` (integers, one per code) counts each code that many times: distinct values with their counts,
        as an engine's grouped count gives them.
        """
        return _weighted_counts(self._letters(codes), self._letter_count(), weights)

    def _letters(self, codes: np.ndarray) -> np.ndarray:
        """What the data check counts: the input codes (a record file: their joint letters)."""
        return codes

    def _letter_count(self) -> int:
        return len(self._alphabet(0))

    def _check_letters(self, letters: np.ndarray, counts: np.ndarray, data_delta: float) -> Any:
        """The data check (:func:`~mechdesign.deploy.analysis.check_counts` or its joint form) on letter counts."""
        from mechdesign.deploy.analysis._datacheck import check_counts

        return check_counts(self.guarantee, _dense(letters, counts, self._letter_count()), data_delta)

    def epsilon_at_data(self, counts: Any, letters: Any = None) -> float:
        """The sampled design's ε at the data's own empirical distribution (rounded up): what holds when overridden.

        ``counts`` as :meth:`check` takes them (``letters``: the letters they count, when not all of them).

        Raises
        ------
        ValueError
            For a structured file (its ε at a prior outside the ball needs the dense matrix: refused in one line).
        """
        return self._epsilon_at_letters(*self._sparse(counts, letters))

    def _epsilon_at_letters(self, letters: np.ndarray, counts: np.ndarray) -> float:
        raise NotImplementedError

    def draw_codes(self, codes: np.ndarray, ids: Any, key: bytes, users: Any = None) -> Any:
        """Output codes of input codes, keyed by the release (module docstring): the one rule of every engine.

        Parameters
        ----------
        codes : numpy.ndarray
            Input codes (:meth:`encode`).
        ids : UserIds
            The records' identities (:meth:`identities`).
        key : bytes
            The release key.
        users : UserIds, optional
            The records' user ids, for a memoized file's draws (with the deployment's ``memo_key``).

        Returns
        -------
        Any
            Output indices (intp) for a dense file, (types, groups) for a structured one, and the (k × n) indices
            of :meth:`RecordPrivatizer.sample_codes <mechdesign.deploy.sampling.RecordPrivatizer.sample_codes>` for
            a record file.
        """
        if self.memo is not None and users is None:
            from mechdesign.deploy.sampling._policy_rule import missing_memo

            raise missing_memo(self.release.policy, self.name, "user_column", "memo_key", None)
        return self._draw(codes, ids, self.draws(key), users)

    def _draw(self, codes: np.ndarray, ids: Any, draws: Any, users: Any) -> Any:
        raise NotImplementedError

    def outputs(self, drawn: Any, *, form: str = "text") -> list[Any]:
        """The released columns (Arrow arrays) of :meth:`draw_codes`'s output, one per attribute.

        Dense and record files: strings (the output labels; null where a sampled record design's record does not
        report the attribute), or with ``form="dictionary"`` the same values as a dictionary array over the output
        labels (no string is built: a categorical in pandas, dictionary-encoded in Parquet). Structured files: the
        reports' text form ``t<type>.<hex>`` (``form="text"``, and ``"dictionary"``: every report is its own value,
        as CSV output holds them) or their binary form (``form="binary"``, as Parquet and Arrow IPC output hold them).
        """
        raise NotImplementedError

    def output_counts(self, batch: Any, columns: str | Sequence[str]) -> Any:
        """Counts of the released values of a privatized batch: what :meth:`decode` takes, summed over batches.

        Dense: counts over the output labels (W₂'s for a two-layer file). Record: the counts
        :func:`~mechdesign.deploy.analysis.decode_records` takes, one vector a factor (or over the joint outputs),
        concatenated. Structured: the :class:`~mechdesign.deploy.analysis.ReportTally`'s state (its tallies, which
        add).
        """
        raise NotImplementedError

    def count_batches(self, batches: Iterable[Any], columns: str | Sequence[str]) -> Any:
        """:meth:`output_counts` summed over ``batches`` (``None`` when there are none): one partition's counts.

        A structured file tallies every batch into one tally and returns its state once (its state has an entry per
        seed table: 1.3·10⁷ at N = 10⁴, too many to build and add per batch).
        """
        total = None
        for batch in batches:
            part = self.output_counts(batch, columns)
            total = part if total is None else total + part
        return total

    def decode(self, counts: Any, method: str = "linear") -> Any:
        """The frequency estimate from :meth:`output_counts` summed over the data."""
        raise NotImplementedError

    # -- what the file states ---------------------------------------------------------------------------------------
    @property
    def sha256(self) -> str:
        """The file's checked hash."""
        return str(self.loaded.sha256)

    @property
    def release(self) -> Any:
        """The file's :class:`~mechdesign.mechfile._policy.ReleasePolicy`."""
        return self.loaded.release

    @property
    def guarantee(self) -> dict[str, Any]:
        """The file's guarantee block."""
        return dict(self.loaded.guarantee)

    @property
    def checks_data(self) -> bool:
        """Whether the data check can refuse data: a pml guarantee over a ball smaller than the simplex.

        An ``ldp`` guarantee, or a radius of 2 (the whole simplex), holds for every prior: the check always passes
        (:func:`~mechdesign.deploy.analysis.check_counts`), so an engine need not count the data for it. Unknown
        labels are refused by the privatizing pass itself.
        """
        guarantee = self.loaded.guarantee
        radius = guarantee.get("radius")
        return guarantee.get("notion", "pml") == "pml" and radius is not None and float(radius) < 2.0

    @property
    def signed(self) -> bool:
        """Whether a trusted public key checked the file's signature."""
        return self.public_key is not None and self.loaded.signature is not None

    @property
    def epsilon(self) -> float:
        """The guarantee stated for the data a check passed: the file's ε, or the sampled design's if a hair above."""
        return max(float(self.loaded.guarantee["epsilon"]), self.sampled_epsilon)

    def inputs(self, position: int = 0) -> tuple[str, ...]:
        """The input labels of one column (``position``: the attribute of a record file)."""
        return self._alphabet(position)

    def columns_for(self, columns: str | Sequence[str]) -> list[str]:
        """The data's columns, one per attribute of the file, in its order (one line if the count differs)."""
        names = [columns] if isinstance(columns, str) else list(columns)
        if len(names) != len(self.attributes) or not all(isinstance(c, str) for c in names):
            what = (f"one column per attribute of the record file {list(self.attributes)}, in its order"
                    if self.kind == "record" else "one column name (a single-column file)")
            raise v.fail("column", f"name {what}", names)
        if len(set(names)) != len(names):  # the library's one wording (core._record_codes.distinct_names)
            raise v.fail("columns", "be distinct", sorted({c for c in names if names.count(c) > 1}))
        return names

    def release_columns(self, columns: str | Sequence[str], id_column: str | None = None,
                        user_column: str | None = None) -> list[str]:
        """The privatized columns, after the rules of the columns a release reads (every engine applies them).

        The id and user columns differ from the privatized ones; a memoized or two-layer file's draws need
        ``user_column`` (with the deployment's memo key) and a file without a memo key takes none.

        Raises
        ------
        ValueError
            One line naming the argument and the rule.
        """
        names = self.columns_for(columns)
        for extra, argument in ((id_column, "id_column"), (user_column, "user_column")):
            if extra is not None and extra in names:
                raise v.fail(argument, "differ from the privatized columns", extra)
        if self.memo is not None and user_column is None:
            from mechdesign.deploy.sampling._policy_rule import missing_memo

            raise missing_memo(self.release.policy, self.name, "user_column", "memo_key", None)
        if self.memo is None and user_column is not None:
            raise v.fail("user_column", "be given with memo_key (memoized draws are keyed by user)", user_column)
        return names

    # -- input codes and the data check -----------------------------------------------------------------------------
    def encode(self, batch: Any, columns: Sequence[str]) -> np.ndarray:
        """Input codes of a batch's columns: int64, shape (n,) for a single-column file, (d, n) for a record file.

        Unknown labels and nulls are refused in one line (naming the column and the first offending values).
        """
        names = self.columns_for(columns)
        rows = [_codes(_column(batch, name), self._alphabet(i), name) for i, name in enumerate(names)]
        return rows[0] if len(rows) == 1 and self.kind != "record" else np.stack(rows)

    def check(self, counts: Any, data_delta: float | None = None, *, override: bool = False,
              letters: Any = None) -> Any:
        """The data check on input counts (:meth:`input_counts`, summed over the data); refuse data outside the ball.

        Returns the :class:`~mechdesign.deploy.analysis.DataCheck`; with ``override`` a refused check is returned
        (its ``inside`` False) instead of raised, and :meth:`epsilon_at_data` says what holds. ``letters``: the
        letters ``counts`` count (increasing), when they are not all of them — a record file's observed joint
        letters, as a stream counts a joint alphabet too large for one count a letter.

        Raises
        ------
        ValueError
            One line (the CLI's): the data's divergence to the file's ball exceeds the threshold at δ_d.
        """
        from mechdesign.deploy.analysis._datacheck import DATA_DELTA, refusal

        letters, counts = self._sparse(counts, letters)
        result = self._check_letters(letters, counts, DATA_DELTA if data_delta is None else data_delta)
        if not result.inside and not override:
            text = refusal(result)
            if self.kind == "record":
                text = text.replace("data must", "data (joint distribution of the record) must", 1)
            option = self.argument_names["override_data_check"]
            if self.kind == "structured":  # what holds outside the ball needs the dense matrix
                text += (f"; {option} cannot privatize them with a structured file (the data's own epsilon needs "
                         "the dense matrix; mechdesign export --dense writes it for a small design)")
            else:
                text += f"; {option} privatizes them anyway"
            raise ValueError(text)
        return result

    def _sparse(self, counts: Any, letters: Any) -> tuple[np.ndarray, np.ndarray]:
        """(letters, their counts), int64: ``counts`` of every letter, or of the given ``letters``."""
        number = np.asarray(counts, dtype=np.int64)
        size = self._letter_count()
        if letters is None:
            if number.shape != (size,):
                what = "joint letter of the record" if self.kind == "record" else "input"
                raise v.fail("counts", f"hold one count per {what} ({size:,}), or come with their letters", number)
            letters = np.flatnonzero(number)
            return letters, number[letters]
        at = np.asarray(letters, dtype=np.int64)
        if at.shape != number.shape or (at.size and (at.min() < 0 or at.max() >= size or np.any(np.diff(at) <= 0))):
            raise v.fail("letters", f"be increasing letters below {size:,}, one per count", at)
        return at, number

    # -- privatizing ------------------------------------------------------------------------------------------------
    def draws(self, key: bytes) -> Any:
        """The keyed draws of the release with ``key`` (a :class:`MemoFunction` with the release tag, this file)."""
        from mechdesign.deploy.sampling._memo import RELEASE_TAG, MemoFunction

        return MemoFunction(release_key(key), self.sha256, tag=RELEASE_TAG)

    def identities(self, batch: Any, id_column: str | None, first_row: int | None) -> Any:
        """The records' identities (:class:`~mechdesign.deploy.sampling.UserIds`): an id column's text, or positions.

        ``first_row`` is the position of the batch's first record in its input (required without ``id_column``).
        """
        from mechdesign.deploy.sampling._memo import user_ids

        n = _rows(batch)
        if id_column is not None:
            return user_ids(_column(batch, id_column), "id_column")
        if first_row is None or isinstance(first_row, bool) or not isinstance(first_row, (int, np.integer)) \
                or first_row < 0:
            raise v.fail("first_row", "be the position (a nonnegative integer) of the batch's first record in its "
                         "input when no id_column identifies the records", first_row)
        return user_ids(np.arange(int(first_row), int(first_row) + n, dtype=np.int64), "first_row")

    def privatize_batch(self, batch: Any, columns: str | Sequence[str], *, key: bytes, id_column: str | None = None,
                        first_row: int | None = None, user_column: str | None = None, form: str = "text") -> Any:
        """The batch with ``columns`` privatized (Arrow), every other column and the row order kept.

        Parameters
        ----------
        batch : pyarrow.RecordBatch or pyarrow.Table
            Records.
        columns : str or sequence of str
            The column of a single-column file, or one per attribute of a record file, in its order.
        key : bytes
            The release key (32 bytes: :func:`release_key`).
        id_column : str, optional
            The column of record identities; without it ``first_row`` gives positions.
        first_row : int, optional
            The position of the batch's first record in its input (without ``id_column``).
        user_column : str, optional
            The column of user ids of a memoized file's draws (with the deployment's ``memo_key``).
        form : {"text", "binary", "dictionary"}
            A structured file's report form; ``"dictionary"``: dense and record outputs as dictionary arrays
            (:meth:`outputs`).

        Returns
        -------
        pyarrow.RecordBatch or pyarrow.Table
            As given, the privatized columns replaced by strings (binary: a structured file's binary form;
            dictionary: dictionary arrays over the output labels).
        """
        names = self.release_columns(columns, id_column, user_column)
        if form not in ("text", "binary", "dictionary"):
            raise v.fail("form", "be 'text', 'binary' or 'dictionary'", form)
        codes = self.encode(batch, names)
        ids = self.identities(batch, id_column, first_row)
        users = None
        if user_column is not None:
            from mechdesign.deploy.sampling._memo import user_ids

            users = user_ids(_column(batch, user_column), "user_column")
        released = self.outputs(self.draw_codes(codes, ids, key, users), form=form)
        return _replace(batch, names, released)

    def warn_outside(self, data_check: Any, counts: Any, stacklevel: int = 2) -> float | None:
        """The ε at the data when an overridden ``data_check`` refused them (warned with the ε that holds), else None.

        What the cluster engines (:mod:`mechdesign.dask`, :mod:`mechdesign.spark`) say before returning a frame;
        ``stacklevel`` as :func:`warnings.warn` counts it from the caller of this method.
        """
        if data_check is None or data_check.inside:
            return None
        at_data = float(self.epsilon_at_data(counts))
        epsilon = max(self.epsilon, at_data)
        warnings.warn(f"the data are outside the file's ball (override_data_check): the guarantee that holds is "
                      f"epsilon={epsilon:.6g} at the data's own distribution, not the file's {self.epsilon:.6g}",
                      UserWarning, stacklevel=stacklevel + 1)
        return at_data

    def statement(self, key: bytes | None, identity: str | None, data_check: Any = None, counts: Any = None, *,
                  rng: Any = None, epsilon_at_data: float | None = None) -> Release:
        """The :class:`Release` of a run: the ε that holds (the data's own when an overridden check refused them).

        ``key``: the release key of keyed draws, or ``None`` for fresh draws from ``rng`` (``None``: the secure
        AES-CTR stream; an integer: a seeded PCG64 stream), named in :attr:`Release.generator`.
        ``epsilon_at_data``: :meth:`epsilon_at_data` of the data when already computed (else from ``counts``).
        """
        epsilon = self.epsilon
        if data_check is not None and not data_check.inside:
            if epsilon_at_data is None and counts is not None:
                epsilon_at_data = self.epsilon_at_data(counts)
            if epsilon_at_data is not None:
                epsilon = max(epsilon, epsilon_at_data)
        memoized = "memoized-mechdesign-memo-1+" if self.memo is not None else ""
        if key is not None:
            return Release(self.sha256, self.kind, epsilon, self.release.policy, memoized + "keyed-release-1",
                           _key_id(release_key(key)), identity, data_check)
        return Release(self.sha256, self.kind, epsilon, self.release.policy, memoized + _fresh_generator(rng), None,
                       None, data_check)

    # -- a file read for a verb: verified, decoded, assessed (loaded with draws=False) ----------------------------
    #: The file's :class:`~mechdesign.mechfile.Verification`, kept when it was loaded with ``verify=False``.
    verification: Any = None

    def _read(self, parsed: Any, public_key: Any, verify: bool) -> None:
        """Read the file without a sampler (its reader checks everything; ``verify=False`` keeps an overstated file)."""
        raise TypeError("Deployment is the base of one adapter per kind of file: mechdesign.deploy.load(file) "
                        "returns the file's")

    def verify(self, data: Any = None, columns: Sequence[str] | None = None, *, data_delta: float | None = None,
               override_data_check: bool = False, releases: int | None = None,
               changes: int | None = None) -> Verdict:
        """The file's guarantee recomputed, with the check of data it is meant for: what ``mechdesign verify`` says.

        Parameters
        ----------
        data : str or os.PathLike, optional
            CSV, Parquet or Arrow IPC records: their distribution is checked against the file's ball (the joint
            one for a record file) at ``data_delta``.
        columns : sequence of str, optional
            The data's column (a single-column file) or one per attribute of a record file, in its order.
        data_delta : float, optional
            δ_d of the data check (default 1e-6).
        override_data_check : bool
            Data the check refuses are reported with the ε at their own distribution (refused for a structured
            file: that needs the dense matrix). Without it no ε at refused data is computed: the caller refuses them.
        releases : int, optional
            Also account for T releases of one person's value under the file's release policy.
        changes : int, optional
            Memoized and two-layer single-column files: the cost of C distinct values of one person (a structured
            or record file does not use it).

        Returns
        -------
        Verdict
            The recomputed guarantee (``result``: a :class:`~mechdesign.mechfile.Verification`), the data check,
            the JSON object and the text; ``failure`` names the first stated guarantee that does not hold.

        Raises
        ------
        ValueError
            One line: columns that do not fit the file, values outside its alphabets, an option the kind refuses.
        """
        raise NotImplementedError

    def decode_file(self, source: Any, columns: Sequence[str], *, method: str = "linear", within_ball: bool = False,
                    chunk_size: int = 1_000_000, progress: bool | None = False) -> Report:
        """The input frequencies estimated from a privatized table (streamed): what ``mechdesign decode`` says.

        Parameters
        ----------
        source : str or os.PathLike
            The privatized CSV, Parquet or Arrow IPC file.
        columns : sequence of str
            The privatized column (a single-column file) or one per attribute of a record file, in its order.
        method : {"linear", "inversion", "ml", "em"}
            The decoder (:func:`~mechdesign.deploy.analysis.estimate_frequencies`); a structured file takes
            "linear", a record file "linear" or "ml".
        within_ball : bool
            With "ml": the maximum likelihood over the file's ball (single-column files).
        chunk_size : int
            Records read at once.
        progress : bool or None
            Records read on stderr: ``None`` on a terminal, ``True`` anywhere, ``False`` never.

        Returns
        -------
        Report
            ``result``: the estimate (an :class:`~mechdesign.deploy.analysis.Estimate`, ``None`` when an
            estimation_linear design decodes its quantities only, or a
            :class:`~mechdesign.deploy.analysis._record_decode.RecordEstimate`).
        """
        raise NotImplementedError

    def assess(self, *, counts: Sequence[float] | None = None, data: Any = None,
               columns: Sequence[str] | None = None, deltas: Any = None, releases: int | None = None) -> Report:
        """The (ε′, δ)-PML guarantee of the file's mechanism on a sample: what ``mechdesign assess`` says.

        Parameters
        ----------
        counts : sequence of float, optional
            Category counts in the input order (single-column files).
        data : str or os.PathLike, optional
            CSV, Parquet or Arrow IPC records (with ``columns``); a record file needs them.
        columns : sequence of str, optional
            The data's column, or one per attribute of a record file.
        deltas : sequence of float, optional
            The failure probabilities δ (default: the table of several δ that ``mechdesign assess`` prints).
        releases : int, optional
            Also give, for each δ, the leakage of T releases of one person's value over the same ball.

        Returns
        -------
        Report
            ``result``: the :class:`~mechdesign.core.Assessment` (a record file: the record-level
            :class:`~mechdesign.deploy.analysis._record_assess.RecordAssessment`).
        """
        raise NotImplementedError

    if not TYPE_CHECKING:  # (typed code never reaches it: mypy keeps checking every attribute's name)

        def __getattr__(self, name: str) -> Any:
            # Reached only for an attribute not set: a file loaded to be read has no sampler, and says so.
            if name in ("sampler", "sampled_epsilon"):
                raise v.fail("draws", "be True to draw from a file (this one was loaded to be read: "
                             "mechdesign.deploy.load(file) loads it to privatize)", False)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


# -- helpers ---------------------------------------------------------------------------------------------------------
def _parsed(source: Any, name: str | None) -> tuple[bytes | None, Any]:
    """The file's bytes and its parse (:func:`~mechdesign.mechfile.parse_file`: the size cap, one-line errors).

    A file given parsed has no bytes yet: :attr:`Deployment.data` serialises it when a cluster ships it.
    """
    from mechdesign.mechfile._format import ParsedFile, parse_file

    if isinstance(source, ParsedFile):
        return None, source
    data, shown = _read(source, name)
    return data, parse_file(io.BytesIO(data), shown)


def _fresh_generator(rng: Any) -> str:
    """The name of fresh draws' randomness: ``None`` the secure AES-CTR stream, an integer a seeded PCG64 stream."""
    if rng is None:
        return "aes-ctr-secure"
    if isinstance(rng, np.random.Generator):
        name = type(rng.bit_generator).__name__
        return {"AESCounter": "aes-ctr-secure", "PCG64": "pcg64"}.get(name, name.lower())
    return "pcg64-seeded"


def _dense(letters: np.ndarray, counts: np.ndarray, size: int) -> np.ndarray:
    full = np.zeros(size, dtype=np.int64)
    full[letters] = counts
    return full


def _weighted_counts(letters: np.ndarray, size: int, weights: Any) -> np.ndarray:
    if weights is None:
        return np.bincount(letters, minlength=size).astype(np.int64)
    counts = np.zeros(size, dtype=np.int64)
    np.add.at(counts, np.asarray(letters, dtype=np.intp), np.asarray(weights, dtype=np.int64))
    return counts


def _read(source: Any, name: str | None) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source), name or "<bytes>"
    if isinstance(source, (str, os.PathLike)):
        from mechdesign._errors import MechanismFileError
        from mechdesign._files import read_bounded

        shown = name or str(source)
        try:  # one read under the size cap, as parse_file reads (its one-line error): the bytes parsed are kept
            return read_bounded(source, "mechanism file", json_object=True), shown
        except ValueError as exc:
            raise MechanismFileError(f"{shown}: {exc}") from None
    raise TypeError(f"file must be a path, the file's bytes or a parsed file, got file={type(source).__name__}")


def _canonical_bytes(parsed: Any) -> bytes:
    import json

    return json.dumps(parsed.content, ensure_ascii=False, allow_nan=False).encode("utf-8")


def _public_key_bytes(public_key: Any) -> bytes | None:
    """The public key as PEM bytes (what a worker needs to check the signature again)."""
    if public_key is None:
        return None
    if isinstance(public_key, (bytes, bytearray)):
        return bytes(public_key)
    if isinstance(public_key, (str, os.PathLike)):
        return Path(public_key).read_bytes()
    from cryptography.hazmat.primitives import serialization

    return bytes(public_key.public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo))


def _rows(batch: Any) -> int:
    return int(batch.num_rows)


def _column(batch: Any, name: str) -> Any:
    names = list(batch.schema.names)
    if names.count(name) != 1:
        raise v.fail("column", f"name one column of the data {names[:20]}" if name not in names else
                     "name a column that appears once in the data", name)
    return batch.column(names.index(name))


def _codes(array: Any, labels: Sequence[str], name: str, kind: str = "input") -> np.ndarray:
    """Indices of an Arrow column's values in ``labels`` (as strings); nulls and unknown values refused."""
    import pyarrow as pa

    from mechdesign.core._record_codes import unknown_labels_error
    from mechdesign.deploy.sampling._arrow import _dictionary, _integers, _strings

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    n = len(array)
    if array.null_count:
        raise unknown_labels_error(name, labels, array.null_count, [None], kind)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        import pyarrow.compute as pc

        found = pc.index_in(array, value_set=_strings(labels))  # Arrow's hash lookup: no dictionary built
        if not found.null_count:  # every value a label (the unknown ones are named by the dictionary path below)
            return _integers(found).astype(np.int64)
    encoded = _dictionary(array)
    words = encoded.dictionary.to_pylist()
    position = {label: i for i, label in enumerate(labels)}
    lookup = np.array([position.get(w, -1) for w in words], dtype=np.int64)
    codes = lookup[_integers(encoded.indices)]
    if codes.size and codes.min() < 0:
        bad = [words[i] for i in np.flatnonzero(lookup < 0)]
        raise unknown_labels_error(name, labels, int(np.count_nonzero(codes < 0)), bad, kind)
    return codes


def _replace(batch: Any, names: Sequence[str], arrays: Sequence[Any]) -> Any:
    import pyarrow as pa

    columns = list(batch.columns)
    fields = list(batch.schema)
    for name, array in zip(names, arrays, strict=True):
        at = batch.schema.names.index(name)
        columns[at] = array
        fields[at] = pa.field(name, array.type, nullable=True)
    schema = pa.schema(fields, metadata=batch.schema.metadata)
    if isinstance(batch, pa.Table):
        return pa.Table.from_arrays(columns, schema=schema)
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _reading_rules(draws: bool, verify: bool, memo_key: Any) -> None:
    """A file loaded to be read: ``verify=False`` only then (an overstated file is never sampled), and no memo key."""
    if not verify and draws:
        raise v.fail("verify", "be True when the file is loaded to draw (an overstated file is never sampled; "
                     "draws=False reads it)", verify)
    if memo_key is not None and not draws:
        raise v.fail("memo_key", "not be given with a file loaded to be read (draws=False: nothing is drawn)",
                     "a key")

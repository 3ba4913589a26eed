"""One adapter per kind of mechanism file behind the one deploy interface (:class:`~._deployment.Deployment`).

Each adapter says what differs between the kinds, and nothing else: which reader loads the file and which sampler
draws from it (the sampled design's guarantee checked again), the input alphabet of each column, the data check
(on the column's distribution or, for a record, the joint one), the ε at the data's own distribution, the keyed
draw, the released Arrow columns, the counts of released values and the decoder.

* :class:`DenseDeployment` — a single-column file with a matrix (policies single, repeated, memoized, two-layer).
* :class:`StructuredDeployment` — a structured (symmetric) file: reports are a type and a seed.
* :class:`RecordDeployment` — a record file (product, joint or attribute-sampled design over d attributes).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy._deployment import Deployment, _codes, _column, _parsed

if TYPE_CHECKING:
    from mechdesign.deploy._reports import Report, Verdict

__all__ = ["DenseDeployment", "RecordDeployment", "Shipped", "StructuredDeployment", "adapter_for", "deployment_of",
           "load", "ship"]


def adapter_for(parsed: Any) -> type[Deployment]:
    """The adapter class of a parsed file: record, structured (``kind`` "symmetric") or dense."""
    if parsed.is_record:
        return RecordDeployment
    if parsed.content.get("kind") == "symmetric":
        return StructuredDeployment
    return DenseDeployment


def load(source: Any, *, public_key: Any = None, require_signature: bool | None = None, memo_key: Any = None,
         name: str | None = None, draws: bool = True, verify: bool = True,
         argument_names: Mapping[str, str] | None = None) -> Deployment:
    """Load a mechanism file of any kind for deployment, checked as every entry point checks it (:class:`Deployment`).

    Parameters
    ----------
    source : str, os.PathLike, bytes or ParsedFile
        The file.
    public_key, require_signature, memo_key, name, argument_names
        As :class:`Deployment`.
    draws, verify
        As :class:`Deployment`: ``draws=False`` loads the file to be verified, decoded or assessed (no sampler, no
        memo key), and ``verify=False`` then keeps a file that overstates its guarantee for
        :meth:`~Deployment.verify` to report.

    Returns
    -------
    Deployment
        The file's adapter (dense, structured or record).
    """
    data, parsed = _parsed(source, name)
    return adapter_for(parsed)(parsed, public_key=public_key, require_signature=require_signature,
                               memo_key=memo_key, name=name, data=data, draws=draws, verify=verify,
                               argument_names=argument_names)


def deployment_of(file: Any, *, public_key: Any = None, require_signature: bool | None = None,
                  memo_key: Any = None) -> Deployment:
    """An engine's file argument as a Deployment: loaded (every check, one line), or the one given.

    A Deployment given with a ``memo_key`` it was not loaded with is loaded again with that key, under its own
    public key and signature policy (the key's binding is checked then).
    """
    if not isinstance(file, Deployment):
        return load(file, public_key=public_key, require_signature=require_signature, memo_key=memo_key)
    if memo_key is not None and file.memo is None:
        return load(file.data, public_key=file.public_key, require_signature=file.required, memo_key=memo_key,
                    name=file.name, argument_names=file.argument_names)
    return file


@dataclass(frozen=True)
class Shipped:
    """What a task carries to load a file on a worker: its bytes and the rules the driver loaded it under.

    A worker loads and checks the file again (:meth:`load`) — hash, signature policy, release policy, memo-key
    binding — once per process: Spark reuses its Python workers and Dask its worker processes for many tasks.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    public_key : bytes or None
        The trusted public key's PEM bytes.
    required : bool
        Whether a signature is required (the driver's policy, environment included).
    memo_key : bytes or None
        The key of memoized draws (a memoized or two-layer file).
    name : str
        How errors name the file.
    """

    data: bytes
    public_key: bytes | None
    required: bool
    memo_key: bytes | None
    name: str

    def digest(self) -> bytes:
        """The cache key of a loaded file: a digest of everything the load depends on."""
        h = hashlib.sha256()
        for part in (self.data, self.public_key or b"", self.memo_key or b"", self.name.encode()):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
        h.update(b"\x01" if self.required else b"\x00")
        return h.digest()

    def load(self) -> Deployment:
        """The file loaded and checked in this process (once per process and shipment: a small LRU cache)."""
        digest = self.digest()
        with _LOCK:
            found = _LOADED.get(digest)
        if found is None:
            found = load(self.data, public_key=self.public_key, require_signature=self.required,
                         memo_key=self.memo_key, name=self.name)
            _remember(digest, found)
        return found


def ship(deployment: Deployment) -> Shipped:
    """What the tasks of ``deployment`` carry (:class:`Shipped`); the driver's process keeps the loaded file.

    Tasks that run in the driver's process (Dask's threads, a synchronous scheduler) then use it as it is.
    """
    memo = None if deployment.memo is None else bytes(deployment.memo.key)
    shipped = Shipped(deployment.data, deployment.public_key, bool(deployment.required), memo, deployment.name)
    _remember(shipped.digest(), deployment)
    return shipped


# Deployments loaded in this process, by the digest of their shipment (bounded: a long-lived worker sees many files).
_LOADED: OrderedDict[bytes, Deployment] = OrderedDict()
_LOADED_LIMIT = 8
_LOCK = threading.Lock()


def _remember(digest: bytes, deployment: Deployment) -> None:
    with _LOCK:
        _LOADED[digest] = deployment
        _LOADED.move_to_end(digest)
        while len(_LOADED) > _LOADED_LIMIT:
            _LOADED.popitem(last=False)


def _labels_column(labels: Sequence[str], drawn: np.ndarray, form: str = "text") -> Any:
    """An Arrow column of output labels from indices (negative: null): strings, or a dictionary array over them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from mechdesign.deploy.sampling._arrow import _indices, _strings

    indices, strings = _indices(np.asarray(drawn, dtype=np.int32)), _strings(list(labels))
    return pa.DictionaryArray.from_arrays(indices, strings) if form == "dictionary" else pc.take(strings, indices)


def _label_counts(array: Any, labels: Sequence[str], name: str) -> np.ndarray:
    return np.bincount(_codes(array, labels, name, "output"), minlength=len(labels)).astype(np.int64)


class DenseDeployment(Deployment):
    """A single-column file with a matrix: outputs are its labels (W₂'s for a two-layer file)."""

    kind = "dense"

    def _load(self, parsed: Any, public_key: Any) -> None:
        from mechdesign.deploy.sampling._sampler import Privatizer
        from mechdesign.mechfile._column import read_mechanism_file

        self.loaded = read_mechanism_file(parsed, public_key=public_key)
        self.sampler = Privatizer(self.loaded)  # the sampled matrix's guarantee (a two-layer file's per report too)
        self.sampled_epsilon = float(self.sampler.sampled_epsilon or 0.0)
        self.max_deviation, self.report_epsilon = self.sampler.max_deviation, self.sampler.report_epsilon

    def _alphabet(self, position: int) -> tuple[str, ...]:
        return tuple(self.loaded.mechanism.inputs)

    def _epsilon_at_letters(self, letters: np.ndarray, counts: np.ndarray) -> float:
        frequencies = np.zeros(len(self.sampler.mechanism.inputs))
        frequencies[letters] = counts / max(int(counts.sum()), 1)
        return self.sampler.epsilon_at(frequencies)

    def _draw(self, codes: np.ndarray, ids: Any, draws: Any, users: Any) -> Any:
        sampler, rows = self.sampler, codes.astype(np.intp)
        if self.memo is None:
            return sampler._keyed_indices(rows, ids, draws)
        permanent = sampler._memoized_permanent(rows, users, self.memo)
        if sampler.reports is None:
            return permanent
        # A two-layer file: the fresh report of the permanent output, keyed by the release on (record, output).
        return sampler.reports._keyed_indices(permanent.astype(np.intp), ids, draws)

    def outputs(self, drawn: Any, *, form: str = "text") -> list[Any]:
        return [_labels_column(self.sampler.outputs, drawn, form)]

    def output_counts(self, batch: Any, columns: str | Sequence[str]) -> Any:
        name = self.columns_for(columns)[0]
        return _label_counts(_column(batch, name), self.sampler.outputs, name)

    def decode(self, counts: Any, method: str = "linear") -> Any:
        from mechdesign.core._mechanism import Mechanism
        from mechdesign.deploy.analysis._decode import estimate_frequencies

        mechanism = self.loaded.mechanism
        if self.sampler.reports is not None:  # a report given x is drawn from W₁W₂
            reports = self.sampler.reports.mechanism
            mechanism = Mechanism.from_matrix(mechanism.matrix @ reports.matrix, mechanism.inputs, reports.outputs)
        return estimate_frequencies(mechanism, counts, "inversion" if method == "linear" else method)

    def _read(self, parsed: Any, public_key: Any, verify: bool) -> None:
        from mechdesign.mechfile._column import read_mechanism_file, verify_mechanism_file

        if not verify:  # reported by verify(), with what it recomputed
            self.verification = verify_mechanism_file(parsed, public_key=public_key)
        self.loaded = read_mechanism_file(parsed, verify=verify, public_key=public_key if verify else None)

    def verify(self, data: Any = None, columns: Sequence[str] | None = None, **options: Any) -> Verdict:
        from mechdesign.deploy._verdicts import dense

        return dense(self, data, columns, **options)

    def decode_file(self, source: Any, columns: Sequence[str], **options: Any) -> Report:
        from mechdesign.deploy._decode_file import dense

        return dense(self, source, columns, **options)

    def assess(self, **options: Any) -> Report:
        from mechdesign.deploy._assess_file import matrix

        return matrix(self.loaded.mechanism, loaded=self.loaded, **options)


class StructuredDeployment(Deployment):
    """A structured (symmetric) file: a report is a type and a seed, written as text or in binary form."""

    kind = "structured"

    def _load(self, parsed: Any, public_key: Any) -> None:
        from mechdesign.deploy.sampling._symmetric import SymmetricPrivatizer
        from mechdesign.mechfile._symmetric import read_symmetric_file

        self.loaded = read_symmetric_file(parsed, public_key=public_key)
        self.sampler = SymmetricPrivatizer(self.loaded.mechanism)
        self.sampled_epsilon = float(self.sampler.check(self.loaded.guarantee, self.loaded.achieved))

    @property
    def guarantee(self) -> dict[str, Any]:
        """The file's guarantee block with its prior (the counts' frequencies)."""
        return {**self.loaded.guarantee, "prior": self.loaded.prior.tolist()}

    def _alphabet(self, position: int) -> tuple[str, ...]:
        return tuple(self.loaded.mechanism.inputs)

    def report_bytes(self, form: str = "text") -> int:
        """The largest report's size in bytes: of its text form ``t<type>.<hex>`` or (``"binary"``) its binary form."""
        family = self.sampler.family
        if form == "binary":
            from mechdesign.mechfile._report_binary import binary_widths

            type_bytes, widths = binary_widths(family)
            return int(type_bytes + widths.max())
        return max(family.report_bytes(t) for t in range(family.types))

    def epsilon_at_data(self, counts: Any, letters: Any = None) -> float:
        raise v.fail("override_data_check", "not be used with a structured file (the data's own epsilon needs the "
                     "dense matrix; mechdesign export --dense writes it for a small design)", True)

    def _draw(self, codes: np.ndarray, ids: Any, draws: Any, users: Any) -> Any:
        if self.memo is not None:
            return self.sampler.sample_memoized(codes, users, self.memo)
        return self.sampler.sample_memoized(codes, ids, draws)  # the same word stream, keyed by the release

    def outputs(self, drawn: Any, *, form: str = "text") -> list[Any]:
        import pyarrow as pa

        from mechdesign.mechfile import binary_buffer, text_buffer

        types, groups = drawn
        write = binary_buffer if form == "binary" else text_buffer
        offsets, data = write(self.sampler.family, np.asarray(types, dtype=np.int64), np.asarray(groups))
        offsets = np.asarray(offsets, dtype=np.int64)
        large = bool(offsets[-1] >= 2**31)
        kind = {(False, False): pa.string(), (False, True): pa.large_string(), (True, False): pa.binary(),
                (True, True): pa.large_binary()}[(form == "binary", large)]
        offsets = offsets if large else offsets.astype(np.int32)
        return [pa.Array.from_buffers(kind, offsets.size - 1,
                                      [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data))])]

    def output_counts(self, batch: Any, columns: str | Sequence[str]) -> Any:
        return self.count_batches([batch], columns)

    def count_batches(self, batches: Iterable[Any], columns: str | Sequence[str]) -> Any:
        import pyarrow as pa

        from mechdesign.deploy.analysis._symmetric_decode import ReportTally

        name = self.columns_for(columns)[0]
        tally = None
        for batch in batches:
            tally = tally or ReportTally(self.loaded.mechanism, self.sampler.family)
            array = _column(batch, name)
            if isinstance(array, pa.ChunkedArray):
                array = array.combine_chunks()
            binary = pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type)
            (tally.add_binary_arrow if binary else tally.add_arrow)(array, tally.records)
        return None if tally is None else tally.state()

    def decode(self, counts: Any, method: str = "linear") -> Any:
        from mechdesign.deploy.analysis._symmetric_decode import ReportTally

        if method != "linear":
            raise v.fail("method", "be 'linear' with a structured file (the efficient unbiased decoder at the file's "
                         "prior, projected onto the simplex)", method)
        tally = ReportTally(self.loaded.mechanism, self.sampler.family)
        tally.add_state(counts)
        return tally.estimate()

    def _read(self, parsed: Any, public_key: Any, verify: bool) -> None:
        from mechdesign.mechfile._symmetric import read_symmetric_file, verify_symmetric_file

        if verify:
            self.loaded = read_symmetric_file(parsed, public_key=public_key)
        else:  # reported by verify(), with what it recomputed
            self.verification, self.loaded = verify_symmetric_file(parsed, public_key=public_key)

    def verify(self, data: Any = None, columns: Sequence[str] | None = None, **options: Any) -> Verdict:
        from mechdesign.deploy._verdicts import structured

        return structured(self, data, columns, **options)

    def decode_file(self, source: Any, columns: Sequence[str], **options: Any) -> Report:
        from mechdesign.deploy._decode_file import structured

        return structured(self, source, columns, **options)

    def assess(self, **options: Any) -> Report:
        from mechdesign.deploy._assess_file import structured

        return structured(self, **options)


class RecordDeployment(Deployment):
    """A record file: d columns privatized together; the data check on their joint distribution."""

    kind = "record"

    def _load(self, parsed: Any, public_key: Any) -> None:
        from mechdesign.deploy.sampling._record_sampler import RecordPrivatizer
        from mechdesign.mechfile._record import read_record_file

        self.loaded = read_record_file(parsed, public_key=public_key)
        self.sampler = RecordPrivatizer(self.loaded)
        self.sampled_epsilon = float(self.sampler.check())
        self.max_deviation = max(s.max_deviation for s in self.sampler.samplers)
        self.attributes = tuple(self.loaded.attributes)

    def _alphabet(self, position: int) -> tuple[str, ...]:
        return tuple(self.loaded.alphabets[position])

    def _letters(self, codes: np.ndarray) -> np.ndarray:
        return np.asarray(self.sampler.letters(codes))

    def _letter_count(self) -> int:
        return int(self.loaded.prior.size)

    def _check_letters(self, letters: np.ndarray, counts: np.ndarray, data_delta: float) -> Any:
        from mechdesign.deploy.analysis._datacheck import check_joint_counts

        return check_joint_counts(self.loaded.prior, self.loaded.guarantee["radius"], letters, counts, data_delta)

    def _epsilon_at_letters(self, letters: np.ndarray, counts: np.ndarray) -> float:
        from mechdesign.deploy.analysis._record_assess import epsilon_at_data

        return float(epsilon_at_data(self.loaded, letters, counts, self.sampler))

    def _draw(self, codes: np.ndarray, ids: Any, draws: Any, users: Any) -> Any:
        if self.memo is not None:
            return self.sampler._memoized(codes, None, self.memo, users)
        return self.sampler._memoized(codes, None, draws, ids)  # the same keyed rule, keyed by the release

    def outputs(self, drawn: Any, *, form: str = "text") -> list[Any]:
        return [_labels_column(list(self.sampler.output_labels(i)), drawn[min(i, drawn.shape[0] - 1)], form)
                for i in range(len(self.attributes))]

    def output_counts(self, batch: Any, columns: str | Sequence[str]) -> Any:
        import pyarrow.compute as pc

        names = self.columns_for(columns)
        if self.loaded.mechanism is not None:  # joint: one output in every column; count the first
            return _label_counts(_column(batch, names[0]), list(self.sampler.output_labels(0)), names[0])
        parts = []
        for i, name in enumerate(names):
            array = _column(batch, name)
            if self.sampler.chooser is not None:  # sampled: only the records that report the attribute
                array = pc.drop_null(array)
            parts.append(_label_counts(array, list(self.sampler.output_labels(i)), name))
        return np.concatenate(parts)

    def decode(self, counts: Any, method: str = "linear") -> Any:
        from mechdesign.deploy.analysis._record_decode import decode_records

        number = np.asarray(counts)
        if self.loaded.mechanism is not None:
            return decode_records(self.loaded, [number], method)
        sizes = [len(self.sampler.output_labels(i)) for i in range(len(self.attributes))]
        return decode_records(self.loaded, np.split(number, np.cumsum(sizes)[:-1]), method)

    def _read(self, parsed: Any, public_key: Any, verify: bool) -> None:
        from mechdesign.mechfile._record import read_record_file, record_verification

        self.loaded = read_record_file(parsed, verify=verify, public_key=public_key)
        self.attributes = tuple(self.loaded.attributes)
        if not verify:  # reported by verify(), with what it recomputed
            self.verification = record_verification(self.loaded, parsed.name)

    def verify(self, data: Any = None, columns: Sequence[str] | None = None, **options: Any) -> Verdict:
        from mechdesign.deploy._verdicts import record

        return record(self, data, columns, **options)

    def decode_file(self, source: Any, columns: Sequence[str], **options: Any) -> Report:
        from mechdesign.deploy._decode_file import record

        return record(self, source, columns, **options)

    def assess(self, **options: Any) -> Report:
        from mechdesign.deploy._assess_file import record

        return record(self, **options)

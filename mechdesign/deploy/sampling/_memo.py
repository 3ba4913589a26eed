"""Memoized randomness: the same (user, value) always gets the same output, with no state kept.

A deployment that reports again and again (daily telemetry, survey waves) keeps one secret key K (32 random bytes;
a key file holds them as 64 hexadecimal characters and a newline, written by ``mechdesign memo-key``). The 64-bit
word that decides a record's output (the reference rule of :class:`~mechdesign.deploy.sampling.Privatizer`:
the first y with C[x, y] > U) is a keyed pseudo-random function of (file, attribute, user, value):

    U = first 8 bytes (big-endian) of CBC-MAC_K(H ‖ B₂ ‖ user ‖ V),  with the block cipher AES-256⁻¹_K,

* H: the 32 bytes of the file's ``sha256`` (two blocks): a new file draws new outputs;
* B₂ = ``"mdmemo1"``, a zero byte, the attribute index a (uint32, big-endian) and the user id's length in bytes
  (uint32, big-endian): 0 for a single-column file, i for factor i of a record file, d (one past the last) for the
  attribute a sampled record file reports;
* the user id's UTF-8 bytes (the text of the cell; integers in decimal), zero-padded to whole blocks;
* V = the value's index x (uint64, big-endian; the joint letter of a joint design) and 8 zero bytes;
* CBC-MAC: s₀ = 0, s_i = D_K(s_{i−1} ⊕ block_i), the tag is the last state.

The length in B₂ makes the messages prefix-free, and CBC-MAC over prefix-free messages with a pseudo-random
permutation is a pseudo-random function (Petrank–Rackoff; Bellare–Kilian–Rogaway), so the words of distinct
(file, attribute, user, value) are independent and uniform as long as AES is a PRP (up to the birthday bound
q²ℓ²/2¹²⁸). The permutation is AES **decryption**, itself a PRP, because browsers' WebCrypto applies it to many
blocks in one call (CBC decryption is parallel; encryption is not), so the JavaScript client reaches the same
words at the same speed. Here the blocks of all records of a chunk pass through OpenSSL's AES (``cryptography``)
one position at a time: about 3 ns per block.

What memoization guarantees (:mod:`mechdesign.mechfile._policy`): a person whose value does not change releases
one output in a lifetime, however often it is reported, so the lifetime leakage is exactly the file's ε; a
person whose value takes k distinct values releases k outputs (one per value). Re-runs, crashes and second machines
with the same key give the same outputs; a different key, or a different file, gives independent ones.

References
----------
E. Petrank, C. Rackoff, "CBC MAC for real-time data sources", J. Cryptology 13, 2000. M. Bellare, J. Kilian,
P. Rogaway, "The security of the cipher block chaining message authentication code", JCSS 61, 2000.
B. Ding, J. Kulkarni, S. Yekhanin, "Collecting telemetry data privately", NeurIPS 2017 (memoization).
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mechdesign import _validation as v
from mechdesign.deploy.sampling._decimal import decimal, fixed_width_decimal
from mechdesign.mechfile._policy import MEMO_SCHEME

__all__ = ["MAX_USER_BYTES", "MEMO_SCHEME", "RELEASE_TAG", "MemoFunction", "UserIds", "generate_memo_key",
           "read_memo_key", "user_ids"]

#: The longest user id accepted (UTF-8 bytes).
MAX_USER_BYTES = 1024
_TAG = b"mdmemo1\x00"
#: B₂'s first 8 bytes for the keyed draws of one release (record identity in place of the user id).
RELEASE_TAG = b"mdrels1\x00"
_KEY_FILE_BYTES = 65  # 64 hexadecimal characters and a newline
_BLOCK = 16


def generate_memo_key(path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write a new memoization key: 32 random bytes (``secrets``) as 64 hex characters and a newline, mode 0600.

    Parameters
    ----------
    path : str or os.PathLike
        The key file (written atomically; refused if it exists, unless ``force``: replacing a key changes every
        memoized output, which is a new release for everyone).
    force : bool
        Replace an existing file.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ValueError
        If ``path`` exists and ``force`` is false.

    References
    ----------
    The key of the keyed pseudo-random function of the module docstring (``mechdesign-memo-1``: CBC-MAC over
    AES-256, M. Bellare, J. Kilian, P. Rogaway, "The security of the cipher block chaining message authentication
    code", JCSS 61(3), 2000, for prefix-free inputs), as in RAPPOR's memoization (Erlingsson, Pihur, Korolova, CCS
    2014, §3).
    """
    from mechdesign._files import atomic_path

    target = Path(path)
    if target.exists() and not force:
        raise v.fail("key", "not exist (replacing a memo key draws new outputs for everyone: a new release; "
                     "use --force)", str(target))
    with atomic_path(target, mode=stat.S_IRUSR | stat.S_IWUSR) as tmp:
        tmp.write_text(secrets.token_bytes(32).hex() + "\n", encoding="ascii")  # the temporary file is 0600 too
    return target


def read_memo_key(path: str | os.PathLike[str], name: str = "memo_key") -> bytes:
    """The 32 bytes of a key file: exactly 64 hexadecimal characters, then one optional newline.

    Parameters
    ----------
    path : str or os.PathLike
        The key file (:func:`generate_memo_key`).
    name : str
        The argument errors name (a release key is read the same way: ``key``, ``--release-key``).

    Returns
    -------
    bytes
        The 32-byte key of the keyed pseudo-random function.

    Raises
    ------
    ValueError
        One line naming the rule, for any other content (nothing of the content is echoed: it is a secret); a
        file longer than 65 bytes is refused by its size, reading at most 66 bytes of it (a device such as
        ``/dev/zero`` is refused at once).
    OSError
        If the file cannot be read.

    References
    ----------
    The key of ``mechdesign-memo-1`` (module docstring; CBC-MAC over AES-256, Bellare, Kilian, Rogaway, JCSS 2000).
    """
    with open(path, "rb") as handle:  # read at most a key, a newline and one byte more (/dev/zero: 66 bytes)
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(_KEY_FILE_BYTES + 1)
    length = max(size, len(data))  # a longer file is refused below by its size, as the JavaScript client refuses it
    if length > _KEY_FILE_BYTES:
        data = b""
    text = data[:-1] if data.endswith(b"\n") else data
    try:
        key = bytes.fromhex(text.decode("ascii")) if len(text) == 64 else b""
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != 32 or not all(c in b"0123456789abcdefABCDEF" for c in text):
        raise ValueError(f"{name} must be a file of 64 hexadecimal characters and a newline (32 random bytes, as "
                         f"mechdesign memo-key writes), got a file of {length} bytes: {path}")
    return key


@dataclass(frozen=True)
class UserIds:
    """User ids as the PRF reads them: byte lengths and the bytes, zero-padded to whole 16-byte blocks.

    Parameters
    ----------
    lengths : numpy.ndarray
        int64, the UTF-8 length of each id (1 to :data:`MAX_USER_BYTES`).
    blocks : numpy.ndarray
        uint8, n × 16·B: row r holds id r's bytes, then zeros (B = the most blocks of any id).
    """

    lengths: np.ndarray
    blocks: np.ndarray

    def __len__(self) -> int:
        return int(self.lengths.size)

    def take(self, rows: np.ndarray) -> UserIds:
        """The ids of some records (for the records of one attribute of a sampled design)."""
        return UserIds(self.lengths[rows], self.blocks[rows])

    @classmethod
    def from_buffer(cls, data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> UserIds:
        """The ids ``data[starts[r] : starts[r] + lengths[r]]`` (uint8 bytes, e.g. the cells of a CSV chunk).

        The lengths must already lie in 1 … :data:`MAX_USER_BYTES` (:func:`user_ids` refuses the others).
        """
        return cls(np.asarray(lengths, dtype=np.int64), _padded_rows(data, starts, lengths))


def _padded(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Zero-padded rows (n × 16·B) from concatenated bytes: one strided gather of the rows, then a mask."""
    lengths = np.diff(offsets)
    width = _BLOCK * max(1, -(-int(lengths.max(initial=1)) // _BLOCK))
    if lengths.size and int(lengths.min()) == int(lengths.max()):  # fixed-width ids: a reshape
        out = np.zeros((lengths.size, width), dtype=np.uint8)
        out[:, :int(lengths[0])] = data[int(offsets[0]):int(offsets[-1])].reshape(lengths.size, -1)
        return out
    return _padded_rows(data, offsets[:-1], lengths)


def _padded_rows(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Zero-padded rows (n × 16·B) of ``data[starts[r] : starts[r] + lengths[r]]``: a gather of rows, then a mask.

    The buffer is read as overlapping items of 16·B bytes (item k = bytes k … k + 16·B − 1), so the gather is one
    ``take`` of fixed-size items, and the bytes past each id are cleared by AND with a mask row per length: 0.03 s
    per 10⁶ ids against 0.05 s for a gather of byte windows and a multiplication.
    """
    width = _BLOCK * max(1, -(-int(lengths.max(initial=1)) // _BLOCK))
    buffer = np.zeros(data.size + width, dtype=np.uint8)
    buffer[:data.size] = data
    items = np.ndarray((data.size + 1,), dtype=f"V{width}", buffer=buffer, strides=(1,))
    out = items.take(starts).view(np.uint8).reshape(-1, width)
    masks = (np.arange(width) < np.arange(width + 1)[:, None]).astype(np.uint8) * np.uint8(255)  # row L: L bytes
    words = out.view(np.uint64)
    np.bitwise_and(words, masks.view(np.uint64).take(np.minimum(lengths, width), axis=0), out=words)
    return out


def _decimal(values: np.ndarray) -> UserIds:
    """The decimal text of integers in padded rows, NumPy only (``_decimal.decimal``)."""
    return UserIds(*decimal(values))


def _digit_groups(values: np.ndarray) -> UserIds | None:
    """Non-negative ids below 10¹⁶ of several digit counts: each count's ids by :func:`fixed_width_decimal`.

    Positions of records (a batch's rows numbered from its first: 0 … 10⁶ spans 7 digit counts) take this path:
    ~25 ns an id against Arrow's cast and padding (~60–250 ns, by load). ``None`` for other ids.
    """
    x = values.reshape(-1)
    if x.size == 0 or int(x.min()) < 0 or int(x.max()) >= 10**16:
        return None
    digits = np.searchsorted(_POWERS, x.astype(np.int64), side="right")  # 1 + ⌊log₁₀ x⌋ (0: one digit; exact)
    lengths = np.empty(x.size, dtype=np.int64)
    rows = np.empty((x.size, _BLOCK), dtype=np.uint8)
    for count in np.unique(digits).tolist():
        at = np.flatnonzero(digits == count)
        found = fixed_width_decimal(x[at])
        assert found is not None  # one digit count, non-negative, below 10¹⁶: fixed_width_decimal's domain
        lengths[at], rows[at] = found
    return UserIds(lengths, rows)


#: 10¹ … 10¹⁶: ``searchsorted(_POWERS, x, side="right")`` is the digit count of 0 ≤ x < 10¹⁶.
_POWERS = np.array([10**k for k in range(1, 17)], dtype=np.int64)


def _integer_ids(values: np.ndarray) -> UserIds:
    """Integer ids in decimal text: ids of one digit count straight into their block, others by Arrow's cast.

    One digit count (sequential or fixed-width ids, :func:`~mechdesign.deploy.sampling._decimal.fixed_width_decimal`):
    25 ns an id; otherwise Arrow's integer-to-string cast and the padding, 60 ns an id, when pyarrow is installed,
    else :func:`_decimal` (260 ns; CPU time). A test holds all three to ``str``.
    """
    fixed = fixed_width_decimal(values)
    if fixed is not None:
        return UserIds(*fixed)
    mixed = _digit_groups(values)
    if mixed is not None:
        return mixed
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is the parquet extra
        return _decimal(values)
    # An Arrow array over the values' buffer: pa.array() would import pandas (0.5-0.8 s of a run's CPU).
    contiguous = np.ascontiguousarray(values)
    ids = _arrow_ids(pa.Array.from_buffers(pa.from_numpy_dtype(contiguous.dtype), contiguous.size,
                                           [None, pa.py_buffer(contiguous)]), "user_column")
    assert ids is not None
    return ids


def user_ids(values: Any, name: str = "user_column") -> UserIds:
    r"""User ids as the PRF reads them (:class:`UserIds`): UTF-8 bytes in padded rows.

    Strings are taken as written (the text of a CSV cell); integers in decimal, so a CSV column and a Parquet
    integer column of the same ids draw the same outputs. Missing ids, empty ids and ids longer than
    :data:`MAX_USER_BYTES` are refused: an output memoized for "no user" would be shared by all of them.

    Parameters
    ----------
    values : array_like, pandas.Series or pyarrow.Array
        One id per record (strings or integers).
    name : str
        The argument named in errors.

    Returns
    -------
    UserIds
        The lengths and padded bytes.

    Raises
    ------
    ValueError, TypeError
        One line naming ``name`` and the rule.

    Examples
    --------
    >>> ids = user_ids(["ann", "bo"])
    >>> ids.lengths.tolist(), ids.blocks[:, :4].tobytes()
    ([3, 2], b'ann\x00bo\x00\x00')
    >>> user_ids(np.array([7, -12])).blocks[:, :3].tobytes()
    b'7\x00\x00-12'
    """
    arrow = _arrow_ids(values, name)
    if arrow is not None:
        ids = arrow
    else:
        if isinstance(values, (list, tuple)) and all(isinstance(s, str) for s in values):
            values = np.array(values, dtype=object)  # not a NumPy str array: it would drop trailing NUL characters
        array = np.asarray(getattr(values, "to_numpy", lambda: values)())
        if array.ndim != 1:
            raise v.fail(name, "be one-dimensional (one id per record)", array.shape)
        if array.dtype.kind in "iu":
            ids = _integer_ids(array)
        elif array.dtype.kind == "U" or (array.dtype.kind == "O" and all(isinstance(s, str) for s in array)):
            encoded = [s.encode("utf-8") for s in array.tolist()]
            lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
            offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
            ids = UserIds(lengths, _padded(offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8)))
        else:
            bad = [s for s in array.tolist() if not isinstance(s, (str, int)) or isinstance(s, bool)][:3]
            raise TypeError(f"{name} must hold strings or integers (user ids), got {name} values {bad!r}")
    if ids.lengths.size and ids.lengths.min() == 0:
        raise v.fail(name, "hold no empty or missing user id (one memoized output would be shared by all of "
                     "them)", f"record {int(np.argmin(ids.lengths))}")
    if ids.lengths.size and ids.lengths.max() > MAX_USER_BYTES:
        raise v.fail(name, f"hold user ids of at most {MAX_USER_BYTES} bytes",
                     f"record {int(np.argmax(ids.lengths))}")
    return ids


def _arrow_ids(values: Any, name: str) -> UserIds | None:
    """The ids straight from Arrow buffers (no Python objects), or ``None`` when ``values`` is not Arrow."""
    module = type(values).__module__
    if not module.startswith("pyarrow"):
        return None
    import pyarrow as pa

    array = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if array.null_count:
        raise v.fail(name, "hold no missing user id", f"{array.null_count} null(s)")
    if pa.types.is_integer(array.type):
        fixed = fixed_width_decimal(_integer_view(array))
        if fixed is not None:
            return UserIds(*fixed)
        array = _cast(array, pa.large_string())  # Arrow's decimal text: the same bytes as _decimal, 4x faster
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
            or pa.types.is_dictionary(array.type)):
        raise TypeError(f"{name} must hold strings or integers (user ids), got {name} of type {array.type}")
    array = _cast(array, pa.large_string())
    offsets_buffer, data_buffer = array.buffers()[1], array.buffers()[2]
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[array.offset: array.offset + len(array) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    return UserIds(np.diff(offsets), _padded(offsets - offsets[0], data[offsets[0]:offsets[-1]]))


def _integer_view(array: Any) -> np.ndarray:
    """A NumPy view of an integer Arrow array without nulls (its values buffer, from the array's offset)."""
    import pyarrow as pa

    dtype = np.dtype(f"{'i' if pa.types.is_signed_integer(array.type) else 'u'}{array.type.bit_width // 8}")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def _cast(array: Any, target: Any) -> Any:
    """``pyarrow.compute.cast(array, target)``, by Arrow's cast kernel called directly.

    Importing :mod:`pyarrow.compute` wraps each of its ~300 kernels in a Python function with a generated docstring:
    some 0.1 s of CPU, a sixth of a whole memoized run over 10⁶ records, for the one kernel used here.
    """
    try:
        from pyarrow._compute import CastOptions, call_function
    except ImportError:  # pragma: no cover - the private module moved: the public one does the same
        import pyarrow.compute as pc

        return pc.cast(array, target)
    return call_function("cast", [array], CastOptions.safe(target))


@dataclass(frozen=True, eq=False)
class MemoFunction:
    """The keyed pseudo-random function of one file (module docstring): words for (attribute, user, value).

    Parameters
    ----------
    key : bytes
        The 32-byte secret (:func:`read_memo_key`).
    file_sha256 : str
        The file's ``sha256`` (64 hex digits): it separates the outputs of different files.
    tag : bytes
        The 8 bytes that open B₂: ``"mdmemo1"`` and a zero byte for memoized draws (module docstring),
        :data:`RELEASE_TAG` for the keyed draws of one release (:mod:`mechdesign.deploy._deployment`), so the
        same key used for both never gives one a word of the other.

    Examples
    --------
    >>> memo = MemoFunction(bytes(32), "00" * 32)
    >>> words = memo.words(0, user_ids(["ann", "ann", "bo"]), np.array([1, 1, 1]))
    >>> bool(words[0] == words[1]), bool(words[0] == words[2])
    (True, False)
    """

    key: bytes
    file_sha256: str
    tag: bytes = _TAG
    _prefix: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.key, bytes) or len(self.key) != 32:
            raise v.fail("key", "be 32 bytes", type(self.key).__name__)
        if self.tag not in (_TAG, RELEASE_TAG):
            raise v.fail("tag", f"be {_TAG!r} (memoized draws) or {RELEASE_TAG!r} (a release's keyed draws)", self.tag)
        try:
            digest = bytes.fromhex(self.file_sha256)
        except (TypeError, ValueError):
            digest = b""
        if len(digest) != 32:
            raise v.fail("file_sha256", "be 64 hexadecimal digits", self.file_sha256)
        blocks = np.frombuffer(digest, dtype=np.uint8).reshape(2, _BLOCK)
        state = np.zeros((1, _BLOCK), dtype=np.uint8)
        for block in blocks:
            state = self._decrypt(state ^ block)
        object.__setattr__(self, "_prefix", state[0].copy())

    def _decrypt(self, blocks: np.ndarray, out: np.ndarray | None = None, decryptor: Any = None) -> np.ndarray:
        """AES-256⁻¹_K on each row (n × 16 uint8, C-contiguous), in one OpenSSL call.

        ``out``: a flat uint8 buffer of at least n·16 + 16 bytes to write into (reused across the chain's steps);
        ``decryptor``: an ECB context of the key (ECB keeps no state between calls, so one serves a whole chain).
        """
        if decryptor is None:
            decryptor = self._decryptor()
        if out is None:
            out = np.empty(blocks.size + _BLOCK, dtype=np.uint8)
        source = np.ascontiguousarray(blocks).reshape(-1)
        decryptor.update_into(source.data, out.data)  # no copies: OpenSSL reads and writes the arrays' buffers
        return out[:blocks.size].reshape(-1, _BLOCK)

    def _decryptor(self) -> Any:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        return Cipher(algorithms.AES(self.key), modes.ECB()).decryptor()

    def _user_state(self, attribute: int, users: UserIds, n: int) -> np.ndarray:
        """The CBC-MAC state after H ‖ B₂ ‖ user id, one row per record (module docstring).

        The state after H ‖ B₂ depends on the id's length alone, so it is computed once per distinct length (at most
        :data:`MAX_USER_BYTES` of them) and gathered (copied when the ids have one length); then each record's
        own blocks are chained in place, all records at once, block position by block position (a chain within a
        record, independent across records).
        """
        if len(users) != n:
            raise v.fail("users", f"hold one id per value ({n})", len(users))
        decryptor = self._decryptor()
        lengths = users.lengths
        present = np.flatnonzero(np.bincount(lengths, minlength=1))
        second = np.empty((present.size, _BLOCK), dtype=np.uint8)
        second[:, :8] = np.frombuffer(self.tag, dtype=np.uint8)
        second[:, 8:12] = np.frombuffer(int(attribute).to_bytes(4, "big"), dtype=np.uint8)
        second[:, 12:16] = present.astype(">u4").view(np.uint8).reshape(present.size, 4)
        table = np.zeros((int(present.max(initial=0)) + 1, _BLOCK), dtype=np.uint8)
        table[present] = self._decrypt(second ^ self._prefix, decryptor=decryptor)
        # The chain runs in two buffers in turn (OpenSSL writes up to a block past the data: one spare block each).
        buffers = [np.empty(n * _BLOCK + _BLOCK, dtype=np.uint8) for _ in range(2)]
        state = buffers[0][:n * _BLOCK].reshape(n, _BLOCK)
        if present.size == 1:  # ids of one length (positions of one digit count): one state, copied, not gathered
            halves = state.view(np.uint64)
            halves[:, 0], halves[:, 1] = table[present[0]].view(np.uint64)  # two strided fills: 1/3 of a take's CPU
            count = -(-present // _BLOCK)
        else:
            np.take(table, lengths, axis=0, out=state)
            count = -(-lengths // _BLOCK)
        for i in range(users.blocks.shape[1] // _BLOCK):
            block = users.blocks[:, i * _BLOCK:(i + 1) * _BLOCK]
            if bool(np.all(count > i)):
                np.bitwise_xor(state, block, out=state)
                state = self._decrypt(state, buffers[1], decryptor)
                buffers.reverse()
            else:  # ids of fewer blocks are done: CBC-MAC reads exactly their own blocks
                active = np.flatnonzero(count > i)
                if active.size:
                    state[active] = self._decrypt(state[active] ^ block[active], decryptor=decryptor)
        return state

    def word_stream(self, attribute: int, users: UserIds, values: Any, count: int) -> np.ndarray:
        """``count`` words per record from the keyed stream of (file, attribute, user, value) (structured files).

        Word 2c and 2c + 1 are the first and the last 8 bytes (big-endian) of the tag whose last block is V_c =
        the value's index x (uint64, big-endian) followed by the counter c (uint64, big-endian): word 0 is the one
        :meth:`words` gives (c = 0 is its zero block). The messages of one (file, attribute, user) all have the same
        length and differ in their last block, so they stay prefix-free and the words independent and uniform.

        Parameters
        ----------
        attribute : int
            The attribute index a (0 for a single-column file).
        users : UserIds
            The records' user ids (:func:`user_ids`).
        values : array_like of int
            The value indices x, one per record.
        count : int
            Words per record (≥ 1).

        Returns
        -------
        numpy.ndarray
            uint64, shape (records, count).
        """
        x = np.asarray(values, dtype=np.uint64).reshape(-1)
        state = self._user_state(attribute, users, x.size)
        out = np.empty((x.size, 2 * -(-int(count) // 2)), dtype=np.uint64)
        value = np.zeros((x.size, _BLOCK), dtype=np.uint8)
        value[:, :8] = x.astype(">u8").view(np.uint8).reshape(x.size, 8)
        for c in range(out.shape[1] // 2):
            value[:, 8:] = np.frombuffer(c.to_bytes(8, "big"), dtype=np.uint8)
            tag = self._decrypt(state ^ value)
            out[:, 2 * c:2 * c + 2] = tag.copy().view(">u8").reshape(x.size, 2).astype(np.uint64)
        return out[:, :count]

    def words(self, attribute: int, users: UserIds, values: Any) -> np.ndarray:
        """The 64-bit words U of records (attribute, users[r], values[r]) (module docstring).

        Parameters
        ----------
        attribute : int
            The attribute index a (0 for a single-column file).
        users : UserIds
            The records' user ids (:func:`user_ids`).
        values : array_like of int
            The value indices x (the rows of the mechanism), one per record.

        Returns
        -------
        numpy.ndarray
            uint64 words, one per record.
        """
        x = np.asarray(values, dtype=np.uint64).reshape(-1)
        n = x.size
        state = self._user_state(attribute, users, n)
        # V = x (uint64, big-endian) then 8 zero bytes: XOR x's big-endian bytes into the first half of each row.
        halves = state.view(np.uint64)  # n × 2 words over the same bytes
        np.bitwise_xor(halves[:, 0], x.astype(">u8").view(np.uint64), out=halves[:, 0])
        tag = self._decrypt(state)
        return tag.view(">u8")[:, 0].astype(np.uint64)

"""File helpers shared by the library and the CLI: bounded reads, CSV names, JSON values and atomic writes.

**Atomic writes.** :func:`atomic_path` writes to a hidden temporary file beside the target,
``.<name>.mdtmp<pid>.<random>.part``, and renames it onto the target only on success, so a reader
never sees half a file. What an interrupted run leaves behind is cleaned as follows:

* an exception (``ENOSPC``, ``EFBIG``, Ctrl-C, …) removes the temporary file in ``finally``;
* SIGTERM: :func:`install_signal_cleanup` (called by the CLI) removes every live temporary file
  of this process, then exits with status 143;
* SIGKILL cannot be caught: the next :func:`atomic_path` in the same folder removes temporary files
  of this tool whose process (the pid in the name) no longer exists.

**Interrupts while a file is written (the CLI).** Python raises KeyboardInterrupt (and the SIGTERM handler
SystemExit) at whatever bytecode runs when the signal arrives; inside an import's weakref callback or a
``__del__`` the interpreter reports and *swallows* it, and the run went on to commit its output — Ctrl-C ignored
(seen under load: the CLI's lazy imports of pandas and pyarrow happen after the temporary file exists). After
:func:`install_signal_cleanup`, :func:`atomic_path` therefore *defers* SIGINT and SIGTERM in the main thread while
its file is open: the signal is recorded, the writers call :func:`checkpoint` between chunks, and the block checks
once more before the rename, so an interrupt during the write is honoured (exit 130 / 143, nothing on disk) and
never lost. One that arrives after that last check is delivered again once the file is committed.

Written files get the mode ``0o666 & ~umask`` of an ordinary file (the temporary file is created 0600).

The temporary file is registered before it is created (:func:`_new_part`), so no interrupt can leave one that
the cleanup does not know of.
"""

from __future__ import annotations

import math
import os
import re
import secrets
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["CSV_COMPRESSIONS", "CSV_NAME_RULE", "MAX_FILE_BYTES", "atomic_path", "check_write_size", "checkpoint",
           "csv_compression", "default_file_mode", "install_signal_cleanup", "max_file_bytes", "read_bounded",
           "refuse_replacing", "remove_stale_parts", "to_jsonable"]

_PART = re.compile(r"^\..+\.mdtmp(\d+)\.[^.]+\.part$")
_LIVE: set[Path] = set()  # temporary files of this process, removed by the SIGTERM handler
_LOCK = threading.Lock()
_DEFER = False               # set by install_signal_cleanup: atomic_path defers SIGINT/SIGTERM (module docstring)
_PENDING: list[int] = []     # signals received while deferred, in order
_DEPTH = [0]                 # nested atomic_path blocks holding the deferring handlers
_OWNER: list[object | None] = [None]  # the outermost block holding them (a token), None when none does


MAX_FILE_BYTES = 64 << 20  # whole-file reads (mechanism files, matrix CSVs): 64 MiB unless the environment says more
_LIMIT_VARIABLE = "MECHDESIGN_MAX_FILE_MB"


# A plain decimal number: what clients/js accepts too (Python's float() alone would take "1_0", "inf" or
# non-ASCII digits, which another language reads differently).
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def max_file_bytes() -> int:
    """The cap on whole-file reads: ``MECHDESIGN_MAX_FILE_MB`` (MiB) if set to a positive number, else 64 MiB.

    The clients read the same variable with the same rule (``docs/client_spec.rst``), so both languages refuse
    the same files.
    """
    from mechdesign._validation import environment, show_text

    read = environment(_LIMIT_VARIABLE)
    if read is None:
        return MAX_FILE_BYTES
    raw, text = read  # trimmed of ASCII white space only, as the client trims it
    value = float(text) if _DECIMAL.fullmatch(text) else math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{_LIMIT_VARIABLE} must be a positive number of MiB, got {_LIMIT_VARIABLE}={show_text(raw)}")
    return int(value * (1 << 20))


def check_write_size(name: str, size: int, path: str | os.PathLike[str], *, about: bool = False) -> None:
    """Refuse to write a file that :func:`read_bounded` would refuse to read back (one line, the cap named).

    A writer never produces a file its own readers refuse: ``verify``, ``privatize`` and every other
    reader of a mechanism file read it whole, up to :func:`max_file_bytes`. Writers call this with the exact size
    before they write, and where they can, with an estimate (``about``) before the work that would produce it.

    Parameters
    ----------
    name : str
        What is written (e.g. "mechanism file").
    size : int
        Its size in bytes (exact, or estimated with ``about``).
    path : path-like
        Where it would be written.
    about : bool, optional
        ``size`` is an estimate made before building the file.

    Raises
    ------
    ValueError
        If ``size`` exceeds :func:`max_file_bytes`.
    """
    limit = max_file_bytes()
    if size > limit:
        raise ValueError(f"{name} must be at most {limit / (1 << 20):g} MiB, the most its readers (verify, privatize) "
                         f"accept (set {_LIMIT_VARIABLE} to allow more, for the writer and its readers), got {name}="
                         f"{str(path)!r} ({'about ' if about else ''}{size:,} bytes)")


def read_bounded(source: str | os.PathLike[str] | BinaryIO, name: str, limit: int | None = None, *,
                 json_object: bool = False) -> bytes:
    """The bytes of ``source``, refusing more than ``limit`` (default :func:`max_file_bytes`) in one line.

    ``source`` is a path, or a binary stream already open (the CLI's ``-``: ``sys.stdin.buffer``), which is read
    from where it stands and not closed. A regular file is judged by its size before anything is read; a device,
    a pipe or a stream (``/dev/zero``, a FIFO, stdin) is read once, in 1 MiB steps, and refused as soon as it
    passes the limit, so memory never exceeds the limit plus one step. With ``json_object``, a stream whose first
    non-blank byte is not ``{`` is refused at once (64 MiB of zeros need not be read to know they are not a
    mechanism file).
    """
    limit = max_file_bytes() if limit is None else limit
    if not isinstance(source, (str, os.PathLike)):
        return _read_steps(source, name, str(getattr(source, "name", "-")), limit, json_object)
    path = source
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise ValueError(f"{_too_big(name, limit)}{name}={str(path)!r} ({size:,} bytes)")
        return _read_steps(handle, name, str(path), limit, json_object)


def _too_big(name: str, limit: int) -> str:
    return f"{name} must be at most {limit / (1 << 20):g} MiB (set {_LIMIT_VARIABLE} to allow more), got "


def _read_steps(handle: BinaryIO, name: str, shown: str, limit: int, json_object: bool) -> bytes:
    """Read ``handle`` to its end in 1 MiB steps, stopping as soon as more than ``limit`` bytes arrived."""
    parts: list[bytes] = []
    held = 0
    while True:
        part = handle.read(1 << 20)
        if not part:
            break
        if json_object and not parts:
            start = part.lstrip(b" \t\r\n\xef\xbb\xbf")[:1]  # JSON blanks and a UTF-8 byte-order mark
            if start and start != b"{":
                raise ValueError(f"{name} must be a JSON object (it starts with {start!r}), got {name}={shown!r}")
        parts.append(part)
        held += len(part)
        if held > limit:
            raise ValueError(f"{_too_big(name, limit)}{name}={shown!r} (more than {limit:,} bytes)")
    return b"".join(parts)


# Compressed CSV that mechdesign reads and writes: the standard library's codecs only (``.zst`` needs zstandard and
# ``.zip`` holds several files; pandas would accept both on input, with a long traceback when zstandard is absent).
CSV_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}
CSV_NAME_RULE = "end in .csv, .csv.gz, .csv.bz2 or .csv.xz (gzip, bzip2 and xz are the compressions supported)"


def csv_compression(path: str | os.PathLike[str], name: str) -> str | None:
    """The compression a CSV file's name says: ``None`` (``.csv``), ``"gzip"``, ``"bz2"`` or ``"xz"``.

    Only the suffixes after ``.csv`` count (``people.v2.csv.gz``). Any other ending (``.csv.zst``, ``.csv.zip``,
    ``.csv.bak``) is refused in one line naming ``name`` and the suffix, for input and output alike: a reader must
    never guess, and a writer must write what the name says.
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    rest = suffixes[len(suffixes) - suffixes[::-1].index(".csv"):] if ".csv" in suffixes else suffixes
    if not rest:
        return None
    if len(rest) == 1 and rest[0] in CSV_COMPRESSIONS:
        return CSV_COMPRESSIONS[rest[0]]
    raise ValueError(f"{name} must {CSV_NAME_RULE}, got {name}={str(path)!r} (suffix {''.join(rest)!r})")


def to_jsonable(value: Any) -> Any:
    """NumPy scalars/arrays → Python; non-finite floats → strings ('inf', 'nan')."""
    import numpy as np  # here, not at the top: the CLI imports this module before any verb runs

    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    return value


def default_file_mode() -> int:
    """``0o666 & ~umask``: the mode ``open()`` would give a new file."""
    try:  # Linux: read the umask without changing it (os.umask is process-wide and racy)
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except OSError:
        pass
    with _LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def remove_stale_parts(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove this tool's temporary files in ``folder`` whose writing process has died; return them."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _PART.match(entry.name)
        if match and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
            try:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
            except OSError:
                pass
    return removed


def remove_live_parts() -> None:
    """Remove this process's live temporary files (on SIGTERM, and where the CLI catches an interrupt)."""
    for path in list(_LIVE):
        try:
            path.unlink()
        except OSError:
            pass
        _LIVE.discard(path)


def _on_sigterm(signum: int, frame: Any) -> None:
    remove_live_parts()
    raise SystemExit(128 + signum)


def _new_part(target: Path) -> Path:
    """Create the temporary file of ``target``, registered in ``_LIVE`` before it exists.

    An interrupt raises at any bytecode, and in any thread the kernel chose to deliver the signal to (Python then
    raises it in the main thread at once: a signal mask held by the main thread alone did not stop it — seen as a
    ``.part`` left by SIGINT under load). Registered first, the file is known to :func:`remove_live_parts` at every
    instant it exists; a name registered but not created costs a failed unlink.
    """
    for _ in range(100):
        path = target.parent / f".{target.name}.mdtmp{os.getpid()}.{secrets.token_hex(6)}.part"
        _LIVE.add(path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            _LIVE.discard(path)
            continue
        except OSError:
            _LIVE.discard(path)
            raise
        os.close(fd)
        return path
    raise FileExistsError(f"output could not get a temporary file beside it, got output={str(target)!r}")


def _record(signum: int, frame: Any) -> None:
    _PENDING.append(signum)


def checkpoint() -> None:
    """Act on a signal deferred while a file is written; nothing when none is pending.

    SIGINT raises KeyboardInterrupt; SIGTERM removes the live temporary files and exits 143 (the handler of
    :func:`install_signal_cleanup`). Writers of long files call it between chunks, so that a deferred interrupt
    stops them promptly.
    """
    if _PENDING:
        signum = _PENDING[0]
        _PENDING.clear()
        if signum == signal.SIGTERM:
            _on_sigterm(signum, None)
        raise KeyboardInterrupt


@contextmanager
def _deferred_signals() -> Iterator[None]:
    """Record SIGINT / SIGTERM instead of raising while the block runs (module docstring); restore the handlers after.

    Only after :func:`install_signal_cleanup`, in the main thread, and for a handler that is still the one Python or
    the CLI installed (a program's own handler is left alone). A signal recorded and not consumed by
    :func:`checkpoint` inside the block is delivered again, to the restored handler, when the block ends.
    """
    if not _DEFER or threading.current_thread() is not threading.main_thread():
        yield
        return
    owned = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: _on_sigterm}
    # Nested only while an outer block really holds the handlers: a block left suspended (a writer's generator never
    # resumed) whose handlers were replaced since must not switch deferral off for every later write.
    if _DEPTH[0] and any(signal.getsignal(signum) is _record for signum in owned):
        _DEPTH[0] += 1
        try:
            yield
        finally:
            _DEPTH[0] = max(_DEPTH[0] - 1, 0)
        return
    token = object()
    previous = {signum: signal.getsignal(signum) for signum in owned}
    deferred = [signum for signum, handler in owned.items() if previous[signum] is handler]
    _PENDING.clear()
    _DEPTH[0], _OWNER[0] = 1, token
    try:
        for signum in deferred:
            signal.signal(signum, _record)
        yield
    finally:
        if _OWNER[0] is token:  # a stale block finishing late leaves a newer block's handlers and signals alone
            for signum in deferred:
                signal.signal(signum, previous[signum])
            _DEPTH[0], _OWNER[0] = 0, None
            late = list(dict.fromkeys(_PENDING))
            _PENDING.clear()
            for number in late:
                signal.raise_signal(number)


def install_signal_cleanup() -> None:
    """Make SIGTERM remove live temporary files (then exit 143), ignore SIGXFSZ, defer interrupts during writes.

    :func:`atomic_path` then defers SIGINT and SIGTERM while it writes (module docstring). With SIGXFSZ ignored a
    file-size limit (``ulimit -f``) is an ``OSError`` (EFBIG) with a message instead of a silent kill. Only from the
    main thread, and only where the handlers are still the defaults.
    """
    global _DEFER
    if threading.current_thread() is not threading.main_thread():
        return
    _DEFER = True
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _on_sigterm)
    if hasattr(signal, "SIGXFSZ") and signal.getsignal(signal.SIGXFSZ) == signal.SIG_DFL:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _is_signed(path: Path) -> bool:
    """Whether ``path`` looks like a signed mechanism file (any read or parse failure: no)."""
    import json

    try:
        content = json.loads(read_bounded(path, "file", json_object=True))
    except (OSError, ValueError):
        return False
    return isinstance(content, dict) and content.get("signature") is not None


def refuse_replacing(path: str | os.PathLike[str], force: bool, *, name: str, hint: str) -> str | None:
    """Refuse an existing ``path`` unless ``force``; with ``force``, the warning due before a signed file is replaced.

    The one rule of every writer that could replace someone's file (the CLI's ``--force``,
    ``DesignResult.save(force=)``): an existing output is an error naming ``name`` and how to replace it
    (``hint``: ``"--force"`` or ``"force=True"``), a signed mechanism file saying so; with ``force`` a signed file
    may be replaced, and the returned text (``None`` for any other file) is what the caller warns with, since the
    new file carries no signature.

    Parameters
    ----------
    path : str or os.PathLike
        The output about to be written.
    force : bool
        Whether replacing an existing file was asked for.
    name : str
        The argument naming the output, for the error (``out``, ``path``).
    hint : str
        How the caller asks for replacement.

    Returns
    -------
    str or None
        The warning for a signed file about to be replaced, else ``None``.

    Raises
    ------
    ValueError
        If ``path`` exists and ``force`` is false.
    """
    target = Path(path)
    if not target.exists():
        return None
    signed = target.is_file() and _is_signed(target)
    if not force:
        kind = "a signed mechanism file" if signed else "an existing file"
        raise ValueError(f"{name} must not exist (it is {kind}; use {hint} to replace it), got {name}={str(target)!r}")
    if signed:
        return (f"replacing the signed mechanism file {target}; the new file is not signed (sign it with "
                "mechdesign sign)")
    return None


@contextmanager
def atomic_path(target: str | os.PathLike[str], mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` only on success.

    Nothing half-written is ever left at ``target``; the temporary file is removed on failure, on
    SIGTERM (with :func:`install_signal_cleanup`) or, after SIGKILL, by the next call in that folder.
    The final file has ``mode``, by default the umask's (secrets pass 0o600). After :func:`install_signal_cleanup`,
    SIGINT and SIGTERM are deferred to :func:`checkpoint` calls and to the end of the block (module docstring).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_dir():
        raise IsADirectoryError(f"output must not be a directory, got output={str(target)!r}")
    remove_stale_parts(target.parent)
    with _deferred_signals():
        tmp_path = _new_part(target)
        # An interrupt from here on finds the file in _LIVE: the SIGTERM handler, the finally below or the CLI's
        # KeyboardInterrupt handler (remove_live_parts) removes it.
        try:
            yield tmp_path
            checkpoint()  # an interrupt deferred during the write: the file is not committed
            os.chmod(tmp_path, default_file_mode() if mode is None else mode)
            os.replace(tmp_path, target)
        finally:
            try:
                tmp_path.unlink(missing_ok=True)  # first: leaving _LIVE before the file is gone reopened the window
            finally:
                _LIVE.discard(tmp_path)

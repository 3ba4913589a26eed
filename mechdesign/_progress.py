"""Progress on stderr: a design's lines (:func:`say`) and a streamed file's records, rate and ETA (:class:`Progress`).

On the ground floor, so that every part that runs long reports alike: the design engines and ``mechdesign design``
(:func:`say`), the streams that privatize a file (:mod:`mechdesign.deploy.sampling._stream`, the record streams, the
Arrow path :mod:`mechdesign.deploy.sampling._arrow`) and those that count one for ``decode``
(:func:`mechdesign.deploy._io.count_labels`, the structured reports' tally), which must not import each other.
"""

from __future__ import annotations

import sys
import time

from mechdesign._files import checkpoint

__all__ = ["Progress", "format_rate", "say"]


def say(enabled: bool, message: str) -> None:
    """Print ``mechdesign design: <message>`` on stderr when ``enabled`` (a design's ``progress``), flushed at once."""
    if enabled:
        print(f"mechdesign design: {message}", file=sys.stderr, flush=True)


def format_rate(per_second: float) -> str:
    """A records/s rate with three significant digits and a unit that fits (a fixed ``M`` printed 0.0).

    >>> format_rate(12_345.0), format_rate(2.5e8), format_rate(7.0)
    ('12.3 k records/s', '250 M records/s', '7 records/s')
    """
    for unit, size in (("G ", 1e9), ("M ", 1e6), ("k ", 1e3)):
        if per_second >= size:
            return f"{per_second / size:.3g} {unit}records/s"
    return f"{per_second:.3g} records/s"


class Progress:
    r"""Progress on stderr: ``\r`` updates twice a second on a terminal, else one line every 5 s (logs, pipes).

    Each report gives the records done (``verb``: what was done to them, ``privatized`` or ``read``), the total and
    an ETA when the total is known (Parquet metadata; a CSV's record count is unknown until the end), and the rate.
    ``enabled``: ``None`` reports on a terminal only (the default of every verb), ``True`` anywhere (``--progress``).
    """

    def __init__(self, enabled: bool | None, total: int | None, verb: str = "privatized") -> None:
        self.verb = verb
        self.stream = sys.stderr
        self.tty = self.stream.isatty()
        self.enabled = self.tty if enabled is None else enabled
        self.every = 0.5 if self.tty else 5.0
        self.total, self.done, self.start, self.shown = total, 0, time.perf_counter(), 0.0
        self.shown_done: int | None = None  # the count the last report gave

    def update(self, records: int) -> None:
        """Count a chunk written, and act on an interrupt deferred while the output is written.

        Every streaming writer reports here between chunks: :func:`mechdesign._files.checkpoint`.
        """
        checkpoint()
        self.done += records
        now = time.perf_counter()
        if self.enabled and now - self.shown >= self.every:
            self._show(now)

    def note(self, text: str) -> None:
        """A line of its own when progress is shown: how the run goes (the Parquet writer's path, say)."""
        if self.enabled:
            self.stream.write(f"{text}\n")
            self.stream.flush()

    def close(self) -> None:
        """The last report, unless the previous one already gave the final count (and a newline on a terminal)."""
        if self.enabled:
            if self.shown_done != self.done:
                self._show(time.perf_counter())
            if self.tty:
                self.stream.write("\n")

    def _show(self, now: float) -> None:
        seconds = max(now - self.start, 1e-9)
        rate = self.done / seconds
        text = f"{self.verb} {self.done:,}"
        if self.total:
            left = max(self.total - self.done, 0)
            eta = f", ETA {left / rate:.0f} s" if rate > 0 and left else ""
            text += f" of {self.total:,} records ({100 * self.done / self.total:.0f} %, {format_rate(rate)}{eta})"
        else:
            text += f" records ({format_rate(rate)}; total unknown until the end of a CSV)"
        self.stream.write(f"\r{text}" if self.tty else f"{text}\n")
        self.stream.flush()
        self.shown, self.shown_done = now, self.done

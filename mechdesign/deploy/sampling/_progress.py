"""Progress of a streamed file on stderr: records done, the total when known, the rate and an ETA.

Shared by the single-column stream (:mod:`mechdesign.deploy.sampling._stream`), the record streams and the Arrow
path (:mod:`mechdesign.deploy.sampling._arrow`), which must not import each other in a cycle.
"""

from __future__ import annotations

import time

from mechdesign._files import checkpoint

__all__ = ["Progress", "format_rate"]


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

    Each report gives the records done, the total and an ETA when the total is known (Parquet metadata; a CSV's
    record count is unknown until the end), and the rate.
    """

    def __init__(self, enabled: bool | None, total: int | None) -> None:
        import sys

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
        text = f"privatized {self.done:,}"
        if self.total:
            left = max(self.total - self.done, 0)
            eta = f", ETA {left / rate:.0f} s" if rate > 0 and left else ""
            text += f" of {self.total:,} records ({100 * self.done / self.total:.0f} %, {format_rate(rate)}{eta})"
        else:
            text += f" records ({format_rate(rate)}; total unknown until the end of a CSV)"
        self.stream.write(f"\r{text}" if self.tty else f"{text}\n")
        self.stream.flush()
        self.shown, self.shown_done = now, self.done

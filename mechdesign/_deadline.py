"""One deadline for a whole run, passed down to every step that can take long.

``mechdesign design --time-limit T`` promises that the *command* ends within T seconds (up to a few percent or one
second): set-up, the design, its certificate, the baselines and the file all count. A :class:`Deadline` is created
once, when the command starts, and handed down; each long step asks it how much time is left, gives its
sub-solvers (HiGHS, Clarabel, the interior-point masters) limits taken from what is left, and either stops with the
best certified result it has or is skipped with a note. A step that needs time *after* another one (the file after
the design) keeps it with :meth:`Deadline.before`.

The clock is :func:`time.monotonic` unless another is injected (tests drive a step past its deadline with a fake
clock instead of sleeping). From the command line a limit starts at :func:`process_started`, so the seconds the
interpreter spent before the command ran (imports) count too, read from ``/proc`` where the system has it.

Examples
--------
>>> ticks = iter([0.0, 4.0, 11.0])
>>> deadline = Deadline(10.0, clock=lambda: next(ticks))
>>> deadline.remaining(), deadline.expired()
(6.0, True)
"""

from __future__ import annotations

import math
import os
import time
from collections import deque
from collections.abc import Callable

__all__ = ["Deadline", "contention", "process_started"]


class Deadline:
    """The end of a run on a monotone clock, and the time left until it.

    Parameters
    ----------
    seconds : float
        The time limit from ``started`` (``inf``: no limit).
    clock : callable, optional
        A monotone clock in seconds (default :func:`time.monotonic`, as it is when the deadline is made).
    started : float, optional
        When the limit started, on ``clock`` (default: now).

    Raises
    ------
    TypeError
        If ``seconds`` is not a real number.
    ValueError
        If ``seconds`` is NaN or negative.

    Examples
    --------
    >>> deadline = Deadline(60.0)
    >>> 59.0 < deadline.remaining() <= 60.0 and not deadline.expired()
    True
    >>> Deadline(math.inf).remaining()
    inf
    """

    __slots__ = ("clock", "end", "seconds")

    def __init__(self, seconds: float, *, clock: Callable[[], float] | None = None,
                 started: float | None = None) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError(f"seconds must be a real number, got seconds={seconds!r}")
        if math.isnan(seconds) or seconds < 0:
            raise ValueError(f"seconds must be >= 0, got seconds={seconds!r}")
        self.seconds = float(seconds)
        self.clock = time.monotonic if clock is None else clock  # looked up now: a test may have replaced it
        self.end = (self.clock() if started is None else float(started)) + self.seconds

    def remaining(self) -> float:
        """Seconds left (0 once the deadline has passed).

        Returns
        -------
        float
            ``max(end − now, 0)``.
        """
        return max(self.end - self.clock(), 0.0)

    def expired(self) -> bool:
        """Whether the deadline has passed.

        Returns
        -------
        bool
            ``now ≥ end``.
        """
        return self.clock() >= self.end

    def elapsed(self) -> float:
        """Seconds since the limit started.

        Returns
        -------
        float
            ``now − (end − seconds)``.
        """
        return self.clock() - (self.end - self.seconds)

    def before(self, seconds: float) -> Deadline:
        """The deadline of a step that must leave ``seconds`` for what follows it (same clock).

        Parameters
        ----------
        seconds : float
            Time kept after the step (≥ 0; ``inf`` gives a deadline that has already passed).

        Returns
        -------
        Deadline
            Ending ``seconds`` earlier.

        Examples
        --------
        >>> Deadline(10.0, clock=lambda: 0.0).before(3.0).remaining()
        7.0
        """
        keep = max(float(seconds), 0.0)
        child = Deadline.__new__(Deadline)
        child.clock = self.clock
        child.end = self.end - keep
        child.seconds = self.seconds - keep
        return child

    def limit(self, floor: float = 0.01) -> float:
        """A time limit for a sub-solver that ends by this deadline (at least ``floor``, which solvers need).

        Parameters
        ----------
        floor : float, optional
            The smallest limit handed out (HiGHS and Clarabel refuse 0).

        Returns
        -------
        float
            ``max(remaining, floor)``, capped at 1e30 (a finite number for the solvers' options).
        """
        return min(max(self.remaining(), floor), 1e30)

    def on_monotonic(self) -> float:
        """The deadline as a reading of :func:`time.monotonic`, for steps that compare against that clock.

        Returns
        -------
        float
            ``time.monotonic() + remaining``.
        """
        return time.monotonic() + self.remaining()

    def __repr__(self) -> str:
        return f"<Deadline {self.remaining():.3g} s left of {self.seconds:.3g} s>"


#: The most of a process's start-up a time limit counts (seconds): half the CLI's default limit.
START_UP_COUNTED = 30.0


def process_started() -> float:
    """When this process started, on :func:`time.monotonic` (now where ``/proc`` cannot tell).

    A start-up longer than :data:`START_UP_COUNTED` (a cold disk on a loaded machine, a clock oddity) counts that
    much: the default 60-s limit keeps at least half its time for the work, so a first run on a cold machine reports
    what a warm one does (the quick start's first run had skipped its optimal ε-LDP baseline, "no time left").

    Returns
    -------
    float
        ``time.monotonic()`` less the process's age, at most :data:`START_UP_COUNTED`.
    """
    return time.monotonic() - _process_age()


def _proc_times() -> tuple[float, float]:
    """(seconds since boot, seconds from boot to this process's start), from Linux ``/proc``."""
    with open("/proc/self/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    with open("/proc/uptime", encoding="ascii") as handle:
        uptime = float(handle.read().split()[0])
    return uptime, int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of stat(5), counted after the name


def _process_age() -> float:
    """Seconds since this process started, at most :data:`START_UP_COUNTED` (0 where ``/proc`` cannot tell)."""
    try:
        uptime, started = _proc_times()
    except (OSError, ValueError, IndexError):
        return 0.0
    return min(max(uptime - started, 0.0), START_UP_COUNTED)


_SAMPLES: deque[tuple[float, float]] = deque(maxlen=256)  # (time.monotonic(), time.process_time()) of past calls
_WINDOW = 30.0  # seconds over which this process's share of a core is measured


def contention() -> float:
    """How much slower than on one free core this process runs now: wall seconds per CPU second, at least 1.

    Time estimates of long steps (a certificate, a file) are CPU seconds measured on a quiet core; on a shared
    machine the process gets less than a core, and a step's wall time is longer by this factor. It is measured, not
    guessed from the load average: over the last :data:`_WINDOW` seconds of calls, or, early on, since the process
    started (a command is busy from its first instruction). The load average per core stands in only when neither
    is available (a long-lived process calling for the first time); on a 2-core machine at load 7 it said 3.5 where
    the process got 0.55 of a core (1.8), and a 10-s design stopped at 4 s.

    Returns
    -------
    float
        Between 1 and 20.
    """
    now, cpu = time.monotonic(), time.process_time()
    _SAMPLES.append((now, cpu))
    wall0, cpu0 = next((sample for sample in _SAMPLES if now - sample[0] <= _WINDOW), (now, cpu))
    if now - wall0 >= 1.0:
        share = (cpu - cpu0) / (now - wall0)
    else:
        age = _process_age()
        if not 1.0 <= age <= _WINDOW:
            return _load_per_core()
        share = cpu / age
    return min(max(1.0 / max(share, 1e-9), 1.0), 20.0)


def _load_per_core() -> float:
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return 1.0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(max(1.0, load / max(cores, 1)), 20.0)

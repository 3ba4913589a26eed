"""Exception classes of mechdesign.

Bad arguments raise the built-in ``ValueError`` / ``TypeError`` with the wording of
:mod:`mechdesign._validation`. Own classes exist only for failures that are not a
caller's typo: a solver that did not reach an optimum, a certificate that does not
hold, a mechanism file that cannot be trusted.
"""

from __future__ import annotations

__all__ = ["CertificateError", "MechanismFileError", "MechdesignError", "SolverError"]


class MechdesignError(Exception):
    """Base class of mechdesign's own failures.

    Catch it to handle every failure that is not a bad argument (those are ``ValueError``/``TypeError``).

    Examples
    --------
    >>> issubclass(CertificateError, MechdesignError) and issubclass(SolverError, MechdesignError)
    True
    """


class SolverError(MechdesignError):
    """A numerical solver ended with a status other than optimal.

    The constant mechanism is always feasible, so an "infeasible" status is a bug
    signal (or a numerical breakdown), never a property of the user's problem.

    Parameters
    ----------
    message : str
        What failed, in one line.
    status : str, optional
        The solver's status string (e.g. ``"infeasible"``, ``"solver_error"``), kept as :attr:`status`.

    Examples
    --------
    >>> SolverError("HIGHS ended with status 'infeasible'", status="infeasible").status
    'infeasible'
    """

    status: str | None

    def __init__(self, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.status = status


class CertificateError(MechdesignError):
    """A privacy or stochasticity certificate recomputed from a matrix does not hold.

    Raised by :meth:`mechdesign.design.Certificate.check` and by calibrators whose forward
    re-check fails (a bug signal: a reported guarantee is never left unchecked).
    """


class MechanismFileError(MechdesignError, ValueError):
    """A mechanism file is unreadable, malformed, tampered with or inconsistent.

    Also a ``ValueError``, so callers that treat bad input uniformly (the CLI: exit code 2) catch it.
    """

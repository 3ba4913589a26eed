"""Exception classes of mechdesign.

Bad arguments raise the built-in ``ValueError`` / ``TypeError`` with the wording of
:mod:`mechdesign._validation`. Own classes exist only for failures that are not a
caller's typo: a solver that did not reach an optimum, a certificate that does not
hold, a mechanism file that cannot be trusted.
"""

from __future__ import annotations

__all__ = ["CertificateError", "MechanismFileError", "MechdesignError", "SolverError"]


class MechdesignError(Exception):
    """Base class of mechdesign's own failures."""


class SolverError(MechdesignError):
    """A numerical solver ended with a status other than optimal.

    The constant mechanism is always feasible, so an "infeasible" status is a bug
    signal (or a numerical breakdown), never a property of the user's problem.
    """

    def __init__(self, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.status = status


class CertificateError(MechdesignError):
    """A privacy or stochasticity certificate recomputed from a matrix does not hold."""


class MechanismFileError(MechdesignError, ValueError):
    """A mechanism file is unreadable, malformed, tampered with or inconsistent."""

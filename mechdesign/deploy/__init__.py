"""Deployment in three parts: the file and its guarantee, sampling, analysis.

``file`` (the mechanism file and its guarantee), ``sampling`` (privatizing records) and ``analysis`` (decoding,
assessment and the data check), over the shared table reader ``_io``.

Imports point down only: ``sampling`` may use ``analysis`` (the data check before a release is committed) and
``file``; ``analysis`` uses ``file``; ``file`` uses neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"APPLICATION_ID": "_ledger", "Deployment": "_deployment", "Ledger": "_ledger",
          "PrivatizedFile": "_privatize", "privatize_file": "_privatize",
          "Release": "_deployment", "Report": "_reports", "Verdict": "_reports", "count_users": "_ledger",
          "load": "_kinds", "release_key": "_deployment", "signature_required": "_deployment"}
__all__ = ["APPLICATION_ID", "REQUIRE_SIGNATURE_VARIABLE", "Deployment", "Ledger", "PrivatizedFile", "Release",
           "Report", "Verdict", "count_users", "load", "privatize_file", "release_key", "signature_required"]

#: The deployment's signature policy in the environment: 1/true/yes refuses files no trusted key checked (defined
#: here, not in _deployment: the CLI's help names it without importing NumPy).
REQUIRE_SIGNATURE_VARIABLE = "MECHDESIGN_REQUIRE_SIGNATURE"

if TYPE_CHECKING:
    from mechdesign.deploy._deployment import (
        Deployment,
        Release,
        release_key,
        signature_required,
    )
    from mechdesign.deploy._kinds import load
    from mechdesign.deploy._ledger import APPLICATION_ID, Ledger, count_users
    from mechdesign.deploy._privatize import PrivatizedFile, privatize_file
    from mechdesign.deploy._reports import Report, Verdict

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)

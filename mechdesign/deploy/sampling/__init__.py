"""Sampling: the exact samplers of single-column and record files, and streaming over tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mechdesign._exports import attach
from mechdesign._progress import Progress  # on the ground floor: decoding's counts report progress too

# --- public names: the name -> private module map (mechdesign._exports.attach loads each on first use) ---
_WHERE = {"DistinctValues": "_changes", "MAX_USER_BYTES": "_memo", "MemoFunction": "_memo", "Privatizer": "_sampler",
          "RecordPrivatizer": "_record_sampler", "SymmetricPrivatizer": "_symmetric",
          "UNREPORTED": "_record_sampler", "UserIds": "_memo", "accept_limit": "_symmetric",
          "block_streams": "_stream", "generate_memo_key": "_memo", "memo_function": "_policy_rule",
          "privatize": "_sampler", "privatize_file": "_stream", "privatize_record_file": "_record_stream",
          "quantise_rows": "_quantise_rows", "read_memo_key": "_memo",
          "relative_deviation": "_record_sampler", "unpack": "_symmetric_tables", "user_ids": "_memo"}
__all__ = ["MAX_USER_BYTES", "UNREPORTED", "DistinctValues", "MemoFunction", "Privatizer", "Progress",
           "RecordPrivatizer", "SymmetricPrivatizer", "UserIds", "accept_limit", "block_streams", "generate_memo_key",
           "memo_function", "privatize", "privatize_file", "privatize_record_file", "quantise_rows", "read_memo_key",
           "relative_deviation", "unpack", "user_ids"]

if TYPE_CHECKING:
    from mechdesign.deploy.sampling._changes import DistinctValues
    from mechdesign.deploy.sampling._memo import (
        MAX_USER_BYTES,
        MemoFunction,
        UserIds,
        generate_memo_key,
        read_memo_key,
        user_ids,
    )
    from mechdesign.deploy.sampling._policy_rule import memo_function
    from mechdesign.deploy.sampling._quantise_rows import quantise_rows
    from mechdesign.deploy.sampling._record_sampler import UNREPORTED, RecordPrivatizer, relative_deviation
    from mechdesign.deploy.sampling._record_stream import privatize_record_file
    from mechdesign.deploy.sampling._sampler import Privatizer, privatize
    from mechdesign.deploy.sampling._stream import block_streams, privatize_file
    from mechdesign.deploy.sampling._symmetric import SymmetricPrivatizer, accept_limit
    from mechdesign.deploy.sampling._symmetric_tables import unpack

__getattr__, __dir__ = attach(__name__, _WHERE, __all__)

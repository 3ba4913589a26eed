"""Which columns of a table a mechanism file reads: one for a single-column file, one per attribute of a record file.

The rules every reader of a table applies — the CLI's ``--column`` and the adapters' ``columns`` (verify, decode,
assess) — with the one wording: several columns with a single-column file, or part of a record, are refused,
because per-attribute guarantees do not add up to a record guarantee.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = ["PER_ATTRIBUTE_REFUSAL", "column_order_hint", "record_columns", "single_column"]

PER_ATTRIBUTE_REFUSAL = "per-attribute guarantees do not add up to a record guarantee"


def single_column(columns: Sequence[str]) -> str:
    """The one column of a single-attribute mechanism file; several are refused, saying why."""
    if len(columns) > 1:
        raise ValueError(f"column must be given once for a single-attribute mechanism file (one column per file; "
                         f"several columns need a record file, designed with columns = [...] in the problem file) "
                         f"because {PER_ATTRIBUTE_REFUSAL}, got column={columns!r}")
    return columns[0]


def record_columns(columns: Sequence[str], attributes: tuple[str, ...]) -> list[str]:
    """The columns of a record file: one per attribute, in order; part of the record is refused."""
    if len(columns) != len(attributes):
        raise ValueError(f"column must be given once per attribute of the record file {list(attributes)} (in that "
                         f"order), not for part of the record, because {PER_ATTRIBUTE_REFUSAL}, got "
                         f"column={columns!r}")
    return list(columns)


@contextmanager
def column_order_hint(columns: Sequence[str], attributes: tuple[str, ...]) -> Iterator[None]:
    """Say that the order of the columns matters when a record file's data hold labels its attribute does not.

    The i-th column is read as the file's i-th attribute, and a swapped pair fails only there.
    """
    try:
        yield
    except ValueError as exc:
        if "must only hold" not in str(exc) or list(columns) == list(attributes):
            raise
        raise ValueError(f"{exc} (the order of --column matters: the i-th is read as the record file's i-th "
                         f"attribute {list(attributes)}, got column={list(columns)!r})") from None

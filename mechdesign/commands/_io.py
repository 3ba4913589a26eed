"""Shared helpers of the CLI verbs: reading inputs, printing results, atomic writes."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np


def parse_number_list(name: str, text: str) -> list[float]:
    """``"3,4,5"`` → ``[3.0, 4.0, 5.0]`` with a one-line error naming ``name``."""
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"{name} must be a comma-separated list of numbers, got {name}={text!r}") from None
    if not values:
        raise ValueError(f"{name} must be a non-empty comma-separated list of numbers, got {name}={text!r}")
    return values


def to_jsonable(value: Any) -> Any:
    """NumPy scalars/arrays → Python; non-finite floats → strings ('inf', 'nan')."""
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


def print_json(obj: Any) -> None:
    print(json.dumps(to_jsonable(obj), indent=2, allow_nan=False))


@contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` only on success.

    Nothing half-written is ever left at ``target`` (and the temporary file is removed
    on failure).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()

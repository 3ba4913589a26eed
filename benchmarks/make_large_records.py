"""Write the seeded records of a large-alphabet instance for empirical runs through the CLI (issue 43 item 4).

10⁶ records drawn from the instance's count prior (benchmarks/_large.py: one seeded multinomial draw, shuffled), one
column ``value`` holding the category labels (the problem file's: ``0`` … ``N − 1`` for Zipf, the words for English),
as Parquet (or gzip CSV with ``--csv``) in benchmarks/records/ (ignored by git: generated at run time, never committed).

Run: ``python benchmarks/make_large_records.py zipf-1000 [english-10000 …] [--records 1000000] [--csv]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

from _large import INSTANCES, RECORDS, problem, records  # noqa: E402

FOLDER = ROOT / "benchmarks" / "records"


def write(name: str, count: int = RECORDS, csv: bool = False) -> Path:
    """The records file of ``name`` (module docstring); returns its path."""
    import numpy as np
    import pandas as pd

    values, _ = records(name, count)
    labels = np.asarray(problem(name).prior.labels, dtype=object)
    frame = pd.DataFrame({"value": labels[values]})
    FOLDER.mkdir(parents=True, exist_ok=True)
    path = FOLDER / f"{name}-records.{'csv.gz' if csv else 'parquet'}"
    if csv:
        frame.to_csv(path, index=False, compression={"method": "gzip", "mtime": 0})
    else:
        frame.to_parquet(path, index=False)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+", choices=INSTANCES)
    parser.add_argument("--records", type=int, default=RECORDS)
    parser.add_argument("--csv", action="store_true", help="gzip CSV instead of Parquet")
    args = parser.parse_args(argv)
    for name in args.instances:
        print(write(name, args.records, args.csv))


if __name__ == "__main__":
    main()

"""Build mechdesign/data/adult.csv.gz from ../shared/data/uci-adult (run once; output is committed).

Keeps the categorical attributes used by tests, problems, benchmarks and figures, in file
order (adult.data then adult.test), strips whitespace and the trailing '.' of test labels.
Missing values stay as '?' (a category of their own, as in the raw files).
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from pathlib import Path

COLUMNS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
           "native-country", "income"]
ALL = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
       "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
       "income"]


def main(source: Path, target: Path) -> None:
    rows = []
    for name in ("adult.data", "adult.test"):
        for line in (source / name).read_text().splitlines():
            if not line.strip() or line.startswith("|"):
                continue
            values = [v.strip() for v in line.split(",")]
            record = dict(zip(ALL, values, strict=True))
            record["income"] = record["income"].rstrip(".")
            rows.append([record[c] for c in COLUMNS])
    # mtime=0 makes the gzip byte-reproducible.
    with open(target, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        text = io.TextIOWrapper(gz, encoding="utf-8", newline="")
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows(rows)
        text.flush()
        text.detach()
    print(f"wrote {len(rows)} records to {target}")


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "data" / "uci-adult"
    main(src, root / "mechdesign" / "data" / "adult.csv.gz")

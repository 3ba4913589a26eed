"""Write the small input files used by the README, the CLI ``--help`` examples and the docs gallery.

``examples/people.csv``: 2,000 synthetic records (id, age, race) whose race column follows Adult's race
frequencies (the labels of ``problems/adult-race.toml``); ``examples/w.csv``: a 4×4 mechanism with labels;
``examples/records.csv``: 5,000 records (id, race, sex, education) drawn from the vendored Adult rows, for the
whole-record examples.
Seeded, so re-running gives the same files: ``.venv/bin/python tools/make_examples.py``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RACE = {"White": 41762, "Black": 4685, "Asian-Pac-Islander": 1519, "Amer-Indian-Eskimo": 470, "Other": 406}


def main() -> None:
    out = ROOT / "examples"
    out.mkdir(exist_ok=True)
    rng = np.random.default_rng(2024)
    labels = list(RACE)
    p = np.array(list(RACE.values()), dtype=float)
    race = rng.choice(len(labels), size=2000, p=p / p.sum())
    age = rng.integers(17, 90, size=2000)
    with (out / "people.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "age", "race"])
        for i, (a, r) in enumerate(zip(age, race, strict=True)):
            writer.writerow([i + 1, int(a), labels[r]])
    # A 4-ary mechanism: keep the input with probability 0.55, else one of the other three uniformly (0.15).
    names = ["a", "b", "c", "d"]
    with (out / "w.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", *names])
        for i, name in enumerate(names):
            writer.writerow([name, *("0.55" if j == i else "0.15" for j in range(4))])
    from mechdesign import load_adult

    adult = load_adult(["race", "sex", "education"])
    rows = np.random.default_rng(20).integers(0, len(adult), size=5000)
    table = adult.iloc[rows].reset_index(drop=True)
    table.insert(0, "id", np.arange(1, len(table) + 1))
    table.to_csv(out / "records.csv", index=False)


if __name__ == "__main__":
    main()

"""Write the English word-frequency problems problems/english-10000.toml and english-100000.toml (issue 43 item 4).

Source: the English "large" word list of the ``wordfreq`` package, version 3.1.1 (Robyn Speer; data CC BY-SA 4.0,
see problems/data/README.md), vendored as problems/data/english-words.csv.gz: its first 100,000 entries in the
package's order (frequency descending, alphabetical within a frequency), each with its frequency in centibels
(wordfreq stores log10 frequencies rounded to 0.01: f = 10^(cB/100)). Nothing is downloaded: ``--vendor`` rebuilds
that table from an installed wordfreq 3.1.1 (``pip install wordfreq==3.1.1``) and every other step reads it.

The prior of the top N words is a count prior of m records drawn from f restricted to them (renormalised):
* english-10000 (m = 10⁶): one seeded multinomial draw, ``default_rng(SEED + N + attempt)``, the first attempt with
  every word drawn at least once (the Zipf problems' rule; about 1.1 unseen words are expected per draw).
* english-100000 (m = 10⁷): an expected Σ exp(−m f_k) ≈ 10,096 words would be drawn 0 times (P(none) ≈ e^−10096), so
  no redraw can give full support: every word gets one record and the other m − N are one multinomial draw,
  ``1 + default_rng(SEED + N).multinomial(m − N, f)`` (the convention of benchmarks/bench_time_limit.py).

Run: ``python tools/make_english_problems.py [--vendor]``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_zipf_problems import DATA, ROOT, draw_full_support, ldp_field, write_table

SEED = 20261143
WORDS = DATA / "english-words.csv.gz"
TOP = 100_000
WORDFREQ = "3.1.1"
SAMPLES = {10_000: 1_000_000, 100_000: 10_000_000}
ADD_ONE = {100_000}


def vendor() -> None:
    """Rebuild problems/data/english-words.csv.gz from wordfreq's English 'large' list (module docstring)."""
    from importlib.metadata import version

    import wordfreq

    if version("wordfreq") != WORDFREQ:
        raise SystemExit(f"wordfreq must be version {WORDFREQ}, got wordfreq={version('wordfreq')!r}")
    rows: list[tuple[str, int]] = []
    for index, words in enumerate(wordfreq.get_frequency_list("en", "large")):  # bin i holds the words at −i cB
        rows.extend((word, -index) for word in words)
        if len(rows) >= TOP:
            break
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["word", "centibels"])
    writer.writerows(rows[:TOP])
    with open(WORDS, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
        out.write(text.getvalue().encode("utf-8"))
    print(f"wrote {WORDS} ({TOP} words from wordfreq {WORDFREQ})", file=sys.stderr)


def words() -> tuple[list[str], np.ndarray]:
    """The vendored words and their frequencies f = 10^(cB/100), in wordfreq's order."""
    with gzip.open(WORDS, "rt", encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        if next(reader) != ["word", "centibels"]:
            raise SystemExit(f"{WORDS} must start with the header word,centibels")
        rows = list(reader)
    return [w for w, _ in rows], 10.0 ** (np.array([int(c) for _, c in rows]) / 100.0)


def draw(n: int, frequencies: np.ndarray) -> tuple[np.ndarray, str]:
    """The counts of the top ``n`` words and how they were drawn (module docstring)."""
    m, p = SAMPLES[n], frequencies[:n] / frequencies[:n].sum()
    if n in ADD_ONE:
        unseen = float(np.exp(-m * p).sum())
        counts = 1 + np.random.default_rng(SEED + n).multinomial(m - n, p)
        return counts, (f"one record of every word plus one multinomial draw of m - N = {m - n} records, numpy "
                        f"default_rng({SEED} + {n}) (a plain draw of m would leave about {unseen:.0f} words unseen)")
    counts, seed = draw_full_support(p, m, SEED + n)
    attempt = seed - SEED - n
    how = f"one multinomial draw of m = {m} records, numpy default_rng({SEED} + {n}" + (
        f" + {attempt}): the first of seeds {SEED} + {n} + 0, 1, ... whose draw has every word at least once"
        if attempt else ")")
    return counts, how


def text(n: int, expected: str, how: str) -> str:
    m = SAMPLES[n]
    return f'''name = "english-{n}"
description = "English word frequencies (wordfreq {WORDFREQ}), the top N = {n} words, m = {m} records: A-optimal \
(minimum total MSE) design, epsilon = 1 nat, delta = 1e-6"
[data]
counts = "data/english-{n}.csv.gz"   # label,count: one row per word, wordfreq's order (tools/make_english_problems.py)
[privacy]
epsilon = 1.0
delta = 1e-6          # radius beta*(delta) from [E] eq. 37 with m = {m}
[utility]
kind = "estimation_mse"   # tr J^-1 - 1: n x total MSE of the efficient decoder on n fixed records (minimised)
{expected}[provenance]
source = "wordfreq {WORDFREQ} (Robyn Speer, doi:10.5281/zenodo.7199437), English 'large' list, data CC BY-SA 4.0: \
the first {n} entries of problems/data/english-words.csv.gz (problems/data/README.md)"
draw = "{how}"
'''


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vendor", action="store_true", help=f"rebuild {WORDS.name} from wordfreq {WORDFREQ} first")
    args = parser.parse_args(argv)
    if args.vendor:
        vendor()
    labels, frequencies = words()
    for n in sorted(SAMPLES):
        counts, how = draw(n, frequencies)
        path = ROOT / "problems" / f"english-{n}.toml"
        if path.exists() and "[expected]" in path.read_text():  # keep measured values
            old = path.read_text()
            expected = old[old.index("[expected]"):old.index("[provenance]")]
        else:
            expected = "[expected]\n" + ldp_field(counts)
        write_table(DATA / f"english-{n}.csv.gz", counts, labels[:n])
        path.write_text(text(n, expected, how))
        print(f"wrote {path} ({np.unique(counts).size} classes; {how})", file=sys.stderr)


if __name__ == "__main__":
    main()

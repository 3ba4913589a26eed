"""Issue 18: the quick-start round trip on Adult native-country (N = 42, priced estimation engine) through the CLI.

design (A-optimal, 42 categories, no enumeration) → privatize the 48,842 Adult records → decode: every frequency
within 4 standard errors of the truth (a fixed seed, but the design behind it stops at a 15-s wall-clock limit, so under
load the mechanism, and with it the draw, differ: 3 standard errors over 42 frequencies were missed by chance about one
run in ten — 3.03 at Puerto-Rico in one CI run; 4 leave about 0.3 % family-wise).
"""

from __future__ import annotations

import json

import pytest

from mechdesign import load_adult

from conftest import PROBLEMS


@pytest.mark.slow
def test_native_country_design_privatize_decode_recovers_every_frequency(tmp_path, cli):
    made = cli("design", str(PROBLEMS / "adult-native-country-estimation.toml"), "--out", str(tmp_path),
               "--time-limit", "15", "--no-baselines")
    assert made.returncode == 0, made.stderr
    file = tmp_path / "adult-native-country-estimation.mech.json"
    content = json.loads(file.read_text())
    assert len(content["inputs"]) == 42 and content["guarantee"]["epsilon"] <= 1.0
    frame = load_adult(["native-country"])
    frame.to_csv(tmp_path / "people.csv", index=False)
    out = tmp_path / "private.csv"
    done = cli("privatize", str(file), "--data", str(tmp_path / "people.csv"), "--column", "native-country",
               "--out", str(out), "--seed", "2026")
    assert done.returncode == 0, done.stderr
    decoded = cli("decode", str(file), "--data", str(out), "--column", "native-country", "--json")
    assert decoded.returncode == 0, decoded.stderr
    result = json.loads(decoded.stdout)
    truth = frame["native-country"].value_counts(normalize=True)
    assert set(result["frequencies"]) == set(truth.index)
    misses = [(label, value, truth[label], result["standard_errors"][label])
              for label, value in result["frequencies"].items()
              if abs(value - truth[label]) > 4 * result["standard_errors"][label]]
    assert not misses, misses

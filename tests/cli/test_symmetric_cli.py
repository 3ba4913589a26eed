"""The CLI on structured files: verify, privatize, decode and export, with the refusals of bad input (exit 2).

Oracles: the prior the records were drawn from (the decoded estimate within 5 standard errors), the same reports on
a second memoized run, the dense file's capacity recomputed by the dense verifier, and an unchanged directory after
every refusal.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from mechdesign.mechfile import write_symmetric_file

from symmetric_fixtures import SMALL_COUNTS, random_mechanism

RADIUS = 0.3


@pytest.fixture
def design(tmp_path):
    m = random_mechanism(SMALL_COUNTS, 3, types=8)
    path = write_symmetric_file(tmp_path / "s.json", m, guarantee={"epsilon": m.capacity(RADIUS), "radius": RADIUS})
    rng = np.random.default_rng(0)
    rows = rng.choice(m.cells.size, 30_000, p=m.cells.item_counts() / m.cells.samples)
    data = tmp_path / "data.csv"
    data.write_text("id,item\n" + "".join(f"u{i % 5000},{m.inputs[x]}\n" for i, x in enumerate(rows)))
    return m, path, data


def test_verify_prints_the_guarantee_and_the_design(cli, design):
    m, path, _ = design
    done = cli("verify", str(path))
    assert done.returncode == 0, done.stderr
    assert "pml epsilon" in done.stdout and "holds" in done.stdout
    assert f"{m.cells.size} inputs in {m.cells.count} cells, {m.types} types" in done.stdout
    info = json.loads(cli("verify", str(path), "--json").stdout)
    assert info["kind"] == "symmetric" and info["holds"] and info["report_bytes_max"] >= len("t0.0")


@pytest.mark.slow  # round 12: 0.11 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_privatize_then_decode_recovers_the_prior(cli, design, tmp_path):
    m, path, data = design
    out = tmp_path / "private.csv"
    # in process: privatize's real entry point runs in tests/cli/test_startup.py
    done = cli("privatize", str(path), "--data", str(data), "--column", "item", "--out", str(out), "--seed", "4")
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "id,item" and len(lines) == 30_001 and all(line.split(",")[1].startswith("t")
                                                                  for line in lines[1:50])
    decoded = json.loads(cli("decode", str(path), "--data", str(out), "--column", "item", "--json").stdout)
    prior = m.cells.item_counts() / m.cells.samples
    for label, p in zip(m.inputs, prior, strict=True):
        assert abs(decoded["frequencies"][label] - p) <= 5 * decoded["standard_errors"][label] + 1e-3


@pytest.mark.slow  # round 12: 0.25 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_memoized_reports_repeat_across_runs_and_parquet_works(cli, design, tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, path, data = design
    key = tmp_path / "k.key"
    assert cli("memo-key", str(key)).returncode == 0
    outs = []
    for name in ("a.csv", "b.csv"):
        done = cli("privatize", str(path), "--data", str(data), "--column", "item", "--out", str(tmp_path / name),
                   "--memo-key", str(key), "--user-column", "id")
        assert done.returncode == 0, done.stderr
        outs.append((tmp_path / name).read_text())
    assert outs[0] == outs[1]
    rows = [line.split(",") for line in data.read_text().splitlines()[1:]]
    table = pa.table({"id": [row[0] for row in rows], "item": [row[1] for row in rows]})
    pq.write_table(table, tmp_path / "d.parquet")
    done = cli("privatize", str(path), "--data", str(tmp_path / "d.parquet"), "--column", "item", "--out",
               str(tmp_path / "p.parquet"), "--seed", "1")
    assert done.returncode == 0, done.stderr
    written = pq.read_table(tmp_path / "p.parquet")
    column = written.column("item")
    assert len(column) == 30_000 and column.type == pa.binary()  # the binary form (client_spec.rst)
    assert written.column("id").to_pylist() == table.column("id").to_pylist()
    # The reports (distinct, near-random bytes) are written plain: no dictionary, compression or min/max; the
    # other columns keep Parquet's defaults.
    chunk = pq.ParquetFile(tmp_path / "p.parquet").metadata.row_group(0)
    reports, ids = (chunk.column(i) for i in (written.schema.get_field_index("item"),
                                              written.schema.get_field_index("id")))
    assert reports.compression == "UNCOMPRESSED" and not reports.is_stats_set
    assert not any("DICTIONARY" in encoding for encoding in reports.encodings)
    assert ids.compression == "SNAPPY" and ids.is_stats_set


def test_export_dense_verifies_densely_and_a_large_design_is_refused(cli, design, tmp_path):
    _, path, _ = design
    done = cli("export", str(path), "--dense", "--out", str(tmp_path / "d.json"))
    assert done.returncode == 0, done.stderr
    dense = json.loads(cli("verify", str(tmp_path / "d.json"), "--json").stdout)
    structured = json.loads(cli("verify", str(path), "--json").stdout)
    assert dense["holds"] and dense["achieved"] <= structured["epsilon"]
    big = random_mechanism([5] * 251 + [3] * 7, 1, types=6)
    big_path = write_symmetric_file(tmp_path / "big.json", big, guarantee={"epsilon": big.capacity(0.0),
                                                                           "radius": 0.0})
    refused = cli("export", str(big_path), "--dense", "--out", str(tmp_path / "big-dense.json"))
    assert refused.returncode == 2 and "export must have at most 1,000,000 matrix entries" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "big-dense.json").exists()


@pytest.mark.parametrize(("edit", "code", "text"), [
    (lambda c: c["counts"].__setitem__(0, 0), 2, "counts[0] must be a positive integer"),
    (lambda c: c["counts"].pop(), 2, "counts must be an array of 16 integers"),
    (lambda c: c["types"]["weights"].__setitem__(0, c["types"]["weights"][0] * 1.5), 2, "sha256 must match"),
    (lambda c: c["guarantee"].__setitem__("epsilon", c["guarantee"]["epsilon"] / 2), 1, "exceeds stated"),
])
def test_bad_files_exit_with_one_line_and_write_nothing(cli, design, tmp_path, edit, code, text):
    from mechdesign.mechfile import canonical_bytes

    _, path, data = design
    content = json.loads(path.read_text())
    edit(content)
    if "sha256 must match" not in text:
        import hashlib

        content["sha256"] = hashlib.sha256(canonical_bytes(content)).hexdigest()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(content))
    done = cli("verify", str(bad))
    assert done.returncode == code and text in done.stderr and len(done.stderr.strip().splitlines()) == 1
    before = sorted(p.name for p in tmp_path.iterdir())
    out = cli("privatize", str(bad), "--data", str(data), "--column", "item", "--out", str(tmp_path / "o.csv"))
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_parquet_labels_read_by_arrow_give_the_csv_reports_and_bad_ones_are_refused(cli, design, tmp_path):
    # The Parquet path looks labels up in Arrow (index_in); with the same seed it must give the CSV path's reports
    # (labels encoded by encode_labels), and an unknown label or a null must still be refused in one line.
    pytest.importorskip("pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, path, data = design
    items = [line.split(",")[1] for line in data.read_text().splitlines()[1:]]
    pq.write_table(pa.table({"item": items}), tmp_path / "d.parquet")
    for name, source in (("p.parquet", tmp_path / "d.parquet"), ("p.csv", data)):
        done = cli("privatize", str(path), "--data", str(source), "--column", "item", "--out", str(tmp_path / name),
                   "--seed", "7")
        assert done.returncode == 0, done.stderr
    from mechdesign.mechfile import PlacementFamily

    m = design[0]
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    from_csv = [line.split(",")[1] for line in (tmp_path / "p.csv").read_text().splitlines()[1:]]
    column = pq.read_table(tmp_path / "p.parquet").column("item")
    assert column.type == pa.binary()
    assert column.to_pylist() == [family.binary(*family.parse(text)) for text in from_csv]
    for bad, rule in (([*items[:10], "nowhere"], "input labels"), ([*items[:10], None], "no nulls")):
        pq.write_table(pa.table({"item": pa.array(bad, pa.string())}), tmp_path / "bad.parquet")
        done = cli("privatize", str(path), "--data", str(tmp_path / "bad.parquet"), "--column", "item", "--out",
                   str(tmp_path / "bad-out.parquet"), "--seed", "7")
        assert done.returncode == 2 and rule in done.stderr and len(done.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "bad-out.parquet").exists()


@pytest.mark.slow  # round 12: 0.18 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_binary_reports_in_parquet_and_arrow_decode_as_their_text_in_csv(cli, design, tmp_path):
    # privatize writes Parquet and Arrow IPC reports as a binary column (the type and V in the fewest whole bytes)
    # and CSV ones as text; with one seed they are the same reports, and decode reads each form to one estimate.
    # A binary report that is not one of the file's (V at or above |S_t|) is refused in one line, exit 2.
    pytest.importorskip("pyarrow")
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    m, path, data = design
    items = [line.split(",")[1] for line in data.read_text().splitlines()[1:]]
    pq.write_table(pa.table({"item": items}), tmp_path / "d.parquet")
    feather.write_feather(pa.table({"item": items}), tmp_path / "d.arrow", compression="uncompressed")
    estimates = []
    for source, name in ((data, "p.csv"), (tmp_path / "d.parquet", "p.parquet"), (tmp_path / "d.arrow", "p.arrow")):
        done = cli("privatize", str(path), "--data", str(source), "--column", "item", "--out", str(tmp_path / name),
                   "--seed", "11")
        assert done.returncode == 0, done.stderr
        decoded = cli("decode", str(path), "--data", str(tmp_path / name), "--column", "item", "--json")
        assert decoded.returncode == 0, decoded.stderr
        estimates.append(json.loads(decoded.stdout))
    assert estimates[0] == estimates[1] == estimates[2] and estimates[0]["records"] == 30_000
    assert feather.read_table(tmp_path / "p.arrow").column("item").type == pa.binary()
    from mechdesign.mechfile import PlacementFamily

    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    t = max(range(m.types), key=family.seed_count)
    reports = pq.read_table(tmp_path / "p.parquet").column("item").to_pylist()
    too_big = family.binary(t, 0)[:1] + (family.seed_count(t)).to_bytes(len(family.binary(t, 0)) - 1, "big")
    reports[4] = too_big
    pq.write_table(pa.table({"item": pa.array(reports, pa.binary())}), tmp_path / "bad.parquet")
    done = cli("decode", str(path), "--data", str(tmp_path / "bad.parquet"), "--column", "item", "--json")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "report[4] must hold a seed below |S_t|" in done.stderr


@pytest.mark.parametrize(("form", "bad"), [
    *((form, bad) for form in ("csv", "parquet") for bad in ("unknown type", "seed too large", "wrong length",
                                                             "not a report")), ("csv", "not hex")])
def test_decode_refuses_a_malformed_report_in_one_line_naming_it(cli, design, tmp_path, form, bad):
    # The vectorised readers (text: a sliding window of the hex digits; binary: a reshape where every report has
    # one length) hand anything malformed to the checked path, which names the first bad report: exit 2, one line.
    pytest.importorskip("pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mechdesign.mechfile import PlacementFamily

    m, path, _ = design
    family = PlacementFamily(m.cells, m.high_counts, m.low_counts)
    t = max(range(m.types), key=family.seed_count)
    good = [(t, (7919 * i) % family.seed_count(t)) for i in range(40)]
    if form == "csv":
        reports = [family.text(*report) for report in good]
        reports[9] = {"unknown type": f"t{m.types}." + reports[9].split(".")[1],
                      "seed too large": f"t{t}." + f"{family.seed_count(t):x}".rjust(family.hex_width(t), "0"),
                      "wrong length": reports[9] + "0", "not a report": "x" + reports[9],
                      "not hex": reports[9][:-1] + "g"}[bad]
        rule = {"unknown type": "name a type below", "seed too large": "hold a seed below |S_t|",
                "wrong length": "hex digits after the dot", "not a report": "have the form",
                "not hex": "hold lowercase hex digits"}[bad]
        source = tmp_path / "bad.csv"
        source.write_text("item\n" + "\n".join(reports) + "\n")
    else:
        blobs = [family.binary(*report) for report in good]
        width = len(blobs[0]) - 1
        blobs[9] = {"unknown type": bytes([m.types]) + blobs[9][1:],
                    "seed too large": blobs[9][:1] + family.seed_count(t).to_bytes(width, "big"),
                    "wrong length": blobs[9] + b"\x00", "not a report": b""}[bad]
        rule = {"unknown type": "name a type below", "seed too large": "hold a seed below |S_t|",
                "wrong length": "bytes of type and its type's bytes of seed", "not a report": "hold a type in"}[bad]
        source = tmp_path / "bad.parquet"
        pq.write_table(pa.table({"item": pa.array(blobs, pa.binary())}), source)
    done = cli("decode", str(path), "--data", str(source), "--column", "item", "--json")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "report[9] must" in done.stderr and rule in done.stderr, done.stderr


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_column_the_file_lacks_is_refused_in_one_line(cli, design, suffix, tmp_path):
    """Issue 61: pyarrow's read_dictionary looked the name up first (a KeyError, a traceback, exit 1)."""
    pytest.importorskip("pyarrow")
    import pyarrow.csv as pc
    import pyarrow.parquet as pq

    _, path, data = design
    source, target = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    if suffix == ".parquet":
        pq.write_table(pc.read_csv(data), source)
    else:
        source.write_bytes(data.read_bytes())
    done = cli("privatize", str(path), "--data", str(source), "--column", "nope", "--out", str(target), "--seed", "1")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "column must be one of the input's columns ['id', 'item'], got column='nope'" in done.stderr
    assert not target.exists()

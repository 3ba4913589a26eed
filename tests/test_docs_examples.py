"""Every page of the documentation runs as written: its examples in order, in a fresh copy of the repository in
which the README's quick start ran first (``tests/doc_examples.py`` says how: shell blocks included)."""

from __future__ import annotations

import pytest
from doc_examples import document_blocks, run_document

from conftest import ROOT

PAGES = sorted(path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").rglob("*.rst")
               if "_build" not in path.parts and "generated" not in path.parts and "auto_examples" not in path.parts
               and not path.name.startswith("_"))
WITH_EXAMPLES = [page for page in PAGES if any(b.language != "text" for b in document_blocks(ROOT / "docs" / page))]
# Pages whose examples take more than a few seconds (designs and calibrations measured at 8-70 s on 2 cores): they
# run under ``-m slow`` (.ci/run), the others in the default suite. Two more by the default tier's rule (a whole
# design at a realistic size, a second CLI round trip through a tested path; benchmarks/results/suite_moved.md,
# Round 6b): howto/repeated.rst (3.8 s of CPU: the Adult two-layer design solved through the CLI; by default the CLI
# writes that design's file in tests/design/test_two_layer.py::test_the_cli_writes_a_file_that_states_all_three_levels
# and verify --releases runs in tests/cli/test_releases_cli.py) and howto/decode.rst (2.2 s: four decodes of 2,000
# records, the ML ones with 200 bootstrap refits; by default tests/cli/test_decode_ml_cli.py runs the same commands).
SLOW = {"howto/records.rst", "howto/calibrate.rst", "reproductions.rst", "howto/large_alphabets.rst",
        "howto/repeated.rst", "howto/decode.rst"}

# Pages that start a cluster (extras [spark]; Java): under ``-m cluster`` (.ci/run's own step).
CLUSTER = {"howto/spark.rst"}


def test_the_slow_pages_exist():
    assert SLOW <= set(WITH_EXAMPLES)


def test_every_page_states_the_language_of_its_blocks():
    for page in PAGES:
        document_blocks(ROOT / "docs" / page)  # refuses an unmarked literal block (::)


@pytest.mark.parametrize("page", [pytest.param(page, marks=pytest.mark.slow) if page in SLOW else
                                  pytest.param(page, marks=pytest.mark.cluster) if page in CLUSTER else page
                                  for page in WITH_EXAMPLES])
def test_every_docs_example_runs_as_written(page, tmp_path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    for name in ("PYSPARK_PYTHON", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE", "SPARK_REMOTE"):
        monkeypatch.setenv(name, "")  # recorded, then removed: what a Spark page sets is undone after it
        monkeypatch.delenv(name)
    run_document(ROOT / "docs" / page, tmp_path / "checkout")

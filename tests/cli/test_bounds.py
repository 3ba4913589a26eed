"""Bounds before work (issue 61 item 7): each input a user controls is checked against a stated bound first and
refused in one line in seconds, or handled in bounded memory.

* an error line echoes at most :data:`mechdesign._validation.SHOWN_MAX` characters of a value (a 1 GB CSV value
  was echoed whole: a "one-line" error of 1,000,000,168 bytes);
* a Parquet footer is at most :data:`mechdesign.deploy._parquet_pages.FOOTER_MAX` bytes, its length checked before
  it is read (a 240 MB footer was decoded whole in Python: 81–196 s and more than 8 GB);
"""

from __future__ import annotations

import pytest

from mechdesign.cli import main
from mechdesign.design.polytope import randomized_response
from mechdesign.mechfile import write_mechanism_file

HUGE = 1_000_000  # characters of one CSV value: the refusal must not grow with it


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("mechdesign: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.fixture
def rr(tmp_path):
    return write_mechanism_file(tmp_path / "rr.json", randomized_response(2, 1.0, ["a", "b"]),
                                guarantee={"notion": "ldp", "epsilon": 1.0})


# --- an echoed value is cut ---------------------------------------------------------------------------------

@pytest.mark.parametrize("verb", ["privatize", "decode"])
def test_a_huge_value_is_not_echoed_whole(rr, tmp_path, capsys, verb):
    data = tmp_path / "data.csv"
    data.write_text("x\na\n" + "z" * HUGE + "\n")
    out = tmp_path / "out.csv"
    argv = [verb, str(rr), str(data), "--column", "x"] + (["--out", str(out)] if verb == "privatize" else [])
    assert main(argv) == 2
    err = _one_line_error(capsys)
    assert len(err) < 1_000 and f"(a value of {HUGE:,} characters)" in err
    assert not out.exists() and not list(tmp_path.glob("*.part"))


def test_show_value_cuts_at_the_stated_bound():
    from mechdesign._validation import SHOWN_MAX, show_value

    assert show_value("a" * (SHOWN_MAX - 2)) == repr("a" * (SHOWN_MAX - 2))  # the quotes fill the bound
    cut = show_value("a" * (SHOWN_MAX - 1))
    assert cut.startswith("'" + "a" * (SHOWN_MAX - 2) + "…")
    assert cut.endswith(f"(a value of {SHOWN_MAX - 1} characters)")
    assert show_value(list(range(10**5))).endswith("(a value of 688,890 characters)")


# --- a Parquet footer's length is checked before it is read -------------------------------------------------------

@pytest.mark.parametrize("verb", ["privatize", "decode"])
def test_a_parquet_footer_over_the_bound_is_refused_before_it_is_read(rr, tmp_path, capsys, verb):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from mechdesign.deploy._parquet_pages import FOOTER_MAX

    data = tmp_path / "data.parquet"  # a valid file (pyarrow reads it): its schema metadata fills the footer
    table = pa.table({"x": ["a", "b"]}).replace_schema_metadata({"filler": "f" * (FOOTER_MAX // 2)})
    pq.write_table(table, data)  # the metadata is written twice (and once more in base64 in ARROW:schema)
    length = int.from_bytes(data.read_bytes()[-8:-4], "little")
    assert length > FOOTER_MAX and len(pq.read_table(data)) == 2
    out = tmp_path / "out.parquet"
    argv = [verb, str(rr), str(data), "--column", "x"] + (["--out", str(out)] if verb == "privatize" else [])
    assert main(argv) == 2
    err = _one_line_error(capsys)
    assert "footer is at most 8 MiB" in err and f"(a footer of {length:,} bytes)" in err
    assert not out.exists() and not list(tmp_path.glob("*.part"))

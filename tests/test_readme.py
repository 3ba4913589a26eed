"""The README is a front door, and its examples run as written (``tests/doc_examples.py`` says how).

The README's examples run in order in one copy of the repository, shell blocks included, the quick start first;
the install commands of the quick start are replaced by the environment these tests run in, and its test command
is the one running this file. The tables it quotes from ``benchmarks/results/*_table.md`` are those files, verbatim.
"""

from __future__ import annotations

import re
import subprocess

from doc_examples import (
    RUN_LANGUAGES,
    Session,
    check_output,
    markdown_blocks,
    quick_start,
    run_document,
    shell_commands,
)

from conftest import ROOT

README = ROOT / "README.md"


def test_the_output_matcher_can_fail():
    assert check_output(["a", "…", "d"], ["a", "b", "c", "d"]) is None
    assert check_output(["x = …1.5…"], ["x = 2 and 1.5!"]) is None
    assert check_output(["a"], ["a", "b"]) is not None          # unshown output is a mismatch
    assert check_output(["a", "c"], ["a", "b", "c"]) is not None  # no silent skipping without …
    assert check_output(["…holds…"], ["f: DOES NOT HOLD"]) is not None


def test_the_readme_is_short_and_its_quick_start_is_two_commands():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250
    commands = [command for command, _ in shell_commands(quick_start())]
    assert len(commands) == 2, commands
    assert commands[0].endswith("mechdesign design problems/adult-race-estimation.toml --out designs/")
    ci_last = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert commands[1] == ci_last, "the README's test command is .ci/run's last line"


def test_no_heading_names_an_issue_or_work_in_progress():
    pages = [README, *sorted((ROOT / "docs").rglob("*.rst"))]
    for page in pages:
        lines = page.read_text(encoding="utf-8").splitlines()
        headings = [line for line in lines if line.startswith("#")] if page.suffix == ".md" else [
            lines[i] for i in range(len(lines) - 1) if lines[i].strip() and re.fullmatch(r"([=\-~^\"'])\1+",
                                                                                             lines[i + 1].strip())]
        for heading in headings:
            assert not re.search(r"issue \d+|in progress", heading, re.I), f"{page.name}: {heading}"


def test_the_readme_has_an_example_per_job():
    blocks = markdown_blocks(README)
    commands = " ".join(c for b in blocks if b.language in RUN_LANGUAGES - {"python"} for c, _ in shell_commands(b))
    for verb in ("design", "verify", "privatize", "decode", "calibrate", "memo-key", "mechdesign-js"):
        assert verb in commands, verb
    assert "--column race --column sex" in commands  # a record-level example
    assert any(b.language == "python" for b in blocks)


def test_the_readme_quotes_generated_tables_verbatim():
    text = README.read_text(encoding="utf-8")
    quoted = sorted(set(re.findall(r"benchmarks/results/(\w+)_table\.md", text)))
    assert quoted, "the headline table is generated (benchmarks/headline.py)"
    for name in quoted:
        table = (ROOT / "benchmarks" / "results" / f"{name}_table.md").read_text(encoding="utf-8")
        assert table in text, f"README.md quotes benchmarks/results/{name}_table.md: paste it again after regenerating"


def test_every_readme_example_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    session = run_document(README, tmp_path / "checkout")
    assert len(session.ran) >= 12


def test_the_examples_run_in_a_copy_of_what_git_tracks(tmp_path):
    """A reader who followed the README has private.csv, deployment.key and designs/ in the checkout: the copy the
    examples run in leaves them out (they made six examples refuse, "out must not exist"), and holds the tracked
    files as the working tree has them."""
    repo = tmp_path / "repo"
    (repo / "problems").mkdir(parents=True)
    (repo / "problems" / "a.toml").write_text("old\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "problems/a.toml"], check=True)
    (repo / "problems" / "a.toml").write_text("edited, not committed\n")
    (repo / "designs").mkdir()
    for stray in ("private.csv", "deployment.key", "designs/adult-race-estimation.mech.json"):
        (repo / stray).write_text("a reader's output\n")
    session = Session.checkout(tmp_path / "copy", source=repo)
    copied = sorted(p.relative_to(session.root).as_posix() for p in session.root.rglob("*") if p.is_file()
                    and ".venv" not in p.parts)
    assert copied == ["problems/a.toml"]
    assert (session.root / "problems" / "a.toml").read_text() == "edited, not committed\n"

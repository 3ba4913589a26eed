"""One vocabulary across the CLI: renamed flags, deprecated aliases, one example in every verb's --help."""

from __future__ import annotations

import argparse
import shlex

import pytest

from mechdesign.cli import _command_modules, build_parser, main


def _subparsers(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subparsers(sub, (*prefix, name))
            return
    yield prefix, parser


def test_every_verb_help_ends_with_an_example_that_parses():
    verbs = dict(_subparsers(build_parser()))
    assert set(verbs) == {module.COMMAND for module in _command_modules()}
    for path, parser in verbs.items():
        help_text = parser.format_help()
        commands = [line.strip()[2:] for line in help_text.split("example:\n", 1)[1].splitlines()]
        assert commands and all(command.startswith("mechdesign ") for command in commands), path
        assert commands[-1].startswith("mechdesign " + " ".join(path)), path  # the verb's own command ends it
        for command in commands:
            build_parser().parse_args(shlex.split(command)[1:])  # each line is valid for the parser


@pytest.mark.slow  # round 12: 0.14 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
@pytest.mark.parametrize(("old", "new"), [
    (["calibrate", "laplace", "--epsilon", "0.7", "--delta", "1e-9", "--samples", "10000", "--p-min", "0.3"],
     ["calibrate", "laplace", "--epsilon", "0.7", "--delta", "1e-9", "--samples", "10000", "--p-hat-min", "0.3"]),
])
def test_deprecated_flag_works_with_one_warning_line(capsys, old, new):
    assert main(new) == 0
    expected = capsys.readouterr()
    assert expected.err == ""
    assert main(old) == 0
    got = capsys.readouterr()
    assert got.out == expected.out
    assert got.err.count("\n") == 1 and "--p-min is deprecated" in got.err and "--p-hat-min" in got.err


def test_assess_data_flag_and_its_deprecated_samples_alias(tmp_path, capsys):
    from conftest import ROOT

    data = str(ROOT / "examples" / "people.csv")
    matrix = tmp_path / "rr.csv"
    labels = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
    matrix.write_text(",".join(["", *labels]) + "\n" + "\n".join(
        ",".join([a, *("0.6" if a == b else "0.1" for b in labels)]) for a in labels) + "\n")
    assert main(["assess", "--matrix", str(matrix), "--data", data, "--column", "race", "--json"]) == 0
    new = capsys.readouterr()
    assert main(["assess", "--matrix", str(matrix), "--samples", data, "--column", "race", "--json"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and "--samples is deprecated" in old.err and new.err == ""
    assert main(["assess", "--matrix", str(matrix), "--data", str(tmp_path / "no.csv"), "--column", "race"]) == 2
    assert "data must be an existing" in capsys.readouterr().err


def test_samples_is_a_count_in_calibrate(capsys):
    assert main(["calibrate", "gaussian", "--epsilon", "1", "--sigma", "1.5", "--samples", "10000",
                 "--p-hat-min", "0.3"]) == 0
    with pytest.raises(SystemExit):
        main(["calibrate", "laplace", "--epsilon", "1", "--delta", "1e-9", "--samples", "data.csv",
              "--p-hat-min", "0.3"])
    assert "invalid int value" in capsys.readouterr().err

"""mechdesign._plotting: labelled heatmaps and comparisons, matplotlib imported lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mechdesign import Mechanism, plot_comparison, plot_mechanism
from mechdesign._plotting import STYLES

from conftest import ROOT


@pytest.fixture(autouse=True, scope="module")
def _agg():
    """The non-interactive backend, chosen here rather than at import: importing matplotlib costs 0.3 s of CPU,
    which every xdist worker paid at collection whether or not it ran these tests."""
    import matplotlib

    matplotlib.use("Agg")


@pytest.mark.slow  # round 12: 0.61 s of CPU under CI's profile (benchmarks/results/suite_moved.md)
def test_heatmap_has_the_labels_and_one_annotation_per_cell():
    mechanism = Mechanism.from_matrix([[0.9, 0.1], [0.25, 0.75]], ["no", "yes"], ["N", "Y"])
    ax = plot_mechanism(mechanism, title="t")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["N", "Y"]
    assert sorted(t.get_text() for t in ax.texts) == ["0.10", "0.25", "0.75", "0.90"]
    assert ax.get_title() == "t"


def test_comparison_uses_distinct_styles_and_light_error_bars():
    ax = plot_comparison([0.5, 1.0, 2.0], {"a": [1, 2, 3], "b": [1, 2, 3], "c": [0, 1, 2]},
                         errors={"a": [0.1, 0.1, 0.1]}, logy=False)
    lines = [line for line in ax.get_lines() if line.get_label() in ("a", "b", "c")]
    assert len({(str(line.get_linestyle()), line.get_marker()) for line in lines}) == 3  # identical data stay visible
    assert len(STYLES) >= 6
    with pytest.raises(ValueError, match="one value per epsilon"):
        plot_comparison([0.5, 1.0], {"a": [1, 2, 3]})


def test_importing_the_module_does_not_import_matplotlib():
    code = "import sys, mechdesign._plotting; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"

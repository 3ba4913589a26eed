"""Golden record designs: product, sampled and joint designs on small priors.

``tests/data/records_golden.json`` holds the ``to_dict()`` of each design (matrices, the record-level ε, the
MSE; the joint design's CPU seconds left out) computed by :func:`compute`; the refactoring that shared the record
designs' set-up (issue 39, item 4) kept every bit. The comparison allows 1e-9 relative (1e-12 absolute) on floats:
the designs come from interior-point and simplex solvers whose last bits follow their start and the BLAS (the
deadline's warm start moved them by 1e-13), while the structure (labels, shapes, statuses) must match exactly.
Regenerate (only after a change of result that is meant) with ``python tests/records/test_records_golden.py
--write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mechdesign.records import JointPrior, design_joint, design_product, design_sampled

from conftest import assert_close_tree

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "records_golden.json"


def _priors() -> dict[str, JointPrior]:
    return {
        "square": JointPrior.from_table([[40, 10], [5, 45]], attributes=["a", "b"]),
        "zero": JointPrior.from_table([[40, 10], [0, 50]], attributes=["a", "b"]),
        "wide": JointPrior.from_table([[30, 5, 12], [8, 25, 20]], attributes=["u", "v"]),
    }


def _cases() -> dict[str, Any]:
    p = _priors()
    return {
        "product_rr": lambda: design_product(p["square"], 1.0, radius=0.1, factor="randomized_response"),
        "product_rr_weights": lambda: design_product(p["wide"], 0.8, delta=1e-3, factor="randomized_response",
                                                     weights=[2.0, 1.0]),
        "product_estimation": lambda: design_product(p["wide"], 1.5, radius=0.2),
        "product_optimise": lambda: design_product(p["square"], 1.2, radius=0.05, weights="optimise"),
        "sampled": lambda: design_sampled(p["wide"], 1.0, radius=0.1),
        "sampled_uniform": lambda: design_sampled(p["square"], 0.7, delta=1e-2, probabilities="uniform"),
        "sampled_given": lambda: design_sampled(p["wide"], 1.3, radius=0.3, probabilities=[1.0, 3.0]),
        "joint_marginals": lambda: design_joint(p["zero"], 1.0, radius=0.1),
        "joint_joint": lambda: design_joint(p["square"], 1.0, radius=0.1, objective="joint"),
        "joint_mi": lambda: design_joint(p["wide"], 1.0, radius=0.2, objective="mi"),
    }


def _summary(design: Any) -> Any:
    summary = design.to_dict()
    summary.get("engine", {}).pop("seconds", None)  # CPU time: not a result
    return json.loads(json.dumps(summary))


def compute() -> dict[str, Any]:
    """Every pinned design summary, by case."""
    return {name: _summary(make()) for name, make in _cases().items()}


@pytest.mark.parametrize("case", sorted(_cases()))
def test_golden_design_unchanged(case):
    stored = json.loads(GOLDEN.read_text())[case]
    assert_close_tree(_summary(_cases()[case]()), stored, case, rel_tol=1e-9, abs_tol=1e-12)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    GOLDEN.write_text(json.dumps(compute(), indent=0) + "\n")

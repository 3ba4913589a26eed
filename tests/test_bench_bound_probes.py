"""The C2 probe of benchmarks/bench_bound_probes.py (issue 60): its roots, one box per listed high set, cover every
type of family C2, so the reach's bound from them is sound wherever its branch and bound stops — the probe's numbers
are upper bounds like the shipped roots' — and its list of high sets is every one, checked by brute force."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import bench_bound_probes
from benchmarks.bench_dual_form import families
from mechdesign.core import Prior
from mechdesign.design import DesignProblem
from mechdesign.design.polytope import column_vertices
from mechdesign.design.symmetric._instance import Instance
from mechdesign.design.symmetric._reach import _family_c2

from conftest import counted, examples_beside


@settings(max_examples=examples_beside(6, 30, each_solves=True), deadline=None)
@given(counts=st.lists(st.integers(1, 5), min_size=3, max_size=8), seed=st.integers(0, 2**32 - 1),
       epsilon=st.sampled_from([0.7, 2.0, 4.0]), radius=st.sampled_from([0.05, 0.2, 0.5, 1.0]),
       readings=st.integers(0, 600))
def test_listed_high_sets_bound_every_c2_vertex(counts, seed, epsilon, radius, readings):
    problem = DesignProblem(Prior.from_counts(counts), epsilon, radius, "estimation_mse")
    instance = Instance.from_problem(problem)
    rng = np.random.default_rng(seed)
    w, lam = rng.uniform(0.0, 2.0, instance.count), rng.normal(0.0, 2.0, instance.count)
    bound, _ = _family_c2(instance, w, lam, counted(readings), roots=bench_bound_probes.type_roots(instance))
    cv = column_vertices(problem.prior, epsilon, radius)
    vectors = cv.vectors()
    c2 = families(cv, problem.prior.probabilities, radius / 2) == "C2"
    if c2.any():
        cell = instance.cells.cell_of
        values = ((vectors[:, c2] ** 2) * w[cell][:, None]).sum(axis=0) - lam[cell] @ vectors[:, c2]
        assert bound >= float(values.max()) - 1e-9 * max(1.0, abs(float(values.max())))


def test_the_high_sets_are_every_light_count_vector():
    p, sizes, half = np.array([0.3, 0.2, 0.05]), np.array([1, 2, 3]), 0.46
    listed = {tuple(row) for row in bench_bound_probes.high_sets(p, sizes, half)}
    brute = {a for a in itertools.product(*(range(s + 1) for s in sizes)) if any(a) and np.dot(a, p) < half}
    assert listed == brute
    assert bench_bound_probes.high_sets(p, sizes, half, most=3) is None

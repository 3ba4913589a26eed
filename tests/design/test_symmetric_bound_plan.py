"""The large-alphabet bound's plan where the powers' cuts run, and its branch and bound's monotone boxes [D].

Where h* < 0.7·e^ε (ε = 4 on the grid) a reach call costs seconds and one cut by the deadline bounds little, so the
bound times its calls and starts none that the time left cannot fit (``_bound._Meter``); a round each for the
design's w and the three powers of P̂, then the best its further rounds. The checks: with a fake clock on which each
call costs a fixed time, exactly the calls that fit are made; the planned bound stays between the diagonal floor and
the enumerated optimum (the oracle counts at ε = 3 and 4, every type listed); and a child box's bound is never above
its parent's (the parent's bound holds for the child's types), so more boxes never give a larger reach.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mechdesign import Deadline
from mechdesign.core import Prior
from mechdesign.design import DesignProblem
from mechdesign.design.polytope import diagonal_floor
from mechdesign.design.symmetric import SymmetricEngine
from mechdesign.design.symmetric import _bound as bound_module
from mechdesign.design.symmetric import _reach as reach_module
from mechdesign.design.symmetric._enumerate import all_types, lagrangian_bound
from mechdesign.design.symmetric._instance import Instance

from conftest import SYMMETRIC_ORACLE, counted


@pytest.fixture(scope="module", params=[3.0, 4.0])
def powered(request):
    """(instance, design, tr J⁻¹ at the certified optimum) of the oracle counts at ε = 3 or 4, β = 0.05."""
    problem = DesignProblem(Prior.from_counts(SYMMETRIC_ORACLE), request.param, 0.05, "estimation_mse")
    result = SymmetricEngine().run(problem, None, Deadline(60.0))
    instance = Instance.from_problem(problem)
    every = all_types(instance, problem, margin=0.0)
    assert every is not None
    return instance, result, lagrangian_bound(instance, result.columns, result.weights, every)


def test_the_oracle_counts_take_the_plan(powered):
    instance, _, _ = powered
    assert instance.high < bound_module._POWER_GATE * instance.a


@pytest.mark.parametrize("cost, seconds, calls", [(7.0, 30.0, 4), (7.0, 7.0, 1), (10.0, 55.0, 5), (1.0, 3.5, 3)])
def test_no_call_starts_that_the_time_left_cannot_fit(powered, monkeypatch, cost, seconds, calls):
    """Each reach call costs ``cost`` on the deadline's clock: the first always runs, every later one only with that
    much time left — 0, 7, 14 and 21 of 30 s, not 28 — and no call is cut."""
    instance, result, _ = powered
    now = [0.0]
    left: list[float] = []
    original = reach_module.reach

    def costly(instance_, w, lam, deadline=None, slack=0.0):
        left.append(deadline.remaining())
        out = original(instance_, w, lam, Deadline(math.inf), slack)
        now[0] += cost
        return out

    monkeypatch.setattr(bound_module, "reach", costly)
    found = bound_module.symmetric_bound(instance, result.columns, result.weights,
                                         deadline=Deadline(seconds, clock=lambda: now[0]))
    assert len(left) == calls
    assert all(remaining >= cost for remaining in left[1:])
    assert math.isfinite(found.value)


@pytest.mark.parametrize("readings", [200, 3_000, 30_000])
def test_the_planned_bound_stays_between_the_floor_and_the_optimum(powered, readings):
    """At any stop (a clock read so many times: the same stop on every machine) the bound is at least the diagonal
    floor and at most the enumerated optimum's tr J⁻¹; with time for its calls it is above the floor."""
    instance, result, optimum = powered
    floor = diagonal_floor(np.repeat(instance.probabilities, instance.cells.sizes), instance.epsilon,
                           instance.radius)
    found = bound_module.symmetric_bound(instance, result.columns, result.weights, deadline=counted(readings))
    assert floor - 1e-12 <= found.value <= optimum + 1e-9 * optimum
    if readings == 30_000:
        assert found.source == "reach" and found.value > floor


def test_a_child_box_is_never_above_its_parent(powered, monkeypatch):
    """A relaxation whose bound rises as boxes shrink (as an inexact Lagrangian's may): the branch and bound returns
    at most the root's bound, and the children it pushes carry at most their parent's."""
    instance, _, _ = powered
    p = instance.probabilities
    k = instance.count
    root = reach_module._Box((0.0, 1.0), np.zeros((1, k), np.int64), np.asarray(instance.sizes, np.int64)[None, :])

    def relax(box):
        width = box.masses[1] - box.masses[0]
        counts = np.full((1, k), 0.5)          # fractional: splits on counts and masses alike
        return reach_module._Relaxed(1.0 + 1.0 / max(width, 1e-3), counts, box.masses)

    def point(box, found):
        return -math.inf, None

    pushed: list[float] = []
    original = reach_module.heapq.heappush

    def watched(heap, item):
        if len(item) == 4:
            pushed.append(-item[0])
        original(heap, item)

    monkeypatch.setattr(reach_module.heapq, "heappush", watched)
    bound, _ = reach_module._branch_and_bound(relax, point, [root], p, Deadline(math.inf), 400, 0.0)
    assert bound <= relax(root).bound
    assert len(pushed) > 100 and max(pushed) <= relax(root).bound

"""The linkability level of a two-layer release (mechdesign.core.linkability): closed forms of the chains, the
composite's LDP level bounded by it, outputs W₁ never produces ignored, the infinite case and its witness."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign.core import LinkLevel, ldp_epsilon, link_level
from mechdesign.design.baselines import longitudinal_mechanisms, longitudinal_protocol

from conftest import EXACT, examples


@pytest.mark.parametrize(("name", "size"), [("l-grr", 5), ("l-grr", 42), ("l-osue", 4), ("l-sue", 6)])
def test_the_chains_link_level_is_their_closed_form(name, size):
    """GRR: ln(p₂/q₂); unary encodings: N·ln(p₂/q₂) (two permanent bit vectors differ in every bit)."""
    chain = longitudinal_protocol(name, size, 4.0, 1.0)
    if size > 8:
        expected = math.log(chain.p2 / chain.q2)
    else:
        permanent, reports = longitudinal_mechanisms(chain)
        expected = link_level(permanent, reports).epsilon
        assert expected == pytest.approx((1 if name == "l-grr" else size) * math.log(chain.p2 / chain.q2), abs=1e-9)
    assert chain.link_epsilon == pytest.approx(expected, abs=1e-9)
    assert chain.link_epsilon >= expected - 1e-15  # rounded toward privacy


def test_the_published_grr_link_at_native_country():
    """reference/peers.md: L-GRR's second round at (4, 1) with 42 categories has level 1.427."""
    assert longitudinal_protocol("l-grr", 42, 4.0, 1.0).link_epsilon == pytest.approx(1.427, abs=5e-4)


def test_outputs_the_permanent_layer_never_produces_do_not_count():
    permanent = [[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]]
    reports = [[0.6, 0.4], [0.3, 0.7], [1.0, 0.0]]  # the third row would make the level infinite
    assert link_level(permanent, reports).epsilon == pytest.approx(math.log(2.0), abs=EXACT)


def test_memoization_is_infinitely_linkable_with_a_witness():
    level = link_level([[0.9, 0.1], [0.2, 0.8]], np.eye(2))
    assert math.isinf(level.epsilon) and level.witness == (0, 0, 1)
    assert "identifier" in level.meaning()
    assert "factor 2.718" in LinkLevel(1.0, None).meaning()


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="reports must have one row per output of permanent"):
        link_level([[0.5, 0.5]], [[1.0]])


@st.composite
def two_layers(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """A random W₁ (2–5 inputs, 2–6 outputs) and a strictly positive W₂ (2–6 reports)."""
    n, m, k = draw(st.integers(2, 5)), draw(st.integers(2, 6)), draw(st.integers(2, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.full(m, 0.7), size=n), rng.dirichlet(np.ones(k), size=m) + 1e-3


@settings(max_examples=examples(60), deadline=None)
@given(two_layers())
def test_each_report_of_the_composite_is_at_most_as_revealing_as_the_link_level(layers):
    """Every column of W₁W₂ mixes W₂'s column with W₁'s row weights: W₁W₂ is λ-LDP (module docstring)."""
    permanent, reports = layers
    reports = reports / reports.sum(axis=1, keepdims=True)
    level = link_level(permanent, reports).epsilon
    assert ldp_epsilon(permanent @ reports) <= level + EXACT
    assert level >= ldp_epsilon(reports[permanent.max(axis=0) > 0])  # rounded up, toward privacy

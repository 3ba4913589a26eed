"""Every public name resolves, and the README's leakage example gives the numbers it quotes."""

from __future__ import annotations

import pytest

import mechdesign


@pytest.mark.parametrize("name", mechdesign.__all__)
def test_public_name_resolves(name):
    assert getattr(mechdesign, name) is not None


def test_readme_leakage_example():
    from mechdesign import L1Ball, Prior, capacity, epsilon_min, radius_for_delta, randomized_response

    prior = Prior.from_counts([41762, 4685, 1519, 470, 406],
                              labels=["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"])
    rr = randomized_response(5, 1.0, labels=prior.labels)
    assert round(epsilon_min(rr, prior), 4) == 0.9858
    beta = radius_for_delta(1e-6, prior.samples, prior.size)
    assert round(beta, 5) == 0.02655
    assert capacity(rr, L1Ball(prior, min(beta, 2.0))) == pytest.approx(1.0, abs=1e-12)


def test_unknown_attribute():
    with pytest.raises(AttributeError, match=r"attribute.*nope"):
        mechdesign.nope  # noqa: B018

"""Two-layer designs (mechdesign.design.two_layer): the three budgets recomputed, the certified bound, the memoized
optimum without a link budget, the reports' column generation against a closed form, the least mixing, refusals,
and the file through the real CLI (verify in both layers, decode of one period)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mechdesign import Deadline
from mechdesign.core import L1Ball, capacity, link_level, trace_inverse_fisher
from mechdesign.design import load_problem
from mechdesign.design.polytope import randomized_response
from mechdesign.design.two_layer import design_two_layer, mixed_reports
from mechdesign.design.two_layer._reports import design_reports

from conftest import PRIVACY_SLACK, PROBLEMS, TIGHT


@pytest.fixture(scope="module")
def race():
    return load_problem(PROBLEMS / "adult-race-estimation.toml").problem.with_(epsilon=2.0)


@pytest.fixture(scope="module")
def linked(race):
    return design_two_layer(race, 1.0, link_epsilon=1.6, time_limit=60)


def test_the_three_budgets_hold_recomputed(race, linked):
    ball = race.ball
    assert capacity(linked.permanent.matrix, ball) <= 2.0 + PRIVACY_SLACK
    assert capacity(linked.reported.matrix, ball) <= 1.0 and linked.report_epsilon <= 1.0
    assert link_level(linked.permanent, linked.reports).epsilon <= 1.6 and linked.link_epsilon <= 1.6
    assert np.allclose(linked.reports.matrix.sum(axis=1), 1.0) and np.all(linked.reports.matrix >= 0)
    assert linked.mse == pytest.approx(trace_inverse_fisher(linked.reported.matrix, race.prior.probabilities) - 1)


def test_the_bound_is_the_engines_certified_one_and_no_design_beats_it(linked):
    """Issue 45: a printed bound is a proven lower bound, never a time-limited design's value."""
    assert linked.bound == linked.single_layer.upper_bound
    assert linked.single_layer.status == "optimal"
    assert linked.bound <= linked.single_layer.utility <= linked.bound * (1 + 1e-6)
    assert linked.bound <= linked.mse and linked.ratio == pytest.approx(linked.mse / linked.bound)
    # the single-layer design at the per-report and link budgets: a two-layer composite is one such mechanism
    assert linked.target is not None and linked.bound <= linked.target


def test_the_design_is_the_catalogues_two_layer_problem_at_its_expected_values(race, linked):
    """problems/adult-race-two-layer.toml is this design (same ball, same three budgets): its [expected] per-report
    n·MSE and single-layer bound (test_problems_catalogue.py designs the file itself under -m slow)."""
    loaded = load_problem(PROBLEMS / "adult-race-two-layer.toml")
    assert loaded.problem.ball.radius == race.ball.radius and loaded.problem.epsilon == race.epsilon
    assert np.array_equal(loaded.problem.prior.probabilities, race.prior.probabilities)
    assert (loaded.release["report_epsilon"], loaded.release["link_epsilon"]) == (1.0, 1.6)
    tolerance = float(loaded.expected["tolerance"])
    assert linked.mse == pytest.approx(loaded.expected["report_mse_factor"], abs=tolerance)
    assert linked.bound == pytest.approx(loaded.expected["single_layer_bound"], abs=tolerance)


def test_the_design_beats_the_grr_chain_it_is_as_unlinkable_as(race, linked):
    """L-GRR at (2, 1) has link level 1.647 ≥ 1.6 and n·MSE 11.43 (bench_two_layer: the design 8.4 at 1.6)."""
    from mechdesign.design.baselines import longitudinal_protocol

    chain = longitudinal_protocol("l-grr", 5, 2.0, 1.0)
    assert chain.link_epsilon >= 1.6 and linked.mse < chain.mse / 1.3


def test_without_a_link_budget_the_memoized_single_layer_design_attains_the_bound(race):
    design = design_two_layer(race, 1.0, time_limit=30)
    assert np.array_equal(design.reports.matrix, np.eye(design.permanent.shape[1]))
    assert math.isinf(design.link_epsilon) and design.method == "memoized single-layer design"
    assert design.mse == pytest.approx(design.single_layer.utility, rel=TIGHT)
    assert design.lifetime_epsilon <= 1.0 + PRIVACY_SLACK  # memoizing W*: lifetime = per-report ε


@pytest.mark.parametrize(("epsilon", "link"), [(1.0, 3.0), (1.0, 0.5), (2.0, 2.0)])
def test_the_reports_of_the_identity_find_binary_randomized_response(epsilon, link):
    """Over the whole simplex (radius 2: ε-PML is ε-LDP) with W₁ = I, the reports are a single-layer ε-LDP design
    also λ-LDP: for two values the A-optimal one is Warner's randomized response at min(ε, λ) (the closed form)."""
    ball = L1Ball([0.7, 0.3], 2.0)
    found = design_reports(np.eye(2), ball, epsilon, link, deadline=Deadline(30.0))
    assert found is not None
    warner = trace_inverse_fisher(randomized_response(2, min(epsilon, link)).matrix, [0.7, 0.3]) - 1
    assert found.mse == pytest.approx(warner, rel=1e-7)


def test_mixed_reports_take_the_least_mixing_meeting_both_budgets(race, linked):
    ball, w1 = race.ball, linked.permanent.matrix
    sharp = np.eye(w1.shape[1])  # memoization: over both budgets
    mixed = mixed_reports(w1, sharp, ball, 1.0, 1.6)
    assert capacity(w1 @ mixed, ball) <= 1.0 and link_level(w1, mixed).epsilon <= 1.6
    output = race.prior.probabilities @ w1
    weight = float(mixed[0, 1] / (output[1] / output.sum()))  # off-diagonal entries are the mixing weight × law
    less = (1 - 0.999 * weight) * sharp + 0.999 * weight * (output / output.sum())[None, :]
    assert capacity(w1 @ less, ball) > 1.0 or link_level(w1, less).epsilon > 1.6


def test_bad_budgets_are_refused(race):
    with pytest.raises(ValueError, match="report_epsilon must be at most the lifetime epsilon"):
        design_two_layer(race, 3.0)
    with pytest.raises(ValueError, match="report_epsilon must be > 0"):
        design_two_layer(race, 0.0)
    with pytest.raises(ValueError, match="link_epsilon must be > 0"):
        design_two_layer(race, 1.0, link_epsilon=0.0)
    with pytest.raises(ValueError, match="utility must be 'estimation_mse'"):
        design_two_layer(load_problem(PROBLEMS / "adult-race.toml").problem, 0.5)


def same_design(linked):
    """``design_two_layer`` for the CLI's runs of problems/adult-race-two-layer.toml: the module's design of the same
    problem (deterministic; same ball and budgets, test_the_design_is_the_catalogues_two_layer_problem...) instead of
    a solve per run (3 s of CPU each). The CLI's own solve of the file runs as written in docs/howto/repeated.rst
    (tests/test_docs_examples.py)."""

    def design(problem, report, *, link_epsilon, **_):
        assert (problem.epsilon, report, link_epsilon) == (2.0, 1.0, 1.6)
        return linked

    return design


@pytest.fixture(scope="module")
def designed(tmp_path_factory, linked):
    """The two-layer problem through the CLI once: the folder and the ``--json`` summary."""
    from mechdesign.design import two_layer

    from conftest import run_cli

    folder = tmp_path_factory.mktemp("two-layer")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(two_layer, "design_two_layer", same_design(linked))
        out = run_cli("design", str(PROBLEMS / "adult-race-two-layer.toml"), "--out", str(folder), "--json")
    assert out.returncode == 0, out.stderr
    return folder, json.loads(out.stdout)


def test_the_cli_writes_a_file_that_states_all_three_levels(cli, designed, linked, tmp_path, monkeypatch):
    summary = designed[1]
    assert summary["link_epsilon"] <= 1.6 and summary["bound_status"] == "optimal"
    assert summary["ldp_longitudinal_link_epsilon"]["l-grr"] == pytest.approx(1.647, abs=1e-3)
    path = designed[0] / "adult-race-two-layer.mech.json"
    check = json.loads(cli("verify", str(path), "--json").stdout)
    release = check["release"]
    assert check["holds"] and release["policy"] == "two-layer"
    # the budgets themselves are stated: the design leaves the writer room for the readers' float spread
    assert release["epsilon"] == 1.0 and release["link_epsilon"] == 1.6 and release["link_holds"]
    assert release["link_achieved"] <= release["link_epsilon"]
    from mechdesign.design import two_layer

    monkeypatch.setattr(two_layer, "design_two_layer", same_design(linked))
    text = cli("design", str(PROBLEMS / "adult-race-two-layer.toml"), "--out", str(tmp_path)).stdout
    assert "the engine's certified lower bound" in text and "a design's value, not a bound" in text


def test_a_period_of_two_layer_reports_decodes_through_both_layers(cli, designed, tmp_path):
    """Privatize a table through a two-layer file (memoized W₁, fresh W₂), decode it with the CLI: the frequencies
    come back within a few standard errors (decode reads W₁W₂ from the file)."""
    path = designed[0] / "adult-race-two-layer.mech.json"
    rng = np.random.default_rng(2)
    labels = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
    truth = np.array(json.loads(path.read_text())["guarantee"]["prior"])  # data inside the file's ball
    values = rng.choice(labels, size=20_000, p=truth)
    (tmp_path / "in.csv").write_text("id,race\n" + "".join(f"u{i},{v}\n" for i, v in enumerate(values)))
    assert cli("memo-key", str(tmp_path / "k.key")).returncode == 0
    assert cli("privatize", str(path), "--data", str(tmp_path / "in.csv"), "--column", "race", "--user-column", "id",
               "--memo-key", str(tmp_path / "k.key"), "--out", str(tmp_path / "out.csv")).returncode == 0
    decoded = json.loads(cli("decode", str(path), "--data", str(tmp_path / "out.csv"), "--column", "race",
                             "--method", "inversion", "--json").stdout)
    observed = np.array([sum(v == label for v in values) for label in labels]) / values.size
    estimate = np.array([decoded["frequencies"][label] for label in labels])
    errors = np.array([decoded["standard_errors"][label] for label in labels])
    assert np.all(np.abs(estimate - observed) <= 5 * errors + 1e-9)
    assert set(decoded["output_counts"]) <= {f"r{k}" for k in range(len(json.loads(path.read_text())["release"]
                                                                          ["reports"]["outputs"]))}

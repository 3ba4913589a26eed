"""Scale-out on a local Dask cluster: same distribution as the in-memory sampler, order kept, counts exact."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mechdesign.deploy.analysis import count_outputs, estimate_frequencies
from mechdesign.deploy.sampling import count_dask, privatize_dask
from mechdesign.design.polytope import randomized_response

LABELS = ["red", "green", "blue", "grey"]
TRUTH = np.array([0.4, 0.3, 0.2, 0.1])


# Dask and distributed are imported by the fixtures, not at the top: importing them costs about 2 s of CPU, which
# every xdist worker paid at collection whether or not it ran these tests.


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as connected:
        yield connected


@pytest.fixture(scope="module")
def data():
    import dask.dataframe as dd

    # 40,000 rows in 8 partitions (200,000 spent 1.3 s more of CPU): at least 4,000 rows per input label, so each
    # χ² test per row of the matrix still has hundreds of expected draws per cell.
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"id": np.arange(40_000), "colour": rng.choice(LABELS, 40_000, p=TRUTH)})
    return frame, dd.from_pandas(frame, npartitions=8)


def test_privatize_and_count_on_a_cluster(client, data):
    frame, ddf = data
    mech = randomized_response(4, 1.5, LABELS)
    private = privatize_dask(ddf, "colour", mech, seed=3)
    result = private.compute()
    assert result["id"].tolist() == frame["id"].tolist()  # order and other columns kept
    counts = count_dask(private, "colour", mech)
    assert counts.tolist() == count_outputs(result["colour"], mech).tolist()
    assert counts.sum() == len(frame)
    # Distribution per input row: chi-squared against the matrix (fails if partitions share a stream badly).
    for i, label in enumerate(LABELS):
        observed = result["colour"][frame["colour"] == label].value_counts().reindex(LABELS).to_numpy()
        assert stats.chisquare(observed, mech.matrix[i] * observed.sum()).pvalue > 1e-4
    estimate = estimate_frequencies(mech, counts, "em")
    assert np.abs(estimate.frequencies - TRUTH).max() < 5 * estimate.standard_errors.max()
    again = privatize_dask(ddf, "colour", mech, seed=3).compute()
    assert again["colour"].tolist() == result["colour"].tolist()  # reproducible with a seed


def test_secure_default_and_partitions_differ(client, data):
    _, ddf = data
    mech = randomized_response(4, 0.1, LABELS)
    first = privatize_dask(ddf, "colour", mech).compute()["colour"]
    second = privatize_dask(ddf, "colour", mech).compute()["colour"]
    assert (first != second).mean() > 0.5  # fresh secure streams (near-uniform RR)
    seeded = privatize_dask(ddf, "colour", mech, seed=1).compute()["colour"].to_numpy()
    halves = seeded.reshape(8, -1)
    assert not np.array_equal(halves[0], halves[1])  # partitions get independent spawned streams


def test_errors(client, data):
    _, ddf = data
    with pytest.raises(ValueError, match="column must be one of"):
        privatize_dask(ddf, "missing", randomized_response(4, 1.0, LABELS))
    with pytest.raises(ValueError, match="input labels"):
        privatize_dask(ddf, "colour", randomized_response(2, 1.0, ["red", "green"]), seed=1).compute()


def test_loaded_mechanism_file_is_accepted(client, data, tmp_path):
    from mechdesign.mechfile import read_mechanism_file, write_mechanism_file

    _, ddf = data
    path = write_mechanism_file(tmp_path / "rr.mech.json", randomized_response(4, 1.0, LABELS),
                                guarantee={"notion": "ldp", "epsilon": 1.0})
    loaded = read_mechanism_file(path)
    out = privatize_dask(ddf, "colour", loaded, seed=3).compute()["colour"]
    assert set(out.unique()) <= set(LABELS)
    assert count_dask(ddf, "colour", loaded).sum() == len(out)
    with pytest.raises(TypeError, match="mechanism must be a Mechanism"):
        privatize_dask(ddf, "colour", "rr.mech.json")

"""The release key and a memo key never leave for a Dask cluster in clear (issue 62): mechdesign.deploy._dask's guard.

The addresses' classification runs in the default suite; the guard itself on a real ``distributed.LocalCluster``
(threads in this process, so the test can declare loopback a network: tcp:// on 127.0.0.1 then stands for a
cluster's LAN, and the same cluster over tls:// passes) is marked ``cluster``.
"""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from mechdesign.deploy import load
from tests.deploy.test_dask import KEY, MEMO, _case, _expected, _same


@pytest.mark.parametrize(("address", "clear"), [
    ("tcp://127.0.0.1:8786", False), ("tcp://127.0.1.1:8786", False), ("tcp://localhost:8786", False),
    ("tcp://[::1]:8786", False), ("inproc://10.0.0.5/4242/1", False), ("tls://10.0.0.5:8786", False),
    ("tls://scheduler.example:8786", False), ("tcp://10.0.0.5:8786", True), ("tcp://scheduler.example:8786", True),
    ("ws://10.0.0.5:8786", True), ("wss://10.0.0.5:8786", False), ("10.0.0.5:8786", True),  # tcp by default
])
def test_which_addresses_carry_a_key_in_clear(address, clear):
    from mechdesign.deploy._dask import _in_clear

    assert _in_clear(address) is clear


def test_no_client_no_refusal():
    """A local scheduler (the default one, threads) keeps the graph in this machine: nothing to refuse."""
    from mechdesign.deploy._dask import _guard_worker, guard_secrets

    guard_secrets("the release key")
    _guard_worker("the release key")  # not in a distributed worker


@pytest.fixture
def lan(monkeypatch):
    """Loopback counted as a network: a LocalCluster on 127.0.0.1 stands for a cluster reached over a LAN."""
    import mechdesign.deploy._dask as engine

    monkeypatch.setattr(engine, "on_this_machine", lambda host: False)


def _one_line(call, *needles):
    with pytest.raises(ValueError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message and "allow_plaintext_key" in message, message
    for needle in needles:
        assert needle in message, message
    return message


@pytest.mark.cluster
def test_a_plain_tcp_cluster_gets_no_key(folder_secrets, lan, tmp_path):
    """The driver refuses before anything is computed; a frame made before the client refuses on its workers;
    the deployment's statement (allow_plaintext_key) lets it through, with the bytes of any other engine."""
    import dask
    from distributed import Client, LocalCluster

    import mechdesign.dask as md

    path, data, column, names, memo = _case("two-layer", folder_secrets)
    dense, dense_data, dense_column, _, _ = _case("dense", folder_secrets)
    with LocalCluster(n_workers=1, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None) as cluster:
        with Client(cluster) as client:
            address = client.scheduler.address
            assert address.startswith("tcp://127.0.0.1")
            frame = md.read_parquet(data)
            _one_line(lambda: md.privatize(frame, path, column=column, key=KEY, **memo), "the release key",
                      address)
            _one_line(lambda: md.check(frame, path, column=column, memo_key=MEMO), "the memo key")
            _one_line(lambda: md.count(frame, path, column=column, memo_key=MEMO), "the memo key")
            _one_line(lambda: md.decode(frame, path, column=column, memo_key=MEMO), "the memo key")
            assert md.check(md.read_parquet(dense_data), dense, column=dense_column).records == 600  # no secret
            private = md.privatize(frame, path, column=column, key=KEY, allow_plaintext_key=True, **memo)
            expected = _expected(path, pq.read_table(data), names, memo, first_row=0)
            assert _same(private.compute(), expected, names)
            counts = md.count(private, path, column=column, memo_key=MEMO, allow_plaintext_key=True)
            np.testing.assert_array_equal(counts, load(path, memo_key=MEMO).output_counts(expected, names))
        with Client(cluster, set_as_default=False) as later:  # chosen only at compute time
            with dask.config.set(scheduler="synchronous"):
                lazy = md.privatize(md.read_parquet(dense_data), dense, column=dense_column, key=KEY)
            _one_line(lambda: lazy.compute(scheduler=later), "the release key", "worker")


@pytest.mark.cluster
def test_a_tls_cluster_gets_the_key(folder_secrets, lan):
    """The same cluster over tls:// (a temporary certificate): nothing refused, the same release."""
    from distributed import Client, LocalCluster
    from distributed.security import Security

    import mechdesign.dask as md

    path, data, column, names, memo = _case("memoized", folder_secrets)
    security = Security.temporary()
    with LocalCluster(n_workers=1, processes=False, protocol="tls", host="127.0.0.1", security=security,
                      dashboard_address=None) as cluster, Client(cluster, security=security) as client:
        assert client.scheduler.address.startswith("tls://")
        released = md.privatize(md.read_parquet(data), path, column=column, key=KEY, **memo).compute()
        assert _same(released, _expected(path, pq.read_table(data), names, memo, first_row=0), names)


@pytest.fixture(scope="module")
def folder_secrets(tmp_path_factory):
    return tmp_path_factory.mktemp("dask-secrets")

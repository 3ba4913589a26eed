"""The release key and a memo key never leave for a cluster's executors in clear (issue 62): the Spark engine's guard
(mechdesign.deploy._spark.guard_secrets) on sessions described by their settings — no JVM needed; the real local
session and the local Spark Connect server pass it in tests/deploy/test_spark.py."""

from __future__ import annotations

import pytest

from mechdesign.deploy._spark import ENCRYPTING, guard_secrets


class _Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)


class _Builder:
    def __init__(self, host: str, use_ssl: bool) -> None:
        self.host, self.use_ssl = host, use_ssl

    def get(self, key: str) -> str | None:
        return "true" if key == "use_ssl" and self.use_ssl else None


class _Session:
    def __init__(self, conf: dict[str, str], channel: tuple[str, bool] | None = None) -> None:
        self.conf = _Conf(conf)
        if channel is not None:
            self.client = type("Client", (), {"_builder": _Builder(*channel)})()


class _Frame:
    def __init__(self, session: _Session) -> None:
        self.sparkSession = session


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[2,3]"])
def test_a_local_master_keeps_the_key_in_the_machine(master):
    guard_secrets(_Frame(_Session({"spark.master": master})), "the release key", False)


@pytest.mark.parametrize("master", ["yarn", "spark://head:7077", "k8s://https://api:6443"])
def test_a_cluster_without_rpc_encryption_is_refused_in_one_line(master):
    frame = _Frame(_Session({"spark.master": master}))
    with pytest.raises(ValueError) as caught:
        guard_secrets(frame, "the release key", False)
    message = str(caught.value)
    assert "\n" not in message and "allow_plaintext_key" in message and master in message
    assert "spark.network.crypto.enabled=true" in message
    guard_secrets(frame, "the release key", True)  # the deployment's statement that its network is private


@pytest.mark.parametrize("setting", ENCRYPTING)
def test_any_encrypting_setting_lets_the_key_travel(setting):
    guard_secrets(_Frame(_Session({"spark.master": "yarn", setting: "true"})), "the release key", False)
    with pytest.raises(ValueError, match="allow_plaintext_key"):
        guard_secrets(_Frame(_Session({"spark.master": "yarn", setting: "false"})), "the release key", False)


def test_a_connect_server_elsewhere_needs_tls():
    local = _Session({"spark.master": "local[2]"}, channel=("localhost", False))
    guard_secrets(_Frame(local), "the memo key", False)
    remote = _Session({"spark.master": "local[2]"}, channel=("spark.example.org", False))
    with pytest.raises(ValueError, match=r"use_ssl=true") as caught:
        guard_secrets(_Frame(remote), "the memo key", False)
    assert "the memo key" in str(caught.value) and "spark.example.org" in str(caught.value)
    tls = _Session({"spark.master": "local[2]"}, channel=("spark.example.org", True))
    guard_secrets(_Frame(tls), "the memo key", False)
    # TLS to the server does not encrypt the server's own cluster
    cluster = _Session({"spark.master": "yarn"}, channel=("spark.example.org", True))
    with pytest.raises(ValueError, match=r"spark\.network\.crypto\.enabled"):
        guard_secrets(_Frame(cluster), "the memo key", False)

"""A two-layer file's linkability level checked for the layers actually sampled (issue 61, item 3).

The file states λ for its own W₂; the sampler draws from W_q,2, each row quantised to 2^-64. An entry of W₂ below
2^-64 that quantises to 0 makes the sampled level infinite (a report that rules a permanent output out), one at
1.1·2^-64 that quantises to 2^-64 puts it log 1.1 = 0.095 nats above the statement. Both files verify; the sampler
refuses them before any draw, as it refuses a per-report ε that quantisation breaks.
"""

from __future__ import annotations

import math

import pytest

from mechdesign import CertificateError
from mechdesign.core import Mechanism, link_level
from mechdesign.deploy.sampling import Privatizer, generate_memo_key
from mechdesign.mechfile import read_mechanism_file, verify_mechanism_file, write_mechanism_file


def _two_layer(path, tiny):
    """W₁ = 2-ary randomized response at log 3, W₂'s first row [1/2, 1/2, tiny] (the level the file states: W₂'s)."""
    permanent = Mechanism.from_matrix([[0.75, 0.25], [0.25, 0.75]], ["a", "b"], ["p", "q"])
    reports = Mechanism.from_matrix([[0.5, 0.5, tiny], [0.25, 0.25, 0.5]], ["p", "q"], ["r", "s", "u"])
    return write_mechanism_file(path, permanent, guarantee={"notion": "ldp", "epsilon": 1.1},
                                release={"policy": "two-layer", "reports": reports, "epsilon": 1.1})


@pytest.mark.parametrize(("tiny", "sampled"), [(0.4 * 2.0**-64, math.inf), (1.1 * 2.0**-64, 63 * math.log(2))],
                         ids=["below-2^-64-to-zero", "1.1x2^-64-to-2^-64"])
def test_the_sampled_link_level_is_checked_before_sampling(tmp_path, tiny, sampled):
    path = _two_layer(tmp_path / "two.json", tiny)
    assert verify_mechanism_file(path).holds  # the file's own statement holds
    loaded = read_mechanism_file(path)
    stated = loaded.release.link_epsilon
    assert stated is not None and stated < sampled
    with pytest.raises(CertificateError, match=r"must meet release\.link_epsilon=.* after quantisation to 2\^-64, "
                                               r"got link level=(inf|43\.66)"):
        Privatizer(loaded)


def test_a_sampled_level_within_the_statement_is_accepted(tmp_path):
    """0.9·2^-64 is rounded up to 2^-64 (its remainder is the largest): the sampled level is below the stated one."""
    sampler = Privatizer(read_mechanism_file(_two_layer(tmp_path / "two.json", 0.9 * 2.0**-64)))
    assert sampler.reports is not None
    level = link_level(sampler.sampled_matrix, sampler.reports.sampled_matrix).epsilon
    assert level <= sampler.file.release.link_epsilon


def test_privatize_refuses_in_one_line_and_writes_nothing(cli, tmp_path):
    path = _two_layer(tmp_path / "two.json", 0.4 * 2.0**-64)
    key = generate_memo_key(tmp_path / "k.key")
    (tmp_path / "in.csv").write_text("id,a\nu1,a\nu2,b\n")
    result = cli("privatize", str(path), "--data", str(tmp_path / "in.csv"), "--column", "a", "--user-column", "id",
                 "--memo-key", str(key), "--out", str(tmp_path / "o.csv"))
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "release.link_epsilon" in result.stderr and "got link level=inf" in result.stderr
    assert not (tmp_path / "o.csv").exists()

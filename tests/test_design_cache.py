"""The test suite's design cache (tests/design_cache.py): a hit only for the same builder, arguments and code, and
only optimal designs are kept."""

from __future__ import annotations

from types import SimpleNamespace

from design_cache import DesignCache, code_version


def test_a_design_is_built_once_per_key_and_only_an_optimal_one_is_kept(tmp_path):
    calls: list[tuple] = []

    def build(value, *, status="optimal"):
        calls.append((value, status))
        return SimpleNamespace(value=value, status=status)

    cache = DesignCache(tmp_path / "cache")
    assert cache(build, 1.0).value == 1.0 and cache(build, 1.0).value == 1.0
    assert calls == [(1.0, "optimal")]                       # the second call loaded the first result
    assert DesignCache(tmp_path / "cache")(build, 1.0).value == 1.0 and len(calls) == 1  # another process alike
    assert cache(build, 2.0).value == 2.0 and len(calls) == 2  # other arguments: a miss
    cache(build, 3.0, status="time_limit")
    cache(build, 3.0, status="time_limit")
    assert calls[-2:] == [(3.0, "time_limit")] * 2            # a time-limited design is never reused
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 2 and not list((tmp_path / "cache").glob("*.part"))


def test_the_code_version_is_a_hash_of_the_library_sources():
    assert len(code_version()) == 64 and code_version() == code_version()

"""The test suite's design cache (tests/design_cache.py): a hit only for the same builder, arguments and code, and
only optimal designs are kept."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from design_cache import BuiltOnce, DesignCache, code_version


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


def test_a_folder_is_built_once_and_a_failed_build_is_built_again(tmp_path):
    calls: list[str] = []

    def build(folder):
        calls.append(folder.name)
        (folder / "made.txt").write_text("made")
        return {"file": folder / "made.txt"}

    def broken(folder):
        (folder / "half.txt").write_text("half")
        raise RuntimeError("build failed")

    once = BuiltOnce(tmp_path / "once")
    first = once("design", build)
    assert first["file"].read_text() == "made" and once("design", build) == first and calls == ["design"]
    assert BuiltOnce(tmp_path / "once")("design", build) == first and len(calls) == 1  # another worker alike
    for _ in range(2):  # nothing is stored from a failed build: the next caller builds again, from an empty folder
        with pytest.raises(RuntimeError, match="build failed"):
            once("broken", broken)
    assert once("broken", build)["file"].parent.name == "broken"
    assert sorted(p.name for p in (tmp_path / "once" / "broken").iterdir()) == ["made.txt"]

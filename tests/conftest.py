"""Shared test configuration: tolerances (defined once), paths, Hypothesis profiles, CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Tolerances, defined once for the whole suite.
EXACT = 1e-12      # closed forms evaluated two ways in float64
TIGHT = 1e-9       # LP/solver results compared with closed forms after exact recomputation
SOLVER = 1e-6      # raw interior-point solver values
PRIVACY_SLACK = 1e-12  # one-sided privacy checks: achieved <= target + PRIVACY_SLACK

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PROBLEMS = ROOT / "problems"

settings.register_profile(
    "default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "default")


def run_cli(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real entry point (``python -m mechdesign``) in a subprocess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "mechdesign", *args], capture_output=True, text=True, cwd=cwd, env=env,
        input=stdin, timeout=600,
    )


@pytest.fixture
def cli():
    return run_cli

# tests/typing/ is checked by mypy, not run by pytest.
collect_ignore_glob = ["typing/*"]

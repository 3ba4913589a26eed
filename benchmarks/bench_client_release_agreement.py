"""Do mechdesign and the TypeScript client (clients/js) reach the same verdict on release statements? (issue 37)

A release policy states a second number that every reader recomputes: ε_T of a "repeated" file (the exact leakage of
T releases over the ball, enumerated over every count vector; T·ε_LDP for "ldp") and the per-report ε of a
"two-layer" file (the notion evaluated on W₁W₂). The writer states its own value rounded up once more
(:func:`~mechdesign.mechfile.stated_release`), the margin over another implementation's float order:
the sums a(n) = Σ_y n_y log W[x, y] grow with T, so this script measures how far the client's value lies from
mechdesign's as T grows, and checks that the margin covers it. Seeded random mechanisms (Dirichlet rows and rows
tilted by exp of noise; N from 2 to 16, 2 to 8 outputs; PML over random balls, and LDP), T from 2 to 365 where the
count vectors number at most 2·10⁵, and two-layer files with a random W₂, are written by
:func:`~mechdesign.mechfile.write_mechanism_file`; the client verifies every one.

Reported per policy and T, and in all: files, those the client verifies (must be all), how often the recomputed
statements are bit-identical, the largest difference in ulps (client above: what the writer's margin absorbs), and
the smallest margin left between the stated ε and the client's value, in ulps of the value.

    (cd clients/js && npm ci && npm run build)
    python benchmarks/bench_client_release_agreement.py [--files 400] [--seed 37]   # results/client_release_agreement.*
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from _common import built_js_client, ulps, write_results

from mechdesign.core import L1Ball, Mechanism, capacity, ldp_epsilon, number_of_count_vectors
from mechdesign.mechfile import verify_mechanism_file, write_mechanism_file

MAX_VECTORS = 200_000  # per file, so that both languages enumerate quickly (the client's budget is 10⁶)

NODE = """
import { readFileSync } from "node:fs";
import { verifyMechanismFile } from "%s";
const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = [];
for (const c of cases) {
  try {
    const file = await verifyMechanismFile(readFileSync(c.path));
    out.push({ holds: file.holds, achieved: file.releaseCheck.achieved });
  } catch (error) {
    out.push({ error: String(error.message) });
  }
}
console.log(JSON.stringify(out));
"""


def random_rows(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    if rng.random() < 0.5:  # Dirichlet rows, from spiky to flat
        return rng.dirichlet(np.full(m, rng.choice([0.3, 1.0, 10.0])), size=n)
    base = rng.dirichlet(np.ones(m))  # a common row tilted by exp(noise): designs near a target ε look like this
    w = base * np.exp(rng.uniform(-2, 2, (n, m)))
    return w / w.sum(axis=1, keepdims=True)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--seed", type=int, default=37)
    args = parser.parse_args()
    client = built_js_client()
    rng = np.random.default_rng(args.seed)
    cases = []
    with tempfile.TemporaryDirectory() as folder:
        for k in range(args.files):
            n, m = int(rng.choice([2, 3, 4, 8, 16])), int(rng.choice([2, 3, 4, 6, 8]))
            mech = Mechanism.from_matrix(random_rows(rng, n, m))
            guarantee: dict = {"notion": "ldp" if rng.random() < 0.2 else "pml"}
            if guarantee["notion"] == "pml":
                guarantee |= {"prior": rng.dirichlet(np.ones(n) * rng.choice([0.3, 1.0, 10.0])),
                              "radius": float(rng.choice([rng.uniform(0, 0.1), rng.uniform(0, 2)]))}
                raw = capacity(mech, L1Ball(guarantee["prior"], guarantee["radius"]))
            else:
                raw = ldp_epsilon(mech)
            guarantee["epsilon"] = raw  # the writer rounds it up to its bound
            if rng.random() < 0.25:
                reports = random_rows(rng, m, int(rng.choice([2, 3, 4, 8])))
                release: dict = {"policy": "two-layer", "reports": reports}
                label = "two-layer"
            else:
                fitting = [t for t in (2, 3, 5, 10, 30, 100, 365) if number_of_count_vectors(t, m) <= MAX_VECTORS]
                releases = int(rng.choice(fitting))
                release = {"policy": "repeated", "releases": releases}
                label = f"repeated T={releases}"
            path = Path(folder) / f"{k}.json"
            try:
                write_mechanism_file(path, mech, guarantee=guarantee, release=release)
            except Exception as exc:  # an unbounded account (a zero the ball can reach) is refused by the writer
                if "finite" in str(exc):
                    continue
                raise
            result = verify_mechanism_file(path)
            assert result.release is not None
            if not math.isfinite(result.release["achieved"]):
                continue
            cases.append({"path": str(path), "kind": label, "notion": result.notion, "size": n,
                          "stated": result.release["epsilon"], "achieved": result.release["achieved"]})
        listing = Path(folder) / "cases.json"
        listing.write_text(json.dumps(cases))
        script = Path(folder) / "verify.mjs"
        script.write_text(NODE % client.as_uri())
        client = json.loads(subprocess.run(["node", str(script), str(listing)], check=True, capture_output=True,
                                           text=True).stdout)
    per_file = []
    for case, js in zip(cases, client, strict=True):
        row = {"kind": case["kind"], "holds": js.get("holds", False), "refused": "error" in js,
               "achieved_ulps": None, "margin_ulps": None}
        if "achieved" in js:
            row["achieved_ulps"] = ulps(case["achieved"], js["achieved"])
            row["margin_ulps"] = ulps(js["achieved"], case["stated"])
        per_file.append(row)
    kinds = sorted({r["kind"] for r in per_file}, key=lambda k: (k.startswith("repeated"), len(k), k))
    rows = [aggregate([r for r in per_file if r["kind"] == kind], kind) for kind in kinds]
    summary = {k: v for k, v in aggregate(per_file, "all").items() if k != "kind"}
    for row in rows:
        print(json.dumps(row))
    print(json.dumps(summary, indent=1))
    node = subprocess.run(["node", "--version"], check=True, capture_output=True, text=True).stdout.strip()
    write_results("client_release_agreement", rows, seed=args.seed, node=node, summary=summary)


def aggregate(group: list[dict], kind: str) -> dict:
    """One row of results: the files of ``group`` (one policy and T, or all), counted and at their extremes."""
    achieved = [r["achieved_ulps"] for r in group if r["achieved_ulps"] is not None]
    margins = [r["margin_ulps"] for r in group if r["margin_ulps"] is not None]
    return {"kind": kind, "files": len(group), "held_by_client": sum(r["holds"] for r in group),
            "refused_by_client": sum(r["refused"] for r in group),
            "achieved_identical": sum(d == 0 for d in achieved),
            "achieved_client_above": sum(d > 0 for d in achieved),
            "achieved_client_below": sum(d < 0 for d in achieved),
            "achieved_max_ulps": max(map(abs, achieved), default=0),
            "smallest_margin_ulps": min(margins, default="")}


if __name__ == "__main__":
    main()

"""Do mechdesign and the TypeScript client (clients/js) reach the same verdict? Measured on random files (issue 38).

Both languages compare an upper bound, the recomputed ε (or β*) raised by ``round_up``, against the statement, and
the writer states one more ``round_up`` of its own bound (``mechdesign.mechfile._format``). This script measures
what that margin has to cover and checks that it does: seeded random mechanisms (Dirichlet rows, k-RR with
transcendental entries, rows tilted by exp of noise; N from 2 to 128, up to 256 outputs; PML over random balls and
LDP) are written by :func:`~mechdesign.mechfile.write_mechanism_file` with the stated ε set to the raw
recomputed value (so the writer must round it up) and, for a third of the PML files, δ and m with the radius a
design at δ uses (:func:`~mechdesign.core.design_radius`, β* rounded up twice). The client then
verifies every file, and evaluates its bound and its required radius (β* rounded up) on the same inputs.

Reported per notion and N, and in all: files the client verifies (must be all), how often the two bounds are
bit-identical, the largest difference in ulps and relative (client above mechdesign: the files a writer without
its margin would have had refused), the same for the required radius, and the smallest margin left between the
stated ε and the client's bound, in ulps of the bound.

    (cd clients/js && npm ci && npm run build)
    python benchmarks/bench_client_agreement.py [--files 3000] [--seed 38]   # results/client_agreement.{json,csv}
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

from mechdesign.core import L1Ball, Mechanism, capacity, design_radius, ldp_epsilon, required_radius
from mechdesign.mechfile import verify_mechanism_file, write_mechanism_file

# One Node process verifies every file and evaluates the client's bound and required radius on the same inputs.
NODE = """
import { readFileSync } from "node:fs";
import { verifyMechanismFile, requiredRadius } from "%s";
const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = [];
for (const c of cases) {
  try {
    const file = await verifyMechanismFile(readFileSync(c.path));
    out.push({ holds: file.holds, achieved: file.achieved,
               required: c.delta === null ? null : requiredRadius(c.delta, c.samples, c.size) });
  } catch (error) {
    out.push({ error: String(error.message) });
  }
}
console.log(JSON.stringify(out));
"""


def random_mechanism(rng: np.random.Generator) -> np.ndarray:
    n = int(rng.choice([2, 3, 4, 5, 8, 16, 32, 64, 128]))
    m = int(rng.choice([2, 3, 4, 8, 16, 64, 256]))
    kind = int(rng.integers(0, 3))
    if kind == 0:  # Dirichlet rows, from spiky to flat
        return rng.dirichlet(np.full(m, rng.choice([0.1, 1.0, 10.0])), size=n)
    if kind == 1:  # k-RR: entries e^ε/(e^ε + n − 1), the closed form files are most often written at
        e = math.exp(rng.uniform(0, 8))
        w = np.full((n, n), 1 / (e + n - 1))
        np.fill_diagonal(w, e / (e + n - 1))
        return w
    base = rng.dirichlet(np.ones(m))  # a common row tilted by exp(noise): designs near a target ε look like this
    w = base * np.exp(rng.uniform(-2, 2, (n, m)))
    return w / w.sum(axis=1, keepdims=True)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    client = built_js_client()
    rng = np.random.default_rng(args.seed)
    cases = []
    with tempfile.TemporaryDirectory() as folder:
        for k in range(args.files):
            mech = Mechanism.from_matrix(random_mechanism(rng))
            n = mech.shape[0]
            guarantee: dict = {"notion": "ldp" if rng.random() < 0.3 else "pml"}
            if guarantee["notion"] == "pml":
                prior = rng.dirichlet(np.ones(n) * rng.choice([0.3, 1.0, 10.0]))
                guarantee |= {"prior": prior, "radius": float(rng.choice([0.0, 2.0, rng.uniform(0, 2),
                                                                          rng.uniform(0, 0.1)]))}
                if rng.random() < 1 / 3:
                    delta, samples = float(10 ** rng.uniform(-12, -1)), int(10 ** rng.uniform(1, 7))
                    guarantee |= {"delta": delta, "samples": samples, "radius": design_radius(delta, samples, n)}
                raw = capacity(mech, L1Ball(guarantee["prior"], guarantee["radius"]))
            else:
                raw = ldp_epsilon(mech)
            if not math.isfinite(raw):
                continue
            path = Path(folder) / f"{k}.json"
            write_mechanism_file(path, mech, guarantee={**guarantee, "epsilon": raw})
            result = verify_mechanism_file(path)
            cases.append({"path": str(path), "size": n, "notion": result.notion, "epsilon": result.epsilon,
                          "achieved": result.achieved, "delta": guarantee.get("delta"),
                          "samples": guarantee.get("samples"),
                          "required": (required_radius(guarantee["delta"], guarantee["samples"], n)
                                       if "delta" in guarantee else None)})
        listing = Path(folder) / "cases.json"
        listing.write_text(json.dumps(cases))
        script = Path(folder) / "verify.mjs"
        script.write_text(NODE % client.as_uri())
        client = json.loads(subprocess.run(["node", str(script), str(listing)], check=True, capture_output=True,
                                           text=True).stdout)
    per_file = []
    for case, js in zip(cases, client, strict=True):
        row = {"notion": case["notion"], "size": case["size"], "holds": js.get("holds", False),
               "refused": "error" in js, "achieved_ulps": None, "relative": None, "margin_ulps": None,
               "radius_ulps": None}
        if "achieved" in js:
            row["achieved_ulps"] = ulps(case["achieved"], js["achieved"])
            if case["achieved"] > 0:
                row["relative"] = abs(js["achieved"] - case["achieved"]) / case["achieved"]
                row["margin_ulps"] = ulps(js["achieved"], case["epsilon"])
        if case["required"] is not None:
            row["radius_ulps"] = ulps(case["required"], js["required"])
        per_file.append(row)
    sizes = sorted({r["size"] for r in per_file})
    rows = [aggregate(group, notion, size) for notion in ("ldp", "pml") for size in sizes
            if (group := [r for r in per_file if r["notion"] == notion and r["size"] == size])]
    summary = {k: v for k, v in aggregate(per_file, "all", 0).items() if k not in ("notion", "size")}
    print(json.dumps(summary, indent=1))
    node = subprocess.run(["node", "--version"], check=True, capture_output=True, text=True).stdout.strip()
    write_results("client_agreement", rows, seed=args.seed, node=node, summary=summary)


def aggregate(group: list[dict], notion: str, size: int) -> dict:
    """One row of results: the files of ``group`` (one notion and N, or all), counted and at their extremes."""
    achieved = [r["achieved_ulps"] for r in group if r["achieved_ulps"] is not None]
    radius = [r["radius_ulps"] for r in group if r["radius_ulps"] is not None]
    margins = [r["margin_ulps"] for r in group if r["margin_ulps"] is not None]
    return {"notion": notion, "size": size, "files": len(group), "held_by_client": sum(r["holds"] for r in group),
            "refused_by_client": sum(r["refused"] for r in group),
            "achieved_identical": sum(d == 0 for d in achieved),
            "achieved_client_above": sum(d > 0 for d in achieved),
            "achieved_client_below": sum(d < 0 for d in achieved),
            "achieved_max_ulps": max(map(abs, achieved), default=0),
            "achieved_max_relative": max((r["relative"] for r in group if r["relative"] is not None), default=0.0),
            "radius_cases": len(radius), "radius_identical": sum(d == 0 for d in radius),
            "radius_max_ulps": max(map(abs, radius), default=0),
            "smallest_margin_ulps": min(margins, default="")}

if __name__ == "__main__":
    main()

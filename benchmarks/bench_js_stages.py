"""Where the JavaScript client's structured sampler spends a record's time: privatize per stage (issue 43).

The designs of bench_symmetric_io.py (benchmarks/_symmetric.py, seed 0, m = 100·N records, T = 300 / 4,000) and its
inputs ((i · 7919) mod N for 2·10⁵ values). In one node process (the built client, clients/js/dist), CPU time
(``process.cpuUsage``, all threads) in ns a record:

* ``privatize``: the first call, then ``--repeats`` warm calls;
* per stage of the fresh kernel (symmetricFresh.ts), run as privatize runs it, batch after batch over all 2·10⁵
  records (so each batch's step 1 reads the tables afresh): the words (the crypto fill), step 1 (the pair, guide
  table and scan), step 2 (the G group values and the rank), step 3 (the placement), V's 16-bit limbs, the hex
  texts, the decode of each chunk's bytes into one string and its slices; the label lookups apart. Each stage's
  clock is read around its call; the cost of reading it (timed on empty intervals) is taken off;
* floors: the crypto fill of the words a record reads (counted), G remainders u − ⌊u/R⌋·R over those words alone,
  and the multiply-adds V's limbs need (counted from the place values).

Median [min, max] over ``--repeats`` passes, the load before and after. Writes benchmarks/results/js_stages.json and
prints a Markdown table (benchmarks/results/symmetric_sampler_speed.md, "The JavaScript client").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _symmetric import engine_shaped, zipf_counts

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
JS = ROOT / "clients" / "js" / "dist" / "structured.js"
SIZES = {1_000: 300, 10_000: 4_000}
RADIUS = 0.05

# The kernel's steps are private to the client; this diagnostic reaches them as the sampler's own privatize does.
STAGES_JS = r"""
import { readFileSync } from "node:fs";
const { verifySymmetricFile, SymmetricSampler } = await import(process.argv[2]);
const file = await verifySymmetricFile(readFileSync(process.argv[3]), { maxBytes: Infinity });
const repeats = Number(process.argv[4]);
let filled = 0;
const fill = (buffer) => {
  filled += buffer.length;
  for (let at = 0; at < buffer.length; at += 16384) globalThis.crypto.getRandomValues(buffer.subarray(at, at + 16384));
};
const sampler = new SymmetricSampler(file, fill);
const inputs = file.mechanism.inputs;
const n = 200000;
const values = Array.from({ length: n }, (_, i) => inputs[(i * 7919) % inputs.length]);
const clock = () => { const c = process.cpuUsage(); return (c.user + c.system) * 1e3; }; // ns
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const summary = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
const out = { N: inputs.length, types: file.mechanism.high.length, width: sampler.width, records: n };
let t = clock();
sampler.privatize(values);
out.first_ns = (clock() - t) / n;
const warm = [];
for (let r = 0; r < repeats; r++) {
  t = clock();
  sampler.privatize(values);
  warm.push((clock() - t) / n);
}
out.warm_ns = summary(warm);

const kernel = sampler.kernel;
const BATCH = kernel.types.length;
const CHUNK = 4096;
const names = ["words", "step 1", "step 2", "step 3", "limbs", "hex", "decode", "slices", "labels"];
const totals = Object.fromEntries(names.map((name) => [name, []]));
let empty = 0;
for (let i = 0; i < 1000; i++) { const a = clock(); empty += clock() - a; }
empty /= 1000; // ns a reading
const text = new Uint8Array((12 + Math.max(...sampler.hexWidth)) * CHUNK);
const view = new DataView(text.buffer);
const ends = new Int32Array(CHUNK);
const decoder = new TextDecoder("utf-8");
const reports = new Array(n);
let wordsRead = 0;
for (let r = 0; r < repeats; r++) {
  const time = Object.fromEntries(names.map((name) => [name, 0]));
  const readings = Object.fromEntries(names.map((name) => [name, 0]));
  let a = clock();
  const xs = sampler.indices(values);
  time.labels += clock() - a;
  readings.labels++;
  const before = filled - (kernel.end - kernel.at);
  for (let start = 0; start < n; start += CHUNK) {
    const stop = Math.min(n, start + CHUNK);
    let at = 0;
    for (let first = start; first < stop; first += BATCH) {
      const last = Math.min(stop, first + BATCH);
      const count = last - first;
      const t0 = clock();
      kernel.topUp(kernel.reserve);
      const t1 = clock();
      kernel.pickPairs(xs, first, count);
      const t2 = clock();
      kernel.drawGroups(count);
      const t3 = clock();
      kernel.placeAll(xs, first, count);
      const t4 = clock();
      kernel.seeds.compute(count, kernel.signatures);
      const t5 = clock();
      at = kernel.writeTexts(count, text, view, at, ends, first - start); // computes V again: timed as hex minus limbs
      const t6 = clock();
      time.words += t1 - t0;
      time["step 1"] += t2 - t1;
      time["step 2"] += t3 - t2;
      time["step 3"] += t4 - t3;
      time.limbs += t5 - t4;
      time.hex += t6 - t5 - (t5 - t4);
      for (const name of ["words", "step 1", "step 2", "step 3", "limbs"]) readings[name]++; // hex: two less one
    }
    a = clock();
    const all = decoder.decode(text.subarray(0, at));
    const b = clock();
    for (let i = start, from = 0; i < stop; i++) reports[i] = all.slice(from, from = ends[i - start]);
    time.slices += clock() - b;
    time.decode += b - a;
    readings.decode++;
    readings.slices++;
  }
  wordsRead = filled - (kernel.end - kernel.at) - before;
  for (const name of names) totals[name].push((time[name] - readings[name] * empty) / n);
}
out.stages_ns = Object.fromEntries(names.map((name) => [name, summary(totals[name])]));
out.words_a_record = wordsRead / n;

// Floors: the fill of those words alone, and G remainders over them with the signature's radices.
const words = new Uint32Array(Math.ceil(out.words_a_record * n / 16384) * 16384);
const fills = [];
const remainders = [];
const radices = Float64Array.from(sampler.groupRadix[0].filter((r) => r > 1));
const G = radices.length;
const held = new Float64Array(words.length);
const remainderPass = () => { // G remainders a record, as step 2 takes them (no rejections, no table)
  for (let i = 0; i + G <= words.length; i += G) {
    for (let g = 0; g < G; g++) {
      const u = words[i + g];
      const radix = radices[g];
      held[i + g] = u - Math.floor(u / radix) * radix;
    }
  }
};
remainderPass();
for (let r = 0; r < repeats; r++) {
  t = clock();
  for (let at = 0; at < words.length; at += 16384) globalThis.crypto.getRandomValues(words.subarray(at, at + 16384));
  fills.push((clock() - t) / n);
  t = clock();
  remainderPass();
  remainders.push((clock() - t) / (words.length / G));
}
out.floor_fill_ns = summary(fills);
out.floor_remainders_ns = summary(remainders);
out.groups = G;
const powers = kernel.seeds.powers[0];
let multiplyAdds = 0;
for (let c = 0; c < powers.blocks; c++) multiplyAdds += 4 * (sampler.width - powers.first[c]);
out.multiply_adds_a_record = multiplyAdds;
console.log(JSON.stringify(out));
"""


def _load() -> float:
    return os.getloadavg()[0]


def stages(size: int, repeats: int, folder: Path) -> dict[str, object]:
    from mechdesign.mechfile import write_symmetric_file

    mechanism = engine_shaped(zipf_counts(size, 100 * size), SIZES[size], 0)
    path = folder / f"design-{size}.json"
    write_symmetric_file(path, mechanism, guarantee={"epsilon": mechanism.capacity(RADIUS), "radius": RADIUS})
    script = folder / "stages.mjs"
    script.write_text(STAGES_JS, encoding="utf-8")
    load_before = _load()
    done = subprocess.run(["node", str(script), JS.as_uri(), str(path), str(repeats)], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout) | {"load_before": load_before, "load_after": _load(), "repeats": repeats}


def _cell(summary: dict[str, float]) -> str:
    return f"{summary['median']:.0f} [{summary['min']:.0f}, {summary['max']:.0f}]"


def table(rows: list[dict]) -> str:
    lines = ["| stage | " + " | ".join(f"N = {row['N']:,}" for row in rows) + " |",
             "|---|" + "---|" * len(rows)]
    for name in ["words", "step 1", "step 2", "step 3", "limbs", "hex", "decode", "slices", "labels"]:
        lines.append(f"| {name} | " + " | ".join(_cell(row["stages_ns"][name]) for row in rows) + " |")
    lines.append("| sum of the stages | " + " | ".join(
        f"{sum(row['stages_ns'][name]['median'] for name in row['stages_ns']):.0f}" for row in rows) + " |")
    lines.append("| `privatize`, warm | " + " | ".join(_cell(row["warm_ns"]) for row in rows) + " |")
    lines.append("| `privatize`, first call | " + " | ".join(f"{row['first_ns']:.0f}" for row in rows) + " |")
    lines.append("| floor: the fill of the words | " + " | ".join(_cell(row["floor_fill_ns"]) for row in rows) + " |")
    lines.append("| floor: G remainders | " + " | ".join(_cell(row["floor_remainders_ns"]) for row in rows) + " |")
    lines.append("| words a record, G, multiply-adds of V | " + " | ".join(
        f"{row['words_a_record']:.1f}, {row['groups']}, {row['multiply_adds_a_record']}" for row in rows) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if not JS.exists():
        raise SystemExit("clients/js is not built: (cd clients/js && npm ci && npm run build)")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [stages(size, args.repeats, Path(tmp)) for size in args.sizes]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "js_stages.json").write_text(json.dumps({"rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(table(rows))


if __name__ == "__main__":
    main()

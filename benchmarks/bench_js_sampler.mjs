// Throughput and goodness of fit of the JavaScript client's exact sampler (clients/js), in Node on one core.
//
// Throughput: k-RR at ε = 1 for N = 2 … 256 inputs/outputs, 10^7 records with uniformly spread inputs, randomness
// from crypto.getRandomValues (one 64-bit word per record), median of 7 timed runs after one warm-up.
// Goodness of fit: 10^7 draws for N = 2, 16, 256; Pearson's χ² of the (input, output) counts against the exact
// sampled matrix Q / 2^64, with N(N − 1) degrees of freedom, and its p-value.
// Needs the built client: (cd clients/js && npm ci && npm run build); then `node benchmarks/bench_js_sampler.mjs`.
// Writes benchmarks/results/js_sampler.json and .csv.
import { writeFileSync } from "node:fs";
import os from "node:os";
import { Sampler } from "../clients/js/dist/index.js";

const RECORDS = 10_000_000;
const REPEATS = 7;

function krr(n, epsilon) {
  const e = Math.exp(epsilon);
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? e : 1) / (e + n - 1)));
}

/** log Γ(x) (Lanczos, g = 7), for the χ² p-value. */
function logGamma(x) {
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The upper regularised incomplete gamma Q(a, x) = P(χ²_{2a} > 2x) (series or continued fraction). */
function upperGamma(a, x) {
  if (x <= 0) return 1;
  const front = Math.exp(-x + a * Math.log(x) - logGamma(a));
  if (x < a + 1) {
    let sum = 1 / a;
    let term = sum;
    for (let n = 1; n < 100000 && Math.abs(term) > Math.abs(sum) * 1e-15; n++) {
      term *= x / (a + n);
      sum += term;
    }
    return 1 - front * sum;
  }
  let b = x + 1 - a;
  let c = 1e300;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 100000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    d = Math.abs(d) < 1e-300 ? 1e-300 : d;
    c = b + an / c;
    c = Math.abs(c) < 1e-300 ? 1e-300 : c;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return front * h;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rows = [];

for (const n of [2, 4, 16, 64, 256]) {
  const sampler = new Sampler(krr(n, 1.0));
  const xs = new Uint32Array(RECORDS);
  for (let i = 0; i < RECORDS; i++) xs[i] = i % n;
  const out = new Uint16Array(RECORDS);
  sampler.sampleIndices(xs, out); // warm-up (JIT)
  const times = [];
  for (let r = 0; r < REPEATS; r++) {
    const start = process.hrtime.bigint();
    sampler.sampleIndices(xs, out);
    times.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  const row = { kind: "throughput", N: n, records: RECORDS, median_seconds: +median(times).toFixed(4),
    records_per_second: Math.round(RECORDS / median(times)), min_seconds: +Math.min(...times).toFixed(4),
    max_seconds: +Math.max(...times).toFixed(4) };
  rows.push(row);
  console.log(`N=${n}: ${(row.records_per_second / 1e6).toFixed(1)} M records/s (median of ${REPEATS})`);
}

for (const n of [2, 16, 256]) {
  const sampler = new Sampler(krr(n, 1.0));
  const probabilities = sampler.quantised.map((row) => row.map((q) => Number(q) / 2 ** 64));
  const xs = new Uint32Array(RECORDS);
  for (let i = 0; i < RECORDS; i++) xs[i] = i % n;
  const out = sampler.sampleIndices(xs);
  const counts = new Float64Array(n * n);
  for (let i = 0; i < RECORDS; i++) counts[xs[i] * n + out[i]] += 1;
  let chi2 = 0;
  for (let x = 0; x < n; x++) {
    const records = Math.floor(RECORDS / n) + (x < RECORDS % n ? 1 : 0);
    for (let y = 0; y < n; y++) {
      const expected = records * probabilities[x][y];
      chi2 += (counts[x * n + y] - expected) ** 2 / expected;
    }
  }
  const dof = n * (n - 1);
  const p = upperGamma(dof / 2, chi2 / 2);
  rows.push({ kind: "chi_squared", N: n, records: RECORDS, chi_squared: +chi2.toFixed(3), degrees_of_freedom: dof,
    p_value: +p.toPrecision(4) });
  console.log(`N=${n}: chi2 = ${chi2.toFixed(2)} on ${dof} dof, p = ${p.toPrecision(4)}`);
}

const machine = { node: process.version, v8: process.versions.v8, platform: process.platform, arch: process.arch,
  cpu: os.cpus()[0]?.model, cpus: os.cpus().length, date: new Date().toISOString() };
const results = new URL("results/", import.meta.url);
writeFileSync(new URL("js_sampler.json", results), `${JSON.stringify({ benchmark: "js_sampler", machine,
  epsilon: 1.0, note: "k-RR; one core; crypto.getRandomValues; exact Q/2^64 sampler of clients/js", rows }, null, 2)}\n`);
const keys = [...new Set(rows.flatMap(Object.keys))];
writeFileSync(new URL("js_sampler.csv", results),
  `${[keys.join(","), ...rows.map((r) => keys.map((k) => r[k] ?? "").join(","))].join("\n")}\n`);

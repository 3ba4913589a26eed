// The law of the structured sampler's fresh path (src/symmetricFresh.ts) against the reference rule's:
// P((t, V) | x) = Q_k[(t, ℓ)]/2^64 · s_k/(n_ℓ S_t) for every seed V of type t that places x at level ℓ, 0 for the
// others (docs/client_spec.rst, "Structured files"). The oracle computes the placement from the spec's text alone:
// the type's digits (e, u, w per needed prime), the least primitive root, z = (g^e·i + Σ u_i digits(j)_i + w) mod p.
// Exact counts at one input of conformance/structured/files/valid.json (every S_t ≤ 1,440): no draw outside the
// support, and Pearson's χ² of 400,000 draws (bins with expected count below 5 merged) under the Wilson–Hilferty
// normal approximation, z < 4.265 (one-sided p = 10⁻⁵), with a fixed seed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { SymmetricSampler, loadSymmetricFile } from "../dist/structured.js";

const folder = new URL("../../../conformance/structured/", import.meta.url);
const read = (path) => readFileSync(new URL(path, folder));

/** xorshift128+ halves as 32-bit words (fixed seed): a fill for reproducible draws. */
const xorshiftFill = (seed) => {
  let s0 = BigInt(seed) | 1n;
  let s1 = 0x9e3779b97f4a7c15n;
  const mask = (1n << 64n) - 1n;
  return (buffer) => {
    for (let i = 0; i < buffer.length; i += 2) {
      let x = s0;
      const y = s1;
      s0 = y;
      x = (x ^ (x << 23n)) & mask;
      s1 = x ^ y ^ (x >> 17n) ^ (y >> 26n);
      const out = (s1 + y) & mask;
      buffer[i] = Number(out >> 32n);
      if (i + 1 < buffer.length) buffer[i + 1] = Number(out & 0xffffffffn);
    }
  };
};

function primitiveRootOracle(p) {
  if (p === 2) return 1;
  for (let g = 2; g < p; g++) {
    let order = 1;
    for (let v = g % p; v !== 1; v = (v * g) % p) order++;
    if (order === p - 1) return g;
  }
  throw new Error("no root");
}

/** The level of input x under report (t, V): 2 high, 1 low, 0 zero (the spec's placement family). */
function levelOf(mechanism, t, V, x) {
  const { cellOf, position, sizes } = mechanism.cells;
  const k = cellOf[x];
  const a = mechanism.highCounts[t][k];
  const b = mechanism.lowCounts[t][k];
  let z = position[x]; // where t does not need the cell's prime, a + b is 0, or a or b fills the cell
  let rest = V;
  for (const p of [...new Set(sizes.filter((s) => s > 1))].sort((u, v) => u - v)) {
    const cells = sizes.flatMap((s, c) => (s === p ? [c] : []));
    const needs = cells.some((c) => {
      const ac = mechanism.highCounts[t][c];
      const bc = mechanism.lowCounts[t][c];
      return ac + bc > 0 && ac < p && bc < p;
    });
    if (!needs) continue;
    let m = 0;
    if (cells.length > 1) for (let power = 1; power < cells.length; power *= p) m++;
    const e = rest % (p - 1);
    rest = Math.floor(rest / (p - 1));
    const u = [];
    for (let i = 0; i < m; i++) {
      u.push(rest % p);
      rest = Math.floor(rest / p);
    }
    const w = rest % p;
    rest = Math.floor(rest / p);
    if (p === sizes[k]) {
      const j = cells.indexOf(k);
      let d = 1;
      for (let i = 0; i < e; i++) d = (d * primitiveRootOracle(p)) % p;
      let r = w;
      for (let i = 0; i < m; i++) r += u[i] * (Math.floor(j / p ** i) % p);
      z = (d * position[x] + r) % p;
    }
  }
  assert.equal(rest, 0, "V below S_t");
  if (sizes[k] === 1) z = 0;
  return z < a ? 2 : z < a + b ? 1 : 0;
}

test("structured fresh path: exact counts of (t, V) at one input follow the rule's law", async () => {
  const vectors = JSON.parse(read("sampler.json"));
  const file = await loadSymmetricFile(read(vectors.file));
  const m = file.mechanism;
  const sampler = new SymmetricSampler(file, xorshiftFill(20261127));
  const x = m.inputs.indexOf("item3"); // a cell of size 3, one of two (m_3 = 1: the hash reads u_0)
  const k = m.cells.cellOf[x];
  assert.equal(m.cells.sizes[k], 3);
  const seeds = (t) => sampler.groupRadix[t].reduce((p, r) => p * r, 1);
  const law = new Map(); // "t:V" → probability
  sampler.pairs[k].forEach((pair, j) => {
    const t = pair >> 1;
    const level = 2 - (pair & 1);
    const n = level === 2 ? m.highCounts[t][k] : m.lowCounts[t][k];
    const q = Number(sampler.quants[k][j]) / 2 ** 64;
    for (let V = 0; V < seeds(t); V++) {
      if (levelOf(m, t, V, x) === level) law.set(`${t}:${V}`, (q * m.cells.sizes[k]) / (n * seeds(t)));
    }
  });
  const total = [...law.values()].reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(total - 1) < 1e-12, `${total}`);
  const draws = 400_000;
  const seen = new Map();
  for (const report of sampler.freshReports(Array(draws).fill("item3"))) {
    let V = 0;
    for (let g = report.groups.length - 1; g >= 0; g--) V = V * sampler.groupRadix[report.type][g] + report.groups[g];
    const key = `${report.type}:${V}`;
    assert.ok(law.has(key), `a draw outside the support: ${key}`);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  let chi = 0;
  let bins = 0;
  let pooledExpected = 0;
  let pooledSeen = 0;
  for (const [key, p] of law) {
    const expected = p * draws;
    if (expected < 5) {
      pooledExpected += expected;
      pooledSeen += seen.get(key) ?? 0;
      continue;
    }
    chi += ((seen.get(key) ?? 0) - expected) ** 2 / expected;
    bins++;
  }
  if (pooledExpected > 0) {
    chi += (pooledSeen - pooledExpected) ** 2 / pooledExpected;
    bins++;
  }
  const df = bins - 1;
  const z = ((chi / df) ** (1 / 3) - (1 - 2 / (9 * df))) / Math.sqrt(2 / (9 * df));
  assert.ok(df >= 100, `${df} degrees of freedom`);
  assert.ok(z < 4.265, `chi2 = ${chi} on ${df} df: z = ${z}`);
});

test("structured fresh path: a rejected 32-bit word is skipped and the next one read", async () => {
  // Words ≥ L_R = 2^32 − (2^32 mod R) are rejected (R = a group's radix, not a power of two here): inserting
  // 0xffffffff before a group's word must leave the report as it was.
  const vectors = JSON.parse(read("sampler.json"));
  const file = await loadSymmetricFile(read(vectors.file));
  const stream = (words) => (buffer) => {
    buffer.fill(7);
    buffer.set(words);
  };
  const w0 = [0x80000000, 0];
  const plain = new SymmetricSampler(file, stream([...w0, 1234, 5])).freshReports(["item3"])[0];
  const skipped = new SymmetricSampler(file, stream([...w0, 0xffffffff, 1234, 5])).freshReports(["item3"])[0];
  const radices = new SymmetricSampler(file).groupRadix[plain.type];
  assert.ok(radices[0] > 1 && 2 ** 32 % radices[0] !== 0);
  assert.deepEqual(skipped, plain);
  const other = new SymmetricSampler(file, stream([...w0, 1235, 5])).freshReports(["item3"])[0];
  assert.notDeepEqual(other, plain); // the group word is read: a different word, a different report
});

test("structured fresh path: a run of rejected words longer than a fill is skipped, the stream read in order", async () => {
  // The kernel tops its word buffer up once a batch; a run of rejected words longer than that reserve and a fill
  // (100,000 words of 0xffffffff, before the first record's first group word) must be read through mid-batch and
  // leave every report as it was without the run, with the fill still called on 16,384 words at a time.
  const vectors = JSON.parse(read("sampler.json"));
  const file = await loadSymmetricFile(read(vectors.file));
  const inputs = file.mechanism.inputs;
  // enough records for several fills, so that batches also start with unread words to move to the front
  const values = ["item3", ...Array.from({ length: 19_999 }, (_, i) => inputs[(i * 7) % inputs.length])];
  const run = 100_000;
  const stepOne = 2 * 256; // the first batch's w₀ words, read before any group word
  const source = (withRun) => {
    const random = xorshiftFill(20261128);
    const word = new Uint32Array(1);
    let read = 0;
    const sizes = [];
    const fill = (buffer) => {
      sizes.push(buffer.length);
      for (let i = 0; i < buffer.length; i++, read++) {
        if (withRun && read >= stepOne && read < stepOne + run) {
          buffer[i] = 0xffffffff;
          continue;
        }
        if (read < 2) { // w₀ of the first record as in the test above: a type whose first radix is not 2^k
          buffer[i] = read === 0 ? 0x80000000 : 0;
          continue;
        }
        random(word);
        buffer[i] = word[0];
      }
    };
    return { fill, sizes };
  };
  const plain = source(false);
  const withRun = source(true);
  const expected = new SymmetricSampler(file, plain.fill).freshReports(values);
  const sampler = new SymmetricSampler(file, withRun.fill);
  assert.ok(sampler.groupRadix[expected[0].type][0] > 1 && 2 ** 32 % sampler.groupRadix[expected[0].type][0] !== 0);
  assert.deepEqual(sampler.freshReports(values), expected);
  assert.ok(withRun.sizes.length >= plain.sizes.length + Math.floor(run / 16384));
  assert.ok([...plain.sizes, ...withRun.sizes].every((size) => size === 16384), `${withRun.sizes}`);
  const again = source(true); // privatize reads the same stream: the text of the same reports
  const texts = new SymmetricSampler(file, again.fill).privatize(values);
  assert.deepEqual(texts, expected.map((report) => sampler.text(report.type, report.groups)));
});

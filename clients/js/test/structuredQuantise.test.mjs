// The structured sampler's float quantisation (symmetricQuantise.ts) against the exact BigInt rule (sampler.ts's
// quantise, mechdesign's _numerics.quantise) on seeded random rows, rows with ties, rows of widely spread weights
// and rows that must fall back; and the O(entries) capacity bound against the sampled mechanism's exact capacity.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { quantise } from "../dist/sampler.js";
import { quantisePositive } from "../dist/symmetricQuantise.js";
import { SymmetricSampler, loadSymmetricFile } from "../dist/structured.js";

/** A seeded xorshift generator of floats in (0, 1). */
function generator(seed) {
  let state = BigInt(seed) * 0x9e3779b97f4a7c15n + 1n;
  return () => {
    state ^= (state << 13n) & 0xffffffffffffffffn;
    state ^= state >> 7n;
    state ^= (state << 17n) & 0xffffffffffffffffn;
    return (Number(state & 0xfffffffffffffn) + 0.5) / 2 ** 52;
  };
}

function agrees(row) {
  const fast = quantisePositive(row);
  const exact = quantise(row);
  if (fast === null) {
    assert.ok(exact.some((x) => x === 2n ** 64n), `null only when one entry takes 2^64: ${row}`);
    return;
  }
  const got = Array.from(fast.hi, (h, j) => (BigInt(h) << 32n) + BigInt(fast.lo[j]));
  assert.deepEqual(got, exact, `row ${JSON.stringify(Array.from(row))}`);
}

test("quantisePositive equals quantise on random rows (2 to 3,000 entries, several scales)", () => {
  const random = generator(1);
  for (let trial = 0; trial < 300; trial++) {
    const n = 2 + Math.floor(random() * (trial < 280 ? 60 : 3000));
    const spread = [1, 1e-3, 1e-12, 1e-200][trial % 4];
    agrees(Float64Array.from({ length: n }, () => random() * (random() < 0.5 ? 1 : spread)));
  }
});

test("quantisePositive equals quantise on ties, exact fractions and rows that fall back", () => {
  agrees([1 / 3, 1 / 3, 1 / 3]); // remainders tied: the lower index first
  agrees([0.5, 0.25, 0.25]); // every remainder 0: the floats cannot decide, the exact rule does
  agrees([1, 1, 1, 1, 1, 1, 1]);
  agrees([0.1, 0.2, 0.2, 0.1, 0.4]);
  agrees([1, 2 ** -70]); // the second entry below 2^-64 of the row: q = [2^64, 0], no 32-bit halves
  agrees([1, 2 ** -1000]); // near subnormals: the exact rule
  agrees([3, 5e-324, 7]);
  const random = generator(2);
  for (let trial = 0; trial < 100; trial++) { // a few distinct weights repeated: ties at the threshold
    const values = [random(), random(), random()];
    agrees(Array.from({ length: 3 + Math.floor(random() * 40) }, () => values[Math.floor(random() * 3)]));
  }
});

test("the capacity bound from the file's recomputed capacity is at least the sampled mechanism's", async () => {
  const folder = new URL("../../../conformance/structured/", import.meta.url);
  const vectors = JSON.parse(readFileSync(new URL("sampler.json", folder)));
  const file = await loadSymmetricFile(readFileSync(new URL(vectors.file, folder)));
  const sampler = new SymmetricSampler(file);
  const bound = sampler.boundedCapacity(file.achieved);
  assert.ok(Number.isFinite(bound) && bound >= sampler.sampledEpsilon, `${bound} vs ${sampler.sampledEpsilon}`);
  assert.ok(bound <= file.achieved + 1e-6, `${bound} vs ${file.achieved}`); // quantisation moves it by ~2^-50
});

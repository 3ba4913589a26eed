// Structured (symmetric) files against the vectors mechdesign writes (conformance/structured/,
// tools/make_structured_conformance.py): every file's verdict (holds / overstated / refused with the same field and
// rule head), the recomputed ε within 1e-12 of Python's, the reports of the reference rule for fixed words, and
// memoized words and reports.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { MechanismFileError, MemoFunction, UserIds } from "../dist/index.js";
import { SymmetricSampler, loadSymmetricFile, verifySymmetricFile } from "../dist/structured.js";

const folder = new URL("../../../conformance/structured/", import.meta.url);
const read = (path) => readFileSync(new URL(path, folder));
const manifest = JSON.parse(read("manifest.json"));

const ruleHead = (rule) => rule.replace(/ \([^()]*(?:\([^()]*\)[^()]*)*\)/g, "");

for (const entry of manifest.files) {
  test(`structured ${entry.name}: ${entry.expect.outcome}`, async () => {
    const bytes = read(entry.file);
    const expect = entry.expect;
    if (expect.outcome === "refused") {
      await assert.rejects(verifySymmetricFile(bytes), (error) => {
        assert.ok(error instanceof MechanismFileError, `${error}`);
        assert.deepEqual({ field: error.field, rule: ruleHead(error.rule) }, { field: expect.field, rule: expect.rule },
          error.message);
        assert.ok(!error.message.includes("\n"));
        return true;
      });
      return;
    }
    const file = await verifySymmetricFile(bytes);
    assert.equal(file.sha256, expect.sha256);
    assert.ok(Math.abs(file.achieved - expect.achieved) <= 1e-12, `${file.achieved} vs ${expect.achieved}`);
    assert.equal(file.holds, expect.outcome === "holds");
    if (expect.outcome === "overstated") await assert.rejects(loadSymmetricFile(bytes), MechanismFileError);
  });
}

test("structured sampler: the reference rule's report for every fixed word stream", async () => {
  const vectors = JSON.parse(read("sampler.json"));
  const file = await loadSymmetricFile(read(vectors.file));
  const sampler = new SymmetricSampler(file);
  assert.equal(sampler.wordsNeeded(), vectors.words_needed);
  assert.ok(Math.abs(sampler.sampledEpsilon - vectors.sampled_epsilon) <= 1e-12);
  const index = new Map(file.mechanism.inputs.map((label, i) => [label, i]));
  for (const item of vectors.cases) {
    const words = new Uint32Array(2 * item.words.length);
    item.words.forEach((w, i) => {
      const value = BigInt(w);
      words[2 * i] = Number(value >> 32n);
      words[2 * i + 1] = Number(value & 0xffffffffn);
    });
    const report = sampler.report(index.get(item.input), words);
    assert.equal(sampler.text(report.type, report.groups), item.report, JSON.stringify(item));
  }
});

test("structured memo: the keyed word stream and memoized reports", async () => {
  const vectors = JSON.parse(read("memo.json"));
  const file = await loadSymmetricFile(read(vectors.file));
  const key = Uint8Array.from(vectors.key.match(/../g), (h) => parseInt(h, 16));
  const memo = await MemoFunction.create(key, file.sha256);
  const index = new Map(file.mechanism.inputs.map((label, i) => [label, i]));
  const users = vectors.cases.map((c) => c.user);
  const values = vectors.cases.map((c) => index.get(c.input));
  const halves = await memo.stream(0, UserIds.encode(users), values, 4);
  vectors.cases.forEach((c, r) => {
    c.words.forEach((w, i) => {
      const got = (BigInt(halves[8 * r + 2 * i]) << 32n) | BigInt(halves[8 * r + 2 * i + 1]);
      assert.equal(got.toString(), w);
    });
  });
  const sampler = new SymmetricSampler(file);
  const reports = await sampler.privatizeMemoized(vectors.cases.map((c) => c.input), users, memo);
  assert.deepEqual(reports, vectors.cases.map((c) => c.report));
});

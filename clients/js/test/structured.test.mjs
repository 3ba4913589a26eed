// Structured (symmetric) files against the vectors mechdesign writes (conformance/structured/,
// tools/make_structured_conformance.py): every file's verdict (holds / overstated / refused with the same field and
// rule head), the recomputed ε within 1e-12 of Python's, the reports of the reference rule for fixed words (text and
// binary form, and byte strings refused as binary reports), and memoized words and reports.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { MechanismFileError, MemoFunction, UserIds, keyId } from "../dist/index.js";
import {
  SymmetricSampler, binaryReport, loadSymmetricFile, readBinaryReport, verifySymmetricFile,
} from "../dist/structured.js";

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
    const binary = binaryReport(sampler, report.type, report.groups);
    assert.equal(Buffer.from(binary).toString("hex"), item.binary, JSON.stringify(item));
    const back = readBinaryReport(sampler, binary);
    assert.equal(back.type, report.type);
    assert.deepEqual(back.groups.slice(0, report.groups.length), report.groups);
  }
  assert.ok(vectors.refused_binary.length >= 4);
  for (const item of vectors.refused_binary) { // not reports of the file: a one-line refusal naming the rule
    assert.throws(() => readBinaryReport(sampler, Uint8Array.from(Buffer.from(item.binary, "hex"))),
      (error) => error instanceof RangeError && error.message.startsWith("report must ") &&
        error.message.includes(item.rule) && !error.message.includes("\n"), JSON.stringify(item));
  }
});

/** A fill that repeats for the same seed: two samplers given fills of one seed read the same words. */
const seededFill = (seed) => {
  let state = seed;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
  return (buffer) => {
    for (let i = 0; i < buffer.length; i++) buffer[i] = next() ^ (next() << 16);
  };
};

test("structured sampler: privatizeBinary gives the binary form of each record's fresh report", async () => {
  // The fresh path (symmetricFresh.ts) writes bytes from its own limbs; with the same words, every record must get
  // binaryReport() of the report freshReports() draws — across batches (256 records) and every type's width.
  const vectors = JSON.parse(read("sampler.json"));
  const file = await loadSymmetricFile(read(vectors.file));
  const inputs = file.mechanism.inputs;
  const values = Array.from({ length: 4200 }, (_, i) => inputs[(i * 5) % inputs.length]);
  const reports = new SymmetricSampler(file, seededFill(777)).privatizeBinary(values);
  const check = new SymmetricSampler(file, seededFill(777));
  const fresh = check.freshReports(values);
  assert.ok(new Set(fresh.map((r) => r.type)).size >= 4);
  values.forEach((value, r) => {
    assert.deepEqual(reports[r], binaryReport(check, fresh[r].type, fresh[r].groups), `record ${r}`);
  });
});

test("structured sampler: privatize writes, chunk by chunk, the text of each record's fresh report", async () => {
  // privatize writes a chunk's reports into one buffer and slices them out; with the same words, every record must
  // get text() of the report freshReports() draws — across a chunk boundary (4,096 records) and for every type's width.
  const vectors = JSON.parse(read("sampler.json"));
  const file = await loadSymmetricFile(read(vectors.file));
  const inputs = file.mechanism.inputs;
  const values = Array.from({ length: 5000 }, (_, i) => inputs[(i * 7) % inputs.length]);
  const reports = new SymmetricSampler(file, seededFill(12345)).privatize(values);
  const check = new SymmetricSampler(file, seededFill(12345));
  const fresh = check.freshReports(values);
  values.forEach((value, r) => {
    assert.equal(reports[r], check.text(fresh[r].type, fresh[r].groups), `record ${r}`);
  });
});

test("structured sampler: only the labels themselves are inputs", async () => {
  // The label index is an object without a prototype: names of Object.prototype, and values that a property lookup
  // would turn into a label (["item0"], an object whose text is a label), are refused as a Map refused them.
  const vectors = JSON.parse(read("sampler.json"));
  const file = await loadSymmetricFile(read(vectors.file));
  const sampler = new SymmetricSampler(file, seededFill(1));
  assert.equal(sampler.privatize(["item0", "item15"]).length, 2);
  for (const value of ["constructor", "__proto__", "toString", "hasOwnProperty", ["item0"], { toString: () => "item1" },
    undefined, "item16", "Item0"]) {
    assert.throws(() => sampler.privatize(["item0", value]), (error) => error instanceof RangeError &&
      /values must be input labels of the mechanism.*\(value 1\)/.test(error.message), String(value));
    assert.throws(() => sampler.privatizeBinary([value]), RangeError, String(value));
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
  vectors.cases.forEach((c, r) => { // the binary form of the same report
    const words = halves.subarray(8 * r, 8 * r + 8);
    const report = sampler.report(values[r], words);
    assert.equal(Buffer.from(binaryReport(sampler, report.type, report.groups)).toString("hex"), c.binary);
  });
});

test("a structured file bound to a key takes only that key, in the library and the CLI (issue 61 item 1)", async () => {
  // The dense path refused another key; the structured one wrote its reports (exit 0): a second release for everyone.
  const { spawnSync } = await import("node:child_process");
  const { existsSync, mkdtempSync, writeFileSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const vectors = JSON.parse(read("memo.json"));
  const key = Uint8Array.from(vectors.key.match(/../g), (h) => parseInt(h, 16));
  const other = Uint8Array.from(key, (b, i) => (i === 0 ? b ^ 1 : b));
  const file = await loadSymmetricFile(read("files/memoized-keyed.json"));
  assert.match(file.release.key, /^[0-9a-f]{32}$/);
  const sampler = new SymmetricSampler(file);
  const values = [file.mechanism.inputs[0], file.mechanism.inputs[5]];
  assert.equal((await sampler.privatizeMemoized(values, ["u1", "u2"], await MemoFunction.create(key, file.sha256))).length, 2);
  await assert.rejects(sampler.privatizeMemoized(values, ["u1", "u2"], await MemoFunction.create(other, file.sha256)),
    (error) => error instanceof RangeError &&
      error.message.startsWith(`memo_key must be the key the file is bound to (key id ${file.release.key};`));
  await assert.rejects(sampler.privatizeMemoized(values, ["u1", "u2"], await MemoFunction.create(key, "ab".repeat(32))),
    /key must be a memo function of this file/);

  const temp = mkdtempSync(join(tmpdir(), "mdjs-keyed-"));
  const [right, wrong, out] = ["right.key", "wrong.key", "out.txt"].map((name) => join(temp, name));
  writeFileSync(right, `${vectors.key}\n`);
  writeFileSync(wrong, `${Buffer.from(other).toString("hex")}\n`);
  const path = fileURLToPath(new URL("files/memoized-keyed.json", folder));
  const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
  const input = `u1\t${values[0]}\nu2\t${values[1]}\n`;
  const run = (args) => spawnSync(process.execPath, [cli, "privatize", path, ...args], { encoding: "utf8", input });
  for (const args of [["--memo-key", wrong], ["--memo-key", wrong, "--out", out]]) {
    const refused = run(args);
    assert.equal(refused.status, 2, refused.stdout + refused.stderr);
    assert.equal(refused.stdout, "");
    assert.equal(refused.stderr, `mechdesign-js: error: memo_key must be the key ${path} is bound to (key id ` +
      `${file.release.key}; another key draws another set of outputs, a new release for everyone), got a key with ` +
      `id ${await keyId(other)}\n`);
    assert.ok(!existsSync(out));
  }
  const ok = run(["--memo-key", right]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.deepEqual(ok.stdout.trim().split("\n"), await sampler.privatizeMemoized(values, ["u1", "u2"],
    await MemoFunction.create(key, file.sha256)));
});

test("mechdesign-js on structured files: verify exits 0, 1 or 2 with one line; privatize writes reports", async () => {
  const { spawnSync } = await import("node:child_process");
  const { fileURLToPath } = await import("node:url");
  const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
  const path = (name) => fileURLToPath(new URL(`files/${name}.json`, folder));
  const run = (args, input) => spawnSync("node", [cli, ...args], { encoding: "utf8", input });
  const ok = run(["verify", path("valid")]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /pml epsilon .* holds/);
  assert.match(ok.stdout, /structured design: 16 inputs in 6 cells/);
  const leaky = run(["verify", path("leaky-types")]);
  assert.equal(leaky.status, 1);
  for (const name of ["count-above-cell", "counts-zero", "tampered-weight", "packed-malformed"]) {
    const bad = run(["verify", path(name)]);
    assert.equal(bad.status, 2, name);
    assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
  }
  const file = JSON.parse(read("files/valid.json"));
  const done = run(["privatize", path("valid")], `${file.inputs[0]}\n${file.inputs[5]}\n`);
  assert.equal(done.status, 0, done.stderr);
  const lines = done.stdout.trim().split("\n");
  assert.equal(lines.length, 2);
  assert.ok(lines.every((line) => /^t[0-9]+\.[0-9a-f]+$/.test(line)), done.stdout);
});

// The greedy's early stop (groupMinLinear leaves every group whole once the budget is drained by 1e-9) against the
// specification's loop over every group (docs/client_spec.rst, "Guarantee"), bit for bit, on seeded random rows
// whose budget sits on, just below or just above a cumulative mass.
test("structured greedy: the early stop returns the full loop's doubles", async () => {
  const { groupMinLinear } = await import("../dist/structured.js");
  const { pairwiseSum } = await import("../dist/index.js");
  const U = 2 ** -53;
  const down = (x) => {
    if (x === 0) return 0;
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    view.setBigUint64(0, view.getBigUint64(0) - 1n);
    return view.getFloat64(0);
  };
  const full = (u, m, beta) => { // rows already sorted by value descending, scale 1
    const budget = beta / 2;
    let low = Infinity;
    for (let j = 0; j < u.length; j++) if (m[j] > 0) low = Math.min(low, u[j]);
    let high = 0;
    let lo = 0;
    const drained = new Float64Array(u.length);
    const weighted = new Float64Array(u.length);
    for (let j = 0; j < u.length; j++) {
      const total = high + m[j];
      const virtual = total - high;
      lo += (high - (total - virtual)) + (m[j] - virtual);
      high = total;
      const head = high - budget;
      const v = head - high;
      const tail = (high - (head - v)) + (-budget - v);
      const left = Math.min(Math.max(head + (tail + lo), 0), m[j]);
      drained[j] = m[j] - left;
      weighted[j] = left * u[j];
    }
    const g = Math.max((pairwiseSum(weighted) + pairwiseSum(drained) * low) * (1 - (u.length + 10) * U) - 4 * U, low);
    return down(g * (1 - 2 * U));
  };
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let run = 0; run < 400; run++) {
    const width = 1 + Math.floor(next() * 60);
    const samples = [7, 1000, 10 ** 6, 10 ** 7 + 3][run % 4];
    const cuts = Array.from({ length: width - 1 }, () => Math.floor(next() * (samples + 1))).sort((a, b) => a - b);
    const counts = [...cuts, samples].map((c, j) => c - (j ? cuts[j - 1] : 0));
    const m = Float64Array.from(counts, (c) => c / samples);
    const u = Float64Array.from({ length: width }, () => next()).sort().reverse();
    u[0] = 1;
    let cumulative = 0;
    const at = Math.floor(next() * width);
    for (let j = 0; j <= at; j++) cumulative += counts[j];
    const beta = Math.min(2, Math.max(0, [next() * 2, 2 * cumulative / samples, 2 * cumulative / samples - 1e-9,
      2 * cumulative / samples + 1e-9][run % 4]));
    assert.equal(groupMinLinear(u, m, beta), full(u, m, beta), `run ${run}`);
  }
});

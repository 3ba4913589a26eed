// Memoized sampling (mechdesign-memo-1) and release policies in the client: every conformance word and output
// bit-identical to mechdesign in both AES paths (WebCrypto, node:crypto), the same output for the same user and
// value, the two-layer reports drawn from W2[y1, ·], the T-release account against an independent computation,
// and the refusals (library and command).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  MemoFunction, Privatizer, UserIds, capacity, keyId, countVectors, loadMechanismFile, parseMemoKey, releaseLeakage,
} from "../dist/index.js";
import { nodeDecryptor } from "../dist/node.js";

const root = new URL("../../../conformance/", import.meta.url);
const read = (path) => readFileSync(new URL(path, root));
const vectors = JSON.parse(read("memo.json"));
const key = Uint8Array.from(Buffer.from(vectors.key, "hex"));
const cli = new URL("../dist/cli.js", import.meta.url).pathname;
const PATHS = { webcrypto: () => undefined, node: () => nodeDecryptor(key) };

/** Pearson's χ² of counts against probabilities (cells of probability 0 must be empty). */
function chiSquare(counts, probabilities) {
  const total = counts.reduce((a, b) => a + b, 0);
  return counts.reduce((s, c, j) => {
    if (probabilities[j] === 0) {
      assert.equal(c, 0);
      return s;
    }
    return s + (c - total * probabilities[j]) ** 2 / (total * probabilities[j]);
  }, 0);
}

for (const [name, cipher] of Object.entries(PATHS)) {
  test(`${name}: every conformance word and output is mechdesign's, one at a time and in one batch`, async () => {
    const file = await loadMechanismFile(read(vectors.file));
    const memo = await MemoFunction.create(key, vectors.file_sha256, cipher());
    const privatizer = new Privatizer(file);
    for (const c of vectors.cases) {
      const [word] = await memo.words(c.attribute, [c.user], [c.value]);
      assert.equal(String(word), c.word, `${c.user} attribute ${c.attribute}`);
      if (c.attribute === 0) {
        assert.equal(file.outputs[privatizer.sampler.sampleWord(c.value, word)], c.output);
        assert.deepEqual(await privatizer.privatizeMemoized([c.input], [c.user], memo), [c.output]);
      }
    }
    for (const attribute of [0, 1, 5]) { // ids of 1 to 3 blocks in one batch: shorter ones stop earlier
      const cases = vectors.cases.filter((c) => c.attribute === attribute);
      const words = await memo.words(attribute, cases.map((c) => c.user), cases.map((c) => c.value));
      assert.deepEqual(Array.from(words, String), cases.map((c) => c.word));
    }
    const zero = vectors.cases.filter((c) => c.attribute === 0);
    assert.deepEqual(await privatizer.privatizeMemoized(zero.map((c) => c.input), zero.map((c) => c.user), memo),
      zero.map((c) => c.output));
  });

  test(`${name}: a two-layer file's permanent outputs are mechdesign's`, async () => {
    const { file: path, file_sha256: sha256, cases } = vectors.two_layer;
    const file = await loadMechanismFile(read(path));
    assert.equal(file.sha256, sha256);
    const privatizer = new Privatizer(file);
    const memo = await MemoFunction.create(key, sha256, cipher());
    const x = privatizer.encode(cases.map((c) => c.input));
    const halves = await memo.halves(0, UserIds.encode(cases.map((c) => c.user)), x);
    const permanent = privatizer.sampler.sampleWords(x, halves);
    assert.deepEqual(Array.from(permanent, (y) => file.outputs[y]), cases.map((c) => c.permanent));
    assert.deepEqual(Array.from(await memo.words(0, cases.map((c) => c.user), x), String), cases.map((c) => c.word));
  });
}

test("the WebCrypto and node:crypto paths give the same words (random ids of 1 to 70 bytes, several batches)", async () => {
  const sha256 = randomBytes(32).toString("hex");
  const secret = new Uint8Array(randomBytes(32));
  const alphabet = ["a", "Z", "7", "-", " ", "é", "用", "😀"];
  const users = Array.from({ length: 70_000 }, (_, i) => (i % 7 === 0 ? i : Array.from(
    { length: 1 + (i * 7919) % 40 }, (_, j) => alphabet[(i + j * 31) % alphabet.length]).join("")));
  const values = users.map((_, i) => (i * 2654435761) % 1000);
  const web = await MemoFunction.create(secret, sha256);
  const node = await MemoFunction.create(secret, sha256, nodeDecryptor(secret));
  const ids = UserIds.encode(users);
  assert.ok(Math.max(...ids.lengths) > 64 && Math.min(...ids.lengths) === 1);
  for (const attribute of [0, 3]) {
    assert.deepEqual(await web.halves(attribute, ids, values), await node.halves(attribute, ids, values));
  }
  const words = await node.words(0, ids, values);
  const file = await loadMechanismFile(read(vectors.file)); // privatizeMemoized over several chunks: the same map
  const privatizer = new Privatizer(file);
  const labels = values.map((v) => file.inputs[v % 3]);
  const memo = await MemoFunction.create(key, file.sha256, nodeDecryptor(key));
  const all = await privatizer.privatizeMemoized(labels, users, key);
  assert.deepEqual(all, await privatizer.privatizeMemoized(labels, users, memo));
  for (const i of [0, 65_535, 65_536, 69_999]) {
    assert.deepEqual(await privatizer.privatizeMemoized([labels[i]], [users[i]], key), [all[i]]);
  }
  const records = new Set(users.map((user, i) => `${user}\u0000${values[i]}`));
  assert.ok(records.size > 10_000);
  assert.equal(new Set(words).size, records.size); // one word per distinct (user, value), no collision
});

test("integers are their decimal text, and ids are UTF-8 (as mechdesign reads a user column)", async () => {
  const memo = await MemoFunction.create(key, vectors.file_sha256);
  for (const [text, integers] of [["42", [42, 42n]], ["-7", [-7, -7n]], ["18446744073709551616", [2n ** 64n]]]) {
    const vector = vectors.cases.find((v) => v.user === text && v.attribute === 0);
    const words = await memo.words(0, integers, integers.map(() => vector.value));
    assert.deepEqual(Array.from(words, String), integers.map(() => vector.word), text);
  }
  const nfc = vectors.cases.find((v) => v.user === "\u00e9" && v.attribute === 0);
  const nfd = vectors.cases.find((v) => v.user === "e\u0301" && v.attribute === 0);
  assert.notEqual(nfc.word, nfd.word); // ids are bytes: no normalisation
});

test("the same user and value give one output over 10^4 calls; another key or user draws independently", async () => {
  const file = await loadMechanismFile(read(vectors.file));
  const privatizer = new Privatizer(file);
  const seen = new Set();
  for (let i = 0; i < 10_000; i++) seen.add((await privatizer.privatizeMemoized(["green"], ["alice"], key))[0]);
  assert.equal(seen.size, 1);
  const again = new Privatizer(await loadMechanismFile(read(vectors.file))); // a second "process": no state shared
  assert.deepEqual(await again.privatizeMemoized(["green"], ["alice"], Uint8Array.from(key)), [...seen]);
  const users = Array.from({ length: 2000 }, (_, i) => `user-${String(i).padStart(8, "0")}`);
  const values = users.map(() => "green");
  const one = await privatizer.privatizeMemoized(values, users, key);
  const other = await privatizer.privatizeMemoized(values, users, new Uint8Array(randomBytes(32)));
  assert.ok(one.some((label, i) => label !== other[i]));
});

test("memoized outputs over distinct users follow W[x, ·] (χ², 3 × 10^4 users)", async () => {
  const file = await loadMechanismFile(read(vectors.file));
  const privatizer = new Privatizer(file);
  const users = Array.from({ length: 30_000 }, (_, i) => i);
  const labels = await privatizer.privatizeMemoized(users.map(() => "red"), users, key);
  const counts = file.outputs.map((y) => labels.filter((l) => l === y).length);
  const chi2 = chiSquare(counts, privatizer.sampler.sampledMatrix()[0]);
  assert.ok(chi2 < 18.4, `chi2=${chi2} counts=${counts}`); // 2 degrees of freedom: P(χ² > 18.4) ≈ 1e-4
});

test("two layers: the permanent output is memoized, each report a fresh draw from W2[y1, ·] (χ², 2 × 10^4)", async () => {
  const { file: path, cases } = vectors.two_layer;
  const file = await loadMechanismFile(read(path));
  const privatizer = new Privatizer(file);
  assert.deepEqual(privatizer.outputs, file.release.reports.outputs);
  assert.ok(privatizer.reportEpsilon <= file.release.epsilon + 1e-12);
  const c = cases[1];
  const draws = 20_000;
  const labels = await privatizer.privatizeMemoized(Array(draws).fill(c.input), Array(draws).fill(c.user), key);
  const y1 = file.outputs.indexOf(c.permanent);
  const row = privatizer.reports.sampledMatrix()[y1];
  const counts = privatizer.outputs.map((y) => labels.filter((l) => l === y).length);
  const chi2 = chiSquare(counts, row);
  assert.ok(chi2 < 18.4, `chi2=${chi2} counts=${counts} row=${row}`);
  assert.ok(counts.every((n) => n > 0)); // fresh: every report label occurs (W2 has no zero)
});

test("refusals: fresh draws of a memoized file, ids, keys, another file's memo function", async () => {
  for (const name of ["release-memoized", "release-two-layer"]) {
    const privatizer = new Privatizer(await loadMechanismFile(read(`files/${name}.json`)));
    assert.throws(() => privatizer.privatize(["red"]), /^RangeError: memo_key must be given: the file has release policy/);
  }
  const privatizer = new Privatizer(await loadMechanismFile(read(vectors.file)));
  await assert.rejects(privatizer.privatizeMemoized(["red", "red"], ["a", ""], key),
    /users must hold no empty or missing user id .*, got users=record 1$/);
  await assert.rejects(privatizer.privatizeMemoized(["red"], ["x".repeat(1025)], key), /at most 1024 bytes/);
  await assert.rejects(privatizer.privatizeMemoized(["red"], ["\ud800"], key), /valid Unicode/);
  await assert.rejects(privatizer.privatizeMemoized(["red"], [1.5], key), TypeError);
  await assert.rejects(privatizer.privatizeMemoized(["red"], ["a", "b"], key), /users must hold one id per value \(1\)/);
  await assert.rejects(privatizer.privatizeMemoized(["red"], ["a"], new Uint8Array(31)), /key must be 32 bytes/);
  const bare = await MemoFunction.create(key, vectors.file_sha256);
  await assert.rejects(bare.words(0, ["a", "b"], [1, -1]), /values must hold value indices in \[0, 2\^32\)/);
  await assert.rejects(bare.words(0, ["a"], [0.5]), /got values=0.5 \(record 0\)/);
  await assert.rejects(bare.words(-1, ["a"], [0]), /attribute must be an integer/);
  await assert.rejects(MemoFunction.create(key, "xyz"), /file_sha256 must be 64 hexadecimal digits/);
  const other = await MemoFunction.create(key, "ab".repeat(32));
  await assert.rejects(privatizer.privatizeMemoized(["red"], ["a"], other), /key must be a memo function of this file/);
  const hex = vectors.key;
  assert.deepEqual(parseMemoKey(Buffer.from(`${hex}\n`), "k"), key);
  assert.deepEqual(parseMemoKey(Buffer.from(hex.toUpperCase()), "k"), key);
  for (const bad of [hex.slice(1), `${hex}\n\n`, `${hex}\r\n`, `${hex.slice(2)}zz`, ` ${hex}`, ""]) {
    assert.throws(() => parseMemoKey(Buffer.from(bad), "k"), (error) => error instanceof RangeError &&
      error.message === "memo_key must be a file of 64 hexadecimal characters and a newline (32 random bytes, as " +
        `mechdesign memo-key writes), got a file of ${Buffer.byteLength(bad)} bytes: k`);
  }
});

test("the conformance files get the verdicts mechdesign's Python API gives (tests/deploy/test_release_api.py)", async () => {
  // Fresh draws refused exactly for memoized and two-layer policies; memoized draws with the vectors' key accepted
  // by every file; a file bound to that key refuses any other.
  const manifest = JSON.parse(read("manifest.json"));
  const cases = manifest.files.filter((f) => f.expect.outcome === "holds" && f.expect.release !== undefined &&
    (f.client_expect ?? f.expect).outcome === "holds");
  assert.ok(cases.length >= 6, `${cases.length} release files`);
  for (const c of cases) {
    const file = await loadMechanismFile(read(c.path));
    const privatizer = new Privatizer(file);
    const value = [file.inputs[0]];
    if (["memoized", "two-layer"].includes(c.expect.release.policy)) {
      assert.throws(() => privatizer.privatize(value), /^RangeError: memo_key must be given: the file has release policy/,
        c.name);
    } else {
      assert.equal(privatizer.privatize(value).length, 1, c.name);
    }
    assert.equal((await privatizer.privatizeMemoized(value, ["alice"], key)).length, 1, c.name);
    if (file.release.key !== null) {
      assert.equal(file.release.key, vectors.key_id);
      await assert.rejects(privatizer.privatizeMemoized(value, ["alice"], new Uint8Array(32)), /is bound to/, c.name);
    }
  }
});

test("the T-release account equals the capacity of the count mechanism (independent), and T·ε for k-RR", () => {
  const w = [[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.25, 0.25, 0.5]];
  const prior = [0.5, 0.3, 0.2];
  for (const [radius, releases] of [[0.1, 2], [0.3, 3], [1.0, 4]]) {
    // C_T(W)[x, n] = multinomial(n) ∏_y W[x, y]^{n_y}, over every count vector n of T releases.
    const columns = [];
    for (let a = releases; a >= 0; a--) {
      for (let b = releases - a; b >= 0; b--) columns.push([a, b, releases - a - b]);
    }
    const factorial = (k) => (k <= 1 ? 1 : k * factorial(k - 1));
    const count = w.map((row) => columns.map((n) => factorial(releases) / n.reduce((p, k) => p * factorial(k), 1) *
      n.reduce((p, k, y) => p * row[y] ** k, 1)));
    const independent = capacity(count, prior, radius);
    const account = releaseLeakage(w, prior, radius, releases);
    assert.equal(account.vectors, columns.length);
    assert.ok(account.epsilon >= independent - 1e-12 && account.epsilon - independent < 1e-9,
      `${account.epsilon} vs ${independent}`);
  }
  const e = Math.E;
  const krr = [[e / (e + 1), 1 / (e + 1)], [1 / (e + 1), e / (e + 1)]];
  const account = releaseLeakage(krr, [0.5, 0.5], 2.0, 3); // the whole simplex: ε-LDP, exactly T·ε
  assert.ok(Math.abs(account.epsilon - 3) < 1e-12);
  assert.equal(releaseLeakage([[0.5, 0.5], [0.5, 0.5]], [0.5, 0.5], 1.0, 10 ** 9).epsilon, 0); // nothing leaks
  assert.equal(releaseLeakage(w, prior, 0.1, 2000), null); // C(2002, 2) > 10^6: beyond the client's budget
  assert.equal(countVectors(40, 6), 1_221_759);
  assert.equal(countVectors(10 ** 9, 8, 10 ** 6), Infinity);
});

test("mechdesign-js privatize --memo-key: user<TAB>value lines; refusals exit 2 with nothing written", () => {
  const folder = mkdtempSync(join(tmpdir(), "mdjs-memo-"));
  const keyFile = join(folder, "key");
  writeFileSync(keyFile, `${vectors.key}\n`);
  const run = (args, input) => spawnSync(process.execPath, [cli, "privatize", ...args], { input, encoding: "utf8" });
  const file = new URL(vectors.file, root).pathname;
  const cases = vectors.cases.filter((c) => c.attribute === 0);
  const ok = run([file, "--memo-key", keyFile], cases.map((c) => `${c.user}\t${c.input}`).join("\n"));
  assert.equal(ok.status, 0, ok.stderr);
  assert.deepEqual(ok.stdout.trim().split("\n"), cases.map((c) => c.output));
  const out = join(folder, "out.txt");
  const big = join(folder, "big.key");
  writeFileSync(big, "");
  truncateSync(big, 10 * 2 ** 30); // sparse: nothing stored
  const refused = [
    [[file, "--out", out], "u\tred\n", /memo_key must be given \(--memo-key KEY, user<TAB>value lines on stdin\)/],
    [[file, "--memo-key", keyFile, "--out", out], "u\tred\nno-tab\n", /values must be user<TAB>value lines with --memo-key \(line 2\), got values="no-tab"$/m],
    [[file, "--memo-key", keyFile, "--out", out], "\tred\n", /no empty or missing user id/],
    [[file, "--memo-key", file, "--out", out], "u\tred\n", /memo_key must be a file of 64 hexadecimal/],
    // Issue 44 F10: the same words as mechdesign's read_memo_key, by the size, unread (a 10 GiB sparse file was
    // allocated whole to be refused), and /dev/zero after 66 bytes.
    [[file, "--memo-key", big, "--out", out], "u\tred\n", new RegExp(`got a file of ${10 * 2 ** 30} bytes: ${big}$`, "m")],
    [[file, "--memo-key", "/dev/zero", "--out", out], "u\tred\n", /got a file of 66 bytes: \/dev\/zero$/m],
  ];
  for (const [args, input, message] of refused) {
    const result = run(args, input);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, message);
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    assert.ok(!existsSync(out));
  }
  const twoLayer = new URL(vectors.two_layer.file, root).pathname;
  const reports = run([twoLayer, "--memo-key", keyFile], "alice\tgreen\n".repeat(50));
  assert.equal(reports.status, 0, reports.stderr);
  assert.ok(reports.stdout.trim().split("\n").every((label) => ["R", "G", "B"].includes(label)));
  const fresh = run([new URL("files/ldp-krr-2.json", root).pathname, "--memo-key", keyFile], "7\tyes\n7\tyes\n");
  assert.equal(fresh.status, 0, fresh.stderr); // a single-release file may be memoized too
  assert.equal(new Set(fresh.stdout.trim().split("\n")).size, 1);
});

test("a file bound to a key (release.key) takes only that key; the key's id is mechdesign's", async () => {
  assert.equal(await keyId(key), vectors.key_id);
  const file = await loadMechanismFile(read("files/release-memoized-keyed.json"));
  assert.equal(file.release.key, vectors.key_id);
  const privatizer = new Privatizer(file);
  const users = ["u", "alice", "42"];
  const bound = await privatizer.privatizeMemoized(["red", "green", "blue"], users, key);
  assert.equal(bound.length, 3);
  const other = Uint8Array.from(key, (b, i) => (i === 0 ? b ^ 1 : b));
  const otherId = await keyId(other);
  assert.notEqual(otherId, vectors.key_id);
  await assert.rejects(privatizer.privatizeMemoized(["red"], ["u"], other), (error) => error instanceof RangeError &&
    error.message.startsWith(`memo_key must be the key the file is bound to (key id ${vectors.key_id};`) &&
    error.message.endsWith(`got a key with id ${otherId}`));
  const memo = await MemoFunction.create(other, file.sha256, nodeDecryptor(other));
  await assert.rejects(privatizer.privatizeMemoized(["red"], ["u"], memo), /memo_key must be the key the file is bound to/);
  // An unbound file takes any key: the same outputs for the same key whatever the binding says about others.
  const unbound = new Privatizer(await loadMechanismFile(read(vectors.file)));
  assert.equal((await unbound.privatizeMemoized(["red"], ["u"], other)).length, 1);
});

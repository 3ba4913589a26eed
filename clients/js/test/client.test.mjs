// Unit tests of the client beyond the shared vectors: the schema is the one file, sums and quantisation are exact,
// the sampler fits its distribution, randomness comes from crypto.getRandomValues, and the command's exit codes.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import Ajv2020 from "ajv/dist/2020.js";
import {
  MAX_DEPTH, MechanismFileError, QUANT_SCALE, Sampler, fsum, loadMechanismFile, maxFileBytes, nestingDepth, pairwiseSum,
  quantise, radiusForDelta, requiredRadius, roundUp, verifyMechanismFile,
} from "../dist/index.js";

const root = new URL("../../../", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("conformance/manifest.json", root)));
const vector = (name) => readFileSync(new URL(`conformance/files/${name}.json`, root));
const cli = new URL("../dist/cli.js", import.meta.url).pathname;

test("the client embeds the one schema file, which accepts every file that holds", async () => {
  const schema = JSON.parse(readFileSync(new URL("mechdesign/mechfile/mechanism.schema.json", root)));
  const embedded = await import("../dist/schema.generated.js");
  assert.deepEqual(embedded.SCHEMA, schema);
  const validate = new Ajv2020({ strict: false }).compile(schema);
  for (const entry of manifest.files) {
    if (entry.expect.outcome !== "holds") continue;
    const content = JSON.parse(readFileSync(new URL(`conformance/${entry.path}`, root)));
    assert.ok(validate(content), `${entry.name}: ${JSON.stringify(validate.errors)}`);
  }
  assert.ok(!validate(JSON.parse(vector("format-version-3"))));
});

test("fsum is correctly rounded and pairwiseSum is NumPy's order", () => {
  assert.equal(fsum([0.1, 0.2, 0.3]), 0.6);
  assert.equal(0.1 + 0.2 + 0.3, 0.6000000000000001);
  assert.equal(fsum([1e100, 1, -1e100, 1e-100]), 1);
  assert.equal(fsum([]), 0);
  const row = Array.from({ length: 300 }, (_, i) => 1 / (i + 3));
  let sequential = 0;
  for (const x of row) sequential += x;
  assert.notEqual(pairwiseSum(row), sequential); // the order matters, and NumPy's is the pairwise one
  assert.ok(Math.abs(pairwiseSum(row) - fsum(row)) < 1e-14);
});

test("quantise: exact rationals, sum 2^64, zeros stay zeros, ties to the lower index", () => {
  assert.deepEqual(quantise([0.5, 0.25, 0.25, 0]), [2n ** 63n, 2n ** 62n, 2n ** 62n, 0n]);
  const thirds = quantise([1 / 3, 1 / 3, 1 / 3]);
  assert.equal(thirds.reduce((a, b) => a + b), QUANT_SCALE);
  const q = quantise([0.1, 0.7, 0.2]);
  assert.equal(q.reduce((a, b) => a + b), QUANT_SCALE);
  assert.ok(q.every((v, j) => Math.abs(Number(v) / 2 ** 64 - [0.1, 0.7, 0.2][j]) < 1e-16));
  assert.deepEqual(quantise([1, 1, 1]).map((v) => v - QUANT_SCALE / 3n), [1n, 0n, 0n]);
});

test("radiusForDelta matches [E] eq. 45 for N = 2", () => {
  assert.ok(Math.abs(radiusForDelta(1e-6, 10_000, 2) - 0.0538677227) < 1e-10);
});

test("the sampler draws from crypto.getRandomValues and fits its distribution (chi-squared, 2e5 draws)", () => {
  const matrix = [[0.5, 0.3, 0.15, 0.05], [0.05, 0.15, 0.3, 0.5]];
  const original = crypto.getRandomValues.bind(crypto);
  let calls = 0;
  crypto.getRandomValues = (buffer) => {
    calls += 1;
    return original(buffer);
  };
  try {
    const sampler = new Sampler(matrix);
    const draws = 200_000;
    const out = sampler.sampleIndices(new Uint8Array(draws).fill(1));
    const counts = [0, 0, 0, 0];
    for (const y of out) counts[y] += 1;
    const chi2 = counts.reduce((s, c, y) => s + (c - draws * matrix[1][y]) ** 2 / (draws * matrix[1][y]), 0);
    assert.ok(chi2 < 21.1, `chi2=${chi2} counts=${counts}`); // 3 degrees of freedom: P(χ² > 21.1) ≈ 1e-4
    assert.ok(calls > 0);
  } finally {
    crypto.getRandomValues = original;
  }
});

test("a fixed word stream gives the reference rule's outputs through the fast path", () => {
  const words = [0n, 2n ** 62n - 1n, 2n ** 62n, 3n * 2n ** 62n, 2n ** 64n - 1n, 123456789n << 20n];
  let next = 0;
  const fill = (buffer) => {
    for (let i = 0; i < buffer.length; i += 2) {
      const word = words[next++ % words.length];
      buffer[i] = Number(word >> 32n);
      buffer[i + 1] = Number(word & 0xffffffffn);
    }
  };
  const sampler = new Sampler([[0.25, 0.5, 0.25], [0.25, 0, 0.75]], fill);
  for (const x of [0, 1]) {
    next = 0;
    const fast = Array.from(sampler.sampleIndices(new Uint8Array(6).fill(x)));
    assert.deepEqual(fast, words.map((w) => sampler.sampleWord(x, w)));
  }
  assert.deepEqual(words.map((w) => sampler.sampleWord(1, w)), [0, 0, 2, 2, 2, 0]);
  assert.throws(() => sampler.sampleWord(0, 2n ** 64n), RangeError);
  assert.throws(() => sampler.sampleIndices([2]), /x must hold input indices in \[0, 2\)/);
});

test("verify exits 0 / 1 / 2 as mechdesign verify, with one line on stderr", () => {
  const run = (...args) => spawnSync(process.execPath, [cli, ...args], { encoding: "utf8" });
  const path = (name) => new URL(`conformance/files/${name}.json`, root).pathname;
  const ok = run("verify", path("pml-16"), "--json");
  assert.equal(ok.status, 0);
  assert.equal(JSON.parse(ok.stdout).holds, true);
  const over = run("verify", path("radius-enlarged"));
  assert.equal(over.status, 1);
  assert.match(over.stdout, /DOES NOT HOLD/);
  for (const name of ["tampered-matrix", "version-1", "not-json", "matrix-row-sum"]) {
    const bad = run("verify", path(name));
    assert.equal(bad.status, 2, name);
    assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
  }
  const wrongKey = run("verify", path("ldp-krr-2-signed"), "--public-key",
    new URL("conformance/keys/other.pub.pem", root).pathname);
  assert.equal(wrongKey.status, 2);
  assert.match(wrongKey.stderr, /signature must be valid for the given public key/);
  assert.equal(run("frobnicate").status, 2);
  assert.equal(run("privatize", path("ldp-krr-2"), "--require-signature").status, 2);
});

test("privatize streams labels from stdin to stdout and refuses unknown values", () => {
  const path = new URL("conformance/files/ldp-krr-16.json", root).pathname;
  const input = Array.from({ length: 20_000 }, (_, i) => `x${i % 16}`).join("\n") + "\n";
  const out = execFileSync(process.execPath, [cli, "privatize", path], { input, encoding: "utf8", stdio: "pipe" });
  const lines = out.trimEnd().split("\n");
  assert.equal(lines.length, 20_000);
  assert.ok(lines.every((line) => /^y\d+$/.test(line)));
  const kept = lines.filter((line, i) => line === `y${i % 16}`).length / lines.length;
  assert.ok(Math.abs(kept - 5 / 20) < 0.02, `P(y = x) = ${kept}, expected 0.25`);
  const bad = spawnSync(process.execPath, [cli, "privatize", path], { input: "x1\nnope\n", encoding: "utf8" });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /got value="nope"/);
});

test("the loaded matrix is renormalised exactly as mechdesign does it", async () => {
  const file = await loadMechanismFile(vector("renormalised-rows"));
  const row = [0.7500000002, 0.2500000001];
  assert.deepEqual(file.matrix[0], row.map((x) => x / (0.7500000002 + 0.2500000001)));
});

// --- issue 38: one verdict in both languages ---------------------------------------------------------------------

const run = (args, options = {}) => spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", ...options });
const vectorPath = (name) => new URL(`conformance/files/${name}.json`, root).pathname;
const oneLine = (result) => {
  assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
  return result.stderr;
};

test("roundUp is mechdesign's round_up, bit for bit, and the radius rule rounds β* up", () => {
  // mechdesign/_numerics.py: value + (|value| + 1) * (4 * 1 + 8) * eps, evaluated left to right.
  for (const v of [0.5814102972781273, 1, 1.3862943611198906, 2.4, 0.0252802724645372, 1e-300, 7e5]) {
    assert.equal(roundUp(v), v + (Math.abs(v) + 1.0) * 12 * 2 ** -52);
    assert.ok(roundUp(v) > v);
  }
  assert.equal(roundUp(Infinity), Infinity);
  const beta = radiusForDelta(1e-6, 48842, 3);
  assert.equal(requiredRadius(1e-6, 48842, 3), roundUp(beta));
  assert.equal(requiredRadius(1e-6, 1, 8), 2);
  assert.equal(requiredRadius(1e-6, 10, 1), 0);
});

test("a stated ε 5e-13 below the achieved ε is neither verified nor privatized (was: holds)", () => {
  const path = vectorPath("epsilon-hair-below");
  const verified = run(["verify", path]);
  assert.equal(verified.status, 1);
  assert.match(verified.stdout, /DOES NOT HOLD/);
  const privatized = run(["privatize", path], { input: "x1\n" });
  assert.equal(privatized.status, 2);
  assert.equal(privatized.stdout, "");
  assert.match(oneLine(privatized), /guarantee\.epsilon must be >= the pml epsilon recomputed from the matrix/);
  const radius = run(["verify", vectorPath("radius-hair-below")]);
  assert.equal(radius.status, 2);
  assert.match(oneLine(radius), /guarantee\.radius must be >= β\*\(δ, m, N\)/);
});

test("nesting: the limit is counted outside strings, and 200,000 levels are refused in one line naming the file", async () => {
  assert.equal(MAX_DEPTH, 256);
  assert.equal(nestingDepth('{"a":[[1]],"b":"[[[[\\"[["}'), 3);
  assert.equal(nestingDepth("[".repeat(300)), 300);
  const folder = mkdtempSync(join(tmpdir(), "mechdesign-js-"));
  const deep = join(folder, "deep.json");
  writeFileSync(deep, `${'{"a":'.repeat(200_000)}1${"}".repeat(200_000)}`);
  const result = run(["verify", deep]);
  assert.equal(result.status, 2);
  assert.ok(oneLine(result).includes(`${deep}: must be JSON nested at most 256 deep`), result.stderr);
  await assert.rejects(verifyMechanismFile(readFileSync(deep)), (error) => {
    assert.ok(error instanceof MechanismFileError);
    assert.equal(error.rule, "be JSON nested at most 256 deep");
    return true;
  });
});

test("the environment gets mechdesign's verdict on every vector (conformance/environment.json), in one line", () => {
  // Issue 44 F7: trim() removed a leading U+FEFF that mechdesign refused; now both trim ASCII white space only.
  const vectors = JSON.parse(readFileSync(new URL("conformance/environment.json", root)));
  const saved = process.env.MECHDESIGN_MAX_FILE_MB;
  try {
    for (const c of vectors.MECHDESIGN_MAX_FILE_MB) {
      process.env.MECHDESIGN_MAX_FILE_MB = c.value;
      if (c.error === null) assert.equal(maxFileBytes(), c.bytes, JSON.stringify(c.value));
      else assert.throws(() => maxFileBytes(), (e) => e instanceof RangeError && e.message === c.error, c.error);
    }
  } finally {
    if (saved === undefined) delete process.env.MECHDESIGN_MAX_FILE_MB;
    else process.env.MECHDESIGN_MAX_FILE_MB = saved;
  }
  for (const c of vectors.MECHDESIGN_REQUIRE_SIGNATURE) {
    const result = run(["verify", vectorPath("ldp-krr-2")], { env: { ...process.env, MECHDESIGN_REQUIRE_SIGNATURE: c.value } });
    if (c.error !== null) {
      assert.equal(result.status, 2);
      assert.ok(oneLine(result).endsWith(`${c.error}\n`), `${result.stderr} != ${c.error}`);
    } else {
      assert.equal(result.status, c.required ? 2 : 0, `${JSON.stringify(c.value)}: ${result.stderr}`);
    }
  }
});

test("reads are capped at 64 MiB (MECHDESIGN_MAX_FILE_MB), incrementally: a 65 MiB padded valid file, /dev/zero, an endless pipe", async () => {
  const folder = mkdtempSync(join(tmpdir(), "mechdesign-js-"));
  const padded = join(folder, "padded.json");
  const bytes = Buffer.concat([readFileSync(vectorPath("pml-16")), Buffer.alloc(65 * 2 ** 20, 0x20)]);
  writeFileSync(padded, bytes); // whitespace: the same canonical content, a valid file that holds
  const refused = run(["verify", padded]);
  assert.equal(refused.status, 2);
  assert.match(oneLine(refused), /mechanism file must be at most 64 MiB \(68,\d{3},\d{3} bytes; set MECHDESIGN_MAX_FILE_MB/);
  assert.equal(run(["verify", padded], { env: { ...process.env, MECHDESIGN_MAX_FILE_MB: "66" } }).status, 0);
  assert.equal(run(["verify", padded], { env: { ...process.env, MECHDESIGN_MAX_FILE_MB: "1_0" } }).status, 2);
  await assert.rejects(verifyMechanismFile(bytes), /must be at most 64 MiB/);
  assert.ok((await verifyMechanismFile(bytes, { maxBytes: 66 * 2 ** 20 })).holds);
  const started = Date.now();
  const zero = run(["verify", "/dev/zero"]);
  assert.equal(zero.status, 2);
  assert.match(oneLine(zero), /mechanism file must be a JSON object/);
  // "{" then spaces without end: refused once past the cap (1 MiB here), never buffered further (else no end).
  const endless = spawnSync("sh", ["-c", `{ printf '{'; yes ' '; } | "${process.execPath}" "${cli}" verify /dev/stdin`],
    { encoding: "utf8", env: { ...process.env, MECHDESIGN_MAX_FILE_MB: "1" }, timeout: 30_000 });
  assert.equal(endless.status, 2, endless.stderr);
  assert.match(oneLine(endless), /must be at most 1 MiB \(more than 1,048,576 bytes/);
  assert.ok(Date.now() - started < 20_000);
});

test("privatize --out writes all or nothing: 100,000 values then an unknown one leave no file and no temporary file", () => {
  const folder = mkdtempSync(join(tmpdir(), "mechdesign-js-"));
  const out = join(folder, "private.txt");
  const path = vectorPath("ldp-krr-16");
  const values = Array.from({ length: 100_000 }, (_, i) => `x${i % 16}`);
  const failed = run(["privatize", path, "--out", out], { input: `${values.join("\n")}\nnope\n` });
  assert.equal(failed.status, 2);
  assert.match(oneLine(failed), /got value="nope"/);
  assert.equal(failed.stdout, "");
  assert.deepEqual(readdirSync(folder), []);
  // The same input on stdout streams: labels reach stdout before the unknown value stops the run.
  const streamed = run(["privatize", path], { input: `${values.join("\n")}\nnope\n`, maxBuffer: 2 ** 24 });
  assert.equal(streamed.status, 2);
  assert.ok(streamed.stdout.length > 0);
  const done = run(["privatize", path, "--out", out], { input: `${values.join("\n")}\n` });
  assert.equal(done.status, 0, done.stderr);
  assert.match(done.stdout, /private\.txt: 100,000 values privatized/);
  assert.equal(readFileSync(out, "utf8").trimEnd().split("\n").length, 100_000);
  assert.deepEqual(readdirSync(folder), ["private.txt"]);
  const again = run(["privatize", path, "--out", out], { input: "x1\n" });
  assert.equal(again.status, 2);
  assert.match(again.stderr, /out must not exist \(it is an existing file; use --force to replace it\)/);
  assert.equal(run(["privatize", path, "--out", out, "--force"], { input: "x1\n" }).status, 0);
  assert.match(readFileSync(out, "utf8"), /^y\d+\n$/);
  const folderOut = run(["privatize", path, "--out", folder, "--force"], { input: "x1\n" });
  assert.equal(folderOut.status, 2);
  assert.match(folderOut.stderr, /out must not be a directory/);
  assert.ok(existsSync(out));
});

test("the help says that stdout mode streams and what that means on error", () => {
  const help = run(["--help"]);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /stream to stdout as the values arrive/);
  assert.match(help.stdout, /labels already written for earlier values stay on stdout/);
  assert.match(help.stdout, /--out OUT nothing reaches OUT until every value\s+was privatized/);
});

test("privatize --out interrupted by SIGTERM leaves neither the file nor a temporary file", async () => {
  const folder = mkdtempSync(join(tmpdir(), "mechdesign-js-"));
  const out = join(folder, "sub", "private.txt"); // a missing folder is created, as mechdesign does
  const child = spawn(process.execPath, [cli, "privatize", vectorPath("ldp-krr-16"), "--out", out]);
  child.stdin.write("x1\nx2\n"); // stdin stays open: the run is mid-way when the signal comes
  const sub = join(folder, "sub");
  for (let waited = 0; !(existsSync(sub) && readdirSync(sub).length) && waited < 20_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.match(readdirSync(sub).join(), /^\.private\.txt\.mdtmp\d+\.[0-9a-f]+\.part$/); // no OUT yet
  const code = new Promise((resolve) => child.on("exit", (status) => resolve(status)));
  child.kill("SIGTERM");
  assert.equal(await code, 143);
  assert.deepEqual(readdirSync(sub), []);
});

test("nextDown and nextBelow step one float (the bit pattern ± 1), without allocating", async () => {
  const { nextBelow, nextDown } = await import("../dist/numeric.js");
  const bits = (x, step) => {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    view.setBigUint64(0, view.getBigUint64(0) + step);
    return view.getFloat64(0);
  };
  for (const x of [1, 0.5, 2 ** -1074, 2 ** -1022, 1e300, Number.MAX_VALUE, 1 + 2 ** -52, 2 ** 32, 1.0000000004656613,
    -1, -1e-300, -(2 ** -1074), -Number.MAX_VALUE]) {
    if (x > 0) assert.equal(nextDown(x), bits(x, -1n));
    assert.ok(Object.is(nextBelow(x), bits(x, x > 0 ? -1n : 1n)), String(x));
  }
  assert.equal(nextDown(0), 0);
  assert.equal(nextBelow(0), -(2 ** -1074));
  assert.equal(nextBelow(-Infinity), -Infinity);
});

// Inputs of any size within the stated bounds (issue 61 item 7): no argument list as long as the input (a call
// spread of an array passes every entry on the stack: "Maximum call stack size exceeded" beyond ~10⁵ entries), a
// structured file of 10⁶ types verified, and stdin lines bounded as they are read.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { canonicalBytes } from "../dist/index.js";
import { verifySymmetricFile } from "../dist/structured.js";

const here = new URL("../", import.meta.url);
const cli = fileURLToPath(new URL("dist/cli.js", here));

/** Every `f(..., ...xs)` and `new F(...xs)` of a file: its line and text. */
function callSpreads(path, text = readFileSync(new URL(path, here), "utf8")) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (ts.isSpreadElement(node) && (ts.isCallExpression(node.parent) || ts.isNewExpression(node.parent))) {
      found.push(`${path}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.parent.getText()}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test("no call spreads in the client's sources or its demo (Math.max(...xs) and the like)", () => {
  const files = [...readdirSync(new URL("src/", here)).filter((f) => f.endsWith(".ts")).map((f) => `src/${f}`),
    "demo/demo.js"];
  assert.ok(files.length > 20, `${files}`);
  assert.deepEqual(files.flatMap((path) => callSpreads(path)), []);
  // The matcher can fail: array and object spreads are copies, not arguments.
  assert.deepEqual(callSpreads("x.ts", "const a = [...xs], o = { ...p };\nf(1, ...xs); new Set(...[xs]);"),
    ["x.ts:2: f(1, ...xs)", "x.ts:2: new Set(...[xs])"]);
});

test("a structured file of 10⁶ types is verified (Math.max over every type's capacity overflowed the stack)", async () => {
  // valid.json's 8 types, each split into 125,000 copies of 1/125,000 of its weight: the same mechanism (up to the
  // weights' rounding, hence the stated ε raised by 1e-7), 10⁶ types, 68 MB.
  const content = JSON.parse(readFileSync(new URL("../../conformance/structured/files/valid.json", here)));
  const copies = 125_000;
  const repeat = (values, f = (x) => x) => values.flatMap((x) => Array.from({ length: copies }, () => f(x)));
  const t = content.types;
  content.types = { high: repeat(t.high), low: repeat(t.low), weights: repeat(t.weights, (w) => w / copies),
    high_counts: repeat(t.high_counts), low_counts: repeat(t.low_counts) };
  content.guarantee.epsilon += 1e-7;
  delete content.sha256;
  content.sha256 = createHash("sha256").update(canonicalBytes(content)).digest("hex");
  const file = await verifySymmetricFile(JSON.stringify(content), { maxBytes: Infinity });
  assert.equal(file.mechanism.high.length, 10 ** 6);
  assert.ok(file.holds && Math.abs(file.achieved - (content.guarantee.epsilon - 1e-7)) < 1e-10, `${file.achieved}`);
});

/** Runs the CLI with `lines` then `tail` bytes of "a" on stdin (written while it reads; stopped at 30 s). */
function privatizeStream(args, lines, tail) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, "privatize", ...args], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => { stdout += d; });
    child.stderr.on("data", (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, seconds: (performance.now() - started) / 1000 });
    });
    child.stdin.on("error", () => {}); // EPIPE once the CLI has refused the line
    const block = Buffer.alloc(1 << 16, "a");
    let left = tail;
    const pump = () => {
      while (left > 0 && !child.stdin.destroyed) {
        left -= block.length;
        if (!child.stdin.write(block)) return child.stdin.once("drain", pump);
      }
      if (!child.stdin.destroyed) child.stdin.end();
    };
    child.stdin.write(lines);
    pump();
  });
}

test("privatize refuses a line longer than any value can be as it reads it: exit 2, one line, nothing written", async () => {
  // The bound: the longest input label, with --memo-key a user id of at most 1024 bytes and a tab, and a CR.
  // A 1 GB line without a newline was read whole (still running at 300 s); now refused within seconds.
  const folder = mkdtempSync(join(tmpdir(), "mdjs-line-"));
  const out = join(folder, "out.txt");
  const dense = fileURLToPath(new URL("../../conformance/files/ldp-krr-16.json", here)); // labels x0 … x15
  const keyed = fileURLToPath(new URL("../../conformance/structured/files/memoized-keyed.json", here));
  const key = join(folder, "key");
  writeFileSync(key, `${JSON.parse(readFileSync(new URL("../../conformance/structured/memo.json", here))).key}\n`);
  const cases = [
    [[dense, "--out", out], "x3\r\nx15\r\n", 4, 3],
    [[dense], "x3\n", 4, 2],
    [[keyed, "--memo-key", key, "--out", out], "u1\titem0\n", 1024 + 1 + 6 + 1, 2],
  ];
  for (const [args, lines, bound, line] of cases) {
    const result = await privatizeStream(args, lines, 2 ** 30);
    assert.equal(result.status, 2, `${args}: ${result.stderr} (${result.seconds} s)`);
    assert.ok(result.seconds < 20, `${result.seconds} s`);
    const error = result.stderr.trim().split("\n").at(-1); // stdout runs print the unsigned-file notice first
    if (args.includes("--out")) assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    assert.match(error, new RegExp(`^mechdesign-js: error: values must be lines of at most ${bound.toLocaleString("en-US")} ` +
      `bytes \\(.*the longest input label and a carriage return\\), got a line of more than ` +
      `${bound.toLocaleString("en-US")} bytes \\(line ${line}\\)$`));
    assert.ok(!existsSync(out));
  }
  // At the bound a line is judged as a value; one byte more, by its length (the same for every chunking).
  const run = (input) => spawnSync(process.execPath, [cli, "privatize", dense, "--out", out], { input, encoding: "utf8" });
  assert.match(run("x3\nx123\n").stderr, /values must be input labels .* got value="x123"$/m);
  assert.match(run("x3\nx1234\n").stderr, /values must be lines of at most 4 bytes .*\(line 2\)$/m);
  assert.equal(run("x15\r\nx0\n").status, 0);
  assert.equal(readFileSync(out, "utf8").trim().split("\n").length, 2);
});

// Inputs of any size within the stated bounds (issue 61 item 7): no argument list as long as the input (a call
// spread of an array passes every entry on the stack: "Maximum call stack size exceeded" beyond ~10⁵ entries), a
// structured file of 10⁶ types verified.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";
import ts from "typescript";
import { canonicalBytes } from "../dist/index.js";
import { verifySymmetricFile } from "../dist/structured.js";

const here = new URL("../", import.meta.url);

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

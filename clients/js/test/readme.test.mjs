// The client's documents run as written: this folder's README.md (its console blocks, then its js blocks), the
// main README's client block (the one that starts with `cd clients/js`) and the documentation's client page
// (docs/howto/client.rst, its console blocks), in order, each in a fresh copy of the
// client and the conformance vectors, the way a reader runs them after `npm ci && npm run build`.
//
// Rules (the Python side's tests/doc_examples.py keeps the same ones): in a console block a line starting with
// "$ " is a command and the lines after it its expected output; a plain line must equal the next output line, "…"
// alone skips any number of lines, a line containing "…" matches one line holding the pieces in order, and the
// output must match fully unless the expectation ends with "…". Every command runs in bash from the current
// directory (a `cd` moves it) and must exit 0. `npm ci` and `npm run build` are what ran before this suite (.ci/run,
// the README's Development line): they are replaced by this checkout's node_modules and dist/, and the output they
// show — the bundle size — is compared with what scripts/bundle-size.mjs measures on that dist/. A js block is
// written to a module in clients/js and run there with node (it imports "@mechdesign/client" by name, and reads
// files relative to clients/js). A document's client block ends where it started (a reader who runs the next
// block, the documentation's build or a Python example, is at the root again).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const client = fileURLToPath(new URL("..", import.meta.url));
const root = fileURLToPath(new URL("../../..", import.meta.url));

/** The fenced blocks of a Markdown file: [{ language, text, where }]. */
function blocks(path) {
  const found = [];
  let current = null;
  readFileSync(path, "utf8").split("\n").forEach((line, index) => {
    const fence = /^```(\S*)\s*$/.exec(line);
    if (current === null && fence) current = { language: fence[1] || "text", lines: [], where: `${path}:${index + 1}` };
    else if (current !== null && line.trimEnd() === "```") {
      found.push({ language: current.language, text: current.lines.join("\n"), where: current.where });
      current = null;
    } else if (current !== null) current.lines.push(line);
  });
  return found;
}

/** The `.. code-block:: LANGUAGE` blocks of a reStructuredText page: [{ language, text, where }]. */
function rstBlocks(path) {
  const lines = readFileSync(path, "utf8").split("\n");
  const found = [];
  lines.forEach((line, index) => {
    const directive = /^(\s*)\.\. code-block::\s*(\S+)\s*$/.exec(line);
    if (!directive) return;
    const indent = directive[1].length;
    const body = [];
    for (let i = index + 1; i < lines.length && (!lines[i].trim() || lines[i].search(/\S/) > indent); i += 1) {
      body.push(lines[i]);
    }
    while (body.length && !body.at(-1).trim()) body.pop();
    const margin = Math.min(...body.filter((b) => b.trim()).map((b) => b.search(/\S/)));
    found.push({ language: directive[2], text: body.map((b) => b.slice(margin)).join("\n").replace(/^\n+/, ""),
      where: `${path}:${index + 1}` });
  });
  return found;
}

/** [command, expected lines] of a console block. */
function commands(text) {
  const found = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("$ ")) found.push([line.slice(2).trim(), []]);
    else if (found.length) found.at(-1)[1].push(line.trimEnd());
  }
  return found;
}

function matches(pattern, line) {
  if (!pattern.includes("…")) return pattern === line;
  let position = 0;
  for (const piece of pattern.split("…")) {
    const at = line.indexOf(piece, position);
    if (at < 0) return false;
    position = at + piece.length;
  }
  return true;
}

/** null when `actual` matches `expected`, else the first mismatch. */
export function checkOutput(expected, actual) {
  let position = 0;
  let skipping = false;
  for (const pattern of expected) {
    if (pattern.trim() === "…") {
      skipping = true;
      continue;
    }
    while (position < actual.length && !matches(pattern, actual[position])) {
      if (!skipping) return `expected ${JSON.stringify(pattern)}, got ${JSON.stringify(actual[position])}`;
      position += 1;
    }
    if (position === actual.length) return `expected ${JSON.stringify(pattern)}, output ended`;
    position += 1;
    skipping = false;
  }
  if (!skipping && position < actual.length) return `unexpected output line ${JSON.stringify(actual[position])}`;
  return null;
}

/** A reader's checkout: the client (this checkout's node_modules and dist/) and the conformance vectors. */
function checkout() {
  const top = mkdtempSync(join(tmpdir(), "mechdesign-js-readme-"));
  cpSync(client, join(top, "clients", "js"), { recursive: true, filter: (path) => !path.includes("node_modules") });
  symlinkSync(join(client, "node_modules"), join(top, "clients", "js", "node_modules"), "dir");
  cpSync(join(root, "conformance"), join(top, "conformance"), { recursive: true });
  return top;
}

const BUILD = /^(npm ci|npm run build)$/;

function run(session, where, command, expected) {
  const parts = command.split("&&").map((part) => part.trim());
  const kept = parts.filter((part) => !BUILD.test(part));
  let stdout = "";
  if (kept.length) {
    const marker = join(session.top, ".cwd");
    const done = spawnSync("bash", ["-c", `${kept.join(" && ")}\nstatus=$?\npwd > '${marker}'\nexit $status`],
      { cwd: session.cwd, encoding: "utf8" });
    assert.equal(done.status, 0, `${where}: \`${command}\` exited ${done.status}: ${done.stderr}`);
    session.cwd = readFileSync(marker, "utf8").trim();
    stdout = done.stdout;
  }
  if (parts.includes("npm run build")) { // the build's output: its last line is the bundle size
    const size = spawnSync("node", ["scripts/bundle-size.mjs"], { cwd: session.cwd, encoding: "utf8" });
    assert.equal(size.status, 0, size.stderr);
    stdout += size.stdout;
  }
  if (expected.some((line) => line.trim())) {
    const mismatch = checkOutput(expected.filter((line, i) => line.trim() || i < expected.length - 1),
      stdout.split("\n").map((line) => line.trimEnd()).filter((line, i, all) => line || i < all.length - 1));
    assert.equal(mismatch, null, `${where}: \`${command}\`: ${mismatch}`);
  }
}

function runBlocks(session, found) {
  for (const block of found.filter((b) => b.language === "console")) {
    for (const [command, expected] of commands(block.text)) run(session, block.where, command, expected);
  }
  const folder = join(session.top, "clients", "js");
  found.filter((b) => b.language === "js").forEach((block, index) => {
    const module = join(folder, `readme-block-${index}.mjs`);
    writeFileSync(module, block.text);
    const done = spawnSync("node", [module], { cwd: folder, encoding: "utf8" });
    assert.equal(done.status, 0, `${block.where}: the js block failed: ${done.stderr}`);
  });
}

test("the output matcher can fail", () => {
  assert.equal(checkOutput(["a", "…", "d"], ["a", "b", "c", "d"]), null);
  assert.notEqual(checkOutput(["a"], ["a", "b"]), null);
  assert.notEqual(checkOutput(["a", "c"], ["a", "b", "c"]), null);
  assert.notEqual(checkOutput(["…holds…"], ["f: DOES NOT HOLD"]), null);
});

test("this README's commands and code run as written, from clients/js", () => {
  const top = checkout();
  try {
    const found = blocks(join(client, "README.md"));
    assert.ok(found.some((b) => b.language === "console") && found.some((b) => b.language === "js"));
    runBlocks({ top, cwd: join(top, "clients", "js") }, found);
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});

test("the main README's client block runs as written, from the repository root", () => {
  const top = checkout();
  try {
    const found = blocks(join(root, "README.md")).filter((b) => b.language === "console"
      && /^\$ cd \S*clients\/js\b/.test(b.text.trimStart()));
    assert.equal(found.length, 1);
    const session = { top, cwd: top };
    runBlocks(session, found);
    assert.equal(session.cwd, top, "the README's client block must end at the root, where the next block starts");
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});

test("the documentation's client page runs as written, from the repository root", () => {
  const top = checkout();
  try {
    const found = rstBlocks(join(root, "docs", "howto", "client.rst"));
    const consoles = found.filter((b) => b.language === "console");
    assert.ok(consoles.length >= 1 && /^\$ cd \S*clients\/js\b/.test(consoles[0].text));
    assert.ok(found.some((b) => b.language === "js"), "the page's program runs too");
    const session = { top, cwd: top };
    runBlocks(session, found);
    assert.equal(session.cwd, top, "the page's client block must end at the root");
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});

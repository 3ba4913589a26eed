// Issue 61 item 3: a two-layer file's linkability level is checked for the sampled layers W_q,1 W_q,2 before any
// draw, as the per-report ε is (mechdesign's Privatizer does the same): an entry of W₂ below 2^-64 that quantises
// to 0 makes the sampled level infinite, one at 1.1·2^-64 that quantises to 2^-64 puts it 0.095 nats above.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { MechanismFileError, Privatizer, canonicalBytes, linkLevel, loadMechanismFile, renormalise } from "../dist/index.js";

const root = new URL("../../../conformance/", import.meta.url);
const cli = new URL("../dist/cli.js", import.meta.url).pathname;
const key = JSON.parse(readFileSync(new URL("memo.json", root))).key;

/** The conformance two-layer file with W₂'s first row [1/2, 1/2, tiny], stating the level its reader recomputes. */
async function withTinyReport(tiny) {
  const content = JSON.parse(readFileSync(new URL("files/release-two-layer.json", root)));
  content.release.reports.matrix[0] = [0.5, 0.5, tiny];
  content.release.epsilon = content.guarantee.epsilon; // post-processing of W₁: within its level
  content.release.link_epsilon = linkLevel(renormalise(content.matrix), renormalise(content.release.reports.matrix));
  delete content.sha256;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", canonicalBytes(content)));
  content.sha256 = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  return JSON.stringify(content);
}

test("the sampled layers' link level is checked against release.link_epsilon before sampling", async () => {
  for (const [tiny, sampled] of [[0.4 * 2 ** -64, /got link level=Infinity\)$/],
    [1.1 * 2 ** -64, /got link level=43\.66/]]) {
    const text = await withTinyReport(tiny);
    const file = await loadMechanismFile(text); // the file's own statement holds
    assert.ok(file.release.linkEpsilon > 43.5 && Number.isFinite(file.release.linkEpsilon));
    assert.throws(() => new Privatizer(file), (error) => error instanceof MechanismFileError &&
      /release\.link_epsilon=.* after quantisation to 2\^-64/.test(error.message) && sampled.test(error.message));
    const folder = mkdtempSync(join(tmpdir(), "mdjs-link-"));
    writeFileSync(join(folder, "two.json"), text);
    writeFileSync(join(folder, "key"), `${key}\n`);
    const out = join(folder, "out.txt");
    const result = spawnSync(process.execPath, [cli, "privatize", join(folder, "two.json"), "--memo-key",
      join(folder, "key"), "--out", out], { input: "u\tred\n", encoding: "utf8" });
    assert.equal(result.status, 2, result.stderr);
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    assert.match(result.stderr, /release\.link_epsilon=/);
    assert.ok(!existsSync(out));
  }
});

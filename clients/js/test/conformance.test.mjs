// The client against the conformance vectors written by mechdesign (conformance/, tools/make_conformance.py):
// every file's outcome (holds / overstated / refused with the same field and rule), the achieved ε within the
// manifest's tolerance, the release policy and what it states recomputed (T releases, one report of two layers),
// the canonical bytes, and the sampler's output for every fixed 64-bit word, exactly.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import {
  MechanismFileError, Privatizer, canonicalize, ldpLevel, loadMechanismFile, scanNumbers, verifyMechanismFile,
} from "../dist/index.js";

const folder = new URL("../../../conformance/", import.meta.url);
const read = (path) => readFileSync(new URL(path, folder));
const manifest = JSON.parse(read("manifest.json"));
const tolerance = manifest.tolerances.achieved;

/** Strip the parenthesised details of a rule, as tools/make_conformance.py's rule_head does. */
function ruleHead(rule) {
  let out = "";
  for (let i = 0; i < rule.length; i++) {
    if (rule.startsWith(" (", i)) {
      let depth = 0;
      let j = i + 1;
      for (; j < rule.length; j++) {
        depth += rule[j] === "(" ? 1 : rule[j] === ")" ? -1 : 0;
        if (depth === 0) break;
      }
      if (j < rule.length) {
        i = j;
        continue;
      }
    }
    out += rule[i];
  }
  return out;
}

const outcomes = { holds: 0, overstated: 0, refused: 0 };
let maxDifference = 0;
let identical = 0;
const releases = []; // |client − Python| of each recomputed release statement
let links = 0; // two-layer files whose linkability level was compared
let ldpStatements = 0; // PML files whose LDP level was compared

for (const entry of manifest.files) {
  const expect = entry.client_expect ?? entry.expect;
  test(`${entry.name} (key: ${entry.public_key ?? "none"}): ${entry.description}`, async () => {
    const options = entry.public_key ? { publicKey: read(manifest.keys[entry.public_key].pem).toString() } : {};
    const bytes = read(entry.path);
    outcomes[expect.outcome] += 1;
    if (expect.outcome === "refused") {
      await assert.rejects(verifyMechanismFile(bytes, options), (error) => {
        assert.ok(error instanceof MechanismFileError, `${error}`);
        assert.deepEqual({ field: error.field, rule: ruleHead(error.rule) }, { field: expect.field, rule: expect.rule },
          error.message);
        assert.ok(!error.message.includes("\n"));
        return true;
      });
      return;
    }
    const file = await verifyMechanismFile(bytes, options);
    const achieved = expect.achieved === "inf" ? Infinity : expect.achieved;
    assert.equal(file.holds, expect.outcome === "holds");
    assert.equal(file.guarantee.epsilon, expect.epsilon);
    assert.equal(file.guarantee.notion, expect.notion);
    assert.equal(file.sha256, expect.sha256);
    assert.equal(file.signatureChecked, entry.public_key !== null);
    if (achieved === Infinity) assert.equal(file.achieved, Infinity);
    else {
      const difference = Math.abs(file.achieved - achieved);
      assert.ok(difference <= tolerance, `achieved ${file.achieved} vs Python ${achieved}`);
      maxDifference = Math.max(maxDifference, difference);
      identical += difference === 0 ? 1 : 0;
    }
    if (expect.ldp !== undefined) { // the LDP level verify states beside a PML guarantee: the same witness, the bound
      const level = ldpLevel(file.matrix, file.inputs, file.outputs);
      assert.deepEqual(level.impossible, expect.ldp.impossible);
      if (expect.ldp.epsilon === "inf") assert.equal(level.epsilon, "inf");
      else assert.ok(Math.abs(level.epsilon - expect.ldp.epsilon) <= tolerance, `ldp ${level.epsilon} vs ${expect.ldp.epsilon}`);
      ldpStatements += 1;
    }
    assert.equal(file.release.policy, expect.release?.policy ?? "single");
    if (expect.release?.achieved === undefined) assert.equal(file.releaseCheck, null);
    else {
      const { releaseCheck: check } = file;
      assert.deepEqual([check.epsilon, check.holds, check.releases], [expect.release.epsilon, expect.release.holds,
        expect.release.releases ?? null]);
      const difference = Math.abs(check.achieved - expect.release.achieved);
      assert.ok(difference <= tolerance, `release achieved ${check.achieved} vs Python ${expect.release.achieved}`);
      releases.push(difference);
      if (expect.release.link_achieved === undefined) assert.equal(check.link, null);
      else { // a two-layer file's linkability level: stated, recomputed (or infinite), and whether it holds
        assert.deepEqual([check.link.epsilon, check.link.holds], [expect.release.link_epsilon, expect.release.link_holds]);
        if (expect.release.link_achieved === "inf") assert.equal(check.link.achieved, Infinity);
        else {
          const gap = Math.abs(check.link.achieved - expect.release.link_achieved);
          assert.ok(gap <= tolerance, `link ${check.link.achieved} vs Python ${expect.release.link_achieved}`);
        }
        links += 1;
      }
    }
    if (expect.outcome === "overstated") {
      await assert.rejects(loadMechanismFile(bytes, options), (error) => {
        assert.deepEqual({ field: error.field, rule: ruleHead(error.rule) }, { field: expect.field, rule: expect.rule });
        return true;
      });
    } else {
      assert.equal((await loadMechanismFile(bytes, options)).sha256, expect.sha256);
    }
  });
}

test("the vectors cover every outcome", { concurrency: false }, () => {
  // Runs after the file tests (node:test runs top-level tests in order).
  assert.ok(outcomes.holds >= 10 && outcomes.overstated >= 3 && outcomes.refused >= 50, JSON.stringify(outcomes));
  console.log(`# file vectors: ${JSON.stringify(outcomes)}; achieved ε: ${identical} bit-identical to Python, ` +
    `max |difference| ${maxDifference}; release statements recomputed: ${releases.length}, ` +
    `${releases.filter((d) => d === 0).length} bit-identical, max |difference| ${Math.max(0, ...releases)}`);
  assert.ok(releases.length >= 6);
  assert.ok(links >= 7, `linkability levels compared: ${links}`);
  assert.ok(ldpStatements >= 15, `LDP levels compared: ${ldpStatements}`);
});

test("canonical JSON agrees with mechdesign (RFC 8785) on every case", async () => {
  const { cases } = JSON.parse(read("canonical.json"));
  for (const { json, canonical, sha256 } of cases) {
    const scan = scanNumbers(json);
    if (canonical === null) {
      assert.ok(scan.unsafeKeys.size > 0 || (() => {
        try {
          canonicalize(JSON.parse(json));
          return false;
        } catch {
          return true;
        }
      })(), json);
      continue;
    }
    assert.equal(scan.unsafeKeys.size, 0);
    const text = canonicalize(JSON.parse(json));
    assert.equal(text, canonical);
    const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).toString("hex");
    assert.equal(digest, sha256);
  }
});

test("the sampler quantises like mechdesign and maps every fixed word to the same output", async () => {
  const { cases } = JSON.parse(read("sampler.json"));
  let words = 0;
  for (const { file: path, rows, sampled_achieved: sampled } of cases) {
    const file = await loadMechanismFile(read(path));
    const privatizer = new Privatizer(file);
    assert.ok(Math.abs(privatizer.sampledEpsilon - sampled) <= tolerance, path);
    rows.forEach((row, x) => {
      assert.equal(file.inputs[x], row.input);
      assert.deepEqual(privatizer.sampler.quantised[x].map(String), row.quantised, `${path} row ${x}`);
      const outputs = row.words.map((word) => file.outputs[privatizer.sampler.sampleWord(x, BigInt(word))]);
      assert.deepEqual(outputs, row.outputs, `${path} row ${x}`);
      words += row.words.length;
    });
  }
  console.log(`# sampler vectors: ${cases.length} files, ${words} words, all outputs equal`);
});

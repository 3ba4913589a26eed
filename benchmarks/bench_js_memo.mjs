// Throughput of the JavaScript client's memoized privatization (clients/js, mechdesign-memo-1; issue 37: ≥ 2 M
// records/s), in Node, for both AES paths: WebCrypto (AES-CBC decryption, what browsers run) and node:crypto
// (aes-256-ecb, `@mechdesign/client/node`).
//
// A memoized LDP file with N = 64 inputs and 64 outputs (k-RR at ε = 1), 10^6 records: values spread over the 64
// labels, user ids either text like "user-00012345" (13 bytes: one block) or integers (decimal text). One call of
// Privatizer.privatizeMemoized(values, users, key) per run: labels in, labels out, ids encoded, words drawn,
// the reference rule applied. One warm-up run, then the median of 5 timed runs; wall time and the process's CPU
// time (user + system, WebCrypto's worker threads included), and the load average around each row, since the
// machine may be shared: records per CPU-second is what one core does, records per second what the shared
// machine gave. A breakdown of the string-id runs by stage says what limits it.
// Needs the built client: (cd clients/js && npm ci && npm run build); then `node benchmarks/bench_js_memo.mjs`.
// Writes benchmarks/results/memo_js.json.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import os from "node:os";
import {
  MemoFunction, Privatizer, UserIds, achievedEpsilon, canonicalBytes, loadMechanismFile,
} from "../clients/js/dist/index.js";
import { nodeDecryptor } from "../clients/js/dist/node.js";

const RECORDS = 1_000_000;
const REPEATS = 5;
const N = 64;
const TARGET = 2_000_000;

async function memoizedFile() {
  const e = Math.E;
  const matrix = Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) => (i === j ? e : 1) / (e + N - 1)));
  const labels = Array.from({ length: N }, (_, i) => `v${i}`);
  const guarantee = { notion: "ldp", epsilon: 0, delta: null, radius: null, prior: null, samples: null };
  guarantee.epsilon = Number((achievedEpsilon(matrix, guarantee) + 1e-9).toPrecision(12));
  const content = {
    format: { name: "mechdesign.core.mechanism", version: 2 }, inputs: labels, outputs: labels.map((l) => `o${l}`),
    matrix, guarantee, utility: null, baselines: null, certificate: null, provenance: { benchmark: "bench_js_memo" },
    release: { policy: "memoized", randomness: "mechdesign-memo-1" },
  };
  const digest = await crypto.subtle.digest("SHA-256", canonicalBytes(content));
  content.sha256 = Buffer.from(digest).toString("hex");
  return loadMechanismFile(JSON.stringify(content));
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (x, digits = 4) => Number(x.toFixed(digits));

/** Wall and CPU seconds of `run()` (awaited). */
async function timed(run) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await run();
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1e6 };
}

const file = await memoizedFile();
const privatizer = new Privatizer(file);
const key = new Uint8Array(randomBytes(32));
const paths = {
  webcrypto: () => MemoFunction.create(key, file.sha256),
  "node:crypto": () => MemoFunction.create(key, file.sha256, nodeDecryptor(key)),
};
const values = Array.from({ length: RECORDS }, (_, i) => file.inputs[(i * 40503) % N]);
const ids = {
  "text (user-00012345)": Array.from({ length: RECORDS }, (_, i) => `user-${String(i).padStart(8, "0")}`),
  integer: Array.from({ length: RECORDS }, (_, i) => 10_000_000 + i),
};
const rows = [];
for (const [path, create] of Object.entries(paths)) {
  const memo = await create();
  for (const [kind, users] of Object.entries(ids)) {
    const load = os.loadavg()[0];
    await privatizer.privatizeMemoized(values, users, memo); // warm-up (JIT)
    const runs = [];
    for (let r = 0; r < REPEATS; r++) runs.push(await timed(() => privatizer.privatizeMemoized(values, users, memo)));
    const wall = median(runs.map((run) => run.wall));
    const cpu = median(runs.map((run) => run.cpu));
    const row = { path, ids: kind, records: RECORDS, outputs: N, median_seconds: round(wall),
      records_per_second: Math.round(RECORDS / wall), records_per_cpu_second: Math.round(RECORDS / cpu),
      median_cpu_seconds: round(cpu), min_seconds: round(Math.min(...runs.map((run) => run.wall))),
      max_seconds: round(Math.max(...runs.map((run) => run.wall))), load_before: round(load, 2),
      load_after: round(os.loadavg()[0], 2) };
    rows.push(row);
    console.log(`${path.padEnd(12)} ${kind.padEnd(22)} ${(row.records_per_second / 1e6).toFixed(2)} M records/s ` +
      `(median ${row.median_seconds} s; ${(row.records_per_cpu_second / 1e6).toFixed(2)} M per CPU-second; load ` +
      `${row.load_before} → ${row.load_after})`);
  }
}

// Where the time goes (string ids): the steps privatizeMemoized takes, chunk by chunk as it takes them (2^16
// records), each step's time summed over the chunks.
const CHUNK = 1 << 16;
const stages = [];
for (const [path, create] of Object.entries(paths)) {
  const memo = await create();
  const users = ids["text (user-00012345)"];
  const names = ["labels_to_indices", "ids_to_bytes", "words", "rule", "indices_to_labels"];
  const parts = Object.fromEntries(names.map((name) => [name, []]));
  for (let r = 0; r <= REPEATS; r++) { // the first round warms up
    const total = Object.fromEntries(names.map((name) => [name, { wall: 0, cpu: 0 }]));
    const add = (name, time) => {
      total[name].wall += time.wall;
      total[name].cpu += time.cpu;
    };
    let x;
    const out = new Uint16Array(RECORDS);
    add("labels_to_indices", await timed(() => { x = privatizer.encode(values); }));
    for (let start = 0; start < RECORDS; start += CHUNK) {
      const end = Math.min(RECORDS, start + CHUNK);
      let encoded;
      let halves;
      add("ids_to_bytes", await timed(() => { encoded = UserIds.encode(users.slice(start, end)); }));
      add("words", await timed(async () => { halves = await memo.halves(0, encoded, x.subarray(start, end)); }));
      add("rule", await timed(() => privatizer.sampler.sampleWords(x.subarray(start, end), halves, out.subarray(start, end))));
    }
    add("indices_to_labels", await timed(() => Array.from(out, (y) => file.outputs[y])));
    if (r > 0) for (const name of names) parts[name].push(total[name]);
  }
  const row = { path, load: round(os.loadavg()[0], 2) };
  for (const [name, times] of Object.entries(parts)) {
    row[`${name}_seconds`] = round(median(times.map((t) => t.wall)));
    row[`${name}_cpu_seconds`] = round(median(times.map((t) => t.cpu)));
  }
  stages.push(row);
  console.log(`${path.padEnd(12)} stages (CPU s): ${names.map((k) => `${k} ${row[`${k}_cpu_seconds`]}`).join(", ")}`);
}

const result = {
  benchmark: "js_memo",
  machine: { node: process.version, v8: process.versions.v8, openssl: process.versions.openssl,
    platform: process.platform, arch: process.arch, cpu: os.cpus()[0]?.model, cpus: os.cpus().length,
    date: new Date().toISOString() },
  note: "Privatizer.privatizeMemoized, N = 64 (k-RR, eps = 1, release policy memoized), 10^6 records per call, " +
    "median of 5 after a warm-up; records_per_cpu_second counts the process's CPU time (worker threads included); " +
    "load = 1-minute load average of the (shared) machine",
  target_records_per_second: TARGET, rows, stages,
};
writeFileSync(new URL("results/memo_js.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);

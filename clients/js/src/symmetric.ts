/**
 * Structured mechanism files (`"kind": "symmetric"`, issue 43): load and verify them as mechdesign does
 * (mechdesign/mechfile/symmetric.py; docs/client_spec.rst, "Structured files"), and sample reports
 * `t<type>.<hex>` of the placement family `mechdesign-agl-1` by the same rule on the same 64-bit words
 * (mechdesign/deploy/sampling/symmetric.py, mechdesign/mechfile/placement.py).
 *
 * The guarantee is recomputed from the compact form with the operations of mechdesign's grouped greedy, in the same
 * order (the same float bits up to libm's log): per type, the groups (cell, level) sorted once by the row sums,
 * the groups of value 0 merged into one of exact integer mass, the double-double drain of β/2, NumPy's pairwise
 * sums, and the same lowering by a bound of the float error; then roundUp per type and once more.
 */
import { type Json, fail, isObject, labels, number, object, pyList } from "./checks.js";
import { MechanismFileError } from "./errors.js";
import {
  FORMAT_NAME, FORMAT_VERSION, type LoadOptions, canonicalBytes, maxFileBytes, parseFile, requiredRadius, roundUp,
  sha256Hex,
} from "./mechfile.js";
import { maxOf, nextDown, pairwiseSum } from "./numeric.js";
import { type ReleasePolicy, readRelease } from "./release.js";
import { RICE_KEYS, base64, readRice } from "./symmetricRice.js";
import { type PublicKeyInput, importPublicKey, verifyEd25519 } from "./signature.js";

export const KIND = "symmetric";
export const PLACEMENT_FAMILY = "mechdesign-agl-1";
const TOP_KEYS = ["format", "kind", "placement", "inputs", "counts", "types", "guarantee", "utility", "baselines",
  "certificate", "provenance", "release", "sha256", "signature"];
const OPTIONAL = ["utility", "baselines", "certificate", "release", "signature"];
const TYPE_KEYS = ["high", "low", "weights", "high_counts", "low_counts"];
const GUARANTEE_KEYS = ["notion", "epsilon", "delta", "radius", "prior", "samples"];
const U = 2 ** -53;
const DRAINED = 1e-9; // mass past the budget after which the greedy leaves every group whole (groupMinLinear)
const BLOCK = 512;

export function isPrime(n: number): boolean {
  if (n < 2) return false;
  if (n < 4) return true;
  if (n % 2 === 0 || n % 3 === 0) return false;
  for (let k = 5; k * k <= n; k += 6) if (n % k === 0 || n % (k + 2) === 0) return false;
  return true;
}

/** mechdesign's `prime_parts`: a class of tied inputs split into cells of size 1 or a prime ≤ 251. */
export function primeParts(size: number): number[] {
  if (size > 256) {
    const whole = Math.ceil((size - 256) / 251);
    return [...Array(whole).fill(251), ...primeParts(size - whole * 251)];
  }
  if (size === 1 || isPrime(size)) return [size];
  if (isPrime(size - 1)) return [size - 1, 1];
  for (let p = size - 2; p > 1; p--) if (isPrime(p) && isPrime(size - p)) return [p, size - p];
  for (let p = size - 2; p > 1; p--) {
    if (isPrime(p)) {
      const rest = primeParts(size - p);
      if (rest.length <= 2) return [p, ...rest];
    }
  }
  throw new Error(`no prime split of ${size}`);
}

/** The cells of a count vector (mechdesign's `Cells.from_counts`): by count descending, then input order. */
export interface Cells {
  cellOf: Int32Array;
  position: Int32Array;
  sizes: number[];
  counts: number[];
  samples: number;
}

export function cellsFromCounts(counts: number[]): Cells {
  const order = counts.map((_, i) => i).sort((a, b) => counts[b] - counts[a] || a - b);
  const cellOf = new Int32Array(counts.length);
  const position = new Int32Array(counts.length);
  const sizes: number[] = [];
  const cellCounts: number[] = [];
  let start = 0;
  while (start < order.length) {
    let stop = start;
    while (stop < order.length && counts[order[stop]] === counts[order[start]]) stop++;
    let at = start;
    for (const part of primeParts(stop - start)) {
      for (let j = 0; j < part; j++) {
        cellOf[order[at + j]] = sizes.length;
        position[order[at + j]] = j;
      }
      sizes.push(part);
      cellCounts.push(counts[order[start]]);
      at += part;
    }
    start = stop;
  }
  return { cellOf, position, sizes, counts: cellCounts, samples: counts.reduce((a, b) => a + b, 0) };
}

/** The (T × K) counts of packed streams (mechdesign/mechfile/packed.py), with its refusals. */
export function unpackCounts(texts: unknown[], sizes: number[], field = "types.high_counts"): Int32Array[] {
  const widths = sizes.map((s) => Math.floor(Math.log2(s)) + 1);
  const totalBits = widths.reduce((a, b) => a + b, 0);
  const length = Math.ceil(totalBits / 8);
  return texts.map((text, t) => {
    if (typeof text !== "string") throw fail(`${field}[${t}]`, "be a base64 string", text);
    const bytes = base64(text, length);
    if (bytes === null) {
      const decoded = /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0;
      throw fail(`${field}[${t}]`, decoded ? `encode exactly ${length} bytes (one field per cell) in canonical base64`
        : "be canonical base64 (RFC 4648, with padding)", text.slice(0, 40));
    }
    const out = new Int32Array(sizes.length);
    let bit = 0;
    for (let k = 0; k < sizes.length; k++) {
      let value = 0;
      for (let j = 0; j < widths[k]; j++, bit++) value = (value << 1) | ((bytes[bit >> 3] >> (7 - (bit & 7))) & 1);
      out[k] = value;
    }
    for (; bit < 8 * length; bit++) {
      if ((bytes[bit >> 3] >> (7 - (bit & 7))) & 1) throw fail(`${field}[${t}]`, "have zero padding bits after the last field", text);
    }
    const over = out.findIndex((a, k) => a > sizes[k]);
    if (over >= 0) {
      throw fail(`${field}[${t}]`, `hold counts at most the cell's size (cell ${over} has ${sizes[over]} inputs)`, out[over]);
    }
    return out;
  });
}

function unpackLow(forms: unknown[], high: Int32Array[], sizes: number[]): Int32Array[] {
  const field = "types.low_counts";
  return forms.map((form, t) => {
    const out = new Int32Array(sizes.length);
    if (form === null) return out;
    if (form === "rest") return out.map((_, k) => sizes[k] - high[t][k]);
    if (!Array.isArray(form) || !form.every((p) => Array.isArray(p) && p.length === 2 && p.every(Number.isInteger))) {
      throw fail(`${field}[${t}]`, 'be null, "rest" or a list of [cell, count] integer pairs', form);
    }
    const cells = form.map((p) => p[0] as number);
    if (cells.some((k, i) => k < 0 || k >= sizes.length || (i > 0 && k <= cells[i - 1]))) {
      throw fail(`${field}[${t}]`, `list cells strictly increasing in [0, ${sizes.length})`, cells);
    }
    if (form.some((p) => p[1] < 1)) throw fail(`${field}[${t}]`, "list counts >= 1 (cells not listed hold 0)", form);
    for (const [k, b] of form as number[][]) out[k] = b;
    return out;
  });
}

/** A structured mechanism (mechdesign's `SymmetricMechanism`). */
export interface SymmetricMechanism {
  inputs: string[];
  cells: Cells;
  high: number[];
  low: number[];
  weights: number[];
  highCounts: Int32Array[];
  lowCounts: Int32Array[];
  rowSums: number[];
}

export interface SymmetricFile {
  kind: "symmetric";
  mechanism: SymmetricMechanism;
  guarantee: { notion: "pml"; epsilon: number; delta: number | null; radius: number; prior: null; samples: number };
  provenance: Json;
  sha256: string;
  signatureChecked: boolean;
  release: ReleasePolicy;
  achieved: number;
  holds: boolean;
}

/**
 * mechdesign's `group_min_linear` on one row of groups (values, masses), unsorted rows sorted first (stably, by
 * value descending): a lower bound on min over the ball of Q·c. `width` is the number of columns of the block the
 * row was computed in, which enters the error bound (G + 10)u.
 */
export function groupMinLinear(values: Float64Array, masses: Float64Array, beta: number): number {
  const g = values.length;
  let scale = 0;
  for (const x of values) scale = Math.max(scale, x);
  if (!(scale > 0)) scale = 1;
  let u = new Float64Array(g);
  let sorted = true;
  for (let j = 0; j < g; j++) {
    u[j] = values[j] / scale;
    if (j > 0 && u[j] > u[j - 1]) sorted = false;
  }
  let m = masses;
  if (!sorted) { // a stable sort by value descending (the rows the file's check does not sort once)
    const order = Array.from({ length: g }, (_, j) => j).sort((a, b) => u[b] - u[a] || a - b);
    const unit = u;
    u = Float64Array.from(order, (j) => unit[j]);
    m = Float64Array.from(order, (j) => masses[j]);
  }
  let low = Infinity;
  for (let j = 0; j < g; j++) if (m[j] > 0) low = Math.min(low, u[j]);
  const budget = beta / 2;
  let high = 0;
  let lo = 0;
  const left = new Float64Array(g);
  const drained = new Float64Array(g);
  const weighted = new Float64Array(g);
  let j = 0;
  // Once the mass before group j exceeds the budget by DRAINED, every later group keeps its whole mass (the clip
  // returns m_j exactly): mechdesign's _group_min_linear stops there too, and both equal the full loop bit for bit.
  for (; j < g && !(high - budget > DRAINED); j++) {
    const total = high + m[j];
    const virtual = total - high;
    const error = (high - (total - virtual)) + (m[j] - virtual);
    high = total;
    lo += error;
    const head = high - budget;
    const v = head - high;
    const tail = (high - (head - v)) + (-budget - v);
    left[j] = Math.min(Math.max(head + (tail + lo), 0), m[j]);
    drained[j] = m[j] - left[j];
    weighted[j] = left[j] * u[j];
  }
  for (; j < g; j++) {
    left[j] = m[j];
    weighted[j] = m[j] * u[j];
  }
  let result = pairwiseSum(weighted) + pairwiseSum(drained) * low;
  result = Math.max(result * (1.0 - (g + 10) * U) - 4 * U, low);
  return nextDown(result * scale * (1.0 - 2 * U));
}

/** Each type's PML over the ball, rounded up (mechdesign/mechfile/symmetric_check.py `type_capacities`). */
export function typeCapacities(m: SymmetricMechanism, radius: number): number[] {
  const k = m.cells.sizes.length;
  const order = m.rowSums.map((_, i) => i).sort((a, b) => m.rowSums[a] - m.rowSums[b] || a - b);
  const r = order.map((i) => m.rowSums[i]);
  const n = order.map((i) => m.cells.counts[i]);
  const s = order.map((i) => m.cells.sizes[i]);
  const samples = m.cells.samples;
  return m.high.map((h, t) => {
    const l = m.low[t];
    const twoLevel = l > 0;
    const width = (twoLevel ? 2 * k : k) + 1;
    const values = new Float64Array(width);
    const masses = new Float64Array(width);
    let zero = 0;
    for (let j = 0; j < k; j++) {
      const a = m.highCounts[t][order[j]];
      const b = m.lowCounts[t][order[j]];
      values[j] = h / r[j];
      masses[j] = (a * n[j]) / samples;
      if (twoLevel) {
        values[k + j] = l / r[j];
        masses[k + j] = (b * n[j]) / samples;
      }
      zero += (s[j] - a - b) * n[j];
    }
    masses[width - 1] = zero / samples;
    const g = groupMinLinear(values, masses, radius);
    const raw = Math.log(h / r[0]) - Math.log(g);
    return Number.isFinite(raw) ? roundUp(raw) : Infinity;
  });
}

function checkMechanism(m: Omit<SymmetricMechanism, "rowSums">): number[] {
  const k = m.cells.sizes.length;
  m.high.forEach((h, t) => { if (!(h > 0)) throw fail("types.high", "be > 0", h, `type ${t}`); });
  m.low.forEach((l, t) => { if (!(l >= 0 && l <= m.high[t])) throw fail("types.low", "lie in [0, high] for every type", l, `type ${t}`); });
  m.weights.forEach((w, t) => { if (!(w > 0)) throw fail("types.weights", "be > 0", w, `type ${t}`); });
  for (let t = 0; t < m.high.length; t++) {
    for (let j = 0; j < k; j++) {
      if (m.highCounts[t][j] + m.lowCounts[t][j] > m.cells.sizes[j]) {
        throw fail("types.high_counts", `plus low_counts be at most the cell's size (type ${t}, cell ${j} of size ` +
          `${m.cells.sizes[j]})`, m.highCounts[t][j] + m.lowCounts[t][j]);
      }
    }
    if (m.low[t] === 0 && m.lowCounts[t].some((b) => b > 0)) {
      throw fail("types.low_counts", "be 0 for a type whose low level is 0", t);
    }
    if (!m.highCounts[t].some((a) => a > 0)) {
      throw fail("types.high_counts", "put at least one input of every type at its high level", t);
    }
  }
  const rows = new Array(k).fill(0); // sequential over types, as NumPy's sum over axis 0
  for (let t = 0; t < m.high.length; t++) {
    for (let j = 0; j < k; j++) {
      rows[j] += (m.weights[t] * (m.highCounts[t][j] * m.high[t] + m.lowCounts[t][j] * m.low[t])) / m.cells.sizes[j];
    }
  }
  let worst = 0;
  rows.forEach((x, j) => { if (Math.abs(x - 1) > Math.abs(rows[worst] - 1)) worst = j; });
  if (!(Math.abs(rows[worst] - 1) <= 1e-9)) {
    throw fail("types.weights", `make every cell's row sum to 1 within 1e-09 (cell ${worst})`, rows[worst]);
  }
  return rows;
}

/**
 * Check a structured file and recompute its guarantee; an overstated ε is returned with `holds: false`, every
 * other defect throws a {@link MechanismFileError} (as `mechdesign verify`).
 */
export async function verifySymmetricFile(data: Uint8Array | string, options: LoadOptions = {}): Promise<SymmetricFile> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const { content } = parseFile(bytes, options.maxBytes ?? maxFileBytes());
  const missing = TOP_KEYS.filter((k) => !(k in content) && !OPTIONAL.includes(k));
  if (missing.length) throw fail("file", `have the keys ${pyList(missing)}`, Object.keys(content).sort());
  const extra = Object.keys(content).filter((k) => !TOP_KEYS.includes(k)).sort();
  if (extra.length) throw fail("file", `only have the keys ${pyList(TOP_KEYS)} (a structured file)`, extra);
  if (content.kind !== KIND) throw fail("kind", `be '${KIND}'`, content.kind);
  if (content.placement !== PLACEMENT_FAMILY) {
    throw fail("placement", `be '${PLACEMENT_FAMILY}' (the placement family this client implements)`, content.placement);
  }
  object("format", content.format);
  const fmt = content.format as Json;
  if (fmt.name !== FORMAT_NAME) throw fail("format.name", `be '${FORMAT_NAME}'`, fmt.name);
  if (fmt.version !== FORMAT_VERSION) throw fail("format.version", "be 2 (structured files exist from version 2 on)", fmt.version);
  const digest = content.sha256;
  if (typeof digest !== "string" || !/^[0-9a-f]{64}$/.test(digest)) throw fail("sha256", "be 64 lowercase hex digits", digest);
  const canonical = canonicalBytes(content);
  const actual = await sha256Hex(canonical);
  if (actual !== digest) {
    throw fail("sha256", "match the canonical content", `${digest.slice(0, 12)}…`,
      `tampered or edited file; content hashes to ${actual.slice(0, 12)}…`);
  }
  const inputs = labels("inputs", content.inputs);
  const counts = content.counts;
  if (!Array.isArray(counts) || counts.length !== inputs.length) {
    throw fail("counts", `be an array of ${inputs.length} integers (one per input)`, Array.isArray(counts) ? counts.length : counts);
  }
  const bad = counts.findIndex((c) => !(typeof c === "number" && Number.isInteger(c) && c >= 1));
  if (bad >= 0) throw fail(`counts[${bad}]`, "be a positive integer (every input's count in the prior)", counts[bad]);
  const total = (counts as number[]).reduce((a, b) => a + b, 0);
  if (total >= Math.floor(2 ** 53 / inputs.length)) {
    throw fail("counts", "sum to less than 2^53 / N (masses a·n_k must be exact in float64)", total);
  }
  const cells = cellsFromCounts(counts as number[]);
  const types = content.types;
  object("types", types);
  const tb = types as Json;
  const keys = Object.keys(tb).sort().join();
  if (keys !== [...TYPE_KEYS].sort().join() && keys !== [...TYPE_KEYS, ...RICE_KEYS].sort().join()) {
    throw fail("types", `have exactly the keys ${pyList(TYPE_KEYS)}, or those and ${pyList(RICE_KEYS)}`,
      Object.keys(tb).sort());
  }
  const count = Array.isArray(tb.high) ? tb.high.length : -1;
  if (count < 1) throw fail("types.high", "be a non-empty array (one level per type)", tb.high);
  for (const name of TYPE_KEYS) {
    if (!Array.isArray(tb[name]) || (tb[name] as unknown[]).length !== count) {
      throw fail(`types.${name}`, `be an array of ${count} entries (one per type)`, tb[name]);
    }
  }
  const arrays: Record<string, number[]> = {};
  for (const name of ["high", "low", "weights"]) {
    arrays[name] = (tb[name] as unknown[]).map((x, t) => number(`types.${name}[${t}]`, x, 0, Infinity));
  }
  const highCounts = "counts_code" in tb ? readRice(tb, cells.sizes) : unpackCounts(tb.high_counts as unknown[], cells.sizes);
  const lowCounts = unpackLow(tb.low_counts as unknown[], highCounts, cells.sizes);
  const base = { inputs, cells, high: arrays.high, low: arrays.low, weights: arrays.weights, highCounts, lowCounts };
  const mechanism: SymmetricMechanism = { ...base, rowSums: checkMechanism(base) };
  const guarantee = readGuarantee(content.guarantee, cells, inputs.length);
  for (const name of ["utility", "baselines", "certificate"]) object(name, content[name], true);
  object("provenance", content.provenance);
  const release = readRelease(content.release ?? null, [], undefined, (x) => x);
  if (release.policy !== "single" && release.policy !== "memoized") {
    throw fail("release.policy", "be 'single' or 'memoized' in a structured file", release.policy);
  }
  if (options.publicKey !== undefined) await checkSignature(content, canonical, options.publicKey);
  const achieved = roundUp(maxOf(typeCapacities(mechanism, guarantee.radius)));
  return { kind: "symmetric", mechanism, guarantee, provenance: content.provenance as Json, sha256: digest,
    signatureChecked: options.publicKey !== undefined, release, achieved, holds: achieved <= guarantee.epsilon };
}

function readGuarantee(raw: unknown, cells: Cells, size: number): SymmetricFile["guarantee"] {
  object("guarantee", raw);
  const g = raw as Json;
  if (Object.keys(g).sort().join() !== [...GUARANTEE_KEYS].sort().join()) {
    throw fail("guarantee", `have exactly the keys ${pyList(GUARANTEE_KEYS)}`, Object.keys(g).sort());
  }
  if (g.notion !== "pml") throw fail("guarantee.notion", "be 'pml' in a structured file", g.notion);
  number("guarantee.epsilon", g.epsilon, 0, Infinity);
  if (g.delta !== null) number("guarantee.delta", g.delta, 0, 1, true);
  number("guarantee.radius", g.radius, 0, 2);
  if (g.prior !== null) throw fail("guarantee.prior", "be null in a structured file (the prior is counts / samples)", "an array");
  if (g.samples !== cells.samples) throw fail("guarantee.samples", `be the sum of the counts (${cells.samples})`, g.samples);
  if (g.delta !== null && (g.radius as number) < requiredRadius(g.delta as number, cells.samples, size)) {
    throw fail("guarantee.radius", "be >= β*(δ, m, N) of [E] eq. 37, or the stated δ does not hold", g.radius);
  }
  return g as unknown as SymmetricFile["guarantee"];
}

async function checkSignature(content: Json, canonical: Uint8Array, publicKey: PublicKeyInput): Promise<void> {
  const key = await importPublicKey(publicKey);
  const signature = content.signature;
  if (!isObject(signature)) throw fail("signature", "be present", null, "the file is unsigned and a public key was given");
  if (!(await verifyEd25519(key, signature.value as string, canonical))) {
    throw new MechanismFileError("signature", "be valid for the given public key",
      "wrong key, or the content was changed after signing");
  }
}

/** {@link verifySymmetricFile}, refusing a file whose types exceed the stated ε (field `guarantee.epsilon`). */
export async function loadSymmetricFile(data: Uint8Array | string, options: LoadOptions = {}): Promise<SymmetricFile> {
  const file = await verifySymmetricFile(data, options);
  if (!file.holds) {
    throw fail("guarantee.epsilon", "be >= the pml epsilon recomputed from the types", file.guarantee.epsilon,
      String(file.achieved));
  }
  return file;
}

/** Whether parsed JSON content is a structured file. */
export function isSymmetricContent(content: unknown): boolean {
  return isObject(content) && content.kind === KIND;
}

export { BLOCK as TYPE_BLOCK };

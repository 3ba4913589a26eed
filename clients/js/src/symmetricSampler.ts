/**
 * Sampling structured files: reports `t<type>.<hex>` of the placement family mechdesign-agl-1, by the rule of
 * mechdesign/deploy/sampling/symmetric.py on the same 64-bit words (docs/client_spec.rst, "Structured files"):
 * w₀ picks (type, level) from the cell's row quantised to 2^64 (the dense sampler's quantisation); one accepted
 * word per digit group (w < 2^64 − (2^64 mod R), value w mod R; a rejected word is skipped); one accepted word for
 * the rank among the inputs at the drawn level, which fixes the digit w of the cell's own prime. The sampled
 * mechanism's guarantee is recomputed on construction (the grouped greedy of symmetric.ts).
 */
import { MechanismFileError } from "./errors.js";
import { type MemoFunction, type UserId, UserIds, fileMemo } from "./memo.js";
import { roundUp } from "./mechfile.js";
import { maxOf } from "./numeric.js";
import { SAMPLED_SLACK } from "./privatizer.js";
import { QUANT_SCALE, type RandomFill } from "./sampler.js";
import { type SymmetricFile, groupMinLinear } from "./symmetric.js";
import { binaryWidths } from "./symmetricBinary.js";
import { BATCH, FreshKernel } from "./symmetricFresh.js";
import { quantisePositive } from "./symmetricQuantise.js";

const GROUP_LIMIT = 2 ** 32;
const TWO32 = 2 ** 32;
const TWO64 = 2 ** 64;
/** 2^64 mod R for the ranks' radices R ≤ 256. */
const RANK_REM = Array.from({ length: 257 }, (_, r) => (r === 0 ? 0 : Number(QUANT_SCALE % BigInt(r))));
const HEX_CODES = new TextEncoder().encode("0123456789abcdef");
/** Reports are ASCII, so UTF-8 decodes them as Latin-1 would (and is the decoders' fast path). */
const ASCII = new TextDecoder("utf-8");
/**
 * Records a text buffer, decoded into one string that every report of the chunk slices. Above V8's largest young
 * object (128 KiB) the string is allocated apart, on pages of its own; below it the scavenger copies each chunk's
 * string twice. Measured at N = 10⁴ against 4,096: 512 and 896 records 8 and 14 % slower warm; 16,384 9 % faster
 * warm but 10 % slower in the first call (15 rotated runs, load 2.5-4).
 */
const CHUNK = 4096;

/** The smallest primitive root mod a prime p (1 for p = 2). */
export function primitiveRoot(p: number): number {
  if (p === 2) return 1;
  const factors: number[] = [];
  for (let q = 2; q < p; q++) if ((p - 1) % q === 0 && [...Array(q).keys()].slice(2).every((r) => q % r !== 0)) factors.push(q);
  const power = (g: number, e: number): number => {
    let result = 1;
    let base = g % p;
    while (e > 0) {
      if (e & 1) result = (result * base) % p;
      base = (base * base) % p;
      e >>= 1;
    }
    return result;
  };
  for (let g = 2; g < p; g++) if (factors.every((q) => power(g, (p - 1) / q) !== 1)) return g;
  throw new Error(`no primitive root mod ${p}`);
}

interface Space { p: number; cells: number[]; index: Map<number, number>; digits: number[][]; m: number; powers: number[] }

const secureFill: RandomFill = (buffer) => {
  for (let start = 0; start < buffer.length; start += 16384) {
    globalThis.crypto.getRandomValues(buffer.subarray(start, Math.min(start + 16384, buffer.length)));
  }
};

/** x mod r for integers 0 ≤ x < 2^53, 1 ≤ r < 2^32 (V8's % on doubles beyond int32 is a slow runtime call). */
function mod(x: number, r: number): number {
  const q = Math.floor(x / r);
  let rem = x - q * r; // exact: q·r < 2^53; the quotient may be one off after rounding
  if (rem < 0) rem += r;
  else if (rem >= r) rem -= r;
  return rem;
}

/** (a · b) mod r for integers a, b < r < 2^32, exactly in float64 (b in 16-bit halves). */
function mulmod(a: number, b: number, r: number): number {
  const high = Math.floor(b / 65536);
  return mod(mod(a * high, r) * 65536 + a * (b - high * 65536), r);
}

/** The placement family of a structured file: per prime its cells and digits, per type its digits and groups. */
export function placementFamily(file: SymmetricFile): Family {
  const m = file.mechanism;
  const sizes = m.cells.sizes;
  const primes = [...new Set(sizes.filter((s) => s > 1))].sort((a, b) => a - b);
  const spaces: Space[] = primes.map((p) => {
    const cells = sizes.flatMap((s, k) => (s === p ? [k] : []));
    let digitsNeeded = 0;
    if (cells.length > 1) for (let power = 1; power < cells.length; power *= p) digitsNeeded++;
    const digits = cells.map((_, j) => Array.from({ length: digitsNeeded }, (_, i) => Math.floor(j / p ** i) % p));
    const g = primitiveRoot(p);
    const powers: number[] = [];
    for (let e = 0, d = 1; e < p - 1; e++, d = (d * g) % p) powers.push(d);
    return { p, cells, index: new Map(cells.map((k, j) => [k, j])), digits, m: digitsNeeded, powers };
  });
  const family: Family = { spaces, needs: [], radices: [], groupOf: [], placeOf: [], groupRadix: [], digitStart: [],
    hexWidth: [] };
  for (let t = 0; t < m.high.length; t++) {
    const a = m.highCounts[t];
    const b = m.lowCounts[t];
    const need = spaces.map((sp) => sp.cells.some((k) => a[k] + b[k] > 0 && a[k] < sp.p && b[k] < sp.p));
    const radices: number[] = [];
    const starts = need.map(() => -1);
    spaces.forEach((sp, q) => {
      if (!need[q]) return;
      starts[q] = radices.length;
      radices.push(sp.p - 1);
      for (let i = 0; i < sp.m; i++) radices.push(sp.p);
      radices.push(sp.p);
    });
    const groups: number[] = [];
    const places: number[] = [];
    const products: number[] = [];
    let product = 1;
    for (const radix of radices) {
      if (product * radix >= GROUP_LIMIT) {
        products.push(product);
        product = 1;
      }
      places.push(product);
      groups.push(products.length);
      product *= radix;
    }
    products.push(product);
    family.needs.push(need);
    family.radices.push(radices);
    family.groupOf.push(groups);
    family.placeOf.push(places);
    family.groupRadix.push(products);
    family.digitStart.push(starts);
    const seeds = products.reduce((x, y) => x * BigInt(y), 1n);
    family.hexWidth.push(Math.max(1, (seeds - 1n).toString(16).length));
  }
  return family;
}

export interface Family {
  spaces: Space[];
  needs: boolean[][];
  radices: number[][];
  groupOf: number[][];
  placeOf: number[][];
  groupRadix: number[][];
  digitStart: number[][];
  hexWidth: number[];
}

/** Bytes of each type's reports `t<t>.<hex>`. */
export function reportBytes(file: SymmetricFile): number[] {
  return placementFamily(file).hexWidth.map((width, t) => `t${t}.`.length + width);
}

/**
 * out[start … stop) ← the reports of one chunk's text, record r ending at ends[r − start]. Its own function, so that
 * privatize's loops stay short: privatize is not compiled on the fly with every step of the kernel inlined.
 */
function cutTexts(all: string, ends: Int32Array, out: string[], start: number, stop: number): void {
  for (let r = start, from = 0; r < stop; r++) out[r] = all.slice(from, from = ends[r - start]);
}

export class SymmetricSampler {
  readonly file: SymmetricFile;
  readonly spaces: Space[];
  readonly needs: boolean[][];
  readonly radices: number[][];
  readonly groupOf: number[][];
  readonly placeOf: number[][];
  readonly groupRadix: number[][];
  readonly digitStart: number[][];
  readonly hexWidth: number[];
  private readonly pairs: Int32Array[];
  private readonly boundHigh: Uint32Array[];
  private readonly boundLow: Uint32Array[];
  /** Number(Q_k[j]) of each cell's kept pairs (correctly rounded; 2^64 for a cell of one pair). */
  private readonly quants: Float64Array[];
  private exactEpsilon: number | undefined;
  /** The pairs (t, ℓ, k) with θ_t λ_t > 0 and n_ℓ > 0: each must have kept its entry for the bound to hold. */
  private positivePairs: number;
  /**
   * Label → input, in an object without a prototype (its own keys only): looked up faster than a Map (3 % of the
   * warm draw at N = 10⁴), labels that are array indices among the elements.
   */
  private readonly index: Record<string, number>;
  private readonly fill: RandomFill;
  private readonly groupRem: number[][];
  private readonly primeOfCell: Int32Array;
  private readonly limbs = new Float64Array(4096);
  private readonly bytes = new Uint8Array(32768);
  private readonly kernel: FreshKernel;
  readonly width: number;

  constructor(file: SymmetricFile, fill: RandomFill = secureFill) {
    this.file = file;
    this.fill = fill;
    const m = file.mechanism;
    const sizes = m.cells.sizes;
    const family = placementFamily(file);
    this.spaces = family.spaces;
    this.needs = family.needs;
    this.radices = family.radices;
    this.groupOf = family.groupOf;
    this.placeOf = family.placeOf;
    this.groupRadix = family.groupRadix;
    this.digitStart = family.digitStart;
    this.hexWidth = family.hexWidth;
    const types = m.high.length;
    this.primeOfCell = Int32Array.from(sizes, (size) => this.spaces.findIndex((sp) => sp.p === size));
    this.width = maxOf(this.groupRadix.map((g) => g.length));
    for (const g of this.groupRadix) while (g.length < this.width) g.push(1);
    this.groupRem = this.groupRadix.map((radices) => radices.map((r) => Number(QUANT_SCALE % BigInt(r))));
    this.pairs = [];
    this.boundHigh = [];
    this.boundLow = [];
    this.quants = [];
    // θ_t h_t and θ_t l_t once (the same products as (θ_t · h_t) · a_tk below: the reference rule's order).
    const weightedHigh = Float64Array.from(m.high, (h, t) => m.weights[t] * h);
    const weightedLow = Float64Array.from(m.low, (l, t) => m.weights[t] * l);
    this.positivePairs = 0;
    for (let k = 0; k < sizes.length; k++) {
      const probabilities: number[] = [];
      const pairs: number[] = [];
      const scale = sizes[k] * m.rowSums[k];
      for (let t = 0; t < types; t++) {
        const a = m.highCounts[t][k];
        const b = m.lowCounts[t][k];
        if (weightedHigh[t] > 0 && a > 0) this.positivePairs++; // the pairs the file has (boundedCapacity)
        if (weightedLow[t] > 0 && b > 0) this.positivePairs++;
        const high = (weightedHigh[t] * a) / scale;
        const low = (weightedLow[t] * b) / scale;
        if (high > 0) { pairs.push(2 * t); probabilities.push(high); }
        if (low > 0) { pairs.push(2 * t + 1); probabilities.push(low); }
      }
      // Q_k as 32-bit halves (quantisePositive: quantise's integers without a BigInt an entry); a cell whose row
      // has one positive pair, or whose quantisation gives one pair all of 2^64, keeps that pair alone (Q = 2^64).
      const q = probabilities.length > 1 ? quantisePositive(probabilities) : null;
      if (q === null) {
        const whole = probabilities.indexOf(maxOf(probabilities));
        this.pairs.push(Int32Array.of(pairs[whole]));
        this.quants.push(Float64Array.of(TWO64));
        this.boundHigh.push(new Uint32Array(0));
        this.boundLow.push(new Uint32Array(0));
        continue;
      }
      let kept = 0;
      for (let j = 0; j < pairs.length; j++) if (q.hi[j] !== 0 || q.lo[j] !== 0) kept++;
      const cellPairs = new Int32Array(kept);
      const quants = new Float64Array(kept);
      const high = new Uint32Array(Math.max(kept - 1, 0));
      const low = new Uint32Array(high.length);
      let sumHigh = 0;
      let sumLow = 0;
      for (let j = 0, i = 0; j < pairs.length; j++) {
        if (q.hi[j] === 0 && q.lo[j] === 0) continue;
        cellPairs[i] = pairs[j];
        quants[i] = q.hi[j] * TWO32 + q.lo[j]; // one rounding: Number(Q), correctly rounded
        if (i < high.length) { // C_k[i] = Σ_{j ≤ i} Q_k[j] < 2^64 in 32-bit halves
          sumLow += q.lo[j];
          sumHigh += q.hi[j] + Math.floor(sumLow / TWO32);
          sumLow %= TWO32;
          high[i] = sumHigh;
          low[i] = sumLow;
        }
        i++;
      }
      this.pairs.push(cellPairs);
      this.quants.push(quants);
      this.boundHigh.push(high);
      this.boundLow.push(low);
    }
    this.index = Object.create(null) as Record<string, number>;
    m.inputs.forEach((label, i) => { this.index[label] = i; });
    this.kernel = new FreshKernel({ cellOf: m.cells.cellOf, position: m.cells.position, highCounts: m.highCounts,
      lowCounts: m.lowCounts, pairs: this.pairs, boundHigh: this.boundHigh, boundLow: this.boundLow,
      groupRadix: this.groupRadix, radices: this.radices, groupOf: this.groupOf, placeOf: this.placeOf,
      digitStart: this.digitStart, needs: this.needs, spaces: this.spaces, primeOfCell: this.primeOfCell,
      hexWidth: this.hexWidth, width: this.width }, fill);
    // The bound from the file's recomputed capacity first (O(entries)); the grouped greedy on the sampled
    // mechanism only where the bound does not meet the guarantee (mechdesign's SymmetricPrivatizer.check).
    const allowed = file.guarantee.epsilon + SAMPLED_SLACK;
    if (!(this.boundedCapacity(file.achieved) <= allowed) && !(this.sampledEpsilon <= allowed)) {
      throw new MechanismFileError("sampled mechanism", `meet guarantee.epsilon=${file.guarantee.epsilon} after ` +
        "quantisation to 2^-64", "entries too small to sample exactly", this.sampledEpsilon);
    }
  }

  /** The ε the sampled mechanism achieves, rounded up ({@link sampledCapacity}, computed on first use). */
  get sampledEpsilon(): number {
    if (this.exactEpsilon === undefined) this.exactEpsilon = this.sampledCapacity(this.file.guarantee.radius);
    return this.exactEpsilon;
  }

  /**
   * An upper bound on the sampled mechanism's capacity from the file's (`achieved`, recomputed by
   * verifySymmetricFile): C + log(ρ⁺/ρ⁻), rounded up (mechdesign's `bounded_capacity` and
   * `quantisation_spread`). Entry (k, t, ℓ) of the sampled mechanism is ρ = Q_k[(t, ℓ)] / (2^64 π) times the
   * file's (π = θ_t λ_t n_ℓ / (s_k r_k) the pair's probability), so every type's groups move by a factor in
   * [ρ⁻, ρ⁺] and its PML ([E] eq. 7–8) rises by at most log(ρ⁺/ρ⁻). Each ρ is computed in 6 float operations and
   * widened by 16u each side; ∞ where a positive pair lost its entry.
   */
  boundedCapacity(fileCapacity: number): number {
    const m = this.file.mechanism;
    let entries = 0;
    let top = -Infinity;
    let bottom = Infinity;
    this.pairs.forEach((pairs, k) => {
      entries += pairs.length;
      const quants = this.quants[k];
      for (let j = 0; j < pairs.length; j++) {
        const t = pairs[j] >> 1;
        const level = pairs[j] & 1;
        const n = level === 0 ? m.highCounts[t][k] : m.lowCounts[t][k];
        const pi = ((m.weights[t] * (level === 0 ? m.high[t] : m.low[t])) * n) / (m.cells.sizes[k] * m.rowSums[k]);
        const ratio = quants[j] / TWO64 / pi;
        top = Math.max(top, ratio);
        bottom = Math.min(bottom, ratio);
      }
    });
    const widen = 16 * Number.EPSILON; // mechdesign's 16 · FLOAT_EPS
    top *= 1 + widen;
    bottom *= 1 - widen;
    if (this.positivePairs !== entries || !(Number.isFinite(top) && bottom > 0) || !Number.isFinite(fileCapacity)) return Infinity;
    return roundUp(roundUp(fileCapacity) + roundUp(Math.log(top) - Math.log(bottom)));
  }

  /** Words a record reads when none is rejected, at most: 1 + the most groups + 1. */
  wordsNeeded(): number {
    return 2 + this.width;
  }

  /** The capacity of the sampled mechanism over the ball, rounded up (mechdesign's `sampled_capacity`). */
  sampledCapacity(radius: number): number {
    const m = this.file.mechanism;
    const k = m.cells.sizes.length;
    const q = m.high.map(() => [new Float64Array(k), new Float64Array(k)]);
    this.quants.forEach((quants, cell) => {
      quants.forEach((x, j) => {
        const pair = this.pairs[cell][j];
        q[pair >> 1][pair & 1][cell] = x / TWO64;
      });
    });
    const worst = m.high.map((_, t) => {
      const values = new Float64Array(3 * k);
      const masses = new Float64Array(3 * k);
      let top = 0;
      for (let j = 0; j < k; j++) {
        const a = m.highCounts[t][j];
        const b = m.lowCounts[t][j];
        const s = m.cells.sizes[j];
        const n = m.cells.counts[j];
        values[j] = a > 0 ? (q[t][0][j] * s) / a : 0;
        values[k + j] = b > 0 ? (q[t][1][j] * s) / b : 0;
        masses[j] = (a * n) / m.cells.samples;
        masses[k + j] = (b * n) / m.cells.samples;
        masses[2 * k + j] = ((s - a - b) * n) / m.cells.samples;
        top = Math.max(top, values[j], values[k + j]);
      }
      const raw = Math.log(top) - Math.log(groupMinLinear(values, masses, radius));
      return Number.isFinite(raw) ? roundUp(raw) : Infinity;
    });
    return roundUp(maxOf(worst));
  }

  /**
   * The report of input x from its word stream (pairs of uint32 halves [hi, lo], as many words as it needs: a
   * rejected word is skipped), by the reference rule.
   * @throws RangeError if the stream runs out
   */
  report(x: number, words: Uint32Array): { type: number; groups: number[] } {
    const m = this.file.mechanism;
    const k = m.cells.cellOf[x];
    const pair = this.pairOf(k, words[0], words[1]);
    const t = pair >> 1;
    const level = pair & 1;
    const radices = this.groupRadix[t];
    const rems = this.groupRem[t];
    const groups = new Array<number>(radices.length);
    let at = 1;
    const limit = words.length >> 1;
    for (let g = 0; g <= radices.length; g++) { // the groups, then the rank
      const a = m.highCounts[t][k];
      const radix = g < radices.length ? radices[g] : Math.max(level === 0 ? a : m.lowCounts[t][k], 1);
      const rem = g < radices.length ? rems[g] : RANK_REM[radix];
      for (;;) {
        if (at >= limit) throw new RangeError("words must hold enough words for every record (rejected words are skipped)");
        const hi = words[2 * at];
        const lo = words[2 * at + 1];
        at++;
        if (rem !== 0 && hi === 0xffffffff && lo >= TWO32 - rem) continue; // w ≥ 2^64 − (2^64 mod R): rejected
        const value = radix === 1 ? 0 : mod(mulmod(mod(hi, radix), mod(TWO32, radix), radix) + lo, radix);
        if (g < radices.length) groups[g] = value;
        else this.place(x, k, t, level, value, groups);
        break;
      }
    }
    return { type: t, groups };
  }

  /** Step 3: the digit w of the cell's prime, so that the placement puts x at rank `rank` of its level. */
  private place(x: number, k: number, t: number, level: number, rank: number, groups: number[]): void {
    const m = this.file.mechanism;
    const q = this.primeOfCell[k];
    if (q < 0 || !this.needs[t][q]) return;
    const sp = this.spaces[q];
    const start = this.digitStart[t][q];
    const groupOf = this.groupOf[t];
    const placeOf = this.placeOf[t];
    const radices = this.radices[t];
    const digit = (i: number): number => mod(Math.floor(groups[groupOf[i]] / placeOf[i]), radices[i]);
    const e = digit(start);
    const j = sp.index.get(k) as number;
    let hashed = 0;
    for (let i = 0; i < sp.m; i++) hashed += digit(start + 1 + i) * sp.digits[j][i];
    const z = level === 0 ? rank : m.highCounts[t][k] + rank;
    const wAt = start + sp.m + 1;
    const wNew = (((z - sp.powers[e] * m.cells.position[x] - hashed) % sp.p) + sp.p * 256) % sp.p;
    groups[groupOf[wAt]] += (wNew - digit(wAt)) * placeOf[wAt];
  }

  private pairOf(k: number, hi: number, lo: number): number {
    const high = this.boundHigh[k];
    const low = this.boundLow[k];
    let first = 0;
    let last = high.length; // the first j with C[j] > w; j = length: the last pair
    while (first < last) {
      const mid = (first + last) >> 1;
      if (high[mid] > hi || (high[mid] === hi && low[mid] > lo)) last = mid;
      else first = mid + 1;
    }
    return this.pairs[k][first];
  }

  /** The text form `t<t>.<hex>` of a report. */
  text(type: number, groups: number[]): string {
    return ASCII.decode(this.limbText(type, groups, this.bytes, 0));
  }

  /**
   * Writes `t<t>.<hex>` as ASCII codes into `out` at `at`; returns the codes written (a view of `out`). V by
   * Horner from the last group in 16-bit limbs (exact in doubles); then its last `hexWidth` hex digits.
   */
  private limbText(type: number, groups: number[], out: Uint8Array, at: number): Uint8Array {
    const radices = this.groupRadix[type];
    const limbs = this.limbs;
    let used = 0;
    for (let g = radices.length - 1; g >= 0; g--) {
      let carry = groups[g];
      const radix = radices[g];
      for (let i = 0; i < used; i++) {
        const value = limbs[i] * radix + carry;
        carry = Math.floor(value / 65536);
        limbs[i] = value - carry * 65536;
      }
      while (carry > 0) {
        limbs[used++] = carry % 65536;
        carry = Math.floor(carry / 65536);
      }
    }
    const head = `t${type}.`;
    let end = at;
    for (let i = 0; i < head.length; i++) out[end++] = head.charCodeAt(i);
    for (let i = this.hexWidth[type] - 1; i >= 0; i--) { // hex digit i of V, most significant first
      const limb = (i >> 2) < used ? limbs[i >> 2] : 0;
      out[end++] = HEX_CODES[(limb >> (4 * (i & 3))) & 15];
    }
    return out.subarray(at, end);
  }

  private indices(values: readonly string[]): Int32Array {
    const xs = new Int32Array(values.length);
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      const x = typeof value === "string" ? this.index[value] : undefined; // 5 is not the label "5"
      if (x === undefined) {
        throw new RangeError(`values must be input labels of the mechanism, got values=${JSON.stringify(values[i])} ` +
          `(value ${i})`);
      }
      xs[i] = x;
    }
    return xs;
  }

  /** The fresh path's kernel (symmetricFresh.ts), built with the sampler. */
  private fresh(): FreshKernel {
    return this.kernel;
  }

  /**
   * Reports of labelled values, drawn afresh (crypto.getRandomValues unless another fill was given) by the fresh
   * path of symmetricFresh.ts: the reference rule's law from 32-bit words.
   */
  privatize(values: readonly string[]): string[] {
    const xs = this.indices(values);
    const kernel = this.fresh();
    const out: string[] = new Array(xs.length);
    // A chunk's reports are written as ASCII into one buffer, decoded once, and cut into slices (O(1) strings).
    const text = new Uint8Array((12 + maxOf(this.hexWidth)) * Math.min(CHUNK, xs.length));
    const view = new DataView(text.buffer);
    const ends = new Int32Array(Math.min(CHUNK, xs.length));
    for (let start = 0; start < xs.length; start += CHUNK) {
      const stop = Math.min(xs.length, start + CHUNK);
      let at = 0;
      for (let first = start; first < stop; first += BATCH) {
        const last = Math.min(stop, first + BATCH);
        kernel.drawBatch(xs, first, last);
        at = kernel.writeTexts(last - first, text, view, at, ends, first - start);
      }
      cutTexts(ASCII.decode(text.subarray(0, at)), ends, out, start, stop);
    }
    return out;
  }

  /**
   * Reports of labelled values in binary form (docs/client_spec.rst, "Binary reports"), drawn afresh. The reports
   * of a batch of 256 are views of one ArrayBuffer (one allocation a batch, not one a report).
   */
  privatizeBinary(values: readonly string[]): Uint8Array[] {
    const xs = this.indices(values);
    const kernel = this.fresh();
    const { typeBytes, widths } = binaryWidths(this);
    const out: Uint8Array[] = new Array(xs.length);
    for (let first = 0; first < xs.length; first += BATCH) {
      const last = Math.min(xs.length, first + BATCH);
      kernel.drawBatch(xs, first, last);
      let bytes = 0;
      for (let r = first; r < last; r++) bytes += typeBytes + widths[kernel.types[r - first]];
      const buffer = new ArrayBuffer(bytes);
      for (let r = first, at = 0; r < last; r++) {
        const size = typeBytes + widths[kernel.types[r - first]];
        out[r] = new Uint8Array(buffer, at, size);
        at += size;
      }
      kernel.writeBinaries(last - first, typeBytes, out, first);
    }
    return out;
  }

  /** Reports (type, digit groups) of labelled values drawn afresh, as privatize draws them (before their text). */
  freshReports(values: readonly string[]): { type: number; groups: number[] }[] {
    const kernel = this.fresh();
    const xs = this.indices(values);
    const out: { type: number; groups: number[] }[] = [];
    for (let first = 0; first < xs.length; first += BATCH) {
      const last = Math.min(xs.length, first + BATCH);
      kernel.drawBatch(xs, first, last);
      for (let b = 0; b < last - first; b++) {
        out.push({ type: kernel.types[b], groups: Array.from(kernel.values.subarray(b * this.width, (b + 1) * this.width)) });
      }
    }
    return out;
  }

  /**
   * Memoized reports: the keyed word stream of (file, user, value) (the same user and value, the same report).
   * @throws RangeError for a memo function of another file, or of a key other than the one the file is bound to
   *   (`release.key`: {@link fileMemo}, as the dense Privatizer)
   */
  async privatizeMemoized(values: readonly string[], users: readonly UserId[], memo: MemoFunction): Promise<string[]> {
    fileMemo(memo, this.file);
    const xs = this.indices(values);
    const ids = UserIds.encode(users);
    const count = this.wordsNeeded();
    const stream = await memo.stream(0, ids, xs, count);
    const out: string[] = [];
    for (let r = 0; r < xs.length; r++) {
      try {
        out.push(this.textOf(this.report(xs[r], stream.subarray(2 * count * r, 2 * count * (r + 1)))));
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        const longer = await memo.stream(0, UserIds.encode([users[r]]), [xs[r]], 4 * count);
        out.push(this.textOf(this.report(xs[r], longer)));
      }
    }
    return out;
  }

  private textOf(report: { type: number; groups: number[] }): string {
    return this.text(report.type, report.groups);
  }
}

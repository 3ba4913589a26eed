/**
 * Exact sampling of a mechanism, as mechdesign's Privatizer: each row is quantised once to integers Q[x, ·] ≥ 0
 * summing to 2^64 (largest remainder on the exact rationals of the floats), and a record with input x takes one
 * uniform 64-bit word U and outputs the first y with C[x, y] = Σ_{j ≤ y} Q[x, j] > U, hence
 * P(y | x) = Q[x, y] / 2^64 exactly. No floating point on the sampling path: words are compared as two 32-bit
 * halves, with a table of 2^b cells (the top b bits of U) that holds the output whenever a cell lies inside one
 * output's interval, which it does for all but at most M − 1 cells per row.
 */
import { minOf } from "./numeric.js";

export const QUANT_SCALE = 2n ** 64n;

/** The exact value of a finite double as mantissa · 2^exponent (both integers). */
function rational(x: number): [bigint, number] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  return exponent === 0 ? [fraction, -1074] : [fraction | (1n << 52n), exponent - 1075];
}

/**
 * Integers q ≥ 0 with Σq = 2^64 and |q − 2^64 p/Σp| < 1 (mechdesign's `quantise`): floors of the exact
 * 2^64 p/Σp, then +1 to the largest remainders (ties: the lower index first). Zeros stay zeros.
 */
export function quantise(row: ArrayLike<number>): bigint[] {
  const parts = Array.from(row, rational);
  const lowest = minOf(parts.filter(([m]) => m > 0n).map(([, e]) => e));
  const numerators = parts.map(([m, e]) => (m === 0n ? 0n : m << BigInt(e - lowest)));
  const total = numerators.reduce((a, b) => a + b, 0n);
  const floors = numerators.map((n) => (n * QUANT_SCALE) / total);
  const remainders = numerators.map((n) => (n * QUANT_SCALE) % total);
  const deficit = Number(QUANT_SCALE - floors.reduce((a, b) => a + b, 0n));
  const order = floors.map((_, j) => j).sort((a, b) => {
    const d = remainders[b] - remainders[a];
    return d > 0n ? 1 : d < 0n ? -1 : a - b;
  });
  for (const j of order.slice(0, deficit)) floors[j] += 1n;
  return floors;
}

/** Source of uniform 32-bit words: crypto.getRandomValues by default (a CSPRNG in Node and every browser). */
export type RandomFill = (buffer: Uint32Array) => void;

const secureFill: RandomFill = (buffer) => {
  for (let start = 0; start < buffer.length; start += 16384) { // getRandomValues takes at most 65,536 bytes
    globalThis.crypto.getRandomValues(buffer.subarray(start, Math.min(start + 16384, buffer.length)));
  }
};

const TABLE_BYTES = 1 << 20;

/** A compiled exact sampler for one row-stochastic matrix (rows as mechdesign renormalises them). */
export class Sampler {
  /** Q[x, y], each row summing to 2^64. */
  readonly quantised: bigint[][];
  private readonly outputs: number;
  private readonly bits: number;
  private readonly table: Uint8Array | Uint16Array;
  private readonly sentinel: number;
  private readonly high: Uint32Array; // C[x, k] >> 32, rows padded to `width`
  private readonly low: Uint32Array; // C[x, k] & 0xffffffff
  private readonly lengths: Int32Array;
  private readonly width: number;
  private readonly fill: RandomFill;
  private buffer = new Uint32Array(0);
  private position = 0;

  constructor(matrix: number[][], fill: RandomFill = secureFill) {
    const n = matrix.length;
    const m = matrix[0].length;
    if (m > 65535) throw new RangeError(`mechanism must have at most 65535 outputs, got mechanism=${m}`);
    this.outputs = m;
    this.fill = fill;
    const itemsize = m < 255 ? 1 : 2;
    this.sentinel = m < 255 ? 0xff : 0xffff;
    const budget = Math.max(TABLE_BYTES, 64 * n * m * itemsize);
    this.bits = Math.min(16, Math.max(8, Math.floor(Math.log2(budget / (n * itemsize)))));
    const cells = 1 << this.bits;
    this.table = itemsize === 1 ? new Uint8Array(n * cells) : new Uint16Array(n * cells);
    this.width = Math.max(m - 1, 1);
    this.high = new Uint32Array(n * this.width);
    this.low = new Uint32Array(n * this.width);
    this.lengths = new Int32Array(n);
    this.quantised = matrix.map((row) => quantise(row));
    const shift = BigInt(64 - this.bits);
    const cellMask = (1n << shift) - 1n;
    this.quantised.forEach((q, x) => {
      let cumulative = 0n;
      const bounds: bigint[] = [];
      for (let y = 0; y < m - 1; y++) {
        cumulative += q[y];
        if (cumulative < QUANT_SCALE) bounds.push(cumulative); // 2^64 is never reached by U < 2^64
      }
      bounds.forEach((c, k) => {
        this.high[x * this.width + k] = Number(c >> 32n);
        this.low[x * this.width + k] = Number(c & 0xffffffffn);
      });
      this.lengths[x] = bounds.length;
      // Cell c holds #{k : C_k <= start of c} unless some C_k lies strictly inside it (a boundary cell).
      const cellOf = bounds.map((c) => Number(c >> shift));
      const atStart = bounds.map((c) => (c & cellMask) === 0n);
      let k = 0;
      for (let c = 0; c < cells; c++) {
        while (k < bounds.length && cellOf[k] < c) k++;
        let j = k;
        let inside = false;
        for (; j < bounds.length && cellOf[j] === c; j++) inside ||= !atStart[j];
        this.table[x * cells + c] = inside ? this.sentinel : j;
      }
    });
  }

  /** The output index for input x and the 64-bit word (hi, lo): the first y with C[x, y] > U. */
  private search(x: number, hi: number, lo: number): number {
    let left = 0;
    let right = this.lengths[x];
    const base = x * this.width;
    while (left < right) {
      const middle = (left + right) >>> 1;
      const h = this.high[base + middle];
      if (h < hi || (h === hi && this.low[base + middle] <= lo)) left = middle + 1;
      else right = middle;
    }
    return left;
  }

  /** The reference rule on a given word: the first y with C[x, y] > word (what the conformance vectors check). */
  sampleWord(x: number, word: bigint): number {
    if (word < 0n || word >= QUANT_SCALE) throw new RangeError(`word must lie in [0, 2^64), got word=${word}`);
    return this.search(x, Number(word >> 32n), Number(word & 0xffffffffn));
  }

  /**
   * The reference rule on given words, for many records: the first y with C[xs[i], y] > U_i, U_i given as the
   * halves `words[2i]` (high) and `words[2i + 1]` (low). The same map as {@link sampleWord}, through the cell
   * table (memoized draws take their words this way).
   */
  sampleWords(xs: ArrayLike<number>, words: Uint32Array, out: Uint16Array = new Uint16Array(xs.length)): Uint16Array {
    const n = this.lengths.length;
    if (words.length !== 2 * xs.length) {
      throw new RangeError(`words must hold two halves per input index (${2 * xs.length}), got words=${words.length}`);
    }
    const cellShift = 32 - this.bits;
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i];
      if (!(x >= 0 && x < n && Number.isInteger(x))) {
        throw new RangeError(`x must hold input indices in [0, ${n}), got x=${x}`);
      }
      const hi = words[2 * i];
      const y = this.table[(x << this.bits) | (hi >>> cellShift)];
      out[i] = y === this.sentinel ? this.search(x, hi, words[2 * i + 1]) : y;
    }
    return out;
  }

  /** Output indices for input indices `xs`, one fresh 64-bit word per record. */
  sampleIndices(xs: ArrayLike<number>, out: Uint16Array = new Uint16Array(xs.length)): Uint16Array {
    const n = this.lengths.length;
    const cellShift = 32 - this.bits;
    const bits = this.bits;
    const table = this.table;
    const sentinel = this.sentinel;
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i];
      if (!(x >= 0 && x < n && Number.isInteger(x))) {
        throw new RangeError(`x must hold input indices in [0, ${n}), got x=${x}`);
      }
      if (this.position >= this.buffer.length) this.refill(2 * (xs.length - i));
      const hi = this.buffer[this.position];
      const lo = this.buffer[this.position + 1];
      this.position += 2;
      const y = table[(x << bits) | (hi >>> cellShift)];
      out[i] = y === sentinel ? this.search(x, hi, lo) : y;
    }
    return out;
  }

  private refill(wanted: number): void {
    if (this.buffer.length < Math.min(Math.max(wanted, 256), 1 << 16)) {
      this.buffer = new Uint32Array(Math.min(Math.max(wanted, 256), 1 << 16));
    }
    this.fill(this.buffer);
    this.position = 0;
  }

  /** The matrix the records are exactly drawn from: Q / 2^64 (each entry correctly rounded). */
  sampledMatrix(): number[][] {
    return this.quantised.map((row) => row.map((q) => Number(q) * 2 ** -64));
  }

  get size(): [number, number] {
    return [this.lengths.length, this.outputs];
  }
}

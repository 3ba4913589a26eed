/**
 * The dense sampler's quantisation of one row ({@link quantise}: integers q with Σq = 2^64, floors of the exact
 * 2^64 v_j / Σv plus one to the largest remainders, ties to the lower index) in float arithmetic whose error is
 * bounded, with the exact BigInt rule wherever the floats cannot decide: mechdesign's `quantise_rows`
 * (mechdesign/deploy/sampling/_quantise_rows.py) on one row, so the **same integers** as `quantise` on every row.
 *
 * 1. S = Σv in double-double by a pairwise tree of TwoSums (Knuth; every v ≥ 0): relative error below
 *    (log₂ n + 2)·2^-106.
 * 2. y_j = 2^64 v_j / S in double-double (the quotient, its residual by Dekker's TwoProduct): |error| < 2^-36.
 * 3. ⌊y_j⌋ and the remainder f_j ∈ [0, 1); D = 2^64 − Σ⌊y_j⌋ (exact, in 32-bit halves).
 * 4. The D largest f_j: the D-th largest by a sort, the entries within GUARD = 2^-28 of it taken by index.
 *
 * A row where a remainder lies within GUARD of 0 or 1, or entries of different weights lie within GUARD of the
 * threshold (their order could flip), or D is not in [0, n), goes to the exact rule. Entries of equal weight have
 * equal remainders exactly (and equal computed ones), so a tie among them is the exact rule's, broken by index.
 *
 * References: T. J. Dekker, Numer. Math. 18, 1971 (TwoProduct by splitting); D. E. Knuth, TAOCP vol. 2, §4.2.2.
 */
import { quantise } from "./sampler.js";

const GUARD = 2 ** -28;
const SPLIT = 134217729; // 2^27 + 1: Dekker's splitting constant
const TWO32 = 2 ** 32;
const TWO64 = 2 ** 64;

/** q_j = hi[j]·2^32 + lo[j] (q_j < 2^64: a row of at least two positive entries none of which takes it all). */
export interface Quanta { hi: Uint32Array; lo: Uint32Array }

/** Σv as a double-double [hi, lo] by a pairwise tree of TwoSums (v ≥ 0). */
function rowSum(v: Float64Array): [number, number] {
  let width = 1;
  while (width < v.length) width *= 2;
  const high = new Float64Array(width);
  high.set(v);
  const low = new Float64Array(width);
  while (width > 1) {
    width /= 2;
    for (let i = 0; i < width; i++) {
      const a = high[i];
      const b = high[i + width];
      const s = a + b;
      const bb = s - a;
      high[i] = s;
      low[i] = low[i] + low[i + width] + ((a - (s - bb)) + (b - bb));
    }
  }
  const s = high[0] + low[0];
  const bb = s - high[0];
  return [s, (high[0] - (s - bb)) + (low[0] - bb)];
}

/**
 * `quantise(v)` for a row of n ≥ 2 positive finite weights, as 32-bit halves; null where some q_j is 2^64 (one
 * entry takes the whole row), which the halves cannot hold (the caller then keeps `quantise`'s BigInts).
 */
export function quantisePositive(row: ArrayLike<number>): Quanta | null {
  const n = row.length;
  let top = 0;
  for (let j = 0; j < n; j++) top = Math.max(top, row[j]);
  // A power-of-two scale (exact) putting the largest entry in (1/2, 1]: the splitting cannot overflow.
  const scale = 2 ** -Math.ceil(Math.log2(top));
  const v = new Float64Array(n);
  let tiny = false;
  for (let j = 0; j < n; j++) {
    v[j] = row[j] * scale;
    if (!(v[j] >= 2 ** -900 && v[j] <= 2)) tiny = true; // near subnormals (or not finite): the bounds do not hold
  }
  const [hi, lo] = rowSum(v);
  const c = SPLIT * hi;
  const hh = c - (c - hi);
  const hl = hi - hh;
  const floorHigh = new Float64Array(n); // ⌊y_j⌋ = floorHigh·2^32 + floorLow (floorLow with the carry, −1 … 2^32)
  const floorLow = new Float64Array(n);
  const fraction = new Float64Array(n);
  let uncertain = tiny || !(top > 0) || !Number.isFinite(top);
  let sumHigh = 0;
  let sumLow = 0;
  for (let j = 0; j < n && !uncertain; j++) {
    const q1 = v[j] / hi;
    const p = q1 * hi;
    const d = SPLIT * q1;
    const qh = d - (d - q1);
    const ql = q1 - qh;
    const pe = ((qh * hh - p) + qh * hl + ql * hh) + ql * hl;
    const q2 = (((v[j] - p) - pe) - q1 * lo) / hi;
    const yHigh = q1 * TWO64;
    const floors = Math.floor(yHigh);
    const total = (yHigh - floors) + q2 * TWO64;
    const carry = Math.floor(total);
    fraction[j] = total - carry;
    if (!(fraction[j] >= GUARD && fraction[j] <= 1 - GUARD) || floors >= TWO64) uncertain = true;
    floorHigh[j] = Math.floor(floors / TWO32); // floors is an integer: floors / 2^32 is exact
    floorLow[j] = floors - floorHigh[j] * TWO32 + carry;
    sumHigh += floorHigh[j];
    sumLow += floorLow[j];
  }
  let deficit = -1;
  if (!uncertain) {
    const carried = Math.floor(sumLow / TWO32);
    deficit = (TWO32 - (sumHigh + carried)) * TWO32 - (sumLow - carried * TWO32); // 2^64 − Σ⌊y⌋, exact when small
    if (!(deficit >= 0 && deficit < n)) uncertain = true;
  }
  const add = new Uint8Array(n);
  if (!uncertain && deficit > 0) {
    const sorted = Float64Array.from(fraction).sort();
    const threshold = sorted[n - deficit]; // the deficit-th largest remainder
    let clear = 0;
    let nearLow = Infinity;
    let nearHigh = -Infinity;
    for (let j = 0; j < n; j++) {
      if (fraction[j] > threshold + GUARD) {
        add[j] = 1;
        clear++;
      } else if (fraction[j] >= threshold - GUARD) {
        nearLow = Math.min(nearLow, v[j]);
        nearHigh = Math.max(nearHigh, v[j]);
        add[j] = 2;
      }
    }
    if (nearLow !== nearHigh) uncertain = true; // different weights near the threshold: their order could flip
    let extra = deficit - clear;
    for (let j = 0; j < n; j++) {
      if (add[j] === 2) add[j] = extra-- > 0 ? 1 : 0;
    }
  }
  if (uncertain) {
    const exact = quantise(row);
    if (exact.some((x) => x >= 2n ** 64n)) return null;
    return { hi: Uint32Array.from(exact, (x) => Number(x >> 32n)), lo: Uint32Array.from(exact, (x) => Number(x & 0xffffffffn)) };
  }
  const out = { hi: new Uint32Array(n), lo: new Uint32Array(n) };
  for (let j = 0; j < n; j++) {
    let h = floorHigh[j];
    let l = floorLow[j] + add[j];
    if (l < 0) {
      l += TWO32;
      h -= 1;
    } else if (l >= TWO32) {
      l -= TWO32;
      h += 1;
    }
    out.hi[j] = h;
    out.lo[j] = l;
  }
  return out;
}

/**
 * Float sums in the exact order mechdesign (NumPy, Python) uses, so that a renormalised row has the same bits in
 * every language — the sampler quantises those bits — and a row-sum check decides the same way.
 */

/** Correctly rounded sum (Python's `math.fsum`: Shewchuk's exact partials, then round half even). */
export function fsum(values: ArrayLike<number>): number {
  const partials: number[] = [];
  for (let k = 0; k < values.length; k++) {
    let x = values[k];
    let i = 0;
    for (let j = 0; j < partials.length; j++) {
      let y = partials[j];
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) partials[i++] = lo;
      x = hi;
    }
    partials.length = i;
    partials.push(x);
  }
  let n = partials.length;
  if (n === 0) return 0;
  let hi = partials[--n];
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo !== 0) break;
  }
  if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
    const y = lo * 2;
    const x = hi + y;
    if (y === x - hi) hi = x;
  }
  return hi;
}

/** NumPy's pairwise summation of a contiguous float64 run (`np.sum` along the last axis). */
export function pairwiseSum(a: ArrayLike<number>, start = 0, n = a.length - start): number {
  if (n < 8) {
    let res = -0;
    for (let i = 0; i < n; i++) res += a[start + i];
    return res;
  }
  if (n <= 128) {
    const r = [0, 1, 2, 3, 4, 5, 6, 7].map((j) => a[start + j]);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[start + i + j];
    let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += a[start + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, start, n2) + pairwiseSum(a, start + n2, n - n2);
}

// One float64 seen as two uint32 halves, to step to a neighbouring float without allocating.
const FLOAT = new Float64Array(1);
const HALVES = new Uint32Array(FLOAT.buffer);
const LOW = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/** The float next to a finite non-zero x, one unit of its bit pattern toward 0 (`down`) or away from it. */
function step(x: number, down: boolean): number {
  FLOAT[0] = x;
  if (down) {
    if (HALVES[LOW] === 0) HALVES[HIGH] -= 1;
    HALVES[LOW] -= 1; // wraps to 0xffffffff after a borrow
  } else {
    HALVES[LOW] += 1;
    if (HALVES[LOW] === 0) HALVES[HIGH] += 1;
  }
  return FLOAT[0];
}

/** The largest float below a positive finite x (toward 0), as `np.nextafter(x, 0)`. */
export function nextDown(x: number): number {
  return x === 0 ? 0 : step(x, true);
}

/** The smallest float above x (toward +∞), as `np.nextafter(x, inf)`; ±∞ and NaN stay. */
export function nextAbove(x: number): number {
  if (!Number.isFinite(x)) return x;
  if (x === 0) return 2 ** -1074;
  return step(x, x < 0);
}

/** Unit roundoff of float64, 2^-53. */
export const UNIT = 2 ** -53;

/** The largest float below x (toward −∞), as `np.nextafter(x, -inf)`; ±∞ and NaN stay. */
export function nextBelow(x: number): number {
  if (!Number.isFinite(x)) return x;
  if (x === 0) return -(2 ** -1074);
  return step(x, x > 0);
}

/**
 * The largest of `values`, -Infinity for none: Math.max's value, NaN included, in a loop. `Math.max(...values)`
 * passes every entry as an argument on the stack and throws "Maximum call stack size exceeded" beyond ~10⁵ of
 * them (a structured file of 10⁶ types could not be verified; issue 61).
 */
export function maxOf(values: Iterable<number>): number {
  let out = -Infinity;
  for (const x of values) out = Math.max(out, x);
  return out;
}

/** The smallest of `values`, Infinity for none: Math.min's value, NaN included, in a loop (see {@link maxOf}). */
export function minOf(values: Iterable<number>): number {
  let out = Infinity;
  for (const x of values) out = Math.min(out, x);
  return out;
}

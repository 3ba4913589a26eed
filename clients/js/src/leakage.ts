/**
 * The guarantee recomputed from the matrix, solver-free, as mechdesign computes it (mechdesign/core/leakage.py,
 * mechdesign/core/uncertainty.py), in the same order of float operations where that order is cheap to keep.
 *
 * - LDP: ε_LDP(W) = max_y log(max_x W[x,y] / min_x W[x,y]) over used outputs (∞ if a used column has a zero).
 * - PML over the ℓ1 ball B_β(P̂) ([E] Def. 5, eq. 22–23): C = max_y log(max_x W[x,y] / g(W[:,y])) with
 *   g(c) = min_{Q∈B} Q·c attained greedily (move β/2 of mass from the largest entries of c onto a smallest one),
 *   rounded down by a bound of its float error, so C is rounded up: toward privacy.
 * - β*(δ, m, N) = sqrt((2/m)(log(2^N − 2) − log δ)) of [E] eq. 37, the radius a stated δ requires.
 */
import { UNIT, nextBelow, nextDown, pairwiseSum } from "./numeric.js";

/** ε_LDP of a row-stochastic matrix (rows = inputs). */
export function ldpEpsilon(matrix: number[][]): number {
  let worst = 0;
  for (let y = 0; y < matrix[0].length; y++) {
    let high = 0;
    let low = Infinity;
    for (const row of matrix) {
      high = Math.max(high, row[y]);
      low = Math.min(low, row[y]);
    }
    if (high === 0) continue; // never output
    if (low === 0) return Infinity;
    worst = Math.max(worst, Math.log(high / low));
  }
  return worst;
}

/** Knuth's TwoSum: s = fl(a + b) and the exact error e with a + b = s + e. */
function twoSum(a: number, b: number): [number, number] {
  const total = a + b;
  const virtual = total - a;
  return [total, (a - (total - virtual)) + (b - virtual)];
}

/** How many coordinates the greedy may empty: K0 = min{K : sum of the K smallest P̂ ≥ β/2} (at least 1). */
export function greedyDepth(prior: number[], budget: number): number {
  const sorted = [...prior].sort((a, b) => a - b);
  let total = 0;
  let below = 0;
  for (const p of sorted) {
    total += p;
    if (total < budget) below++;
    else break;
  }
  return Math.min(Math.max(below + 1, 1), prior.length);
}

/**
 * The greedy's masses on the `depth` coordinates `order[0..depth)` it empties in turn (mechdesign's
 * `_remaining_mass`): `remains[j]` = clip(Σ_{k≤j} P̂_order[k] − β/2, 0, P̂_order[j]) with the sum in double-double,
 * `moved[j]` = P̂_order[j] − `remains[j]` (≥ 0), `partial[j]` = 1 where the unclipped value is within 8u² of [0, P̂_j]
 * (there it may be off by O(u²)).
 */
function remainingMass(prior: number[], order: ArrayLike<number>, depth: number, budget: number,
                       remains: Float64Array, moved: Float64Array, partial: Uint8Array): void {
  const near = 8 * UNIT * UNIT;
  let high = 0;
  let carry = 0;
  for (let j = 0; j < depth; j++) {
    const p = prior[order[j]];
    let error;
    [high, error] = twoSum(high, p);
    carry = carry + error;
    const [head, tail] = twoSum(high, -budget);
    const value = head + (tail + carry);
    const remain = Math.min(Math.max(value, 0), p);
    remains[j] = remain;
    moved[j] = Math.max(p - remain, 0);
    partial[j] = value > -near && value < p + near ? 1 : 0;
  }
}

/**
 * g(c) = min_{Q ∈ B_β(P̂)} Q·c for each column of `columns` (N rows), rounded down (mechdesign's
 * `L1Ball.min_linear`): greedy on the column scaled by its maximum, the mass left on the partly emptied
 * coordinate in double-double, then a relative (N + 10)u margin and one ulp toward 0.
 */
export function minLinear(columns: number[][], prior: number[], radius: number): number[] {
  const n = prior.length;
  const budget = radius / 2;
  const k = greedyDepth(prior, budget);
  const several = columns[0].length > 1; // NumPy sums a block's weighted columns in order, a single one pairwise
  const out: number[] = [];
  for (let y = 0; y < columns[0].length; y++) {
    let scale = 0;
    for (let i = 0; i < n; i++) scale = Math.max(scale, columns[i][y]);
    if (!(scale > 0)) scale = 1;
    const unit = new Float64Array(n);
    let low = Infinity;
    for (let i = 0; i < n; i++) {
      unit[i] = columns[i][y] / scale;
      low = Math.min(low, unit[i]);
    }
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => unit[b] - unit[a] || a - b);
    const top = order.slice(0, k);
    const weighted = new Float64Array(n);
    for (let i = 0; i < n; i++) weighted[i] = unit[i] * prior[i];
    const remains = new Float64Array(k);
    const moved = new Float64Array(k);
    const partial = new Uint8Array(k);
    remainingMass(prior, top, top.length, budget, remains, moved, partial);
    const partialTop = new Float64Array(k);
    let partialCount = 0;
    top.forEach((i, j) => {
      weighted[i] = remains[j] * unit[i];
      partialTop[j] = partial[j] ? unit[i] : 0;
      partialCount += partial[j];
    });
    let sum = 0;
    if (several) for (let i = 0; i < n; i++) sum += weighted[i];
    else sum = 0 + pairwiseSum(weighted);
    let g = sum + (0 + pairwiseSum(moved)) * low;
    const residue = 4 * UNIT * UNIT * ((0 + pairwiseSum(partialTop)) + partialCount * low);
    g = Math.max(g * (1.0 - (n + 10) * UNIT) - residue, low);
    out.push(nextDown(g * scale * (1.0 - 2 * UNIT)));
  }
  return out;
}

/**
 * log g(c) for columns given by their logarithms `a` (N entries, finite or −∞, at least one finite), rounded
 * down (mechdesign's `L1Ball.log_min_linear`): the greedy minimiser Q* of {@link minLinear} (it depends only on
 * the order of the entries) with log Σ_i Q*_i c_i as a log-sum-exp, for columns spanning more than the float
 * range (the likelihoods of T releases); then the same relative (N + 10)u and u² margins, 4u(1 + |log g|) and
 * one ulp toward −∞. Returns the function for one ball, its work arrays allocated once (the T-release account
 * calls it once per count vector).
 */
export function logMinLinear(prior: number[], radius: number): (a: Float64Array) => number {
  const n = prior.length;
  const budget = radius / 2;
  const depth = greedyDepth(prior, budget);
  const shifted = new Float64Array(n);
  const weights = new Float64Array(n);
  const terms = new Float64Array(n);
  const order = new Int32Array(n);
  const moved = new Float64Array(depth);
  const unitTop = new Float64Array(depth);
  const remains = new Float64Array(depth);
  const doubtful = new Uint8Array(depth);
  const logPrior = Float64Array.from(prior, Math.log); // log Q*_i where the greedy leaves P̂_i in place
  // The greedy's masses depend on the order only, so they are computed per column as mechdesign does (double-double).
  return (a: Float64Array): number => {
    let top = -Infinity;
    for (let i = 0; i < n; i++) top = Math.max(top, a[i]);
    let low = 0;
    for (let i = 0; i < n; i++) {
      shifted[i] = a[i] - top; // ≤ 0, the largest exactly 0
      if (shifted[i] < shifted[low]) low = i; // the first smallest, as np.argmin
    }
    // The `depth` largest entries in decreasing order (ties: the lower index first), by insertion.
    let count = 0;
    for (let i = 0; i < n; i++) {
      const value = shifted[i];
      if (count === depth && !(value > shifted[order[depth - 1]])) continue;
      let j = count < depth ? count++ : depth - 1;
      while (j > 0 && value > shifted[order[j - 1]]) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
    weights.set(prior);
    remainingMass(prior, order, depth, budget, remains, moved, doubtful);
    let partialCount = 0;
    for (let j = 0; j < depth; j++) {
      partialCount += doubtful[j];
      doubtful[j] = doubtful[j] && remains[j] > 0 ? 1 : 0;
    }
    for (let j = 0; j < depth; j++) weights[order[j]] = remains[j];
    weights[low] += 0 + pairwiseSum(moved);
    let peak = -Infinity;
    for (let i = 0; i < n; i++) terms[i] = logPrior[i] + shifted[i]; // log(Q*_i c_i): −∞ for zeros
    for (let j = 0; j < depth; j++) terms[order[j]] = Math.log(weights[order[j]]) + shifted[order[j]];
    terms[low] = Math.log(weights[low]) + shifted[low];
    for (let i = 0; i < n; i++) peak = Math.max(peak, terms[i]);
    const empty = !Number.isFinite(peak); // Q* has no mass where c > 0: g = 0 exactly
    if (empty) peak = 0;
    for (let i = 0; i < n; i++) terms[i] = Math.exp(terms[i] - peak);
    for (let j = 0; j < depth; j++) {
      unitTop[j] = Math.exp(Math.min(doubtful[j] ? shifted[order[j]] - peak : -Infinity, 700.0));
    }
    const unitLow = Math.exp(shifted[low] - peak);
    const residue = 4 * UNIT * UNIT * ((0 + pairwiseSum(unitTop)) + partialCount * unitLow);
    const g = (0 + pairwiseSum(terms)) * (1.0 - (n + 10) * UNIT) - residue;
    const out = empty ? -Infinity : Math.log(Math.max(g, 0)) + peak + top;
    return nextBelow(out - 4 * UNIT * (1.0 + Math.abs(out)));
  };
}

const BLOCK_BYTES = 2 ** 25; // NumPy's column blocks in mechdesign (only the order of a sum depends on them)

/** The leakage capacity C(W, B_β(P̂)) in nats (∞ if some prior in the ball gives an emitted output probability 0). */
export function capacity(matrix: number[][], prior: number[], radius: number): number {
  const n = matrix.length;
  const m = matrix[0].length;
  const step = Math.max(1, Math.floor(BLOCK_BYTES / (8 * Math.max(n, 1))));
  let worst = 0;
  for (let start = 0; start < m; start += step) {
    const used: number[] = [];
    const tops: number[] = [];
    for (let y = start; y < Math.min(start + step, m); y++) {
      let top = 0;
      for (let x = 0; x < n; x++) top = Math.max(top, matrix[x][y]);
      if (top > 0) {
        used.push(y);
        tops.push(top);
      }
    }
    if (used.length === 0) continue;
    const columns = matrix.map((row) => used.map((y) => row[y]));
    const g = minLinear(columns, prior, radius);
    g.forEach((value, j) => {
      worst = Math.max(worst, value > 0 ? Math.max(Math.log(tops[j] / value), 0) : Infinity);
    });
  }
  return worst;
}

/** log(2^N − 2), the log-number of non-trivial subsets ([E] Theorem 2). */
export function logSubsets(size: number): number {
  return size * Math.log(2) + Math.log1p(-(2.0 ** (1 - size)));
}

/** β*(δ, m, N) of [E] eq. 37 (may exceed 2: callers cap it). */
export function radiusForDelta(delta: number, samples: number, size: number): number {
  return Math.sqrt((2.0 / samples) * (logSubsets(size) - Math.log(delta)));
}

/** The LDP level stated beside a PML guarantee (mechdesign's `ldp_level`): rounded up, or infinite with a witness. */
export interface LdpLevel { epsilon: number | "inf"; impossible: { input: string; output: string } | null }

/**
 * What the matrix guarantees for every prior: {@link ldpEpsilon} rounded up over 2 terms, or "inf" with the first
 * output (then its first input) that some input produces and that input never does, as mechdesign reports it.
 */
export function ldpLevel(matrix: number[][], inputs: readonly string[], outputs: readonly string[]): LdpLevel {
  for (let y = 0; y < outputs.length; y++) {
    const column = matrix.map((row) => row[y]);
    const x = column.indexOf(0);
    if (x >= 0 && column.some((p) => p > 0)) return { epsilon: "inf", impossible: { input: inputs[x], output: outputs[y] } };
  }
  const level = ldpEpsilon(matrix);
  return { epsilon: level + (Math.abs(level) + 1.0) * 16 * 2 ** -52, impossible: null };
}

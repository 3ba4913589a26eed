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
import { UNIT, fsum, nextAbove, nextBelow, nextDown, pairwiseSum } from "./numeric.js";

/** 2^-1074, the smallest subnormal: the absolute error of an underflowing product is at most half of it. */
const TINY = 2 ** -1074;

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

/**
 * How many coordinates the greedy may empty: K0 = min{K : sum of the K smallest P̂ ≥ β/2} (at least 1), the float sum
 * compared with (β/2)(1 + 2(N + 1)u) so that its rounding never makes K0 one too small (mechdesign's `_greedy`).
 */
export function greedyDepth(prior: number[], budget: number): number {
  const sorted = [...prior].sort((a, b) => a - b);
  const threshold = budget * (1.0 + 2 * (prior.length + 1) * UNIT);
  let total = 0;
  let below = 0;
  for (const p of sorted) {
    total += p;
    if (total < threshold) below++;
    else break;
  }
  return Math.min(Math.max(below + 1, 1), prior.length);
}

/**
 * The greedy's masses on the `depth` coordinates `order[0..depth)` it empties in turn (mechdesign's
 * `_remaining_mass`): `remains[j]` = clip(Σ_{k≤j} P̂_order[k] − β/2, 0, P̂_order[j]) with the sum in double-double,
 * `partial[j]` = 1 where the unclipped value is within the error bound (depth + 2)²u² of [0, P̂_j] (there it may be
 * off by that much). Returns the mass moved, β/2 exactly when the `depth` coordinates carry it, else their total.
 */
function remainingMass(prior: number[], order: ArrayLike<number>, depth: number, budget: number,
                       remains: Float64Array, partial: Uint8Array): number {
  const slack = (depth + 2) ** 2 * UNIT * UNIT;
  let high = 0;
  let carry = 0;
  let value = 0;
  for (let j = 0; j < depth; j++) {
    const p = prior[order[j]];
    let error;
    [high, error] = twoSum(high, p);
    carry = carry + error;
    const [head, tail] = twoSum(high, -budget);
    value = head + (tail + carry);
    remains[j] = Math.min(Math.max(value, 0), p);
    // The first mass is fl(p − budget), one correctly rounded subtraction: never doubtful (as mechdesign's).
    partial[j] = j > 0 && value > -slack && value < p + slack ? 1 : 0;
  }
  if (depth === 0) return 0;
  return Math.max(value >= 0 ? budget : value + budget, 0);
}

/**
 * g(c) = min_{Q ∈ B_β(P̂)} Q·c for each column of `columns` (N rows), rounded down (mechdesign's
 * `L1Ball.min_linear`): greedy on the column scaled by its maximum, the masses in double-double, then a relative
 * (N + 10)u margin, the masses' (K + 2)²u² and the underflows' (2N + 4)·2^-1074, the floor (Σ P̂) min c rounded down,
 * and one ulp toward 0 after the last product.
 */
export function minLinear(columns: number[][], prior: number[], radius: number): number[] {
  const n = prior.length;
  const budget = radius / 2;
  const k = greedyDepth(prior, budget);
  const massBelow = nextDown(fsum(prior));
  const slack = (k + 2) ** 2 * UNIT * UNIT;
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
    const partial = new Uint8Array(k);
    const moved = remainingMass(prior, top, top.length, budget, remains, partial);
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
    let g = sum + moved * low;
    const residue = slack * ((0 + pairwiseSum(partialTop)) + (partialCount + 1) * low);
    g = g * (1.0 - (n + 10) * UNIT) - residue - (2 * n + 4) * TINY;
    const floor = nextDown(nextDown(low) * massBelow);
    out.push(nextDown(Math.max(g, floor) * scale));
  }
  return out;
}

/**
 * log g(c) for columns given by their logarithms `a` (N entries, finite or −∞, at least one finite), rounded
 * down (mechdesign's `L1Ball.log_min_linear`): the greedy minimiser Q* of {@link minLinear} on the order of `a`
 * itself, with log Σ_i Q*_i c_i as a log-sum-exp, for columns spanning more than the float range (the likelihoods
 * of T releases); then the relative (N + 10)u margin, each term's error u(|shift| + 2|log Q*_i| + |log term| +
 * |term − peak| + 6) weighted by the term (twice), the masses' (K + 2)²u², and 4u(1 + |log g| + |log g + peak| +
 * |result|) and one ulp toward −∞. Returns the function for one ball, its work arrays allocated once (the T-release
 * account calls it once per count vector).
 */
export function logMinLinear(prior: number[], radius: number): (a: Float64Array) => number {
  const n = prior.length;
  const budget = radius / 2;
  const depth = greedyDepth(prior, budget);
  const slack = (depth + 2) ** 2 * UNIT * UNIT;
  const shifted = new Float64Array(n);
  const weights = new Float64Array(n);
  const logWeights = new Float64Array(n);
  const terms = new Float64Array(n);
  const errors = new Float64Array(n);
  const order = new Int32Array(n);
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
      if (a[i] < a[low]) low = i; // the first smallest, as np.argmin
    }
    // The `depth` largest entries of a in decreasing order (ties: the lower index first), by insertion.
    let count = 0;
    for (let i = 0; i < n; i++) {
      const value = a[i];
      if (count === depth && !(value > a[order[depth - 1]])) continue;
      let j = count < depth ? count++ : depth - 1;
      while (j > 0 && value > a[order[j - 1]]) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
    weights.set(prior);
    logWeights.set(logPrior);
    const moved = remainingMass(prior, order, depth, budget, remains, doubtful);
    let partialCount = 0;
    for (let j = 0; j < depth; j++) {
      partialCount += doubtful[j];
      doubtful[j] = doubtful[j] && remains[j] > 0 ? 1 : 0;
    }
    for (let j = 0; j < depth; j++) weights[order[j]] = remains[j];
    weights[low] += moved;
    for (let j = 0; j < depth; j++) logWeights[order[j]] = Math.log(weights[order[j]]);
    logWeights[low] = Math.log(weights[low]);
    let peak = -Infinity;
    for (let i = 0; i < n; i++) {
      terms[i] = logWeights[i] + shifted[i]; // log(Q*_i c_i) − max a: −∞ for zeros
      peak = Math.max(peak, terms[i]);
    }
    // The masses' residue as two log terms of its own (mechdesign's module docstring): the doubtful masses' count
    // on the largest entry one weighs, the moved mass's on min c. The peak is taken over them too: nothing is
    // exponentiated above 0, whatever the span of the column.
    let highest = -Infinity;
    let doubtfulCount = 0;
    for (let j = 0; j < depth; j++) {
      if (doubtful[j]) highest = Math.max(highest, shifted[order[j]]);
      doubtfulCount += doubtful[j];
    }
    const residueShifted = [highest, shifted[low]];
    const residueLogWeights = [Math.log(slack * doubtfulCount), Math.log(slack * (partialCount + 1))];
    const residueLogTerms = [residueLogWeights[0] + residueShifted[0], residueLogWeights[1] + residueShifted[1]];
    peak = Math.max(peak, residueLogTerms[0], residueLogTerms[1]);
    const empty = !Number.isFinite(peak); // Q* has no mass where c > 0, and none is doubtful: g = 0 exactly
    if (empty) peak = 0;
    for (let i = 0; i < n; i++) {
      const logTerm = terms[i];
      const fromPeak = logTerm - peak;
      terms[i] = Math.exp(fromPeak);
      const relative = UNIT * (Math.abs(shifted[i]) + 2 * Math.abs(logWeights[i]) + Math.abs(logTerm) +
                               Math.abs(fromPeak) + 6.0);
      errors[i] = terms[i] > 0 ? terms[i] * relative : 0;
    }
    // The residue's own roundings (a term's, and its sum's) are added: it is a margin, never rounded down.
    let residueTerms = 0;
    let residueErrors = 0;
    for (let r = 0; r < 2; r++) {
      const fromPeak = residueLogTerms[r] - peak;
      const term = Math.exp(fromPeak);
      residueTerms += term;
      if (term > 0) {
        residueErrors += term * (UNIT * (Math.abs(residueShifted[r]) + 2 * Math.abs(residueLogWeights[r]) +
                                         Math.abs(residueLogTerms[r]) + Math.abs(fromPeak) + 6.0));
      }
    }
    const residue = residueTerms * (1.0 + 2 * UNIT) + residueErrors;
    const g = (0 + pairwiseSum(terms)) * (1.0 - (n + 10) * UNIT) - 2 * (0 + pairwiseSum(errors)) - residue;
    const logG = Math.log(Math.max(g, 0));
    const partialSum = logG + peak;
    const out = empty ? -Infinity : partialSum + top;
    const margin = 4 * UNIT * (1.0 + Math.abs(logG) + Math.abs(partialSum) + Math.abs(out));
    return nextBelow(out - margin);
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
      // The ratio rounded up, its logarithm raised past libm's error (1 + 8u, then one ulp): toward privacy.
      worst = Math.max(worst, value > 0 ? nextAbove(Math.log(nextAbove(tops[j] / value)) * (1.0 + 8 * UNIT)) : Infinity);
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

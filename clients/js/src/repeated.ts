/**
 * The leakage of T fresh releases of the same value over the ball, exactly, as mechdesign's `release_leakage`
 * computes it by enumeration (mechdesign/core/releases.py):
 *
 *   L_T = max_n log( max_x c(n)_x / min_{Q∈B} Q·c(n) ),   c(n)_x = ∏_y W[x, y]^{n_y},
 *
 * over the count vectors n of T releases (the number of sequences with counts n is the same for every x and
 * cancels). Proportional columns of W are merged first (only the sum of their counts matters), a(n) = L n with
 * L = log W is kept in logs throughout (T releases multiply T probabilities, beyond the float range), and
 * min_{Q∈B} Q·c is {@link logMinLinear}, rounded down. The float error of a(n), at most (M + 2)u Σ_y n_y |L_xy|
 * per entry, is added twice, the maximum rounded up over N + 2 terms, and the trivial bounds T·ε_LDP(W) and
 * −log(min_x P̂_x − β/2) taken when smaller, as mechdesign does.
 *
 * A client enumerates up to a budget of count vectors ({@link MAX_COUNT_VECTORS}); beyond it mechdesign switches
 * to a certified convex relaxation (cvxpy and a Lagrangian certificate), which a client does not port: it refuses
 * such a statement instead (the safe verdict), and the caller says so.
 */
import { capacity, ldpEpsilon, logMinLinear } from "./leakage.js";
import { UNIT, minOf } from "./numeric.js";

/** The most count vectors a client enumerates: C(T + M − 1, M − 1) ≤ 10⁶ (about a second for N = 64). */
export const MAX_COUNT_VECTORS = 1_000_000;
const EPS = 2 * UNIT;

/** mechdesign's `round_up(value, terms)`: value + (|value| + 1)(4 terms + 8)·2^-52; ∞ stays. */
export function roundUpTerms(value: number, terms: number): number {
  if (!Number.isFinite(value)) return value;
  return value + (Math.abs(value) + 1.0) * (4 * terms + 8) * EPS;
}

function roundDown(value: number): number {
  return Number.isFinite(value) ? value - (Math.abs(value) + 1.0) * 16 * EPS : value;
}

/** C(T + M − 1, M − 1), or `Infinity` once it exceeds `limit` (T may be 10⁹). */
export function countVectors(releases: number, outputs: number, limit = Number.MAX_SAFE_INTEGER): number {
  let count = 1n;
  for (let i = 1; i < outputs; i++) {
    count = (count * BigInt(releases + i)) / BigInt(i); // C(T + i, i), exact at every step
    if (count > BigInt(limit)) return Infinity;
  }
  return Number(count);
}

/**
 * log W on the distinct directions of W's used columns (mechdesign's `_merged_logs`): columns equal after
 * scaling by their maximum are merged, in the order of their first occurrence; all-zero columns are dropped.
 */
export function mergedLogs(matrix: number[][]): number[][] {
  const n = matrix.length;
  const seen = new Set<string>();
  const kept: number[] = [];
  for (let y = 0; y < matrix[0].length; y++) {
    let top = 0;
    for (let x = 0; x < n; x++) top = Math.max(top, matrix[x][y]);
    if (!(top > 0)) continue;
    const key = matrix.map((row) => row[y] / top).join(",");
    if (!seen.has(key)) {
      seen.add(key);
      kept.push(y);
    }
  }
  return matrix.map((row) => kept.map((y) => Math.log(row[y])));
}

export interface ReleaseAccount {
  /** An upper bound on L_T (nats), rounded toward privacy: L_T rounded up (the enumeration is exact). */
  epsilon: number;
  /** The number of count vectors after merging proportional outputs. */
  vectors: number;
}

/**
 * The leakage of `releases` fresh releases of the same value over B_radius(prior), or null when it needs more
 * than `maxVectors` count vectors (mechdesign would bound it by its certified relaxation).
 *
 * @param matrix the renormalised matrix W (rows = inputs)
 * @param prior P̂, divided by its exactly rounded sum
 */
export function releaseLeakage(matrix: number[][], prior: number[], radius: number, releases: number,
  maxVectors = MAX_COUNT_VECTORS): ReleaseAccount | null {
  const logs = mergedLogs(matrix);
  const n = logs.length;
  const m = logs[0].length;
  const vectors = countVectors(releases, m, maxVectors);
  if (matrix.every((row) => row.every((w, y) => w === matrix[0][y]))) return { epsilon: 0, vectors };
  if (releases === 1) return { epsilon: capacity(matrix, prior, radius), vectors };
  if (vectors > maxVectors) return null;
  const [up, value] = enumerate(logs, prior, radius, releases);
  let upper = roundUpTerms(up, n + 2);
  for (const bound of trivialBounds(matrix, prior, radius, releases)) upper = Math.min(upper, bound);
  return { epsilon: Math.max(upper, roundDown(value)), vectors };
}

/** T·ε_LDP(W) and −log max(min_x P̂_x − β/2, 0), rounded up (mechdesign's `_trivial`). */
function trivialBounds(matrix: number[][], prior: number[], radius: number, releases: number): number[] {
  const out: number[] = [];
  const ldp = ldpEpsilon(matrix);
  if (Number.isFinite(ldp)) out.push(roundUpTerms(releases * ldp, 2));
  const floor = minOf(prior) - radius / 2;
  if (floor > 0) out.push(roundUpTerms(-Math.log(floor * (1 - 4 * UNIT)), 4));
  return out;
}

/**
 * [max over count vectors of log(max c / g(c)) plus twice the float-error bound of a(n), the same without it]
 * (mechdesign's `_exact`, unrounded). Count vectors are visited depth first, a(n) = Σ_y n_y L[:, y] kept per depth, so each costs
 * O(N) additions and one {@link logMinLinear}.
 */
function enumerate(logs: number[][], prior: number[], radius: number, releases: number): [number, number] {
  const n = logs.length;
  const m = logs[0].length;
  const finite = logs.map((row) => row.map((l) => (Number.isFinite(l) ? l : 0)));
  const logG = logMinLinear(prior, radius);
  const margin = 2 * (m + 2) * UNIT;
  // Per depth: a (finite part), the count of zero entries met (the likelihood is 0), Σ n_y |L_xy|.
  const sums = Array.from({ length: m + 1 }, () => new Float64Array(n));
  const zeros = Array.from({ length: m + 1 }, () => new Int32Array(n));
  const sizes = Array.from({ length: m + 1 }, () => new Float64Array(n));
  const column = new Float64Array(n);
  let best = -Infinity;
  let bestValue = -Infinity;
  const leaf = () => {
    const a = sums[m];
    let top = -Infinity;
    let scale = 0;
    for (let x = 0; x < n; x++) {
      column[x] = zeros[m][x] > 0 ? -Infinity : a[x];
      top = Math.max(top, column[x]);
      scale = Math.max(scale, sizes[m][x]);
    }
    if (top === -Infinity) return; // no input can produce these counts: never released
    const value = top - logG(column);
    best = Math.max(best, value + margin * scale);
    bestValue = Math.max(bestValue, value);
  };
  const visit = (level: number, remaining: number) => {
    const first = level === m - 1 ? remaining : 0;
    for (let count = remaining; count >= first; count--) {
      for (let x = 0; x < n; x++) {
        const l = logs[x][level];
        sums[level + 1][x] = sums[level][x] + count * finite[x][level];
        zeros[level + 1][x] = zeros[level][x] + (count > 0 && l === -Infinity ? 1 : 0);
        sizes[level + 1][x] = sizes[level][x] + count * Math.abs(finite[x][level]);
      }
      if (level === m - 1) leaf();
      else visit(level + 1, remaining - count);
    }
  };
  visit(0, releases);
  return [best, bestValue];
}

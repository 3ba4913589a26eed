/**
 * A file's release policy (mechdesign/mechfile/policy.py): how often a person's value may be privatized, and
 * what that costs. The `release` block is hashed and signed with the rest; this module checks it with the same
 * field and rule as mechdesign's `read_release` and recomputes what it states (`release_achieved`):
 *
 * - absent or `{"policy": "single"}`: every guarantee is per release;
 * - `"repeated"`: ε_T ≥ the exact leakage of T fresh releases of the same value over the ball ({@link
 *   releaseLeakage}; T·ε_LDP for an "ldp" file); refused where the count vectors exceed what a client enumerates;
 * - `"memoized"`: the same (user, value) always gets the same output (memo.ts); nothing to recompute;
 * - `"two-layer"`: the matrix W₁ is the permanent layer, memoized, and each report is drawn afresh from
 *   W₂[y₁, ·]; the per-report ε is the guarantee's notion evaluated on W₁W₂, and the optional `link_epsilon` bounds
 *   the linkability level: the LDP level of W₂ on the outputs W₁ produces ({@link linkLevel}, mechdesign's
 *   `core/linkability.py`).
 */
import { type Json, fail, labels, number, numbers, object, pyList, stochastic } from "./checks.js";
import { MechanismFileError } from "./errors.js";
import { fsum } from "./numeric.js";
import { MAX_COUNT_VECTORS, countVectors, mergedLogs, releaseLeakage, roundUpTerms } from "./repeated.js";

/** The memoization scheme this client implements (memo.ts). */
export const MEMO_SCHEME = "mechdesign-memo-1";
/** The largest T a repeated policy may state, as mechdesign's. */
export const MAX_RELEASES = 1_000_000_000;
const POLICIES = ["single", "repeated", "memoized", "two-layer"] as const;
const KEYS: Record<string, readonly string[]> = {
  single: ["policy"], repeated: ["policy", "releases", "epsilon"], memoized: ["policy", "randomness"],
  "two-layer": ["policy", "randomness", "reports", "epsilon"],
};
/**
 * Keys a policy may add: the identifier of the key a memoized or two-layer file is bound to (memo.ts's keyId), and a
 * two-layer file's linkability level.
 */
const OPTIONAL: Record<string, readonly string[]> = { memoized: ["key"], "two-layer": ["key", "link_epsilon"] };

export type PolicyName = (typeof POLICIES)[number];

/** A release policy as read (checked, not yet recomputed). */
export interface ReleasePolicy {
  policy: PolicyName;
  /** T of a "repeated" policy. */
  releases: number | null;
  /** The stated ε_T ("repeated") or per-report ε ("two-layer"). */
  epsilon: number | null;
  /** The memoization scheme ("memoized", "two-layer"). */
  randomness: string | null;
  /** W₂ of a "two-layer" file, rows renormalised as mechdesign holds them (inputs = the file's outputs). */
  reports: { outputs: string[]; matrix: number[][] } | null;
  /** The identifier of the memo key the file is bound to (32 hex digits, {@link keyId}), or null: any key. */
  key: string | null;
  /** The stated linkability level of a "two-layer" file, or null when it states none. */
  linkEpsilon: number | null;
}

/** What a release policy states, recomputed: `achieved` ≤ `epsilon` or the statement does not hold. */
export interface ReleaseCheck {
  policy: PolicyName;
  releases: number | null;
  epsilon: number;
  /** The recomputed leakage, an upper bound rounded toward privacy (T releases, or one report). */
  achieved: number;
  /** Always true in this client: it enumerates every count vector or refuses. */
  exact: boolean;
  /** The statement holds: the recomputed leakage, and a two-layer file's stated link level, within what is stated. */
  holds: boolean;
  /** Two-layer files: the linkability level recomputed (Infinity when unbounded), stated (or null) and whether it holds. */
  link: { epsilon: number | null; achieved: number; holds: boolean | null } | null;
}

/** One release per run: a file without a `release` block (shared and frozen). */
export const SINGLE: ReleasePolicy = Object.freeze({
  policy: "single", releases: null, epsilon: null, randomness: null, reports: null, key: null, linkEpsilon: null,
}) as ReleasePolicy;

/** Whether draws must be memoized per (user, value): "memoized" and "two-layer". */
export const isMemoized = (policy: ReleasePolicy): boolean =>
  policy.policy === "memoized" || policy.policy === "two-layer";

/**
 * The `release` block, checked as mechdesign's `read_release` checks it.
 *
 * @param block the parsed value (undefined when absent)
 * @param outputs the file's outputs (the inputs of a two-layer file's reports)
 * @param literal how `release.releases` is written (`3` or `3.0`: JSON numbers with a fraction are no integer)
 * @param renormalise rows divided by their NumPy sums (mechfile.ts)
 */
export function readRelease(block: unknown, outputs: string[], literal: string | undefined,
  renormalise: (matrix: number[][]) => number[][]): ReleasePolicy {
  if (block === undefined || block === null) return SINGLE;
  object("release", block);
  const b = block as Json;
  const policy = b.policy as PolicyName;
  if (!(POLICIES as readonly unknown[]).includes(policy)) throw fail("release.policy", `be one of ${pyList(POLICIES)}`, policy);
  const optional: readonly string[] = OPTIONAL[policy] ?? [];
  if (Object.keys(b).filter((k) => !optional.includes(k)).sort().join() !== [...KEYS[policy]].sort().join()) {
    const extra = optional.length ? ` and optionally ${pyList(optional)}` : "";
    throw fail("release", `have exactly the keys ${pyList(KEYS[policy])}${extra}`, Object.keys(b).sort(),
      `policy '${policy}'`);
  }
  const key = b.key ?? null;
  if (key !== null && !(typeof key === "string" && /^[0-9a-f]{32}$/.test(key))) {
    throw fail("release.key", "be 32 lowercase hex digits (the key's identifier, mechdesign memo-key)", key);
  }
  if (policy === "single") return SINGLE;
  if (policy === "repeated") {
    const releases = b.releases;
    if (typeof releases !== "number" || !Number.isInteger(releases) || /[.eE]/.test(literal ?? "") || releases < 1 ||
        releases > MAX_RELEASES) {
      throw fail("release.releases", `be an integer in [1, ${MAX_RELEASES}]`, releases);
    }
    const epsilon = number("release.epsilon", b.epsilon, 0, Infinity);
    return { ...SINGLE, policy, releases, epsilon };
  }
  if (b.randomness !== MEMO_SCHEME) {
    throw fail("release.randomness", `be '${MEMO_SCHEME}'`, b.randomness, "the memoization this client implements");
  }
  if (policy === "memoized") return { ...SINGLE, policy, randomness: MEMO_SCHEME, key: key as string | null };
  const reports = b.reports;
  object("release.reports", reports);
  const r = reports as Json;
  if (Object.keys(r).sort().join() !== "matrix,outputs") {
    throw fail("release.reports", "have exactly the keys ['outputs', 'matrix']", Object.keys(r).sort());
  }
  const reported = labels("release.reports.outputs", r.outputs);
  const rows = r.matrix;
  if (!Array.isArray(rows) || rows.length !== outputs.length) {
    throw fail("release.reports.matrix", `be an array of ${outputs.length} rows`, rows,
      "one per output of the file: the permanent layer's");
  }
  const matrix = rows.map((row, i) => numbers(`release.reports.matrix[${i}]`, row, reported.length));
  matrix.forEach((row, i) => stochastic(`release.reports.matrix[${i}]`, row));
  const epsilon = number("release.epsilon", b.epsilon, 0, Infinity);
  const link = b.link_epsilon === undefined ? null : number("release.link_epsilon", b.link_epsilon, 0, Infinity);
  return { ...SINGLE, policy, epsilon, randomness: MEMO_SCHEME, key: key as string | null,
    reports: { outputs: reported, matrix: renormalise(matrix) }, linkEpsilon: link };
}

/**
 * The linkability level of a two-layer file, rounded up as mechdesign's `link_level`: max over reports r and
 * permanent outputs b, b′ that W₁ produces of ln W₂[b, r] / W₂[b′, r] (Infinity when a report is never drawn from
 * one of them), plus the margin of two float operations, (|λ| + 1)·16·2⁻⁵².
 *
 * @param permanent W₁ (rows renormalised)
 * @param reports W₂ (rows renormalised; one row per output of W₁)
 */
export function linkLevel(permanent: number[][], reports: number[][]): number {
  const used = reports.filter((_, b) => permanent.some((row) => row[b] > 0));
  let worst = 0;
  for (let r = 0; r < (used[0]?.length ?? 0); r++) {
    let high = 0;
    let low = Infinity;
    for (const row of used) {
      high = Math.max(high, row[r]);
      low = Math.min(low, row[r]);
    }
    if (high === 0) continue; // never drawn
    if (low === 0) return Infinity;
    worst = Math.max(worst, Math.log(high / low));
  }
  return worst + (Math.abs(worst) + 1.0) * 16 * 2 ** -52;
}

/** W₁W₂, each entry summed in order over W₁'s outputs (the reader renormalises the rows again). */
export function compose(first: number[][], second: number[][]): number[][] {
  return first.map((row) => second[0].map((_, z) => {
    let total = 0;
    for (let y = 0; y < row.length; y++) total += row[y] * second[y][z];
    return total;
  }));
}

export interface Evaluation {
  /** An upper bound on the guarantee's ε of a matrix (mechfile.ts's achievedEpsilon). */
  achieved: (matrix: number[][]) => number;
  renormalise: (matrix: number[][]) => number[][];
}

/**
 * What a policy states, recomputed from the matrices (mechdesign's `release_achieved`), or null if it states
 * nothing ("single", "memoized").
 *
 * @param matrix the file's renormalised matrix W (W₁ of a two-layer file)
 * @param guarantee the file's guarantee (notion, prior, radius)
 * @throws MechanismFileError (field `release.releases`) when T releases have more count vectors than this client
 *   enumerates ({@link MAX_COUNT_VECTORS}): refusing is the safe verdict
 */
export function checkRelease(policy: ReleasePolicy, matrix: number[][],
  guarantee: { notion: string; prior: number[] | null; radius: number | null }, evaluation: Evaluation):
  ReleaseCheck | null {
  let achieved: number;
  if (policy.policy === "repeated") {
    const releases = policy.releases as number;
    if (guarantee.notion === "ldp") achieved = roundUpTerms(releases * evaluation.achieved(matrix), 1);
    else {
      const prior = guarantee.prior as number[];
      const total = fsum(prior);
      const account = releaseLeakage(matrix, prior.map((p) => p / total), guarantee.radius as number, releases);
      if (account === null) {
        const merged = mergedLogs(matrix)[0].length;
        const count = countVectors(releases, merged);
        throw new MechanismFileError("release.releases", "be at most what this client verifies exactly",
          `${releases} releases over ${merged} distinct outputs have ${Number.isFinite(count)
            ? count.toLocaleString("en-US") : "more than 2^53"} count vectors, above the ` +
          `${MAX_COUNT_VECTORS.toLocaleString("en-US")} it enumerates; verify the file with mechdesign (Python), ` +
          "which bounds them by a certified relaxation", releases);
      }
      achieved = account.epsilon;
    }
  } else if (policy.policy === "two-layer") {
    const reports = policy.reports as { matrix: number[][] };
    achieved = evaluation.achieved(evaluation.renormalise(compose(matrix, reports.matrix)));
  } else {
    return null;
  }
  const epsilon = policy.epsilon as number;
  let link: ReleaseCheck["link"] = null;
  if (policy.policy === "two-layer") {
    const level = linkLevel(matrix, (policy.reports as { matrix: number[][] }).matrix);
    link = { epsilon: policy.linkEpsilon, achieved: level,
      holds: policy.linkEpsilon === null ? null : level <= policy.linkEpsilon };
  }
  return { policy: policy.policy, releases: policy.releases, epsilon, achieved, exact: true,
    holds: achieved <= epsilon && link?.holds !== false, link };
}

/**
 * The fresh (not memoized) path of the structured sampler: the same law as the reference rule of
 * symmetricSampler.ts (docs/client_spec.rst, "Structured files"), drawn from 32-bit words without BigInt.
 *
 * Per record of input x (cell k, position i), from a stream of uniform 32-bit words u (crypto.getRandomValues or the
 * sampler's fill, called on 16,384 words at a time), read in order:
 * 1. **(t, level)**: w₀ = hi·2^32 + lo from two words; the first pair j with C_k[j] > w₀ — the rule's own step, on
 *    the same quantised cumulative sums, found from a guide table on the top bits of hi (Chen & Asau 1974) and a
 *    short forward scan instead of a binary search: the same j for every w₀.
 * 2. **Each digit group** of t (radix R < 2^32; groups of radix 1 take no word): the next word u is accepted when
 *    u < L_R = 2^32 − (2^32 mod R), and the value is u mod R; a rejected u (probability (2^32 mod R)/2^32, about
 *    8 % a group at N = 10⁴) is dropped and the next word read. An accepted u is uniform on [0, L_R), a multiple of
 *    R, so u mod R is uniform on [0, R); distinct groups read distinct words, so the values are independent.
 * 3. **The rank** (radix n_ℓ ≤ 256, or none when n_ℓ ≤ 1) likewise, then the rule's step 3: the digit w of the
 *    cell's prime is rewritten so that the placement puts x at z = rank (high) or a_tk + rank (low).
 *
 * The spec allows a sampler of fresh words any rule with the rule's law: here (t, ℓ) has probability
 * Q_k[(t, ℓ)]/2^64 exactly as in the rule, and given it every group value and the rank are uniform and independent,
 * as the rule's accepted 64-bit words make them; step 3 is the rule's. So P((t, seed) | x) =
 * Q_k[(t, ℓ)]/2^64 · s_k/(n_ℓ S_t) for every seed that places x at ℓ, the sampled mechanism whose guarantee the
 * sampler checked. (Tests: exact counts against that law, and the text and binary forms against the reference
 * text() and binaryReport() of the same report.)
 *
 * Output: V = Σ_g v_g P_g (P_g = Π_{h<g} R_h) in 16-bit limbs by symmetricLimbs.ts, three records at a time; then hex
 * digits or bytes. Every array is typed and reused; the tables are built once, with the sampler. Each step is one
 * loop over the batch with its work a record inside it, not a call a record: V8 compiled a function called a record
 * alone once it was hot and again inlined in its caller, and the first call paid for both (6 such functions, about
 * 10 of the 25 ms the first call spent compiling at N = 10⁴).
 */
import { SeedLimbs, writeBinary, writeTexts } from "./symmetricLimbs.js";

/** What the kernel reads of a sampler (symmetricSampler.ts passes its own fields). */
export interface FreshSource {
  readonly cellOf: Int32Array;
  readonly position: Int32Array;
  readonly highCounts: readonly Int32Array[];
  readonly lowCounts: readonly Int32Array[];
  readonly pairs: readonly Int32Array[];
  readonly boundHigh: readonly Uint32Array[];
  readonly boundLow: readonly Uint32Array[];
  readonly groupRadix: readonly (readonly number[])[];
  readonly radices: readonly (readonly number[])[];
  readonly groupOf: readonly (readonly number[])[];
  readonly placeOf: readonly (readonly number[])[];
  readonly digitStart: readonly (readonly number[])[];
  readonly needs: readonly (readonly boolean[])[];
  readonly spaces: readonly { p: number; m: number; index: Map<number, number>; digits: number[][]; powers: number[] }[];
  readonly primeOfCell: Int32Array;
  readonly hexWidth: readonly number[];
  readonly width: number;
}

const TWO32 = 2 ** 32;
const POOL = 16384; // words a fill
/** Records drawn a batch: each step runs over the batch, so the cache misses of different records overlap. */
export const BATCH = 256;

export class FreshKernel {
  private readonly src: FreshSource;
  private readonly fill: (buffer: Uint32Array) => void;
  /**
   * The word stream: the unread words are words[at … end), in the order the fill wrote them. A batch starts with
   * at least `reserve` of them (whole fills of POOL words appended as before, the unread ones moved to the front),
   * so the draws read words without a refill in their loops (one only after a run of rejections).
   */
  private readonly words: Uint32Array;
  private at = 0;
  private end = 0;
  private readonly reserve: number;
  /**
   * Per type, its signature: the radices of its seed digits, which fix its groups, digits and place values. Types
   * of one signature share the tables below (a few signatures for thousands of types: they stay in cache).
   */
  private readonly signatureOf: Int32Array;
  private readonly groupCount: Int32Array;
  /**
   * Per signature s from tableAt[s]: (R_g, L_g) for each of the W groups, then (group, place, radix) of each seed
   * digit: what steps 2 and 3 read of a type, in one run of memory.
   */
  private readonly table: Float64Array;
  private readonly tableAt: Int32Array;
  /**
   * Every cell's entries in one array (cell k's from entryAt[k] to entryAt[k + 1]), 5 int32s an entry j: C_k[j] as
   * two uint32 halves (hi, lo; the last entry's unused), the pair 2t + ℓ, n_ℓ | offset << 9, and the digit start of
   * the cell's prime in t's digits (−1: not rewritten). Step 1 scans the bounds (read through `bounds`, the same
   * buffer as uint32) and reads the entry it stops at from the same cache lines.
   */
  private readonly entries: Int32Array;
  private readonly bounds: Uint32Array;
  private readonly entryAt: Int32Array;
  /** Per cell, its index j in C_p (−1 for a cell of no prime). */
  private readonly cellIndex: Int32Array;
  private readonly rankLimit = new Float64Array(257);
  /** Every cell's guide in one array (cell k's from guideAt[k]): bucket → the offset in `entries` to scan from. */
  private readonly guide: Int32Array;
  private readonly guideAt: Int32Array;
  private readonly guideShift: Int32Array;
  private readonly seeds: SeedLimbs;
  /** The batch's draws: record b's type (and its signature), and its groups at values[b·W …] (zeros past G_t). */
  readonly types = new Int32Array(BATCH);
  private readonly signatures = new Int32Array(BATCH);
  readonly values: Float64Array;
  private readonly cells = new Int32Array(BATCH);
  private readonly picks = new Int32Array(BATCH);
  private readonly his = new Uint32Array(BATCH);
  private readonly los = new Uint32Array(BATCH);
  private readonly ranks = new Int32Array(BATCH);
  /** The sum of step 1's touched entries (kept so that the loads are not dropped). */
  private touched = 0;

  constructor(src: FreshSource, fill: (buffer: Uint32Array) => void) {
    this.src = src;
    this.fill = fill;
    const width = src.width;
    // twice the words of a batch without rejections (two for w₀, one a group, one for the rank)
    this.reserve = 2 * BATCH * (width + 3);
    this.words = new Uint32Array(this.reserve + POOL);
    const bySignature = new Map<string, number>();
    const firstType: number[] = []; // a type of each signature
    this.signatureOf = Int32Array.from(src.radices, (radices, t) => {
      const key = radices.join(",");
      let s = bySignature.get(key);
      if (s === undefined) {
        bySignature.set(key, s = firstType.length);
        firstType.push(t);
      }
      return s;
    });
    this.groupCount = new Int32Array(firstType.length);
    this.tableAt = new Int32Array(firstType.length);
    let size = 0;
    firstType.forEach((t, s) => {
      this.tableAt[s] = size;
      size += 2 * width + 3 * src.radices[t].length;
    });
    this.table = new Float64Array(size);
    firstType.forEach((t, s) => {
      const at = this.tableAt[s];
      let count = 0;
      src.groupRadix[t].forEach((r, g) => {
        this.table[at + 2 * g] = r;
        this.table[at + 2 * g + 1] = TWO32 - (TWO32 % r);
        if (r > 1) count = g + 1;
      });
      this.groupCount[s] = count;
      src.radices[t].forEach((r, i) => this.table.set([src.groupOf[t][i], src.placeOf[t][i], r],
        at + 2 * width + 3 * i));
    });
    for (let r = 1; r <= 256; r++) this.rankLimit[r] = TWO32 - (TWO32 % r);
    this.cellIndex = Int32Array.from(src.primeOfCell, (q, k) => (q < 0 ? -1 : src.spaces[q].index.get(k) as number));
    const cells = src.pairs.length;
    this.entryAt = new Int32Array(cells + 1);
    for (let k = 0; k < cells; k++) this.entryAt[k + 1] = this.entryAt[k] + 5 * src.pairs[k].length;
    this.entries = new Int32Array(this.entryAt[cells]);
    this.bounds = new Uint32Array(this.entries.buffer);
    src.pairs.forEach((pairs, k) => {
      const q = src.primeOfCell[k];
      const out = this.entries.subarray(this.entryAt[k], this.entryAt[k + 1]);
      pairs.forEach((pair, j) => {
        const t = pair >> 1;
        const a = src.highCounts[t][k];
        const n = (pair & 1) === 0 ? a : src.lowCounts[t][k];
        const last = j === pairs.length - 1;
        out[5 * j] = last ? -1 : src.boundHigh[k][j];
        out[5 * j + 1] = last ? -1 : src.boundLow[k][j];
        out[5 * j + 2] = pair;
        out[5 * j + 3] = n | (((pair & 1) === 0 ? 0 : a) << 9);
        out[5 * j + 4] = q >= 0 && src.needs[t][q] ? src.digitStart[t][q] : -1;
      });
    });
    this.guideShift = new Int32Array(cells);
    const guides = src.boundHigh.map((high, k) => this.buildGuide(k, high, src.boundLow[k]));
    this.guideAt = new Int32Array(cells + 1);
    for (let k = 0; k < cells; k++) this.guideAt[k + 1] = this.guideAt[k] + guides[k].length;
    this.guide = new Int32Array(this.guideAt[cells]);
    guides.forEach((guide, k) => this.guide.set(guide, this.guideAt[k]));
    this.values = new Float64Array((BATCH + 1) * width); // a zero row after the batch's (SeedLimbs.compute)
    this.seeds = new SeedLimbs(this.values, width, firstType.map((t) => src.groupRadix[t]),
      firstType.map((t) => src.hexWidth[t]), BATCH);
  }

  /** Cell k's guide: bucket b (top bits of hi) → the offset in `entries` of the first j with C_k[j] > b·2^(64 − bits). */
  private buildGuide(k: number, high: Uint32Array, low: Uint32Array): Int32Array {
    const entries = high.length + 1;
    // about one bucket for every 4 to 8 entries: a scan reads a few entries more, on one or two cache lines, and
    // the guides (a quarter of one a bucket per entry) stay in cache (measured: the draw ~10 % faster at N = 10⁴)
    let bits = 1;
    while (bits < 16 && 2 ** (bits + 3) <= entries) bits++;
    this.guideShift[k] = 32 - bits;
    const guide = new Int32Array(2 ** bits);
    let j = 0;
    for (let b = 0; b < guide.length; b++) {
      const top = b * 2 ** (32 - bits); // the bucket's least w₀: hi = top, lo = 0
      while (j < high.length && !(high[j] > top || (high[j] === top && low[j] > 0))) j++;
      guide[b] = this.entryAt[k] + 5 * j;
    }
    return guide;
  }

  /**
   * Makes at least `need` (≤ reserve) unread words available: the unread words move to the front, and whole fills
   * of POOL words are appended after them, so the stream is read in the order the fill wrote it, the fill called
   * on POOL words at a time as before. A fill that throws appends nothing.
   */
  private topUp(need: number): void {
    if (this.end - this.at >= need) return;
    this.words.copyWithin(0, this.at, this.end);
    this.end -= this.at;
    this.at = 0;
    while (this.end < need) {
      this.fill(this.words.subarray(this.end, this.end + POOL));
      this.end += POOL;
    }
  }

  /**
   * Draws the reports of records xs[start … stop) (at most {@link BATCH}) into {@link types} and {@link values}:
   * step 1 for the whole batch, then step 2 and the rank, then step 3. Each step is its own small loop (each is
   * compiled once, soon, with the feedback of all its paths).
   */
  drawBatch(xs: ArrayLike<number>, start: number, stop: number): void {
    const count = stop - start;
    this.topUp(this.reserve);
    this.pickPairs(xs, start, count);
    this.drawGroups(count);
    this.placeAll(xs, start, count);
  }

  /**
   * Step 1 in three passes, so that the records' cache misses overlap: the words and the guide's bucket, a load of
   * the entry each scan starts at, the scans.
   */
  private pickPairs(xs: ArrayLike<number>, start: number, count: number): void {
    const cellOf = this.src.cellOf;
    const words = this.words;
    const { cells, picks, his, los, entries, bounds, guide, guideAt, guideShift, entryAt } = this;
    let at = this.at;
    for (let b = 0; b < count; b++) { // w₀ = hi·2^32 + lo (2·count ≤ reserve words), and the bucket of hi
      const k = cellOf[xs[start + b]];
      const hi = words[at];
      his[b] = hi;
      los[b] = words[at + 1];
      at += 2;
      cells[b] = k;
      picks[b] = guide[guideAt[k] + (hi >>> guideShift[k])];
    }
    this.at = at;
    let touched = 0;
    for (let b = 0; b < count; b++) touched += entries[picks[b]];
    this.touched = touched;
    for (let b = 0; b < count; b++) { // the first pair with C_k[j] > w₀ (the last entry: every w₀ left)
      const hi = his[b];
      const lo = los[b];
      const last = entryAt[cells[b] + 1] - 5;
      let j = picks[b];
      for (; j < last; j += 5) {
        const high = bounds[j];
        if (high > hi || (high === hi && bounds[j + 1] > lo)) break;
      }
      picks[b] = j;
    }
  }

  /** Step 2 (each group of the drawn type) and the rank, record by record; the types into {@link types}. */
  private drawGroups(count: number): void {
    const width = this.src.width;
    const { values, table, words, picks, entries, ranks, signatureOf, groupCount, tableAt, rankLimit } = this;
    let at = this.at;
    let end = this.end;
    for (let b = 0; b < count; b++) {
      const j = picks[b];
      const t = entries[j + 2] >> 1;
      const s = signatureOf[t];
      const groups = groupCount[s];
      const first = b * width;
      for (let g = 0, i = tableAt[s]; g < groups; g++, i += 2) {
        const r = table[i];
        const limit = table[i + 1];
        let u: number;
        do { // a rejected word ((2^32 mod R) of 2^32) is dropped
          if (at === end) { // only after many rejections: the reserve is spent
            this.at = at;
            this.topUp(this.reserve);
            at = this.at;
            end = this.end;
          }
          u = words[at++];
        } while (u >= limit);
        values[first + g] = u - Math.floor(u / r) * r; // ⌊u / r⌋ is exact for u, r < 2^32
      }
      for (let g = groups; g < width; g++) values[first + g] = 0;
      const n = entries[j + 3] & 511;
      let rank = 0;
      if (n > 1) {
        const limit = rankLimit[n];
        let u: number;
        do {
          if (at === end) {
            this.at = at;
            this.topUp(this.reserve);
            at = this.at;
            end = this.end;
          }
          u = words[at++];
        } while (u >= limit);
        rank = u - Math.floor(u / n) * n;
      }
      ranks[b] = rank;
      this.types[b] = t;
      this.signatures[b] = s;
    }
    this.at = at;
  }

  /**
   * Step 3 for the records whose cell's prime is among their type's digits: rewrite the digit w of the cell's prime
   * so that the placement puts x at z = rank (high) or a_tk + rank (low). Digit i of the drawn seed is
   * ⌊G_group / place⌋ mod radix, from its type's digits; the prime's digits are e, m hashed digits, then w.
   */
  private placeAll(xs: ArrayLike<number>, start: number, count: number): void {
    const width = this.src.width;
    const { position, spaces, primeOfCell } = this.src;
    const { picks, entries, ranks, cells, tableAt, signatures, table, values, cellIndex } = this;
    for (let b = 0; b < count; b++) {
      const j = picks[b];
      const digitStart = entries[j + 4];
      if (digitStart < 0) continue;
      const k = cells[b];
      const sp = spaces[primeOfCell[k]];
      const cellDigits = sp.digits[cellIndex[k]];
      const first = b * width;
      const m = sp.m;
      let e = 0;
      let hashed = 0;
      let w = 0;
      let at = tableAt[signatures[b]] + 2 * width + 3 * digitStart;
      for (let i = 0; i <= m + 1; i++, at += 3) {
        const above = Math.floor(values[first + table[at]] / table[at + 1]);
        const radix = table[at + 2];
        const digit = above - Math.floor(above / radix) * radix;
        if (i === 0) e = digit;
        else if (i <= m) hashed += digit * cellDigits[i - 1];
        else w = digit;
      }
      at -= 3; // w's
      const p = sp.p;
      const z = (entries[j + 3] >> 9) + ranks[b];
      let wNew = (z - sp.powers[e] * position[xs[start + b]] - hashed) % p; // |·| < 2^31: an int32 remainder
      wNew += wNew < 0 ? p : 0;
      values[first + table[at]] += (wNew - w) * table[at + 1];
    }
  }

  /**
   * Writes `t<t>.<hex>` of the batch's first `count` records into `out` (`view`: a DataView of its bytes) from
   * `at`, one after the other; record b's end at ends[from + b]. Returns the end.
   */
  writeTexts(count: number, out: Uint8Array, view: DataView, at: number, ends: Int32Array, from: number): number {
    this.seeds.compute(count, this.signatures);
    return writeTexts(count, this.types, this.src.hexWidth, this.seeds.limbs, this.seeds.size, out, view, at, ends,
      from);
  }

  /**
   * Writes the binary forms of the batch's first `count` records into outs[from + b] (t in `typeBytes` bytes, then
   * V in the rest, big-endian).
   */
  writeBinaries(count: number, typeBytes: number, outs: Uint8Array[], from: number): void {
    this.seeds.compute(count, this.signatures);
    const { limbs, size } = this.seeds;
    for (let b = 0; b < count; b++) writeBinary(this.types[b], limbs, b * size, typeBytes, outs[from + b]);
  }
}

/**
 * The fresh (not memoized) path of the structured sampler: the same law as the reference rule of
 * symmetricSampler.ts (docs/client_spec.rst, "Structured files"), drawn from 32-bit words without BigInt.
 *
 * Per record of input x (cell k, position i), from a pool of uniform 32-bit words u (crypto.getRandomValues or the
 * sampler's fill), refilled in place:
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
 * Output: V = Σ_g v_g P_g (P_g = Π_{h<g} R_h) in 16-bit limbs, summed column by column without carries (each term
 * below 2^48, at most 31 of them: below 2^53, exact in doubles) and carried once; then hex digits or bytes.
 * Every array is typed and reused.
 */

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
const MAX_SUMMED = 31; // terms below 2^48 a limb column may add before 2^53
/** Records drawn a batch: each step runs over the batch, so the cache misses of different records overlap. */
export const BATCH = 256;

/** The limbs of V's place values for one radix signature, limb-major: P[l·W + g] is limb l of P_g. */
interface Powers { places: Float64Array; first: Int32Array; limbs: number }

export class FreshKernel {
  private readonly src: FreshSource;
  private readonly fill: (buffer: Uint32Array) => void;
  private readonly pool = new Uint32Array(POOL);
  private at = POOL;
  private readonly groupCount: Int32Array;
  /**
   * Per type t from typeAt[t]: (R_g, L_g) for each of the W groups, then (group, place, radix) of each seed digit:
   * what steps 2 and 3 read of t, in one run of memory.
   */
  private readonly typeTable: Float64Array;
  private readonly typeAt: Float64Array;
  /**
   * Per cell, per entry j (5 int32s): C_k[j] as two uint32 halves (hi, lo; the last entry's unused), the pair
   * 2t + ℓ, n_ℓ | offset << 9, and the digit start of the cell's prime in t's digits (−1: not rewritten). Step 1
   * scans the bounds and reads the entry it stops at from the same cache lines.
   */
  private readonly entries: Int32Array[];
  /** Per cell, its index j in C_p (−1 for a cell of no prime). */
  private readonly cellIndex: Int32Array;
  private readonly rankLimit = new Float64Array(257);
  private readonly guide: Int32Array[];
  private readonly guideShift: Int32Array;
  private readonly powersOf: Powers[];
  /** The batch's draws: record b's type, and its groups at values[b·W …] (zeros past G_t). */
  readonly types = new Int32Array(BATCH);
  readonly values: Float64Array;
  private readonly cells = new Int32Array(BATCH);
  private readonly picks = new Int32Array(BATCH);
  private readonly acc: Float64Array;

  constructor(src: FreshSource, fill: (buffer: Uint32Array) => void) {
    this.src = src;
    this.fill = fill;
    const types = src.groupRadix.length;
    const width = src.width;
    this.groupCount = new Int32Array(types);
    this.typeAt = new Float64Array(types);
    let size = 0;
    for (let t = 0; t < types; t++) {
      this.typeAt[t] = size;
      size += 2 * width + 3 * src.radices[t].length;
    }
    this.typeTable = new Float64Array(size);
    for (let t = 0; t < types; t++) {
      const at = this.typeAt[t];
      let count = 0;
      src.groupRadix[t].forEach((r, g) => {
        this.typeTable[at + 2 * g] = r;
        this.typeTable[at + 2 * g + 1] = TWO32 - (TWO32 % r);
        if (r > 1) count = g + 1;
      });
      this.groupCount[t] = count;
      src.radices[t].forEach((r, i) => this.typeTable.set([src.groupOf[t][i], src.placeOf[t][i], r],
        at + 2 * width + 3 * i));
    }
    for (let r = 1; r <= 256; r++) this.rankLimit[r] = TWO32 - (TWO32 % r);
    this.cellIndex = Int32Array.from(src.primeOfCell, (q, k) => (q < 0 ? -1 : src.spaces[q].index.get(k) as number));
    this.entries = src.pairs.map((pairs, k) => {
      const q = src.primeOfCell[k];
      const out = new Int32Array(5 * pairs.length);
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
      return out;
    });
    this.guideShift = new Int32Array(src.pairs.length);
    this.guide = src.boundHigh.map((high, k) => this.buildGuide(k, high, src.boundLow[k]));
    const bySignature = new Map<string, Powers>();
    this.powersOf = src.groupRadix.map((radices, t) => {
      const key = radices.join(",");
      let powers = bySignature.get(key);
      if (powers === undefined) {
        powers = placeValues(radices, width, Math.ceil(src.hexWidth[t] / 4));
        bySignature.set(key, powers);
      }
      return powers;
    });
    this.values = new Float64Array(BATCH * width);
    this.acc = new Float64Array(Math.max(1, ...this.powersOf.map((p) => p.limbs)));
  }

  /** Cell k's guide: bucket b (top bits of hi) → the first j with C_k[j] > b·2^(64 − bits). */
  private buildGuide(k: number, high: Uint32Array, low: Uint32Array): Int32Array {
    const entries = high.length + 1;
    let bits = 1;
    while (bits < 16 && 2 ** (bits + 1) <= entries) bits++;
    this.guideShift[k] = 32 - bits;
    const guide = new Int32Array(2 ** bits);
    let j = 0;
    for (let b = 0; b < guide.length; b++) {
      const top = b * 2 ** (32 - bits); // the bucket's least w₀: hi = top, lo = 0
      while (j < high.length && !(high[j] > top || (high[j] === top && low[j] > 0))) j++;
      guide[b] = j;
    }
    return guide;
  }

  private word(): number {
    if (this.at === POOL) {
      this.fill(this.pool);
      this.at = 0;
    }
    return this.pool[this.at++];
  }

  /**
   * Draws the reports of records xs[start … stop) (at most {@link BATCH}) into {@link types} and {@link values}:
   * step 1 for the whole batch, then steps 2 and 3 record by record.
   */
  drawBatch(xs: ArrayLike<number>, start: number, stop: number): void {
    const src = this.src;
    const count = stop - start;
    for (let b = 0; b < count; b++) { // step 1: the first pair with C_k[j] > w₀
      const k = src.cellOf[xs[start + b]];
      const hi = this.word();
      const lo = this.word();
      const entry = this.entries[k];
      const last = entry.length - 5;
      let j = 5 * this.guide[k][hi >>> this.guideShift[k]];
      for (; j < last; j += 5) { // stop at C_k[j] > w₀ (the last entry: every w₀ left)
        const high = entry[j] >>> 0;
        if (high > hi || (high === hi && entry[j + 1] >>> 0 > lo)) break;
      }
      this.cells[b] = k;
      this.picks[b] = j;
    }
    const width = src.width;
    const values = this.values;
    const table = this.typeTable;
    for (let b = 0; b < count; b++) { // steps 2 and 3
      const k = this.cells[b];
      const entry = this.entries[k];
      const j = this.picks[b];
      const t = entry[j + 2] >> 1;
      const groups = this.groupCount[t];
      const first = b * width;
      const typeAt = this.typeAt[t];
      for (let g = 0, at = typeAt; g < groups; g++, at += 2) {
        const r = table[at];
        const limit = table[at + 1];
        let u = this.word();
        while (u >= limit) u = this.word(); // rejected: (2^32 mod R) words of 2^32
        values[first + g] = u - Math.floor(u / r) * r; // ⌊u / r⌋ is exact for u, r < 2^32
      }
      for (let g = groups; g < width; g++) values[first + g] = 0;
      const n = entry[j + 3] & 511;
      let rank = 0;
      if (n > 1) {
        const limit = this.rankLimit[n];
        let u = this.word();
        while (u >= limit) u = this.word();
        rank = u - Math.floor(u / n) * n;
      }
      this.types[b] = t;
      const digitStart = entry[j + 4];
      if (digitStart >= 0) {
        this.place(xs[start + b], k, typeAt + 2 * width, digitStart, (entry[j + 3] >> 9) + rank, first);
      }
    }
  }

  /** Digit i of the drawn seed (groups at values[first …]): ⌊G_group / place⌋ mod radix, from its type's digits. */
  private digit(digits: number, i: number, first: number): number {
    const table = this.typeTable;
    const at = digits + 3 * i;
    const above = Math.floor(this.values[first + table[at]] / table[at + 1]);
    const radix = table[at + 2];
    return above - Math.floor(above / radix) * radix;
  }

  /** The rule's step 3: rewrite the digit w of the cell's prime so that the placement puts x at z. */
  private place(x: number, k: number, table: number, start: number, z: number, first: number): void {
    const src = this.src;
    const sp = src.spaces[src.primeOfCell[k]];
    const e = this.digit(table, start, first);
    const cellDigits = sp.digits[this.cellIndex[k]];
    let hashed = 0;
    for (let i = 0; i < sp.m; i++) hashed += this.digit(table, start + 1 + i, first) * cellDigits[i];
    const wAt = start + sp.m + 1;
    const p = sp.p;
    let wNew = (z - sp.powers[e] * src.position[x] - hashed) % p; // |·| < 2^31: an int32 remainder
    if (wNew < 0) wNew += p;
    const at = table + 3 * wAt;
    this.values[first + this.typeTable[at]] += (wNew - this.digit(table, wAt, first)) * this.typeTable[at + 1];
  }

  /** V of batch record b in 16-bit limbs (least significant first) in `acc`; returns the limb count. */
  private limbs(b: number): number {
    const width = this.src.width;
    if (width > MAX_SUMMED) return this.hornerLimbs(b);
    const powers = this.powersOf[this.types[b]];
    const { places, first } = powers;
    const values = this.values;
    const acc = this.acc;
    const at0 = b * width;
    let carry = 0;
    for (let l = 0; l < powers.limbs; l++) {
      // Two running sums (even and odd g): half the chain of dependent additions.
      let even = carry;
      let odd = 0;
      let g = first[l];
      let at = l * width + g;
      for (; g + 1 < width; g += 2, at += 2) {
        even += values[at0 + g] * places[at];
        odd += values[at0 + g + 1] * places[at + 1];
      }
      if (g < width) even += values[at0 + g] * places[at];
      const sum = even + odd; // < 2^53: 31 terms below 2^48 and a carry below 2^37
      carry = Math.floor(sum / 65536);
      acc[l] = sum - carry * 65536;
    }
    return powers.limbs;
  }

  /** The same limbs by Horner from the last group (any number of groups: every step below 2^49). */
  private hornerLimbs(b: number): number {
    const radices = this.src.groupRadix[this.types[b]];
    const limbs = this.powersOf[this.types[b]].limbs;
    const acc = this.acc.fill(0, 0, limbs);
    for (let g = radices.length - 1; g >= 0; g--) {
      let carry = this.values[b * this.src.width + g];
      for (let l = 0; l < limbs; l++) {
        const value = acc[l] * radices[g] + carry;
        carry = Math.floor(value / 65536);
        acc[l] = value - carry * 65536;
      }
    }
    return limbs;
  }

  /** Writes `t<t>.<hex>` of batch record b into `out` at `at`; returns the end. */
  writeText(b: number, out: Uint8Array, at: number): number {
    this.limbs(b);
    const t = this.types[b];
    out[at] = 116; // "t", then t in decimal, then "."
    let end = at + 2;
    for (let rest = t; rest >= 10; rest = Math.floor(rest / 10)) end++;
    for (let i = end - 1, rest = t; i > at; i--, rest = Math.floor(rest / 10)) out[i] = 48 + (rest % 10);
    out[end++] = 46;
    const acc = this.acc;
    const digits = this.src.hexWidth[t];
    let i = digits - 1;
    for (; (i & 3) !== 3 && i >= 0; i--) out[end++] = HEX[(acc[i >> 2] >> (4 * (i & 3))) & 15]; // the top limb
    for (let l = i >> 2; l >= 0; l--) { // whole limbs: 4 digits each, two at a time
      const limb = acc[l];
      out[end] = HEX2[2 * (limb >> 8)];
      out[end + 1] = HEX2[2 * (limb >> 8) + 1];
      out[end + 2] = HEX2[2 * (limb & 255)];
      out[end + 3] = HEX2[2 * (limb & 255) + 1];
      end += 4;
    }
    return end;
  }

  /** Writes the binary form of batch record b into `out` (t in `typeBytes` bytes, then V in the rest, big-endian). */
  writeBinary(b: number, typeBytes: number, out: Uint8Array): void {
    this.limbs(b);
    for (let i = 0, t = this.types[b]; i < typeBytes; i++, t = Math.floor(t / 256)) out[typeBytes - 1 - i] = t & 255;
    const acc = this.acc;
    for (let i = 0; i < out.length - typeBytes; i++) out[out.length - 1 - i] = (acc[i >> 1] >> (8 * (i & 1))) & 255;
  }
}

const HEX = new TextEncoder().encode("0123456789abcdef");
/** The two hex digits of each byte. */
const HEX2 = Uint8Array.from({ length: 512 }, (_, i) => HEX[i & 1 ? (i >> 1) & 15 : i >> 5]);

/** P_g = Π_{h<g} R_h in `limbs` 16-bit limbs, limb-major, with the first g whose P_g reaches each limb. */
function placeValues(radices: readonly number[], width: number, limbs: number): Powers {
  const places = new Float64Array(limbs * width);
  const first = new Int32Array(limbs).fill(width);
  let power = [1]; // P_g in 16-bit limbs
  for (let g = 0; g < width; g++) {
    power.forEach((limb, l) => {
      if (l < limbs) {
        places[l * width + g] = limb;
        if (limb !== 0 && first[l] === width) first[l] = g;
      }
    });
    const next: number[] = [];
    let carry = 0;
    for (const limb of power) {
      const value = limb * (radices[g] ?? 1) + carry; // < 2^16·2^32 + 2^32: exact
      carry = Math.floor(value / 65536);
      next.push(value - carry * 65536);
    }
    while (carry > 0) {
      next.push(carry % 65536);
      carry = Math.floor(carry / 65536);
    }
    power = next;
  }
  return { places, first, limbs }; // first[l]: every P_g with g < first[l] is 0 in limb l
}

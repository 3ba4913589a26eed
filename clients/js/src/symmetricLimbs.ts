/**
 * The seed integer of a structured report from its digit groups, and its text and binary forms (docs/client_spec.rst,
 * "Structured files" and "Binary reports"), for the fresh path of symmetricFresh.ts.
 *
 * V = Σ_g v_g P_g with P_g = Π_{h<g} R_h (v_g < R_g < 2^32), in 16-bit limbs: limb l of V is the column sum
 * Σ_g v_g · limb_l(P_g) plus the carry from limb l − 1. Each term is below 2^32 · 2^16 = 2^48; with at most 31 groups
 * a column and its carry (below 2^37) stay below 2^53, so every sum is an exact integer in doubles, in any order.
 * The columns are summed four at a time for three records at once: each place value is read once for the three
 * records, each group value once for the four columns, and the twelve running sums are independent chains of
 * additions (the loop is bound by its loads and multiplications, not by the latency of one chain; three records
 * rather than two: 1 to 4 % less time warm at N = 10⁴, fewer loads and bounds checks a multiply-add). More than 31
 * groups: Horner from the last group (every step below 2^49). Every array is typed and reused.
 */
import { maxOf } from "./numeric.js";

/** Groups a limb column may sum before 2^53 (terms below 2^48, a carry below 2^37). */
const MAX_SUMMED = 31;

/**
 * The limbs of V's place values for one signature, four limbs a block, group-major inside a block:
 * places[(c·W + g)·4 + i] is limb 4c + i of P_g; first[c] the least g with a nonzero limb in block c.
 */
interface Powers { places: Float64Array; first: Int32Array; limbs: number; blocks: number; radices: readonly number[] }

export class SeedLimbs {
  /** V of each row in {@link size} 16-bit limbs, least significant first: row r's from limbs[r·size]. */
  readonly limbs: Int32Array;
  /** Limbs a row (a multiple of 4, at least 4). */
  readonly size: number;
  private readonly powers: Powers[];

  /**
   * @param values the groups of `rows` + 1 rows of `width` (row b at values[b·width …]; the last row stays zero)
   * @param radices per signature, the radix of each of the `width` groups (1 past a type's own)
   * @param hexWidths per signature, the hex digits of |S_t| − 1
   */
  constructor(private readonly values: Float64Array, private readonly width: number,
    radices: readonly (readonly number[])[], hexWidths: readonly number[], private readonly rows: number) {
    this.powers = radices.map((r, s) => placeValues(r, width, Math.ceil(hexWidths[s] / 4)));
    this.size = Math.max(4, maxOf(this.powers.map((p) => 4 * p.blocks)));
    this.limbs = new Int32Array((rows + 1) * this.size); // row `rows`: where a lone row's zero partner goes
  }

  /**
   * V of rows 0 … count − 1 (row r of signature signatures[r]) into {@link limbs}: up to three rows of one signature
   * at a time (each place value read once for the three); a row whose neighbours have other signatures with the
   * zero row in their places (their limbs to the spare row). One loop over the rows, the columns inside it (not a
   * call a row, which V8 would compile alone and again inside its caller).
   */
  compute(count: number, signatures: Int32Array): void {
    const { width, values, limbs, size } = this;
    if (width > MAX_SUMMED) {
      for (let r = 0; r < count; r++) this.horner(r, signatures[r]);
      return;
    }
    const spare = this.rows;
    for (let r = 0; r < count;) {
      const s = signatures[r];
      const two = r + 1 < count && signatures[r + 1] === s;
      const three = two && r + 2 < count && signatures[r + 2] === s;
      const x = r * width;
      const y = (two ? r + 1 : spare) * width;
      const z = (three ? r + 2 : spare) * width;
      const outX = r * size;
      const outY = (two ? r + 1 : spare) * size;
      const outZ = (three ? r + 2 : spare) * size;
      r += three ? 3 : two ? 2 : 1;
      const { places, first, blocks } = this.powers[s];
      let carryX = 0;
      let carryY = 0;
      let carryZ = 0;
      for (let c = 0, l = 0; c < blocks; c++, l += 4) {
        let x0 = carryX, x1 = 0, x2 = 0, x3 = 0;
        let y0 = carryY, y1 = 0, y2 = 0, y3 = 0;
        let z0 = carryZ, z1 = 0, z2 = 0, z3 = 0;
        for (let g = first[c], at = 4 * (c * width + g); g < width; g++, at += 4) {
          const u = values[x + g];
          const v = values[y + g];
          const w = values[z + g];
          const p0 = places[at], p1 = places[at + 1], p2 = places[at + 2], p3 = places[at + 3];
          x0 += u * p0;
          x1 += u * p1;
          x2 += u * p2;
          x3 += u * p3;
          y0 += v * p0;
          y1 += v * p1;
          y2 += v * p2;
          y3 += v * p3;
          z0 += w * p0;
          z1 += w * p1;
          z2 += w * p2;
          z3 += w * p3;
        }
        carryX = Math.floor(x0 / 65536);
        limbs[outX + l] = x0 - carryX * 65536;
        x1 += carryX;
        carryX = Math.floor(x1 / 65536);
        limbs[outX + l + 1] = x1 - carryX * 65536;
        x2 += carryX;
        carryX = Math.floor(x2 / 65536);
        limbs[outX + l + 2] = x2 - carryX * 65536;
        x3 += carryX;
        carryX = Math.floor(x3 / 65536);
        limbs[outX + l + 3] = x3 - carryX * 65536;
        carryY = Math.floor(y0 / 65536);
        limbs[outY + l] = y0 - carryY * 65536;
        y1 += carryY;
        carryY = Math.floor(y1 / 65536);
        limbs[outY + l + 1] = y1 - carryY * 65536;
        y2 += carryY;
        carryY = Math.floor(y2 / 65536);
        limbs[outY + l + 2] = y2 - carryY * 65536;
        y3 += carryY;
        carryY = Math.floor(y3 / 65536);
        limbs[outY + l + 3] = y3 - carryY * 65536;
        carryZ = Math.floor(z0 / 65536);
        limbs[outZ + l] = z0 - carryZ * 65536;
        z1 += carryZ;
        carryZ = Math.floor(z1 / 65536);
        limbs[outZ + l + 1] = z1 - carryZ * 65536;
        z2 += carryZ;
        carryZ = Math.floor(z2 / 65536);
        limbs[outZ + l + 2] = z2 - carryZ * 65536;
        z3 += carryZ;
        carryZ = Math.floor(z3 / 65536);
        limbs[outZ + l + 3] = z3 - carryZ * 65536;
      }
    }
  }

  /** The same limbs by Horner from the last group (any number of groups: every step below 2^49). */
  private horner(x: number, s: number): void {
    const { radices, limbs } = this.powers[s];
    const acc = this.limbs.subarray(x * this.size, x * this.size + limbs);
    acc.fill(0);
    for (let g = radices.length - 1; g >= 0; g--) {
      let carry = this.values[x * this.width + g];
      for (let l = 0; l < limbs; l++) {
        const value = acc[l] * radices[g] + carry;
        carry = Math.floor(value / 65536);
        acc[l] = value - carry * 65536;
      }
    }
  }
}

const HEX = new TextEncoder().encode("0123456789abcdef");
/**
 * The four hex digits of each 16-bit limb as the bytes of one little-endian uint32, most significant digit first
 * (256 KiB): one load and one store a limb.
 */
const HEX4 = new Uint32Array(65536);
for (let v = 0; v < 65536; v++) HEX4[v] = HEX[v >> 12] | (HEX[(v >> 8) & 15] << 8) | (HEX[(v >> 4) & 15] << 16) | (HEX[v & 15] << 24);

/**
 * Writes `t<t>.<hex>` of rows 0 … count − 1 (type types[b], V in limbs[b·size …]; its last hexWidth[t] hex digits)
 * into `out` from `at`, one after the other; row b's end at ends[from + b]. Returns the end. `view` is a DataView of
 * `out`'s bytes (the kernel passes its own, made once). One loop over the rows, not a call a row.
 */
export function writeTexts(count: number, types: Int32Array, hexWidth: readonly number[], limbs: Int32Array,
  size: number, out: Uint8Array, view: DataView, at: number, ends: Int32Array, from: number): number {
  for (let b = 0; b < count; b++) {
    const t = types[b];
    const row = b * size;
    out[at] = 116; // "t", then t in decimal, then "."
    let end = at + 2;
    for (let rest = t; rest >= 10; rest = (rest / 10) | 0) end++; // t < 2^31: int32 division by 10
    for (let i = end - 1, rest = t; i > at; i--) {
      const tenth = (rest / 10) | 0;
      out[i] = 48 + rest - 10 * tenth;
      rest = tenth;
    }
    out[end++] = 46;
    let i = hexWidth[t] - 1;
    for (; (i & 3) !== 3 && i >= 0; i--) out[end++] = HEX[(limbs[row + (i >> 2)] >> (4 * (i & 3))) & 15]; // top limb
    for (let l = i >> 2; l >= 0; l--, end += 4) view.setUint32(end, HEX4[limbs[row + l]], true); // 4 digits a store
    ends[from + b] = end;
    at = end;
  }
  return at;
}

/**
 * The binary form of type t and V (limbs[row …]) into `out`: t in `typeBytes` bytes, then V, big-endian.
 */
export function writeBinary(t: number, limbs: Int32Array, row: number, typeBytes: number, out: Uint8Array): void {
  for (let i = 0; i < typeBytes; i++, t = Math.floor(t / 256)) out[typeBytes - 1 - i] = t & 255;
  for (let i = 0; i < out.length - typeBytes; i++) {
    out[out.length - 1 - i] = (limbs[row + (i >> 1)] >> (8 * (i & 1))) & 255;
  }
}

/** P_g = Π_{h<g} R_h in `limbs` 16-bit limbs, in blocks of four (see Powers), with each block's first g. */
function placeValues(radices: readonly number[], width: number, limbs: number): Powers {
  const blocks = Math.ceil(limbs / 4);
  const places = new Float64Array(4 * blocks * width);
  const first = new Int32Array(blocks).fill(width);
  let power = [1]; // P_g in 16-bit limbs
  for (let g = 0; g < width; g++) {
    power.forEach((limb, l) => {
      if (l < limbs) {
        const c = l >> 2;
        places[4 * (c * width + g) + (l & 3)] = limb;
        if (limb !== 0 && first[c] === width) first[c] = g;
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
  // first[c]: every P_g with g < first[c] is 0 in block c's limbs
  return { places, first, limbs, blocks, radices };
}

/**
 * The `rice-1` code of a structured file's high counts (mechdesign/mechfile/_rice.py; docs/client_spec.rst,
 * "Structured files"): per cell k a centre c_k and a parameter r_k (`types.count_centres`, `types.count_rice`); a
 * type's stream holds, cell after cell, a plain field of bit_length(s_k) bits where r_k = −1, else
 * z = zigzag(a − c_k) as q = z >> r_k zero bits, a one bit and the r_k low bits of z; most significant bit first,
 * zero-padded to a byte, canonical base64. A plain loop per stream (mechdesign vectorises it over the types).
 */
import { type Json, fail } from "./checks.js";

export const RICE_CODE = "rice-1";
export const RICE_KEYS = ["counts_code", "count_centres", "count_rice"];
const MAX_RICE = 8;

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_INDEX = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64_INDEX[B64.charCodeAt(i)] = i;

/** Canonical RFC 4648 base64 of exactly `length` bytes (any length when null), or null. */
export function base64(text: string, length: number | null): Uint8Array | null {
  if (text.length % 4 !== 0) return null;
  const pads = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const size = length ?? (3 * text.length) / 4 - pads;
  if (text.length !== 4 * Math.ceil(size / 3)) return null;
  const out = new Uint8Array(size);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const c = [0, 1, 2, 3].map((j) => text.charCodeAt(i + j));
    const v = c.map((x) => (x < 128 ? B64_INDEX[x] : -1));
    const pad = (c[3] === 61 ? 1 : 0) + (c[2] === 61 ? 1 : 0);
    if (pad && i + 4 !== text.length) return null;
    if (v[0] < 0 || v[1] < 0 || (pad < 2 && v[2] < 0) || (pad < 1 && v[3] < 0) || (pad === 1 && c[2] === 61)) return null;
    const n = (v[0] << 18) | (v[1] << 12) | ((pad < 2 ? v[2] : 0) << 6) | (pad < 1 ? v[3] : 0);
    if ((pad === 2 && (n & 0xffff)) || (pad === 1 && (n & 0xff))) return null; // non-canonical trailing bits
    const bytes = [n >>> 16, (n >>> 8) & 0xff, n & 0xff].slice(0, 3 - pad);
    for (const b of bytes) {
      if (o >= size) return null;
      out[o++] = b;
    }
  }
  return o === size ? out : null;
}

function integers(field: string, value: unknown, count: number): number[] {
  if (!Array.isArray(value) || value.length !== count) {
    throw fail(field, `be an array of ${count} integers (one per cell)`, Array.isArray(value) ? value.length : value);
  }
  const bad = value.findIndex((x) => !(typeof x === "number" && Number.isInteger(x)));
  if (bad >= 0) throw fail(`${field}[${bad}]`, "be an integer", value[bad]);
  return value as number[];
}

/** The (T × K) high counts of a `types` block in the rice-1 code, with every refusal mechdesign makes. */
export function readRice(types: Json, sizes: number[]): Int32Array[] {
  if (types.counts_code !== RICE_CODE) {
    throw fail("types.counts_code", `be '${RICE_CODE}' (or absent: fixed-width fields)`, types.counts_code);
  }
  const centres = integers("types.count_centres", types.count_centres, sizes.length);
  const rice = integers("types.count_rice", types.count_rice, sizes.length);
  const badR = rice.findIndex((r) => r < -1 || r > MAX_RICE);
  if (badR >= 0) throw fail(`types.count_rice[${badR}]`, `be in [-1, ${MAX_RICE}] (-1: a plain field)`, rice[badR]);
  const badC = centres.findIndex((c, k) => c < 0 || c > sizes[k] || (rice[k] < 0 && c !== 0));
  if (badC >= 0) {
    throw fail(`types.count_centres[${badC}]`, `be in [0, ${sizes[badC]}] (the cell's size), 0 where count_rice is -1`,
      centres[badC]);
  }
  return unpackRice(types.high_counts as unknown[], sizes, centres, rice);
}

/** The counts of rice-1 streams (module comment). */
export function unpackRice(texts: unknown[], sizes: number[], centres: number[], rice: number[],
  field = "types.high_counts"): Int32Array[] {
  const widths = sizes.map((s) => Math.floor(Math.log2(s)) + 1);
  const zMax = sizes.map((s, k) => Math.max(2 * (s - centres[k]), 2 * centres[k] - 1));
  return texts.map((text, t) => {
    const name = `${field}[${t}]`;
    if (typeof text !== "string") throw fail(name, "be a base64 string", text);
    const bytes = base64(text, null);
    if (bytes === null) throw fail(name, "be canonical base64 (RFC 4648, with padding)", text.slice(0, 40));
    const end = 8 * bytes.length;
    let pos = 0;
    const bit = (): number => {
      const b = pos < end ? (bytes[pos >> 3] >> (7 - (pos & 7))) & 1 : 0;
      pos++;
      return b;
    };
    const out = new Int32Array(sizes.length);
    for (let k = 0; k < sizes.length; k++) {
      let value = 0;
      if (rice[k] < 0) {
        for (let j = 0; j < widths[k]; j++) value = value * 2 + bit();
      } else {
        const qMax = Math.floor(zMax[k] / 2 ** rice[k]);
        const start = pos;
        let q = 0;
        while (q <= qMax && bit() === 0) q++;
        if (q > qMax) {
          if (start + q >= end) throw fail(name, `hold a code for every cell (the stream ends in cell ${k})`, text.slice(0, 40));
          throw fail(name, `have unary runs of at most ${qMax} bits in cell ${k} (z_max ${zMax[k]} >> r ${rice[k]})`, q);
        }
        let z = q;
        for (let j = 0; j < rice[k]; j++) z = z * 2 + bit();
        value = centres[k] + (z % 2 === 0 ? z / 2 : -(z + 1) / 2);
      }
      if (pos > end) throw fail(name, `hold a code for every cell (the stream ends in cell ${k})`, text.slice(0, 40));
      out[k] = value;
    }
    if (bytes.length !== Math.ceil(pos / 8)) throw fail(name, `end with its last code (${Math.ceil(pos / 8)} bytes)`, text.slice(0, 40));
    while (pos < end) if (bit()) throw fail(name, "have zero padding bits after the last code", text.slice(0, 40));
    const bad = out.findIndex((a, k) => a < 0 || a > sizes[k]);
    if (bad >= 0) {
      throw fail(name, `hold counts in [0, the cell's size] (cell ${bad} has ${sizes[bad]} inputs)`, out[bad]);
    }
    return out;
  });
}

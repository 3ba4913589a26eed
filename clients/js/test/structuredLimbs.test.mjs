// The seed integer of the structured sampler's fresh path (src/symmetricLimbs.ts) against BigInt: V = Σ_g v_g P_g
// (P_g = Π_{h<g} R_h) of random groups, for three rows and two rows of one signature, a row whose neighbours have
// other signatures (the zero row in the others' places), a last row alone, 1 to 31 groups (limb columns) and 32 to 40 (Horner); the text
// forms' last hex digits and the binary form's bytes of each. Radices up to 2^32 − 1 and group values up to R − 1
// (the largest terms, 2^48).
import assert from "node:assert/strict";
import { test } from "node:test";
import { SeedLimbs, writeBinary, writeTexts } from "../dist/symmetricLimbs.js";

/** xorshift32 (fixed seed): reproducible radices and values. */
const generator = (seed) => {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>>= 0);
  };
};

test("structured limbs: V of one or two rows, text and binary forms, equal BigInt's", () => {
  const next = generator(20261127);
  for (const width of [1, 2, 3, 7, 19, 30, 31, 32, 40]) {
    // three signatures: groups of large radices (the last at most 2^32 − 1), radix 1 past a type's own groups
    const radices = [0, 1, 2].map((s) => Array.from({ length: width }, (_, g) => {
      if (s === 1 && g >= width - 2 && width > 2) return 1;
      const top = s === 2 ? 2 ** 32 - 1 : 2 ** 31 + (next() >>> 1);
      return next() % 4 === 0 ? top : 2 + (next() % (2 ** 32 - 3));
    }));
    const seeds = radices.map((r) => r.reduce((p, x) => p * BigInt(x), 1n));
    const hexWidths = seeds.map((count) => Math.max(1, (count - 1n).toString(16).length));
    const rows = 9;
    const values = new Float64Array((rows + 1) * width); // the last row stays zero
    const signatureOf = [0, 0, 1, 2, 2, 2, 1, 1, 1];
    for (let row = 0; row < rows; row++) {
      for (let g = 0; g < width; g++) {
        const radix = radices[signatureOf[row]][g];
        values[row * width + g] = row === 0 ? radix - 1 : next() % radix; // row 0: every value at its largest
      }
    }
    const exact = (row) => {
      let v = 0n;
      let place = 1n;
      radices[signatureOf[row]].forEach((radix, g) => {
        v += BigInt(values[row * width + g]) * place;
        place *= BigInt(radix);
      });
      return v;
    };
    const limbs = new SeedLimbs(values, width, radices, hexWidths, rows);
    const types = Int32Array.from(signatureOf, (_, row) => 1000 + row);
    const typeWidths = Object.assign([], ...signatureOf.map((sig, row) => ({ [1000 + row]: hexWidths[sig] })));
    // 9 rows: (0, 1), 2 alone (its neighbours have other signatures), (3, 4, 5), (6, 7, 8); 8: (6, 7) the last
    // two; 7: row 6 last and alone; 5: (3, 4) the last two; 3: row 2 last and alone; 1: row 0 alone
    for (const count of [9, 8, 7, 6, 5, 3, 2, 1]) {
      limbs.limbs.fill(-1); // every limb read must have been written
      limbs.compute(count, Int32Array.from(signatureOf));
      const out = new Uint8Array(count * (16 + Math.max(...hexWidths)));
      const ends = new Int32Array(count);
      const end = writeTexts(count, types, typeWidths, limbs.limbs, limbs.size, out, new DataView(out.buffer), 0, ends,
        0);
      assert.equal(end, ends[count - 1]);
      for (let row = 0, from = 0; row < count; from = ends[row++]) {
        const s = signatureOf[row];
        const want = `t${1000 + row}.${exact(row).toString(16).padStart(hexWidths[s], "0")}`;
        assert.equal(Buffer.from(out.subarray(from, ends[row])).toString("latin1"), want,
          `width ${width}, row ${row} of ${count}`);
        const bytes = new Uint8Array(2 + Math.ceil(hexWidths[s] / 2));
        writeBinary(1000 + row, limbs.limbs, row * limbs.size, 2, bytes);
        const hex = exact(row).toString(16).padStart(2 * (bytes.length - 2), "0");
        assert.equal(Buffer.from(bytes).toString("hex"), (1000 + row).toString(16).padStart(4, "0") + hex,
          `binary, width ${width}, row ${row} of ${count}`);
      }
    }
  }
});

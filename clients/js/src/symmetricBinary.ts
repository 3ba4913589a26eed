/**
 * The binary form of structured reports (docs/client_spec.rst, "Binary reports"; mechdesign/mechfile/_report_binary.py):
 * t in B_T = max(1, ⌈bit_length(T − 1)/8⌉) bytes, then the seed integer V in B_t = max(1, ⌈bit_length(|S_t| − 1)/8⌉)
 * bytes, both unsigned big-endian. Parquet and Arrow IPC files hold such reports in a `binary` column; CSV holds the
 * text form `t<t>.<hex>`. V is built from the digit groups by Horner in 16-bit limbs and split back into them by long
 * division in 16-bit limbs, every step an integer below 2^53 (exact in doubles).
 */
/** The two fields of a placement family (symmetricSampler.ts's `Family`) the binary form reads; stated here so
 * that this module imports nothing from the sampler, which imports it. */
export interface BinaryFamily {
  /** Per type, the hex digits of |S_t| − 1. */
  readonly hexWidth: readonly number[];
  /** Per type, the radix of each digit group. */
  readonly groupRadix: readonly (readonly number[])[];
}

/** B_T and each type's B_t. B_t = ⌈h/2⌉ for h the hex digits of |S_t| − 1 (h ≥ 1): ⌈bit_length/8⌉ exactly. */
export function binaryWidths(family: Pick<BinaryFamily, "hexWidth">): { typeBytes: number; widths: number[] } {
  const types = family.hexWidth.length;
  let typeBytes = 1;
  while (types - 1 >= 2 ** (8 * typeBytes)) typeBytes++;
  return { typeBytes, widths: family.hexWidth.map((h) => Math.ceil(h / 2)) };
}

/** The binary form of report (type, digit groups); `widths` from {@link binaryWidths} (computed if not given). */
export function binaryReport(family: BinaryFamily, type: number, groups: readonly number[],
  widths = binaryWidths(family)): Uint8Array {
  const radices = family.groupRadix[type];
  const limbs: number[] = []; // V in 16-bit limbs, least significant first
  for (let g = radices.length - 1; g >= 0; g--) {
    let carry = groups[g] ?? 0;
    for (let i = 0; i < limbs.length; i++) {
      const value = limbs[i] * radices[g] + carry; // < 2^16·2^32 + 2^32: exact
      carry = Math.floor(value / 65536);
      limbs[i] = value - carry * 65536;
    }
    while (carry > 0) {
      limbs.push(carry % 65536);
      carry = Math.floor(carry / 65536);
    }
  }
  const width = widths.widths[type];
  const out = new Uint8Array(widths.typeBytes + width);
  for (let i = 0; i < widths.typeBytes; i++) out[widths.typeBytes - 1 - i] = Math.floor(type / 256 ** i) % 256;
  for (let i = 0; i < width; i++) { // byte i of V from the least significant end
    const limb = limbs[i >> 1] ?? 0;
    out[out.length - 1 - i] = (i & 1) === 0 ? limb & 255 : limb >> 8;
  }
  return out;
}

/**
 * (type, digit groups) of a report in binary form.
 * @throws RangeError `report must …` (one line) if the bytes are not a report of this family
 */
export function readBinaryReport(family: BinaryFamily, bytes: Uint8Array,
  widths = binaryWidths(family)): { type: number; groups: number[] } {
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const types = family.hexWidth.length;
  const fail = (rule: string): RangeError => new RangeError(`report must ${rule}, got report=${JSON.stringify(hex)}`);
  if (bytes.length < widths.typeBytes) throw fail(`hold a type in ${widths.typeBytes} bytes`);
  let type = 0;
  for (let i = 0; i < widths.typeBytes; i++) type = type * 256 + bytes[i];
  if (type >= types) throw fail(`name a type below ${types}`);
  if (bytes.length !== widths.typeBytes + widths.widths[type]) {
    throw fail("hold B_T bytes of type and its type's bytes of seed");
  }
  const limbs: number[] = []; // most significant first
  const body = bytes.subarray(widths.typeBytes);
  for (let end = body.length; end > 0; end -= 2) limbs.unshift(end >= 2 ? body[end - 2] * 256 + body[end - 1] : body[0]);
  const radices = family.groupRadix[type];
  const groups = radices.map((radix) => {
    let rem = 0;
    for (let j = 0; j < limbs.length; j++) { // V ← ⌊V / R⌋, most significant limb first
      const x = rem * 65536 + limbs[j]; // < 2^48: exact
      const q = Math.floor(x / radix);
      limbs[j] = q;
      rem = x - q * radix;
    }
    return rem;
  });
  if (limbs.some((limb) => limb !== 0)) {
    const seeds = radices.reduce((x, y) => x * BigInt(y), 1n);
    throw fail(`hold a seed below |S_t| = ${seeds}`);
  }
  return { type, groups };
}

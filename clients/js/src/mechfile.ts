/**
 * Loading a mechanism file (format version 2) and checking everything mechdesign's loader checks, in the same
 * order and with the same field and rule in each refusal (mechdesign/mechfile/column.py; docs/client_spec.rst):
 * the size cap, the first non-blank byte, UTF-8, the nesting depth, JSON without repeated keys, the keys of the
 * JSON Schema (mechdesign/mechfile/mechanism.schema.json, embedded at build time), the format name and version,
 * the sha256 of the RFC 8785 canonical content, labels, row-stochasticity, the guarantee's fields, the radius
 * against β*(δ, m, N), the optional blocks, the release policy (release.ts), the Ed25519 signature against a given
 * key, and finally the guarantee recomputed from the matrix, and what the release policy states.
 */
import { CanonicalError, type NumberScan, canonicalize, nestingDepth, scanNumbers } from "./canonical.js";
import {
  type Json, STOCHASTIC_ATOL, environment, fail, isObject, labels, number, numbers, object, pyList, showText, stochastic,
} from "./checks.js";
import { MechanismFileError } from "./errors.js";
import { capacity, ldpEpsilon, radiusForDelta } from "./leakage.js";
import { fsum, pairwiseSum } from "./numeric.js";
import { type ReleaseCheck, type ReleasePolicy, checkRelease, readRelease } from "./release.js";
import { SCHEMA } from "./schema.generated.js";
import { type PublicKeyInput, importPublicKey, verifyEd25519 } from "./signature.js";

/** The format name, read from the shared JSON Schema. */
export const FORMAT_NAME: string = SCHEMA.properties.format.properties.name.const;
/** The one format version this client reads: 2 (version 1 hashes Python's own serialisation). */
export const FORMAT_VERSION = 2;
export { STOCHASTIC_ATOL };
/** Keys of record files (whole records, several attributes): this client reads single-column files only. */
const RECORD_KEYS = ["factors", "attributes", "alphabets", "sampling"];
const TOP_KEYS = Object.keys(SCHEMA.properties).filter((k) => !RECORD_KEYS.includes(k));
// A single-column file needs the schema's common keys and those of its "else" branch (inputs, outputs, matrix).
const REQUIRED_KEYS: readonly string[] = TOP_KEYS.filter(
  (k) => (SCHEMA.required as readonly string[]).includes(k)
    || (SCHEMA.allOf[0].else.required as readonly string[]).includes(k));
const GUARANTEE_KEYS: readonly string[] = SCHEMA.properties.guarantee.required;
const NOTIONS: readonly string[] = SCHEMA.properties.guarantee.properties.notion.enum;
const SIGNATURE_ALGORITHM: string = SCHEMA.properties.signature.properties.algorithm.const;
const OPTIONAL_BLOCKS = ["utility", "baselines", "certificate", "signature"];
const SIGNATURE_KEYS: readonly string[] = SCHEMA.properties.signature.required;
const UNHASHED = new Set(["sha256", "signature"]);

/** Arrays and objects nested deeper are refused before parsing (a file needs 3; Python's json fails near 1000). */
export const MAX_DEPTH = 256;
/** The default cap on a file's size, 64 MiB, as mechdesign's (raised with MECHDESIGN_MAX_FILE_MB in Node). */
export const MAX_FILE_BYTES = 64 * 2 ** 20;
/** The environment variable that sets the cap, in MiB, in both languages. */
export const MAX_FILE_VARIABLE = "MECHDESIGN_MAX_FILE_MB";
/**
 * A recomputed ε or β* is raised to an upper bound before it is compared, as mechdesign rounds every guarantee it
 * reports (`round_up` in mechdesign/_numerics.py): v + (|v| + 1)·12·2^-52, some 24 units of roundoff. The float
 * evaluation of `log` and of sums differs between correct implementations by an ulp or two (this client and
 * mechdesign: one ulp on about 5 % of random files, benchmarks/bench_client_agreement.py); the rounding is far
 * above that and above libm's error, so the value compared is an upper bound in every language, and no allowance
 * is granted above it. The same expression in float64: the same input gives the same bits as mechdesign's.
 */
export function roundUp(value: number): number {
  if (!Number.isFinite(value)) return value;
  return value + (Math.abs(value) + 1.0) * 12 * 2 ** -52;
}

/** The least radius a file with δ and m may state: min(roundUp(β*(δ, m, N)), 2) ([E] eq. 37); 0 for N = 1. */
export function requiredRadius(delta: number, samples: number, size: number): number {
  return size >= 2 ? Math.min(roundUp(radiusForDelta(delta, samples, size)), 2.0) : 0.0;
}

const DECIMAL = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/**
 * The size cap in bytes: `MECHDESIGN_MAX_FILE_MB` (a positive decimal number of MiB) where an environment exists
 * (Node), else 64 MiB — mechdesign's `max_file_bytes`, with the same rule for the variable.
 * @throws RangeError naming the variable if it is set to anything else
 */
export function maxFileBytes(): number {
  const read = environment(MAX_FILE_VARIABLE);
  if (read === null) return MAX_FILE_BYTES;
  const [raw, text] = read; // trimmed of ASCII white space only, as mechdesign trims it
  const value = DECIMAL.test(text) ? Number(text) : NaN;
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`${MAX_FILE_VARIABLE} must be a positive number of MiB, got ${MAX_FILE_VARIABLE}=` +
      showText(raw));
  }
  return Math.floor(value * 2 ** 20);
}

/** A number as Python's `format(x, "g")` writes the sizes in mechdesign's messages (six significant digits). */
export function formatMiB(bytes: number): string {
  return String(Number((bytes / 2 ** 20).toPrecision(6)));
}

export interface Guarantee {
  notion: "pml" | "ldp";
  epsilon: number;
  delta: number | null;
  radius: number | null;
  prior: number[] | null;
  samples: number | null;
}

export interface Signature {
  algorithm: string;
  public_key: string;
  value: string;
}

/** A loaded mechanism file. `matrix` holds the rows renormalised as mechdesign renormalises them. */
export interface MechanismFile {
  inputs: string[];
  outputs: string[];
  matrix: number[][];
  guarantee: Guarantee;
  utility: Record<string, unknown> | null;
  baselines: Record<string, unknown> | null;
  certificate: Record<string, unknown> | null;
  provenance: Record<string, unknown>;
  sha256: string;
  signature: Signature | null;
  /** Whether the signature was checked against a key the caller supplied. */
  signatureChecked: boolean;
  /** The ε recomputed from the matrix, rounded up ({@link roundUp}): PML capacity over the ℓ1 ball, or ε_LDP. */
  achieved: number;
  /** The release policy ({@link SINGLE} when the file has no `release` block). */
  release: ReleasePolicy;
  /** What the policy states, recomputed ("repeated": T releases; "two-layer": one report), else null. */
  releaseCheck: ReleaseCheck | null;
  /** achieved ≤ stated ε, exactly, and the release statement holds. */
  holds: boolean;
}

export interface LoadOptions {
  /** The Ed25519 key that must have signed the file. */
  publicKey?: PublicKeyInput;
  /** Refuse files larger than this many bytes (default {@link maxFileBytes}: 64 MiB or MECHDESIGN_MAX_FILE_MB). */
  maxBytes?: number;
}

/** Read a file's bytes as mechdesign's `parse_file` does: size cap, UTF-8, depth, JSON, distinct keys, an object. */
export function parseFile(bytes: Uint8Array, maxBytes: number): { content: Json; scan: NumberScan } {
  if (bytes.length > maxBytes) {
    throw fail("mechanism file", `be at most ${formatMiB(maxBytes)} MiB`, "(file)",
      `${bytes.length.toLocaleString("en-US")} bytes; set ${MAX_FILE_VARIABLE} to allow more`);
  }
  let start = 0;
  while (start < bytes.length && [0x20, 0x09, 0x0d, 0x0a, 0xef, 0xbb, 0xbf].includes(bytes[start])) start++;
  if (start < bytes.length && bytes[start] !== 0x7b) {
    throw fail("mechanism file", "be a JSON object", "(file)", `it starts with ${JSON.stringify(String.fromCharCode(bytes[start]))}`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new MechanismFileError(null, "be UTF-8 text");
  }
  // Before parsing: a parser's own depth limit depends on its stack, and this rule is the same in every language.
  const depth = nestingDepth(text);
  if (depth > MAX_DEPTH) {
    throw new MechanismFileError(null, `be JSON nested at most ${MAX_DEPTH} deep`, `arrays and objects nest ${depth} deep`);
  }
  let content: unknown;
  try {
    content = JSON.parse(text);
  } catch (error) {
    throw new MechanismFileError(null, "be valid JSON", String((error as Error).message).slice(0, 80));
  }
  const scan = scanNumbers(text);
  if (scan.repeatedKey !== null) {
    throw new MechanismFileError(null, "be JSON whose objects have distinct keys",
      `${JSON.stringify(scan.repeatedKey)} is repeated in an object; parsers differ on which copy counts`);
  }
  if (!isObject(content)) {
    throw new MechanismFileError(null, "hold one JSON object", Array.isArray(content) ? "got an array" : typeof content);
  }
  return { content, scan };
}

/** SHA-256 of bytes as 64 lowercase hex digits (WebCrypto). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", new Uint8Array(bytes)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The canonical bytes of a parsed file (without sha256 and signature): what its hash and signature cover. */
export function canonicalBytes(content: Json): Uint8Array {
  const body: Json = {};
  for (const [key, value] of Object.entries(content)) if (!UNHASHED.has(key)) body[key] = value;
  return new TextEncoder().encode(canonicalize(body));
}

/** Rows divided by their NumPy (pairwise) sums, bit for bit as mechdesign's Mechanism holds them. */
export function renormalise(matrix: number[][]): number[][] {
  return matrix.map((row) => {
    const total = 0 + pairwiseSum(row);
    return row.map((x) => x / total);
  });
}

/** An upper bound on the ε a (renormalised) matrix achieves under the guarantee's notion: the value rounded up
 * ({@link roundUp}) that a verifier compares with the stated ε. */
export function achievedEpsilon(matrix: number[][], guarantee: Guarantee): number {
  if (matrix.every((row) => row.every((x, y) => x === matrix[0][y]))) return 0; // Y independent of X
  if (guarantee.notion === "ldp") return roundUp(ldpEpsilon(matrix));
  const prior = guarantee.prior as number[];
  const total = fsum(prior);
  return roundUp(capacity(matrix, prior.map((p) => p / total), guarantee.radius as number));
}

function checkRadius(guarantee: Guarantee, size: number): void {
  const { delta, samples, radius } = guarantee;
  if (guarantee.notion !== "pml" || delta === null) return;
  if (samples === null) {
    throw fail("guarantee.samples", "be given when guarantee.delta is", samples,
      "the radius is checked against β*(δ, m, N), [E] eq. 37");
  }
  const required = requiredRadius(delta, samples, size);
  if ((radius as number) < required) {
    throw fail("guarantee.radius", "be >= β*(δ, m, N) of [E] eq. 37, or the stated δ does not hold", radius,
      `β*(δ=${delta}, m=${samples}, N=${size}) = ${required}, rounded up`);
  }
}

/**
 * Check a mechanism file and recompute its guarantee; a file that overstates it is returned with
 * `holds: false` (as `mechdesign verify`), every other defect throws a {@link MechanismFileError}.
 *
 * @param data the file's bytes (or its text)
 * @param options `publicKey`: the Ed25519 key that must have signed the file; `maxBytes`: the size cap
 */
export async function verifyMechanismFile(data: Uint8Array | string, options: LoadOptions = {}): Promise<MechanismFile> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const { content, scan } = parseFile(bytes, options.maxBytes ?? maxFileBytes());
  const record = RECORD_KEYS.find((k) => k in content);
  if (record !== undefined) {
    throw fail(record, "be absent: record files are not supported by this client", (content as Json)[record],
      "a record file's guarantee is computed for the whole record; use mechdesign (Python) to verify and sample it");
  }
  const missing = REQUIRED_KEYS.filter((k) => !(k in content));
  if (missing.length) throw fail("file", `have the keys ${pyList(missing)}`, Object.keys(content).sort());
  const extra = Object.keys(content).filter((k) => !TOP_KEYS.includes(k)).sort();
  if (extra.length) throw fail("file", `only have the keys ${pyList(TOP_KEYS)}`, extra);
  const format = content.format;
  object("format", format);
  const fmt = format as Json;
  if (fmt.name !== FORMAT_NAME) throw fail("format.name", `be '${FORMAT_NAME}'`, fmt.name);
  if (fmt.version !== FORMAT_VERSION) {
    throw fail("format.version", "be 2", fmt.version, fmt.version === 1
      ? "version 1 hashes Python's own serialisation: re-save with version 2, i.e. read and write it with a " +
        "current mechdesign"
      : "the version this client reads");
  }
  const digest = content.sha256;
  if (typeof digest !== "string" || !/^[0-9a-f]{64}$/.test(digest)) {
    throw fail("sha256", "be 64 lowercase hex digits", digest);
  }
  let canonical: Uint8Array;
  try {
    if ([...scan.unsafeKeys].some((k) => !UNHASHED.has(k))) {
      throw new CanonicalError("an integer beyond ±(2^53 − 1) has no canonical form");
    }
    canonical = canonicalBytes(content);
  } catch (error) {
    if (!(error instanceof CanonicalError)) throw error;
    throw fail("file", "be serializable as canonical JSON", error.message);
  }
  const actual = await sha256Hex(canonical);
  if (actual !== digest) {
    throw fail("sha256", "match the canonical content", `${digest.slice(0, 12)}…`,
      `tampered or edited file; content hashes to ${actual.slice(0, 12)}…`);
  }
  const inputs = labels("inputs", content.inputs);
  const outputs = labels("outputs", content.outputs);
  const rows = content.matrix;
  if (!Array.isArray(rows) || rows.length !== inputs.length) {
    throw fail("matrix", `be an array of ${inputs.length} rows`, rows, "one per input");
  }
  const matrix = rows.map((row, i) => numbers(`matrix[${i}]`, row, outputs.length));
  matrix.forEach((row, i) => stochastic(`matrix[${i}]`, row));
  const raw = content.guarantee;
  object("guarantee", raw);
  const g = raw as Json;
  if ([...Object.keys(g)].sort().join() !== [...GUARANTEE_KEYS].sort().join()) {
    throw fail("guarantee", `have exactly the keys ${pyList(GUARANTEE_KEYS)}`, Object.keys(g).sort());
  }
  if (!NOTIONS.includes(g.notion as string)) throw fail("guarantee.notion", "be 'pml' or 'ldp'", g.notion);
  number("guarantee.epsilon", g.epsilon, 0, Infinity);
  if (g.delta !== null) number("guarantee.delta", g.delta, 0, 1, true);
  if (g.radius !== null) number("guarantee.radius", g.radius, 0, 2);
  if (g.prior !== null) stochastic("guarantee.prior", numbers("guarantee.prior", g.prior, inputs.length));
  const samples = g.samples;
  const literal = scan.literals.get("guarantee.samples") ?? "";
  if (samples !== null && (typeof samples !== "number" || !Number.isInteger(samples) || /[.eE]/.test(literal) ||
      samples < 1 || samples >= 2 ** 63)) {
    throw fail("guarantee.samples", "be a positive integer below 2^63 or null", samples);
  }
  if (g.notion === "pml" && (g.prior === null || g.radius === null)) {
    throw fail("guarantee", "give 'prior' and 'radius' when notion is 'pml'", { prior: g.prior, radius: g.radius });
  }
  const guarantee = g as unknown as Guarantee;
  checkRadius(guarantee, inputs.length);
  for (const name of OPTIONAL_BLOCKS) object(name, content[name], true);
  // The signature is outside the hash: a field added to it would travel with a signed file unnoticed.
  if (isObject(content.signature) && Object.keys(content.signature).sort().join() !== [...SIGNATURE_KEYS].sort().join()) {
    throw fail("signature", `have exactly the keys ${pyList(SIGNATURE_KEYS)}`, Object.keys(content.signature).sort());
  }
  object("provenance", content.provenance);
  const release = readRelease(content.release, outputs, scan.literals.get("release.releases"), renormalise);
  const signature = (content.signature ?? null) as Signature | null;
  if (options.publicKey !== undefined) {
    const key = await importPublicKey(options.publicKey);
    if (signature === null) {
      throw fail("signature", "be present", null, "the file is unsigned and a public key was given");
    }
    if (signature.algorithm !== SIGNATURE_ALGORITHM) {
      throw fail("signature", "be an object with algorithm 'ed25519'", signature);
    }
    if (!(await verifyEd25519(key, signature.value, canonical))) {
      throw new MechanismFileError("signature", "be valid for the given public key",
        "wrong key, or the content was changed after signing");
    }
  }
  const renormalised = renormalise(matrix);
  const achieved = achievedEpsilon(renormalised, guarantee);
  const releaseCheck = checkRelease(release, renormalised, guarantee,
    { achieved: (m) => achievedEpsilon(m, guarantee), renormalise });
  return {
    inputs, outputs, matrix: renormalised, guarantee: { ...guarantee },
    utility: (content.utility ?? null) as Json | null, baselines: (content.baselines ?? null) as Json | null,
    certificate: (content.certificate ?? null) as Json | null, provenance: content.provenance as Json,
    sha256: digest, signature, signatureChecked: options.publicKey !== undefined, achieved,
    release, releaseCheck,
    // No allowance: achieved is already an upper bound. A release statement must hold too (as `mechdesign verify`).
    holds: achieved <= guarantee.epsilon && (releaseCheck?.holds ?? true),
  };
}

/**
 * Load a mechanism file: {@link verifyMechanismFile}, and refuse a file whose stated ε the matrix does not
 * achieve (field `guarantee.epsilon`), or whose release statement does not hold (field `release.epsilon`), as
 * mechdesign's `read_mechanism_file`.
 */
export async function loadMechanismFile(data: Uint8Array | string, options: LoadOptions = {}): Promise<MechanismFile> {
  const file = await verifyMechanismFile(data, options);
  if (!(file.achieved <= file.guarantee.epsilon)) {
    throw fail("guarantee.epsilon", `be >= the ${file.guarantee.notion} epsilon recomputed from the matrix`,
      file.guarantee.epsilon, String(file.achieved));
  }
  const release = file.releaseCheck;
  if (release !== null && !(release.achieved <= release.epsilon)) {
    throw fail("release.epsilon", `be >= the ${release.policy} leakage recomputed from the matrices`, release.epsilon,
      String(release.achieved));
  }
  if (release?.link !== null && release?.link?.holds === false) {
    throw fail("release.link_epsilon", "be >= the linkability level recomputed from the reports",
      release.link.epsilon, String(release.link.achieved));
  }
  return file;
}

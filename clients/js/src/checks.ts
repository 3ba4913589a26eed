/**
 * The field checks of a mechanism file, worded as mechdesign's `FileChecker` words them
 * (mechdesign/mechfile/format.py): `<field> must <rule>, got <field>=<value>`. Shared by the file's body
 * (mechfile.ts) and its release block (release.ts).
 */
import { MechanismFileError } from "./errors.js";
import { fsum } from "./numeric.js";

/** |row sum − 1| allowed in a file, as in mechdesign. */
export const STOCHASTIC_ATOL = 1e-9;

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A list of strings as Python prints it: `['a', 'b']`. */
export const pyList = (items: readonly string[]): string => `[${items.map((k) => `'${k}'`).join(", ")}]`;

/**
 * What is trimmed around an environment variable's value: ASCII white space only, as mechdesign's
 * `_validation.ASCII_SPACE` (JavaScript's trim() also removes U+FEFF and Python's strip() U+001C–U+001F: a value
 * must get one verdict in both languages).
 */
const ASCII_SPACE = /^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g;

/** An environment variable (Node) as [raw, trimmed of ASCII white space], or null where unset or no environment. */
export function environment(name: string): [string, string] | null {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const raw = env?.[name];
  return raw === undefined ? null : [raw, raw.replace(ASCII_SPACE, "")];
}

/** A value quoted as JSON with ASCII escapes (one line): the text mechdesign's `show_text` prints. */
export function showText(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function fail(field: string, rule: string, value: unknown, detail?: string): MechanismFileError {
  return new MechanismFileError(field, rule, detail, value);
}

export function object(field: string, value: unknown, nullable = false): void {
  if (!(isObject(value) || (nullable && (value === null || value === undefined)))) {
    throw fail(field, `be a JSON object${nullable ? " or null" : ""}`, value);
  }
}

export function number(field: string, value: unknown, low: number, high: number, openLow = false): number {
  if (typeof value !== "number" || !Number.isFinite(value)) throw fail(field, "be a finite number", value);
  if (value < low || value > high || (openLow && value === low)) {
    throw fail(field, `lie in ${openLow ? "(" : "["}${low}, ${high === Infinity ? "inf" : high}]`, value);
  }
  return value;
}

export function labels(field: string, value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((x) => typeof x === "string")) {
    throw fail(field, "be a non-empty array of strings", value);
  }
  if (new Set(value).size !== value.length) throw fail(field, "hold distinct labels", value);
  // "café" as one code point or as e + U+0301 looks the same everywhere: one visible value, two labels.
  const seen = new Map<string, string>();
  for (const label of value as string[]) {
    const twin = seen.get(label.normalize("NFC")) ?? label;
    if (twin !== label) {
      throw fail(field, "hold labels distinct under Unicode NFC normalisation", value,
        `${JSON.stringify(twin)} and ${JSON.stringify(label)} are the same text`);
    }
    seen.set(label.normalize("NFC"), label);
  }
  return value as string[];
}

export function numbers(field: string, value: unknown, size: number): number[] {
  if (!Array.isArray(value) || value.length !== size) throw fail(field, `be an array of ${size} numbers`, value);
  value.forEach((x, j) => number(`${field}[${j}]`, x, 0, 1));
  return value as number[];
}

export function stochastic(field: string, row: number[]): void {
  const total = fsum(row);
  if (Math.abs(total - 1.0) > STOCHASTIC_ATOL) {
    throw fail(field, "sum to 1 within 1e-09", row, `sum is ${total}`);
  }
}

/**
 * RFC 8785 (JSON Canonicalization Scheme): the bytes a format-2 mechanism file's sha256 and signature cover.
 *
 * JCS is defined by ECMAScript's own JSON serialization, so here it is `JSON.stringify` of numbers and strings with
 * object keys sorted by UTF-16 code units (RFC 8785 §3.2). Values without a canonical form are refused, as
 * mechdesign refuses them: non-finite numbers, lone surrogates, and integers written beyond ±(2^53 − 1) (which
 * `JSON.parse` would round silently, so they are found in the text by {@link scanNumbers}).
 */

/** Thrown for a value that has no canonical form. */
export class CanonicalError extends Error {}

/** The RFC 8785 canonical JSON text of a parsed JSON value. */
export function canonicalize(value: unknown): string {
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new CanonicalError(`${value} is not representable in JCS`);
    return JSON.stringify(value); // ECMAScript's Number serialization is RFC 8785 §3.2.2.3; -0 becomes 0
  }
  if (typeof value === "string") return canonicalString(value);
  if (Array.isArray(value)) return `[${value.map(canonicalize).join(",")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value as object).sort(); // default sort: UTF-16 code units, as §3.2.3 asks
    const body = keys.map((k) => `${canonicalString(k)}:${canonicalize((value as Record<string, unknown>)[k])}`);
    return `{${body.join(",")}}`;
  }
  throw new CanonicalError(`unsupported type: ${typeof value}`);
}

function canonicalString(text: string): string {
  if (!text.isWellFormed()) throw new CanonicalError("input contains non-UTF-8 codepoints (a lone surrogate)");
  return JSON.stringify(text);
}

const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[{}[\]:,]/g;
const SAFE = 2n ** 53n - 1n;

/** What `JSON.parse` forgets about a JSON text. */
export interface NumberScan {
  /** Top-level keys under which an integer literal beyond ±(2^53 − 1) is written. */
  unsafeKeys: Set<string>;
  /** The literal text of each number written directly in a top-level object (`"guarantee.samples"` → `"5.0"`). */
  literals: Map<string, string>;
  /** The first key written twice in one object (`JSON.parse` keeps the last copy silently), or null. */
  repeatedKey: string | null;
}

/**
 * Scan a JSON text (already valid JSON) for what parsing loses: integers beyond ±(2^53 − 1), which RFC 8785
 * cannot represent and mechdesign refuses in the hashed content (`JSON.parse` cannot tell `9007199254740993`
 * from `9007199254740992`; the text can), whether a number was written as an integer (`5` or `5.0`: Python
 * reads the second as a float, and `guarantee.samples` must be an integer), and a key repeated in an object
 * (parsers differ on which copy counts, so the hash could cover one and a reader use the other).
 */
export function scanNumbers(text: string): NumberScan {
  const scan: NumberScan = { unsafeKeys: new Set(), literals: new Map(), repeatedKey: null };
  const stack: string[] = []; // "{" or "[" per open container
  const keys: string[] = []; // the current key per open object level
  const seen: (Set<string> | null)[] = []; // the keys met so far per open object
  let lastString = "";
  for (const match of text.matchAll(TOKENS)) {
    const token = match[0];
    const first = token[0];
    if (first === "{" || first === "[") {
      stack.push(first);
      keys.push("");
      seen.push(first === "{" ? new Set() : null);
    } else if (first === "}" || first === "]") {
      stack.pop();
      keys.pop();
      seen.pop();
    } else if (first === '"') lastString = token;
    else if (first === ":") {
      const key = JSON.parse(lastString) as string;
      keys[keys.length - 1] = key;
      const level = seen[seen.length - 1] as Set<string>;
      if (level.has(key)) scan.repeatedKey ??= key;
      level.add(key);
    } else if (first !== ",") {
      if (!/[.eE]/.test(token) && (BigInt(token) > SAFE || BigInt(token) < -SAFE)) scan.unsafeKeys.add(keys[0] ?? "");
      if (stack.length === 2 && stack[1] === "{") scan.literals.set(`${keys[0]}.${keys[1]}`, token);
    }
  }
  return scan;
}

/**
 * The deepest nesting of arrays and objects in a JSON text: brackets counted outside strings, one left-to-right
 * pass (a backslash in a string skips the next unit). mechdesign counts the same way on the bytes
 * (`nesting_depth` in mechdesign/mechfile/format.py), before any parser sees the text.
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/**
 * The one error of the client: a mechanism file that cannot be trusted, in the wording of mechdesign's loader,
 * `<field> must <rule>, got <field>=<value>`. `field` and `rule` are the same as Python's (details in parentheses
 * aside), so the conformance vectors compare them across languages.
 */
export class MechanismFileError extends Error {
  /** The field that breaks a rule (`matrix[1]`, `guarantee.radius`, ...), or null for unreadable text. */
  readonly field: string | null;
  /** The rule, without details: `sum to 1 within 1e-09`, `match the canonical content`, ... */
  readonly rule: string;

  constructor(field: string | null, rule: string, detail?: string, value?: unknown) {
    const head = field === null ? `must ${rule}` : `${field} must ${rule}`;
    const got = field === null || value === undefined ? "" : `, got ${field}=${show(value)}`;
    super(`${head}${detail ? ` (${detail})` : ""}${got}`);
    this.name = "MechanismFileError";
    this.field = field;
    this.rule = rule;
  }
}

/** A short, one-line rendering of a value for an error message. */
export function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  text = text.replace(/\s+/g, " ");
  return text.length <= 80 ? text : `${text.slice(0, 77)}...`;
}

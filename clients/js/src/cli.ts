#!/usr/bin/env node
/**
 * `mechdesign-js verify FILE [--public-key PUB.pem] [--json]` — exit 0 if the stated guarantee holds, 1 if the
 * matrix does not achieve it, 2 if the file is malformed or tampered (or the command is misused), as
 * `mechdesign verify`.
 *
 * `mechdesign-js privatize FILE [--public-key PUB.pem] [--require-signature] [--memo-key KEY] [--out OUT [--force]]`
 * — values one per line on stdin (with --memo-key: `user<TAB>value` lines), privatized labels one per line:
 * streamed to stdout, or to OUT atomically (complete or absent). A file whose release policy is memoized or
 * two-layer is refused without --memo-key, and a file bound to a key with any other (exit 2, nothing written). A
 * line longer than any value can be is refused as it is read (exit 2; memory O(bound + chunk)).
 *
 * Files are read as mechdesign reads them: at most MECHDESIGN_MAX_FILE_MB (64 MiB), incrementally, so that a
 * device or a pipe is refused at the cap without holding more than the cap and one chunk.
 */
import { randomBytes } from "node:crypto";
import {
  chmodSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, renameSync, statSync, unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { environment, showText } from "./checks.js";
import { MechanismFileError } from "./errors.js";
import { type LdpLevel, ldpLevel } from "./leakage.js";
import {
  MAX_FILE_VARIABLE, type MechanismFile, formatMiB, loadMechanismFile, maxFileBytes, verifyMechanismFile,
} from "./mechfile.js";
import { MAX_USER_BYTES, MemoFunction, type UserId, fileMemo, memoKeyError, parseMemoKey } from "./memo.js";
import { nodeDecryptor } from "./node.js";
import { Privatizer } from "./privatizer.js";
import { type ReleaseCheck, type ReleasePolicy, isMemoized } from "./release.js";
import { loadSymmetricFile, verifySymmetricFile } from "./symmetric.js";
import { SymmetricSampler, reportBytes } from "./symmetricSampler.js";

const REQUIRE = "MECHDESIGN_REQUIRE_SIGNATURE";
const USAGE = `usage: mechdesign-js verify FILE [--public-key PUB.pem] [--json]
       mechdesign-js privatize FILE [--public-key PUB.pem] [--require-signature] [--memo-key KEY]
                               [--out OUT [--force]] < values
       mechdesign-js --help`;
const HELP = `${USAGE}

verify     recompute the guarantee of a mechanism file: exit 0 if it holds, 1 if the matrix does not achieve
           the stated epsilon (or the release policy's statement does not hold: T releases, or one report of
           two layers), 2 if the file is malformed, tampered or wrongly signed, or states T releases with more
           count vectors than this client enumerates (10^6: verify it with mechdesign).
privatize  read values one per line on stdin and write one privatized label per value.
           Without --out the labels stream to stdout as the values arrive: a value that is not an input label
           stops the run with exit 2, and the labels already written for earlier values stay on stdout (a
           consumer must discard that partial output). With --out OUT nothing reaches OUT until every value
           was privatized: OUT is complete or absent (a temporary file beside it is renamed at the end and
           removed on error or interrupt). An existing OUT is refused unless --force.
           With --memo-key KEY each line is "user<TAB>value" (the user id up to the first tab, the value
           after it; ids are the text as written, so 42 is the id "42", as mechdesign reads integer ids) and
           the output is memoized: the same user and value always get the same label, on every run and machine
           with the same key (mechdesign-memo-1). A file whose release policy is memoized or two-layer needs
           it (exit 2 without, nothing written); a two-layer file's labels are fresh reports of the memoized
           permanent output. A file bound to a key (release.key) refuses any other key (exit 2).
           A line may hold at most the longest input label (with --memo-key after a user id of at most ${MAX_USER_BYTES}
           bytes and a tab) and a carriage return: a longer one is no value mechdesign accepts either, and is
           refused as it is read (exit 2), however long it goes on.

--public-key PUB.pem   the Ed25519 key that must have signed the file (PEM, as mechdesign sign writes it)
--require-signature    refuse a file no trusted key checked (also ${REQUIRE}=1)
--json                 (verify) print one JSON object
--out OUT, --force     (privatize) write the labels to OUT atomically; replace an existing OUT
--memo-key KEY         (privatize) memo key file: 64 hex characters and a newline (mechdesign memo-key KEY)

Files larger than ${MAX_FILE_VARIABLE} MiB (default 64) are refused, as mechdesign refuses them.`;
const PEM_LIMIT = 2 ** 16; // an Ed25519 PEM is ~120 bytes: anything near this is not a key (as mechdesign)
const CHUNK = 2 ** 20;

class UsageError extends Error {}

interface Arguments {
  verb: string;
  file: string;
  publicKey?: string;
  json: boolean;
  requireSignature: boolean;
  out?: string;
  force: boolean;
  memoKey?: string;
}

function parseArguments(argv: string[]): Arguments {
  const [verb, ...rest] = argv;
  if (verb !== "verify" && verb !== "privatize") throw new UsageError(`verb must be verify or privatize, got verb=${verb ?? ""}`);
  const out: Arguments = { verb, file: "", json: false, requireSignature: false, force: false };
  const value = (i: number, option: string, what: string): string => {
    if (i + 1 >= rest.length) throw new UsageError(`${option} needs ${what}`);
    return rest[i + 1];
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === "--public-key") out.publicKey = value(i++, arg, "a PEM file");
    else if (arg.startsWith("--public-key=")) out.publicKey = arg.slice(13);
    else if (arg === "--json" && verb === "verify") out.json = true;
    else if (arg === "--require-signature" && verb === "privatize") out.requireSignature = true;
    else if (arg === "--out" && verb === "privatize") out.out = value(i++, arg, "a file");
    else if (arg.startsWith("--out=") && verb === "privatize") out.out = arg.slice(6);
    else if (arg === "--force" && verb === "privatize") out.force = true;
    else if (arg === "--memo-key" && verb === "privatize") out.memoKey = value(i++, arg, "a key file");
    else if (arg.startsWith("--memo-key=") && verb === "privatize") out.memoKey = arg.slice(11);
    else if (arg.startsWith("-") || out.file) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}`);
    else out.file = arg;
  }
  if (!out.file) throw new UsageError("FILE must be given");
  if (out.force && out.out === undefined) throw new UsageError("--force needs --out (it replaces an existing OUT)");
  const [raw, trimmed] = environment(REQUIRE) ?? ["", ""];
  // ASCII case only, as mechdesign folds it: a non-ASCII value is refused in both languages
  const policy = /^[\x00-\x7f]*$/.test(trimmed) ? trimmed.toLowerCase() : trimmed;
  if (!["", "0", "1", "true", "false", "yes", "no"].includes(policy)) {
    throw new RangeError(`${REQUIRE} must be 1 or 0 (true/false, yes/no), got ${REQUIRE}=${showText(raw)}`);
  }
  out.requireSignature ||= ["1", "true", "yes"].includes(policy);
  if (out.requireSignature && out.publicKey === undefined) {
    throw new UsageError("public_key must be given when a signature is required: only a trusted key authenticates a file");
  }
  return out;
}

/**
 * The bytes of `path`, refusing more than `limit` in one line (mechdesign's `read_bounded`): a regular file by its
 * size before anything is read, a device or a pipe after at most the limit and one chunk; with `jsonObject`, a
 * first non-blank byte other than `{` at once (`/dev/zero` is not read to its cap).
 */
function readBounded(path: string, name: string, limit: number, jsonObject: boolean): Buffer {
  const fd = openSync(path, "r");
  try {
    const tooBig = (detail: string) => new MechanismFileError(name, `be at most ${formatMiB(limit)} MiB`,
      `${detail}; set ${MAX_FILE_VARIABLE} to allow more`, path);
    const size = fstatSync(fd).size;
    if (size > limit) throw tooBig(`${size.toLocaleString("en-US")} bytes`);
    const parts: Buffer[] = [];
    const chunk = Buffer.allocUnsafe(CHUNK);
    let held = 0;
    for (;;) {
      const count = readSync(fd, chunk, 0, CHUNK, null);
      if (count === 0) break;
      if (jsonObject && held === 0) {
        const first = chunk.subarray(0, count).find((b) => ![0x20, 0x09, 0x0d, 0x0a, 0xef, 0xbb, 0xbf].includes(b));
        if (first !== undefined && first !== 0x7b) {
          throw new MechanismFileError(name, "be a JSON object", `it starts with ${JSON.stringify(String.fromCharCode(first))}`, path);
        }
      }
      parts.push(Buffer.from(chunk.subarray(0, count)));
      held += count;
      if (held > limit) throw tooBig(`more than ${limit.toLocaleString("en-US")} bytes`);
    }
    return Buffer.concat(parts, held);
  } finally {
    closeSync(fd);
  }
}

function notice(path: string, file: MechanismFile): string | null {
  if (file.signatureChecked) return null;
  return file.signature === null
    ? `mechdesign-js: notice: ${path} is unsigned: its claims (epsilon, prior, radius, samples) are unauthenticated`
    : `mechdesign-js: notice: ${path} is signed but no --public-key was given: its claims are unauthenticated`;
}

function ldpLine(ldp: LdpLevel): string {
  return ldp.impossible !== null
    ? `  LDP level: infinite (output '${ldp.impossible.output}' is never drawn for input '${ldp.impossible.input}', ` +
      "so seeing it rules that input out; epsilon-PML over the ball is not epsilon-LDP)"
    : `  LDP level: ${Number(ldp.epsilon).toPrecision(6).replace(/\.?0+$/, "")} nats (what the matrix guarantees ` +
      "for every prior; the epsilon above is PML over the ball, not epsilon-LDP)";
}

/** Whether the bytes hold a structured file (`"kind": "symmetric"`); malformed JSON is left to the loaders. */
function isStructured(data: Buffer): boolean {
  if (!data.includes('"symmetric"')) return false;
  try {
    const content = JSON.parse(data.toString("utf8"));
    return typeof content === "object" && content !== null && content.kind === "symmetric";
  } catch {
    return false;
  }
}

/** `verify` of a structured file: the same first line as a dense file's, then the design's sizes. */
async function verifyStructured(args: Arguments, data: Buffer, publicKey?: string): Promise<number> {
  const file = await verifySymmetricFile(data, { publicKey, maxBytes: Infinity });
  const g = file.guarantee;
  const m = file.mechanism;
  const sizes = reportBytes(file);
  const sorted = [...sizes].sort((a, b) => a - b);
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2]
    : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  if (args.json) {
    console.log(JSON.stringify({ file: args.file, kind: "symmetric", notion: "pml", epsilon: g.epsilon,
      achieved: file.achieved, delta: g.delta, radius: g.radius, holds: file.holds, sha256: file.sha256,
      signature_checked: file.signatureChecked, inputs: m.inputs.length, cells: m.cells.sizes.length,
      types: m.high.length, report_bytes_max: sorted[sorted.length - 1], report_bytes_median: median }, null, 2));
  } else {
    console.log(`${args.file}: pml epsilon ${g.epsilon} ${file.holds ? "holds" : "DOES NOT HOLD"} ` +
      `(achieved ${file.achieved}, radius ${g.radius}, delta ${g.delta})${file.signatureChecked ? "; signature valid" : ""}`);
    console.log(`  structured design: ${m.inputs.length.toLocaleString("en-US")} inputs in ` +
      `${m.cells.sizes.length.toLocaleString("en-US")} cells, ${m.high.length.toLocaleString("en-US")} types ` +
      `(placement mechdesign-agl-1); reports of at most ${sorted[sorted.length - 1]} bytes (median ${median})`);
  }
  if (!file.holds) {
    console.error(`mechdesign-js: failed: ${args.file}: achieved epsilon ${file.achieved} exceeds stated ${g.epsilon}`);
    return 1;
  }
  return 0;
}

/** `privatize` with a structured file: reports t<type>.<hex>, fresh or memoized (user<TAB>value lines). */
async function privatizeStructured(args: Arguments, data: Buffer, publicKey?: string): Promise<number> {
  const file = await loadSymmetricFile(data, { publicKey, maxBytes: Infinity });
  const convert = await answer(args, new SymmetricSampler(file), file.mechanism.inputs);
  if (args.out === undefined) {
    await privatizeStdin(convert, async (text) => {
      if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once("drain", resolve));
    });
    return 0;
  }
  const count = await privatizeToFile(args, convert);
  console.log(`${args.out}: ${count.toLocaleString("en-US")} values privatized`);
  return 0;
}

async function verify(args: Arguments, data: Buffer, publicKey?: string): Promise<number> {
  if (isStructured(data)) return verifyStructured(args, data, publicKey);
  const file = await verifyMechanismFile(data, { publicKey, maxBytes: Infinity });
  const g = file.guarantee;
  const main = file.achieved <= g.epsilon;
  const check = file.releaseCheck;
  const ldp = g.notion === "pml" ? ldpLevel(file.matrix, file.inputs, file.outputs) : null;
  if (args.json) {
    const release = file.release.policy === "single" ? null : { policy: file.release.policy,
      ...(check === null ? {} : { releases: check.releases ?? undefined, epsilon: check.epsilon,
        achieved: check.achieved, exact: check.exact, holds: check.holds }),
      ...(check?.link ? { link_epsilon: check.link.epsilon, link_achieved: Number.isFinite(check.link.achieved)
        ? check.link.achieved : "inf", link_holds: check.link.holds } : {}) };
    console.log(JSON.stringify({ file: args.file, notion: g.notion, epsilon: g.epsilon, achieved: file.achieved,
      delta: g.delta, radius: g.radius, holds: file.holds, sha256: file.sha256,
      signature_checked: file.signatureChecked, release, ldp }, null, 2));
  } else {
    const extra = g.notion === "ldp" ? "" : `, radius ${g.radius}, delta ${g.delta}`;
    console.log(`${args.file}: ${g.notion} epsilon ${g.epsilon} ${main ? "holds" : "DOES NOT HOLD"} ` +
      `(achieved ${file.achieved}${extra})${file.signatureChecked ? "; signature valid" : ""}`);
    if (ldp !== null) console.log(ldpLine(ldp));
    const line = releaseLine(file.release.policy, check);
    if (line) console.log(`  release policy: ${line}`);
    if (check?.link) console.log(`  ${linkLine(check.link)}`);
  }
  if (!main) {
    console.error(`mechdesign-js: failed: ${args.file}: achieved epsilon ${file.achieved} exceeds stated ${g.epsilon}`);
    return 1;
  }
  if (check !== null && !(check.achieved <= check.epsilon)) {
    console.error(`mechdesign-js: failed: ${args.file}: recomputed ${check.policy} leakage ${check.achieved} ` +
      `exceeds release.epsilon ${check.epsilon}`);
    return 1;
  }
  if (check?.link?.holds === false) {
    console.error(`mechdesign-js: failed: ${args.file}: recomputed linkability level ${check.link.achieved} ` +
      `exceeds release.link_epsilon ${check.link.epsilon}`);
    return 1;
  }
  return 0;
}

/** A two-layer file's linkability, as `mechdesign verify` prints it: stated and recomputed, or the level alone. */
function linkLine(link: { epsilon: number | null; achieved: number; holds: boolean | null }): string {
  const meaning = Number.isFinite(link.achieved)
    ? `level ${Number(link.achieved.toPrecision(6))} nats: one report changes the odds between any two permanent ` +
      `outputs by at most a factor ${Number(Math.exp(Math.min(link.achieved, 700)).toPrecision(4))}, whatever an ` +
      "observer believed before"
    : "level infinite: some report is never drawn from some permanent output, so seeing it rules that output out, " +
      "and reports can act like the memoized output itself, an identifier that links a person's reports over time";
  if (link.epsilon === null) return `linkability (not stated by the file): ${meaning}`;
  return `linkability epsilon ${link.epsilon} ${link.holds ? "holds" : "DOES NOT HOLD"} (recomputed ` +
    `${link.achieved}): ${meaning}`;
}

/** The release policy's statement in one line, as `mechdesign verify` prints it (nothing for one release). */
function releaseLine(policy: string, check: ReleaseCheck | null): string | null {
  const verdict = check?.holds ? "holds" : "DOES NOT HOLD";
  if (policy === "repeated" && check !== null) {
    return `${(check.releases as number).toLocaleString("en-US")} fresh releases of the same value, stated epsilon ` +
      `${check.epsilon} ${verdict} (recomputed ${check.achieved}, exact)`;
  }
  if (policy === "two-layer" && check !== null) {
    return "two layers (memoized permanent layer, fresh reports): lifetime epsilon is the guarantee above; " +
      `per-report epsilon ${check.epsilon} ${verdict} (recomputed ${check.achieved})`;
  }
  if (policy === "memoized") {
    return "memoized (the same user and value always get the same output; privatize needs --memo-key)";
  }
  return null;
}

/** How stdin lines become labels, and how long a line may be. */
interface Answer {
  /** Labels for a chunk of stdin lines. */
  convert: (lines: string[]) => Promise<string[]> | string[];
  /**
   * The longest line that can be a value, in UTF-8 bytes: the longest input label, with --memo-key a tab and a
   * user id of at most MAX_USER_BYTES before it, and a carriage return (what mechdesign accepts, no more: it reads
   * no value that is not a label and no longer id). A longer line is refused as it is read.
   */
  maxLine: number;
  /** The words of that bound in the refusal. */
  lineRule: string;
}

/**
 * Each chunk of stdin is answered at once (a pipe or an interactive stream sees its outputs without waiting for
 * the end); a line split across chunks waits for its end, in pieces joined once, and is refused as soon as it is
 * longer than {@link Answer.maxLine}: memory stays O(bound + chunk) whatever the input (a 1 GB line without a
 * newline was read whole, still running at 300 s). CRLF input is accepted. A chunk's values are all checked
 * before any of its labels is handed to `write`. Returns the number of values.
 */
async function privatizeStdin(answer: Answer, write: (text: string) => Promise<void> | void): Promise<number> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let pending: string[] = []; // the unfinished line's pieces
  let held = 0; // its length in UTF-16 units, each at least one UTF-8 byte: more units than the bound, more bytes
  let count = 0; // lines answered
  const bound = (length: number, line: number) => {
    if (length > answer.maxLine) {
      throw new RangeError(`values must be lines of at most ${answer.maxLine.toLocaleString("en-US")} bytes ` +
        `(${answer.lineRule}), got a line of more than ${answer.maxLine.toLocaleString("en-US")} bytes (line ${line})`);
    }
  };
  const convert = async (lines: string[]) => {
    lines.forEach((line, i) => bound(line.length, count + i + 1));
    const labels = await answer.convert(lines.map((line) => line.replace(/\r$/, "")));
    count += labels.length;
    await write(`${labels.join("\n")}\n`);
  };
  try {
    for await (const chunk of process.stdin) {
      const lines = decoder.decode(chunk as Buffer, { stream: true }).split("\n");
      const last = lines.pop() as string;
      if (lines.length) {
        bound(held + lines[0].length, count + 1);
        lines[0] = pending.join("") + lines[0];
        await convert(lines);
        pending = [];
        held = 0;
      }
      pending.push(last);
      held += last.length;
      bound(held, count + 1);
    }
    pending.push(decoder.decode());
  } catch (error) {
    if (error instanceof TypeError && (error as { code?: string }).code === "ERR_ENCODING_INVALID_ENCODED_DATA") {
      throw new RangeError("values must be UTF-8 text, got values=(stdin)");
    }
    throw error;
  }
  const rest = pending.join("");
  if (rest) await convert([rest]);
  return count;
}

/** `privatize --out`: into a temporary file beside OUT, renamed onto it only when every value succeeded. */
async function privatizeToFile(args: Arguments, convert: Answer): Promise<number> {
  const target = args.out as string;
  // Named as mechdesign names its temporary files, so that its clean-up of dead writers' files finds these too.
  mkdirSync(dirname(target), { recursive: true }); // as mechdesign's atomic_path
  const part = join(dirname(target), `.${basename(target)}.mdtmp${process.pid}.${randomBytes(6).toString("hex")}.part`);
  const fd = openSync(part, "wx", 0o600);
  let open = true;
  const remove = () => {
    if (open) closeSync(fd);
    open = false;
    if (existsSync(part)) unlinkSync(part);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    remove();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const count = await privatizeStdin(convert, (text) => {
      writeSync(fd, text);
    });
    closeSync(fd);
    open = false;
    chmodSync(part, 0o666 & ~process.umask());
    renameSync(part, target);
    return count;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    remove();
  }
}

async function privatize(args: Arguments, data: Buffer, publicKey?: string): Promise<number> {
  if (isStructured(data)) return privatizeStructured(args, data, publicKey);
  const file = await loadMechanismFile(data, { publicKey, maxBytes: Infinity });
  const privatizer = new Privatizer(file);
  const convert = await answer(args, privatizer, file.inputs);
  const message = notice(args.file, file);
  if (args.out === undefined) {
    if (message) console.error(message);
    await privatizeStdin(convert, async (text) => {
      if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once("drain", resolve));
    });
    return 0;
  }
  const count = await privatizeToFile(args, convert);
  if (message) console.error(message); // on success only: a failed run wrote nothing, and its error stays one line
  console.log(`${args.out}: ${count.toLocaleString("en-US")} values privatized`);
  return 0;
}

/** What {@link answer} needs of a sampler: the dense Privatizer and the structured SymmetricSampler alike. */
interface LineSampler {
  readonly file: { sha256: string; release: ReleasePolicy };
  privatize(values: readonly string[]): string[];
  privatizeMemoized(values: readonly string[], users: readonly UserId[], memo: MemoFunction): Promise<string[]>;
}

/**
 * How lines become labels, for dense and structured files alike: fresh draws, or with --memo-key memoized draws
 * of `user<TAB>value` lines (AES through node:crypto, the same words as WebCrypto's). A memoized or two-layer
 * file without a key, and a file bound to another key (`release.key`, {@link fileMemo}), are refused here, before
 * stdin is read or anything is written.
 */
async function answer(args: Arguments, sampler: LineSampler, inputs: readonly string[]): Promise<Answer> {
  const { release } = sampler.file;
  let longest = 0; // a loop, not Math.max(...): a file may have millions of labels
  for (const label of inputs) longest = Math.max(longest, Buffer.byteLength(label, "utf8"));
  const memoized = args.memoKey !== undefined;
  const maxLine = longest + (memoized ? 1 + MAX_USER_BYTES : 0) + 1;
  const lineRule = `${memoized ? `a user id of at most ${MAX_USER_BYTES} bytes, a tab, ` : ""}the longest input label and ` +
    "a carriage return";
  if (!memoized) {
    if (isMemoized(release)) {
      throw new RangeError(`memo_key must be given (--memo-key KEY, user<TAB>value lines on stdin): ${args.file} ` +
        `has release policy '${release.policy}' (the same user and value must always get the same output; no ` +
        "fresh draws), got memo_key=null");
    }
    return { convert: (lines) => sampler.privatize(lines), maxLine, lineRule };
  }
  const key = parseMemoKey(readKey(args.memoKey as string), args.memoKey as string);
  const memo = fileMemo(await MemoFunction.create(key, sampler.file.sha256, nodeDecryptor(key)), sampler.file,
    args.file);
  let read = 0; // lines answered before this chunk
  const convert = (lines: string[]) => {
    const users: string[] = [];
    const values = lines.map((line, i) => {
      const tab = line.indexOf("\t");
      if (tab < 0) {
        throw new RangeError(`values must be user<TAB>value lines with --memo-key (line ${read + i + 1}), got ` +
          `values=${JSON.stringify(line.slice(0, 40))}`);
      }
      users.push(line.slice(0, tab));
      return line.slice(tab + 1);
    });
    read += lines.length;
    return sampler.privatizeMemoized(values, users, memo);
  };
  return { convert, maxLine, lineRule };
}

/** A key file's bytes; anything longer than a key and a newline is refused by its size, unread. */
function readKey(path: string): Uint8Array {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size; // 0 for a device or a pipe, which are read up to 66 bytes all the same
    const buffer = Buffer.alloc(66);
    let count = 0;
    while (count < buffer.length) {
      const n = readSync(fd, buffer, count, buffer.length - count, null);
      if (n === 0) break;
      count += n;
    }
    if (size > 65 || count > 65) throw memoKeyError(Math.max(size, count), path); // by its size, unread
    return buffer.subarray(0, count);
  } finally {
    closeSync(fd);
  }
}

/** Refuse an existing OUT (unless --force) or a folder before any work, as `mechdesign privatize`. */
function checkOutput(args: Arguments): void {
  if (args.out === undefined || !existsSync(args.out)) return;
  if (statSync(args.out).isDirectory()) {
    throw new UsageError(`out must not be a directory, got out=${JSON.stringify(args.out)}`);
  }
  if (!args.force) {
    throw new UsageError(`out must not exist (it is an existing file; use --force to replace it), got out=${JSON.stringify(args.out)}`);
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
    console.log(HELP);
    return 0;
  }
  try {
    const args = parseArguments(argv);
    checkOutput(args);
    // The cap is applied while reading (maxFileBytes names the variable if it is malformed); the library's
    // own check is then moot.
    const data = readBounded(args.file, "mechanism file", maxFileBytes(), true);
    const publicKey = args.publicKey === undefined ? undefined
      : readBounded(args.publicKey, "key", PEM_LIMIT, false).toString("utf8");
    return args.verb === "verify" ? await verify(args, data, publicKey) : await privatize(args, data, publicKey);
  } catch (error) {
    const path = argv[1] ?? "";
    if (error instanceof MechanismFileError) console.error(`mechdesign-js: error: ${path}: ${error.message}`);
    else if (error instanceof UsageError) console.error(`mechdesign-js: error: ${error.message}\n${USAGE}`);
    else if (error instanceof TypeError || error instanceof RangeError || (error as NodeJS.ErrnoException).code) {
      console.error(`mechdesign-js: error: ${(error as Error).message}`);
    } else throw error;
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));

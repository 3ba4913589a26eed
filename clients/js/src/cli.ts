#!/usr/bin/env node
/**
 * `mechdesign-js verify FILE [--public-key PUB.pem] [--json]` — exit 0 if the stated guarantee holds, 1 if the
 * matrix does not achieve it, 2 if the file is malformed or tampered (or the command is misused), as
 * `mechdesign verify`.
 *
 * `mechdesign-js privatize FILE [--public-key PUB.pem] [--require-signature]` — values one per line on stdin,
 * privatized labels one per line on stdout, streamed; a value that is not an input label stops it with exit 2.
 *
 * Files are read as mechdesign reads them: at most MECHDESIGN_MAX_FILE_MB (64 MiB), incrementally, so that a
 * device or a pipe is refused at the cap without holding more than the cap and one chunk.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { MechanismFileError } from "./errors.js";
import {
  MAX_FILE_VARIABLE, type MechanismFile, formatMiB, loadMechanismFile, maxFileBytes, verifyMechanismFile,
} from "./mechfile.js";
import { Privatizer } from "./privatizer.js";

const USAGE = `usage: mechdesign-js verify FILE [--public-key PUB.pem] [--json]
       mechdesign-js privatize FILE [--public-key PUB.pem] [--require-signature] < values > privatized`;
const REQUIRE = "MECHDESIGN_REQUIRE_SIGNATURE";
const PEM_LIMIT = 2 ** 16; // an Ed25519 PEM is ~120 bytes: anything near this is not a key (as mechdesign)
const CHUNK = 2 ** 20;

class UsageError extends Error {}

interface Arguments {
  verb: string;
  file: string;
  publicKey?: string;
  json: boolean;
  requireSignature: boolean;
}

function parseArguments(argv: string[]): Arguments {
  const [verb, ...rest] = argv;
  if (verb !== "verify" && verb !== "privatize") throw new UsageError(`verb must be verify or privatize, got verb=${verb ?? ""}`);
  const out: Arguments = { verb, file: "", json: false, requireSignature: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === "--public-key") {
      if (i + 1 >= rest.length) throw new UsageError("--public-key needs a PEM file");
      out.publicKey = rest[++i];
    } else if (arg.startsWith("--public-key=")) out.publicKey = arg.slice(13);
    else if (arg === "--json" && verb === "verify") out.json = true;
    else if (arg === "--require-signature" && verb === "privatize") out.requireSignature = true;
    else if (arg.startsWith("-") || out.file) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}`);
    else out.file = arg;
  }
  if (!out.file) throw new UsageError("FILE must be given");
  const policy = (process.env[REQUIRE] ?? "").trim().toLowerCase();
  if (!["", "0", "1", "true", "false", "yes", "no"].includes(policy)) {
    throw new UsageError(`${REQUIRE} must be 1 or 0 (true/false, yes/no), got ${REQUIRE}=${JSON.stringify(policy)}`);
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

async function verify(args: Arguments, data: Buffer, publicKey?: string): Promise<number> {
  const file = await verifyMechanismFile(data, { publicKey, maxBytes: Infinity });
  const g = file.guarantee;
  if (args.json) {
    console.log(JSON.stringify({ file: args.file, notion: g.notion, epsilon: g.epsilon, achieved: file.achieved,
      delta: g.delta, radius: g.radius, holds: file.holds, sha256: file.sha256,
      signature_checked: file.signatureChecked }, null, 2));
  } else {
    const extra = g.notion === "ldp" ? "" : `, radius ${g.radius}, delta ${g.delta}`;
    console.log(`${args.file}: ${g.notion} epsilon ${g.epsilon} ${file.holds ? "holds" : "DOES NOT HOLD"} ` +
      `(achieved ${file.achieved}${extra})${file.signatureChecked ? "; signature valid" : ""}`);
  }
  if (!file.holds) {
    console.error(`mechdesign-js: failed: ${args.file}: achieved epsilon ${file.achieved} exceeds stated ${g.epsilon}`);
    return 1;
  }
  return 0;
}

async function privatize(args: Arguments, data: Buffer, publicKey?: string): Promise<number> {
  const file = await loadMechanismFile(data, { publicKey, maxBytes: Infinity });
  const privatizer = new Privatizer(file);
  const message = notice(args.file, file);
  if (message) console.error(message);
  // Each chunk of stdin is answered at once (a pipe or an interactive stream sees its outputs without waiting
  // for the end); a line split across chunks waits for its end. CRLF input is accepted.
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let rest = "";
  const answer = async (lines: string[]) => {
    if (!lines.length) return;
    const text = `${privatizer.privatize(lines.map((line) => line.replace(/\r$/, ""))).join("\n")}\n`;
    if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once("drain", resolve));
  };
  for await (const chunk of process.stdin) {
    const lines = (rest + decoder.decode(chunk as Buffer, { stream: true })).split("\n");
    rest = lines.pop() as string;
    await answer(lines);
  }
  rest += decoder.decode();
  await answer(rest ? [rest] : []);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  try {
    const args = parseArguments(argv);
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

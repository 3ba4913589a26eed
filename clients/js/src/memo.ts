/**
 * Memoized randomness, mechdesign-memo-1 (mechdesign/deploy/sampling/memo.py, whose docstring is the spec): the
 * same (user, value) always gets the same output, with no state kept. The 64-bit word U of the reference rule
 * (the first y with C[x, y] > U) is a keyed pseudo-random function of (file, attribute, user, value):
 *
 *   U = first 8 bytes (big-endian) of CBC-MAC_K(H ‖ B₂ ‖ user ‖ V),  block cipher AES-256⁻¹_K (decryption),
 *
 * H the file's sha256 (two blocks), B₂ = "mdmemo1\0" ‖ uint32 BE attribute ‖ uint32 BE byte length of the id, the
 * id's UTF-8 bytes zero-padded to whole blocks, V = uint64 BE value index ‖ 8 zero bytes; s₀ = 0,
 * s_i = D_K(s_{i−1} ⊕ block_i). The permutation is AES *decryption* because WebCrypto applies it to many blocks
 * in one call: AES-CBC decryption of C₁…C_n with IV 0 returns P_j = D(C_j) ⊕ C_{j−1}, so D(C_j) = P_j ⊕ C_{j−1}.
 * WebCrypto checks PKCS#7 padding on the last block, so blocks that decrypt to a full padding block are appended
 * (pad = sixteen 0x10 bytes): E_K(pad ⊕ C_n) alone, or, as here, a zero block Z and E_K(pad ⊕ Z), the same for
 * every call (see {@link webCryptoDecryptor}). The CBC-MAC steps block position by block position over all
 * records of a batch; records whose ids have fewer blocks stop earlier.
 */
import { MEMO_SCHEME } from "./release.js";

export { MEMO_SCHEME };
/** The longest user id accepted (UTF-8 bytes), as mechdesign's. */
export const MAX_USER_BYTES = 1024;
/** A user id: text as written, or an integer (written in decimal, as mechdesign reads integer columns). */
export type UserId = string | number | bigint;

/** D_K applied to each 16-byte block independently (ECB decryption, no padding). */
export interface BlockDecryptor {
  decrypt(blocks: Uint8Array): Promise<Uint8Array> | Uint8Array;
}

const BLOCK = 16;
const BATCH = 1 << 15; // records per batch: 512 KiB per step (smaller batches stay in cache; see bench_js_memo)
const IN_FLIGHT = 2; // batches under way at once: AES on a WebCrypto thread beside the JS of the next
const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const TAG = new Uint32Array(new Uint8Array([0x6d, 0x64, 0x6d, 0x65, 0x6d, 0x6f, 0x31, 0x00]).buffer); // "mdmemo1\0"

/** The uint32 whose bytes in memory are x's big-endian bytes (and back: an involution). */
const big = (x: number): number =>
  LITTLE ? (((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0 : x >>> 0;

const words32 = (bytes: Uint8Array): Uint32Array => (bytes.byteOffset % 4 === 0
  ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2)
  : new Uint32Array(new Uint8Array(bytes).buffer)); // a copy: a pooled Node Buffer may start anywhere

/**
 * AES-256⁻¹ through WebCrypto (browsers and Node): one AES-CBC decryption per call (module docstring). The padding
 * block is made once per key: after C₁…C_n come a zero block Z and T = E_K(pad ⊕ Z) (the first block of the
 * AES-CBC encryption of pad with IV 0), which decrypts to D(T) ⊕ Z = pad, a valid padding whatever C_n is; the
 * plaintext of Z, D(Z) ⊕ C_n, is dropped. So each call is one decryption, with no encryption of pad ⊕ C_n.
 *
 * @param key the 32-byte memo key, imported as a raw, non-extractable AES-CBC key
 */
export async function webCryptoDecryptor(key: Uint8Array): Promise<BlockDecryptor> {
  const subtle = globalThis.crypto.subtle;
  const secret = await subtle.importKey("raw", new Uint8Array(key), { name: "AES-CBC" }, false, ["encrypt", "decrypt"]);
  const iv = new Uint8Array(BLOCK);
  const padding = new Uint8Array(BLOCK).fill(BLOCK);
  const tail = new Uint8Array(await subtle.encrypt({ name: "AES-CBC", iv }, secret, padding)).slice(0, BLOCK);
  return {
    async decrypt(blocks: Uint8Array): Promise<Uint8Array> {
      const size = blocks.length;
      const cipher = new Uint8Array(size + 2 * BLOCK); // C₁ … C_n, Z = 0, T
      cipher.set(blocks);
      cipher.set(tail, size + BLOCK);
      const plain = new Uint8Array(await subtle.decrypt({ name: "AES-CBC", iv }, secret, cipher), 0, size);
      const p = words32(plain);
      const c = words32(cipher);
      for (let j = 4; j < p.length; j++) p[j] ^= c[j - 4]; // D(C_j) = P_j ⊕ C_{j−1}
      return plain;
    },
  };
}

/**
 * The 32 bytes of a memo key file: exactly 64 hexadecimal characters, then one optional newline (mechdesign's
 * `read_memo_key`; nothing of the content is echoed: it is a secret).
 *
 * @throws RangeError naming the rule, for any other content
 */
export function parseMemoKey(data: Uint8Array, path: string): Uint8Array {
  const text = data[data.length - 1] === 0x0a ? data.subarray(0, -1) : data;
  const hex = Array.from(text.subarray(0, 65), (b) => String.fromCharCode(b)).join("");
  if (text.length !== 64 || !/^[0-9a-fA-F]{64}$/.test(hex)) throw memoKeyError(data.length, path);
  return Uint8Array.from({ length: 32 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
}

/** The refusal of a key file of `length` bytes (mechdesign's `read_memo_key` words it the same). */
export function memoKeyError(length: number, path: string): RangeError {
  return new RangeError("memo_key must be a file of 64 hexadecimal characters and a newline (32 random bytes, as " +
    `mechdesign memo-key writes), got a file of ${length} bytes: ${path}`);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** An id's text: strings as written, safe integers and bigints in decimal. */
function textOf(user: UserId, name: string): string {
  if (typeof user === "string") return user;
  if (typeof user === "bigint" || Number.isSafeInteger(user)) return String(user);
  throw new TypeError(`${name} must hold strings or integers (user ids), got ${name} value ${String(user)}`);
}

function checkSize(size: number, name: string, record: number): void {
  if (size === 0) {
    throw new RangeError(`${name} must hold no empty or missing user id (one memoized output would be shared by ` +
      `all of them), got ${name}=record ${record}`);
  }
  if (size > MAX_USER_BYTES) { // UTF-8 takes at least one byte per UTF-16 unit: a longer text is longer in bytes
    throw new RangeError(`${name} must hold user ids of at most ${MAX_USER_BYTES} bytes, got ${name}=record ${record}`);
  }
}

/** User ids as the PRF reads them: UTF-8 lengths and the bytes, each id zero-padded to whole blocks. */
export class UserIds {
  /** The UTF-8 length of each id (1 to {@link MAX_USER_BYTES}). */
  readonly lengths: Int32Array;
  /** Id r occupies blocks starts[r] … starts[r + 1] − 1 of {@link bytes}. */
  readonly starts: Int32Array;
  readonly bytes: Uint8Array;

  private constructor(lengths: Int32Array, starts: Int32Array, bytes: Uint8Array) {
    this.lengths = lengths;
    this.starts = starts;
    this.bytes = bytes;
  }

  /**
   * Encode ids: strings as written, integers (safe integers or bigints) in decimal, so that "42" and 42 draw the
   * same outputs, as in mechdesign.
   *
   * @param name the argument named in errors
   * @throws RangeError for an empty id, an id longer than {@link MAX_USER_BYTES} bytes, or text that is not
   *   valid Unicode; TypeError for another type
   */
  static encode(users: readonly UserId[], name = "users"): UserIds {
    const n = users.length;
    const lengths = new Int32Array(n);
    const starts = new Int32Array(n + 1);
    for (let r = 0; r < n; r++) { // lengths as if ASCII (one byte per UTF-16 unit), checked in the copy below
      const size = textOf(users[r], name).length;
      checkSize(size, name, r);
      lengths[r] = size;
      starts[r + 1] = starts[r] + ((size + BLOCK - 1) >> 4);
    }
    const bytes = new Uint8Array(BLOCK * starts[n]);
    let high = 0;
    for (let r = 0; r < n && high < 0x80; r++) {
      const text = textOf(users[r], name);
      const at = BLOCK * starts[r];
      for (let i = 0; i < text.length; i++) {
        const code = text.charCodeAt(i);
        high |= code;
        bytes[at + i] = code;
      }
    }
    return high < 0x80 ? new UserIds(lengths, starts, bytes) : UserIds.encodeUnicode(users, name);
  }

  /** {@link encode} for ids beyond ASCII: UTF-8 lengths first, then TextEncoder. */
  private static encodeUnicode(users: readonly UserId[], name: string): UserIds {
    const n = users.length;
    const lengths = new Int32Array(n);
    const starts = new Int32Array(n + 1);
    for (let r = 0; r < n; r++) {
      const text = textOf(users[r], name);
      let size = text.length;
      for (let i = 0; i < text.length; i++) {
        const code = text.charCodeAt(i);
        if (code >= 0x80) size += code < 0x800 ? 1 : code >= 0xd800 && code < 0xdc00 ? 1 : 2; // pairs: 4 bytes
      }
      checkSize(size, name, r);
      if (size !== text.length && LONE_SURROGATE.test(text)) {
        throw new RangeError(`${name} must hold valid Unicode text (no lone surrogate), got ${name}=record ${r}`);
      }
      lengths[r] = size;
      starts[r + 1] = starts[r] + ((size + BLOCK - 1) >> 4);
    }
    const bytes = new Uint8Array(BLOCK * starts[n]);
    const encoder = new TextEncoder();
    for (let r = 0; r < n; r++) {
      encoder.encodeInto(textOf(users[r], name), bytes.subarray(BLOCK * starts[r], BLOCK * starts[r] + lengths[r]));
    }
    return new UserIds(lengths, starts, bytes);
  }

  get size(): number {
    return this.lengths.length;
  }
}

/**
 * The identifier of a memoization key, as mechdesign's `key_id`: 32 hex digits of SHA-256("mechdesign-memo-1 key",
 * 0, key). It names the key without revealing it, so a file can be bound to the key it is deployed with.
 */
export async function keyId(key: Uint8Array): Promise<string> {
  const tag = new TextEncoder().encode("mechdesign-memo-1 key\0");
  const message = new Uint8Array(tag.length + key.length);
  message.set(tag);
  message.set(key, tag.length);
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", message));
  return Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The keyed pseudo-random function of one file (module docstring): 64-bit words for (attribute, user, value).
 * Create it with {@link MemoFunction.create}.
 */
export class MemoFunction {
  readonly fileSha256: string;
  /** The identifier of the key ({@link keyId}): a file bound to another key refuses this function. */
  readonly keyId: string;
  private readonly cipher: BlockDecryptor;
  private readonly prefix: Uint32Array; // the CBC-MAC state after the file's hash

  private constructor(fileSha256: string, keyId: string, cipher: BlockDecryptor, prefix: Uint32Array) {
    this.fileSha256 = fileSha256;
    this.keyId = keyId;
    this.cipher = cipher;
    this.prefix = prefix;
  }

  /**
   * @param key the 32-byte secret ({@link parseMemoKey})
   * @param fileSha256 the file's sha256 (64 hex digits): it separates the outputs of different files
   * @param cipher the block function: WebCrypto by default ({@link webCryptoDecryptor}); in Node,
   *   `nodeDecryptor` of `@mechdesign/client/node` gives the same words faster
   */
  static async create(key: Uint8Array, fileSha256: string, cipher?: BlockDecryptor): Promise<MemoFunction> {
    if (!(key instanceof Uint8Array) || key.length !== 32) {
      throw new RangeError(`key must be 32 bytes, got key=${key instanceof Uint8Array ? `${key.length} bytes` : typeof key}`);
    }
    if (typeof fileSha256 !== "string" || !/^[0-9a-fA-F]{64}$/.test(fileSha256)) {
      throw new RangeError(`file_sha256 must be 64 hexadecimal digits, got file_sha256=${JSON.stringify(fileSha256)}`);
    }
    const blocks = cipher ?? await webCryptoDecryptor(key);
    const digest = Uint8Array.from({ length: 32 }, (_, i) => parseInt(fileSha256.slice(2 * i, 2 * i + 2), 16));
    let state = new Uint8Array(BLOCK);
    for (let b = 0; b < 2; b++) {
      const input = state.map((s, k) => s ^ digest[BLOCK * b + k]);
      state = new Uint8Array(await blocks.decrypt(input));
    }
    return new MemoFunction(fileSha256.toLowerCase(), await keyId(key), blocks, words32(state));
  }

  /**
   * The words U of records (attribute, users[r], values[r]) as two uint32 halves each: [hi₀, lo₀, hi₁, lo₁, …].
   *
   * @param attribute the attribute index a (0 for a single-column file)
   * @param users the records' ids ({@link UserIds.encode})
   * @param values the value indices x, one per record (integers in [0, 2^32))
   */
  async halves(attribute: number, users: UserIds, values: ArrayLike<number>): Promise<Uint32Array> {
    const n = values.length;
    if (users.size !== n) throw new RangeError(`users must hold one id per value (${n}), got users=${users.size}`);
    if (!(Number.isInteger(attribute) && attribute >= 0 && attribute < 2 ** 32)) {
      throw new RangeError(`attribute must be an integer in [0, 2^32), got attribute=${attribute}`);
    }
    for (let r = 0; r < n; r++) {
      const x = values[r];
      if (!(Number.isInteger(x) && x >= 0 && x < 2 ** 32)) {
        throw new RangeError(`values must hold value indices in [0, 2^32), got values=${x} (record ${r})`);
      }
    }
    const out = new Uint32Array(2 * n);
    const running: Promise<void>[] = [];
    for (let start = 0; start < n; start += BATCH) { // a few batches in flight: AES (a thread in Node) beside JS
      running.push(this.batch(attribute, users, values, start, Math.min(n, start + BATCH), out));
      if (running.length >= IN_FLIGHT) await running.shift();
    }
    await Promise.all(running);
    return out;
  }

  /**
   * `count` words per record from the keyed stream of (file, attribute, user, value), for structured files, as
   * uint32 halves [hi, lo] per word, records one after the other: word 2c and 2c + 1 are the first and the last 8
   * bytes of the tag whose last block is x (uint64 BE) followed by the counter c (uint64 BE), so word 0 is
   * {@link MemoFunction.words}' (mechdesign's `MemoFunction.word_stream`).
   */
  async stream(attribute: number, users: UserIds, values: ArrayLike<number>, count: number): Promise<Uint32Array> {
    const n = values.length;
    if (users.size !== n) throw new RangeError(`users must hold one id per value (${n}), got users=${users.size}`);
    const counters = Math.ceil(count / 2);
    const full = new Uint32Array(4 * counters * n);
    for (let start = 0; start < n; start += BATCH) {
      await this.batch(attribute, users, values, start, Math.min(n, start + BATCH), full, counters);
    }
    if (count === 2 * counters) return full;
    const out = new Uint32Array(2 * count * n);
    for (let r = 0; r < n; r++) out.set(full.subarray(4 * counters * r, 4 * counters * r + 2 * count), 2 * count * r);
    return out;
  }

  /** The words U as unsigned 64-bit integers (what the conformance vectors list). */
  async words(attribute: number, users: UserIds | readonly UserId[], values: ArrayLike<number>): Promise<BigUint64Array> {
    const ids = users instanceof UserIds ? users : UserIds.encode(users);
    const halves = await this.halves(attribute, ids, values);
    return BigUint64Array.from({ length: values.length }, (_, r) => (BigInt(halves[2 * r]) << 32n) | BigInt(halves[2 * r + 1]));
  }

  private async batch(attribute: number, users: UserIds, values: ArrayLike<number>, start: number, end: number,
    out: Uint32Array, counters = 0): Promise<void> {
    const count = end - start;
    const input = new Uint8Array(BLOCK * count);
    const words = words32(input);
    const [p0, p1, p2, p3] = this.prefix;
    const tag0 = p0 ^ TAG[0];
    const tag1 = p1 ^ TAG[1];
    const head = p2 ^ big(attribute);
    const starts = users.starts;
    let most = 0;
    let least = Infinity;
    for (let k = 0, r = start; r < end; k += 4, r++) { // B₂ ⊕ the state after H
      words[k] = tag0;
      words[k + 1] = tag1;
      words[k + 2] = head;
      words[k + 3] = p3 ^ big(users.lengths[r]);
      const blocks = starts[r + 1] - starts[r];
      most = Math.max(most, blocks);
      least = Math.min(least, blocks);
    }
    let state = words32(await this.cipher.decrypt(input));
    const id = words32(users.bytes);
    for (let i = 0; i < most; i++) { // the id's blocks, one position at a time
      let active = count;
      if (i >= least) {
        active = 0;
        for (let r = start; r < end; r++) active += starts[r + 1] - starts[r] > i ? 1 : 0;
      }
      const rows = active === count ? null : new Int32Array(active);
      const next = active === count ? words : new Uint32Array(4 * active);
      for (let k = 0, r = start, j = 0; r < end; k += 4, r++) {
        if (starts[r + 1] - starts[r] <= i) continue;
        const at = 4 * (starts[r] + i);
        next[j] = state[k] ^ id[at];
        next[j + 1] = state[k + 1] ^ id[at + 1];
        next[j + 2] = state[k + 2] ^ id[at + 2];
        next[j + 3] = state[k + 3] ^ id[at + 3];
        if (rows !== null) rows[j >> 2] = k;
        j += 4;
      }
      const result = words32(await this.cipher.decrypt(new Uint8Array(next.buffer, 0, 4 * next.length)));
      if (rows === null) state = result;
      else rows.forEach((k, j) => state.set(result.subarray(4 * j, 4 * j + 4), k)); // ids of fewer blocks are done
    }
    if (counters > 0) { // the word stream: V_c = x ‖ c for c = 0 … counters − 1, both halves of every tag
      for (let c = 0; c < counters; c++) {
        for (let k = 0, r = start; r < end; k += 4, r++) {
          words[k] = state[k];
          words[k + 1] = state[k + 1] ^ big(values[r]);
          words[k + 2] = state[k + 2] ^ big(Math.floor(c / 2 ** 32));
          words[k + 3] = state[k + 3] ^ big(c >>> 0);
        }
        const tag = words32(await this.cipher.decrypt(input));
        for (let k = 0, r = start; r < end; k += 4, r++) {
          const at = 4 * counters * r + 4 * c;
          for (let j = 0; j < 4; j++) out[at + j] = big(tag[k + j]);
        }
      }
      return;
    }
    for (let k = 0, r = start; r < end; k += 4, r++) { // V ⊕ the state: uint64 BE x (x < 2^32) and 8 zero bytes
      words[k] = state[k];
      words[k + 1] = state[k + 1] ^ big(values[r]);
      words[k + 2] = state[k + 2];
      words[k + 3] = state[k + 3];
    }
    const tag = words32(await this.cipher.decrypt(input));
    for (let k = 0, r = start; r < end; k += 4, r++) {
      out[2 * r] = big(tag[k]);
      out[2 * r + 1] = big(tag[k + 1]);
    }
  }
}

/**
 * `memo` if a file may draw with it, as mechdesign's `memo_function` rules for every sampler: it is the file's own
 * (keyed by the file's sha256) and, for a file bound to a key (`release.key`), of that key — another key draws
 * another set of outputs, a second release for every user. The dense and the structured privatizers and the CLI
 * all check through here.
 *
 * @param file the file's sha256 and release policy
 * @param where how the refusal names the file ("the file"; the CLI gives its path, as mechdesign does)
 * @throws RangeError (one line) for a memo function of another file or of a key other than the bound one
 */
export function fileMemo(memo: MemoFunction, file: { sha256: string; release: { key: string | null } },
  where = "the file"): MemoFunction {
  if (memo.fileSha256 !== file.sha256.toLowerCase()) {
    throw new RangeError(`key must be a memo function of this file (sha256 ${file.sha256.slice(0, 12)}…), ` +
      `got key=memo function of ${memo.fileSha256.slice(0, 12)}…`);
  }
  const bound = file.release.key;
  if (bound !== null && memo.keyId !== bound) {
    throw new RangeError(`memo_key must be the key ${where} is bound to (key id ${bound}; another key draws ` +
      `another set of outputs, a new release for everyone), got a key with id ${memo.keyId}`);
  }
  return memo;
}

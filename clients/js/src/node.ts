/**
 * Node-only parts of the client (`@mechdesign/client/node`), outside the browser bundle: AES-256⁻¹ through
 * `node:crypto` (OpenSSL's ECB decryption, synchronous), which gives the same memoized words as WebCrypto's
 * AES-CBC path (memo.ts) with fewer copies.
 */
import { createDecipheriv } from "node:crypto";
import type { BlockDecryptor } from "./memo.js";

/** D_K on each block with `createDecipheriv("aes-256-ecb")`, no padding (the decipher is reused: ECB keeps no state). */
export function nodeDecryptor(key: Uint8Array): BlockDecryptor {
  if (!(key instanceof Uint8Array) || key.length !== 32) throw new RangeError("key must be 32 bytes, got key=" +
    `${key instanceof Uint8Array ? `${key.length} bytes` : typeof key}`);
  const decipher = createDecipheriv("aes-256-ecb", key, null).setAutoPadding(false);
  return {
    decrypt(blocks: Uint8Array): Uint8Array {
      const out = decipher.update(blocks);
      if (out.length !== blocks.length) throw new Error(`aes-256-ecb returned ${out.length} of ${blocks.length} bytes`);
      return out;
    },
  };
}

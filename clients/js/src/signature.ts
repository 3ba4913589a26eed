/**
 * Ed25519 (RFC 8032) through WebCrypto, which Node ≥ 20 and evergreen browsers provide: no dependency.
 * The signature covers the same canonical bytes as the sha256; trust comes from the key the verifier supplies,
 * never from the key embedded in the file.
 */

/** A public key: PEM text (SubjectPublicKeyInfo, as `mechdesign sign --generate-key` writes), the 32 raw bytes,
 * their base64, or a WebCrypto key. */
export type PublicKeyInput = string | Uint8Array | CryptoKey;

const ALGORITHM = { name: "Ed25519" } as const;

function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) return null;
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** Import a public key, or throw a TypeError naming `public_key` (a usage error, not a file error). */
export async function importPublicKey(key: PublicKeyInput): Promise<CryptoKey> {
  if (typeof key !== "string" && !(key instanceof Uint8Array)) return key;
  try {
    if (typeof key === "string" && key.includes("-----BEGIN PUBLIC KEY-----")) {
      const body = key.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, "").replace(/\s+/g, "");
      const der = fromBase64(body);
      if (der === null) throw new Error("bad base64");
      return await globalThis.crypto.subtle.importKey("spki", der, ALGORITHM, false, ["verify"]);
    }
    const raw = typeof key === "string" ? fromBase64(key.trim()) : new Uint8Array(key);
    if (raw === null || raw.length !== 32) throw new Error("not 32 bytes");
    return await globalThis.crypto.subtle.importKey("raw", raw, ALGORITHM, false, ["verify"]);
  } catch {
    const shown = typeof key === "string" ? JSON.stringify(key.slice(0, 60)) : `${key.length} bytes`;
    throw new TypeError(`public_key must be a PEM Ed25519 public key or its 32 raw bytes, got public_key=${shown}`);
  }
}

/** Whether base64 `value` is a valid Ed25519 signature of `message` by `key`. */
export async function verifyEd25519(key: CryptoKey, value: unknown, message: Uint8Array): Promise<boolean> {
  const signature = typeof value === "string" ? fromBase64(value) : null;
  if (signature === null || signature.length !== 64) return false;
  try {
    return await globalThis.crypto.subtle.verify(ALGORITHM, key, signature, new Uint8Array(message));
  } catch {
    return false;
  }
}

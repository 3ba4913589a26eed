/**
 * @mechdesign/client — load, verify and sample mechdesign mechanism files (format version 2) in Node ≥ 20 and
 * evergreen browsers, with no runtime dependency (WebCrypto for SHA-256 and Ed25519, BigInt for exact sampling).
 *
 * Glossary (as in mechdesign): `epsilon` in nats, `delta`, `radius` (ℓ1 distance, 0..2), `prior`, `samples` (m),
 * `matrix[x][y] = P(y | x)` (rows sum to 1).
 */
export { CanonicalError, canonicalize, nestingDepth, scanNumbers } from "./canonical.js";
export type { NumberScan } from "./canonical.js";
export { MechanismFileError } from "./errors.js";
export { capacity, ldpEpsilon, ldpLevel, logMinLinear, minLinear, radiusForDelta } from "./leakage.js";
export {
  FORMAT_NAME, FORMAT_VERSION, MAX_DEPTH, MAX_FILE_BYTES, MAX_FILE_VARIABLE, STOCHASTIC_ATOL,
  achievedEpsilon, canonicalBytes, formatMiB, loadMechanismFile, maxFileBytes, renormalise, requiredRadius, roundUp,
  verifyMechanismFile,
} from "./mechfile.js";
export type { Guarantee, LoadOptions, MechanismFile, Signature } from "./mechfile.js";
export {
  MAX_USER_BYTES, MEMO_SCHEME, MemoFunction, UserIds, fileMemo, keyId, parseMemoKey, webCryptoDecryptor,
} from "./memo.js";
export type { BlockDecryptor, UserId } from "./memo.js";
export { fsum, pairwiseSum } from "./numeric.js";
export { Privatizer, SAMPLED_SLACK } from "./privatizer.js";
export { MAX_RELEASES, SINGLE, checkRelease, isMemoized, linkLevel, readRelease } from "./release.js";
export type { PolicyName, ReleaseCheck, ReleasePolicy } from "./release.js";
export { MAX_COUNT_VECTORS, countVectors, releaseLeakage } from "./repeated.js";
export type { ReleaseAccount } from "./repeated.js";
export { QUANT_SCALE, Sampler, quantise } from "./sampler.js";
export type { RandomFill } from "./sampler.js";
export { importPublicKey } from "./signature.js";

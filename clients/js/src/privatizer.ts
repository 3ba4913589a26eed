/**
 * Privatize labelled values with a verified mechanism file: each value x becomes an output label drawn from
 * row x of the sampled matrix W_q = Q / 2^64 (within 2^-64 of the file's matrix), whose guarantee is recomputed
 * first, as mechdesign's `Privatizer.check` does.
 *
 * Fresh draws take their words from crypto.getRandomValues; memoized draws ({@link Privatizer.privatizeMemoized})
 * from the keyed pseudo-random function of (file, user, value) (memo.ts), so the same user and value always get
 * the same output. A file whose release policy is "memoized" or "two-layer" is privatized only that way; a
 * two-layer file's permanent output y₁ is memoized and each report drawn afresh from W₂[y₁, ·].
 */
import { MechanismFileError } from "./errors.js";
import { type MechanismFile, achievedEpsilon, renormalise } from "./mechfile.js";
import { type BlockDecryptor, MemoFunction, type UserId, UserIds, fileMemo } from "./memo.js";
import { compose, isMemoized, linkLevel } from "./release.js";
import { type RandomFill, Sampler } from "./sampler.js";

/**
 * What quantisation to 2^-64 may add to the achieved ε of the sampled matrix W_q (as mechdesign's
 * `Privatizer.check`): the file's own matrix is held to its stated ε with no allowance; its sampled
 * approximation, within 2^-64 per entry, to 1e-12 nats.
 */
export const SAMPLED_SLACK = 1e-12;
const CHUNK = 1 << 16; // records whose ids are encoded at once by privatizeMemoized (cache-sized: 1 MiB of blocks)

/** Output labels of output indices. */
function labelled(codes: Uint16Array, labels: readonly string[]): string[] {
  const out: string[] = new Array(codes.length);
  for (let i = 0; i < codes.length; i++) out[i] = labels[codes[i]];
  return out;
}

export class Privatizer {
  readonly file: MechanismFile;
  readonly sampler: Sampler;
  /** The ε the sampled matrix W_q achieves, rounded up (at most the stated ε + {@link SAMPLED_SLACK}, or
   * construction fails). */
  readonly sampledEpsilon: number;
  /** W₂ of a two-layer file, compiled (fresh draws on the permanent outputs), else null. */
  readonly reports: Sampler | null;
  /** The per-report ε of the sampled layers W₁,q W₂,q, rounded up (two-layer files), else null. */
  readonly reportEpsilon: number | null;
  private readonly index: Map<string, number>;
  private readonly memos = new WeakMap<Uint8Array, Promise<MemoFunction>>();

  /**
   * @param file a loaded (verified) mechanism file
   * @param fill a source of uniform 32-bit words (default: crypto.getRandomValues); replace it only in tests
   * @throws MechanismFileError if quantisation to 2^-64 pushes the achieved ε (or a two-layer file's per-report
   *   ε or linkability level) above the stated one
   */
  constructor(file: MechanismFile, fill?: RandomFill) {
    this.file = file;
    this.sampler = new Sampler(file.matrix, fill);
    this.sampledEpsilon = achievedEpsilon(renormalise(this.sampler.sampledMatrix()), file.guarantee);
    if (!(this.sampledEpsilon <= file.guarantee.epsilon + SAMPLED_SLACK)) {
      throw new MechanismFileError("sampled matrix", `meet guarantee.epsilon=${file.guarantee.epsilon} after ` +
        "quantisation to 2^-64", "entries too small to sample exactly", this.sampledEpsilon);
    }
    const layer = file.release.reports;
    this.reports = layer === null ? null : new Sampler(layer.matrix, fill);
    this.reportEpsilon = null;
    if (this.reports !== null) {
      const stated = file.release.epsilon as number;
      const composed = compose(this.sampler.sampledMatrix(), this.reports.sampledMatrix());
      this.reportEpsilon = achievedEpsilon(renormalise(composed), file.guarantee);
      if (!(this.reportEpsilon <= stated + SAMPLED_SLACK)) {
        throw new MechanismFileError("sampled two-layer design", `meet release.epsilon=${stated} per report after ` +
          "quantisation to 2^-64", "entries too small to sample exactly", this.reportEpsilon);
      }
      // The stated link level holds for the file's W₂; an entry below 2^-64 quantised to 0 makes the sampled one
      // infinite: recomputed for what is drawn, as mechdesign's Privatizer does.
      const link = file.release.linkEpsilon;
      if (link !== null) {
        const level = linkLevel(renormalise(this.sampler.sampledMatrix()), renormalise(this.reports.sampledMatrix()));
        if (!(level <= link)) {
          throw new MechanismFileError("sampled two-layer design", `meet release.link_epsilon=${link} after ` +
            "quantisation to 2^-64", `entries of the reports too small to sample exactly; got link level=${level}`);
        }
      }
    }
    this.index = new Map(file.inputs.map((label, x) => [label, x]));
  }

  /** The labels of what is released: W₂'s outputs for a two-layer file, the file's outputs otherwise. */
  get outputs(): string[] {
    return this.file.release.reports?.outputs ?? this.file.outputs;
  }

  /** Input indices of labels; an unknown label is a RangeError naming it. */
  encode(values: readonly string[]): Uint32Array {
    const out = new Uint32Array(values.length);
    for (let i = 0; i < values.length; i++) {
      const x = this.index.get(values[i]);
      if (x === undefined) {
        throw new RangeError(`values must be input labels of the mechanism (${this.file.inputs.slice(0, 5)
          .map((l) => JSON.stringify(l)).join(", ")}${this.file.inputs.length > 5 ? ", ..." : ""}), got value=` +
          JSON.stringify(values[i]));
      }
      out[i] = x;
    }
    return out;
  }

  /**
   * One privatized label per value, drawn afresh.
   * @throws RangeError for a file whose release policy is memoized or two-layer (no fresh draws: use
   *   {@link privatizeMemoized})
   */
  privatize(values: readonly string[]): string[] {
    const policy = this.file.release.policy;
    if (isMemoized(this.file.release)) {
      throw new RangeError(`memo_key must be given: the file has release policy '${policy}' (the same user and ` +
        "value must always get the same output; no fresh draws: privatizeMemoized(values, users, key)), got " +
        "memo_key=null");
    }
    return labelled(this.sampler.sampleIndices(this.encode(values)), this.file.outputs);
  }

  /**
   * One privatized label per (value, user), memoized: the output is the reference rule on the keyed
   * pseudo-random word of (file, attribute 0, user, value) (mechdesign-memo-1), so the same user and value
   * always get the same output, on every run and machine with the same key. A two-layer file's memoized output
   * is its permanent one, y₁; the label released is a fresh draw from W₂[y₁, ·].
   *
   * @param users one id per value: strings as written, integers in decimal (as mechdesign reads a user column)
   * @param key the 32-byte memo key (WebCrypto's AES), or a {@link MemoFunction} of this file (e.g. with the
   *   faster `nodeDecryptor` of `@mechdesign/client/node`)
   * @throws RangeError when the file's release policy is bound to another key (`release.key`)
   */
  async privatizeMemoized(values: readonly string[], users: readonly UserId[], key: Uint8Array | MemoFunction):
    Promise<string[]> {
    if (users.length !== values.length) {
      throw new RangeError(`users must hold one id per value (${values.length}), got users=${users.length}`);
    }
    const x = this.encode(values);
    const memo = await this.memo(key);
    const permanent = new Uint16Array(x.length);
    for (let start = 0; start < x.length; start += CHUNK) { // ids encoded a chunk at a time: memory O(chunk)
      const end = Math.min(x.length, start + CHUNK);
      const part = x.subarray(start, end);
      const ids = UserIds.encode(start === 0 && end === x.length ? users : users.slice(start, end));
      this.sampler.sampleWords(part, await memo.halves(0, ids, part), permanent.subarray(start, end));
    }
    return labelled(this.reports === null ? permanent : this.reports.sampleIndices(permanent), this.outputs);
  }

  /**
   * The memo function of this file for a key (created once per key object), checked by {@link fileMemo}.
   * @throws RangeError for a memo function of another file, or a key other than the one the file is bound to
   */
  memo(key: Uint8Array | MemoFunction, cipher?: BlockDecryptor): Promise<MemoFunction> {
    if (key instanceof MemoFunction) return Promise.resolve(fileMemo(key, this.file));
    let memo = this.memos.get(key);
    if (memo === undefined) {
      memo = MemoFunction.create(key, this.file.sha256, cipher).then((created) => fileMemo(created, this.file));
      this.memos.set(key, memo);
    }
    return memo;
  }
}

/**
 * Privatize labelled values with a verified mechanism file: each value x becomes an output label drawn from
 * row x of the sampled matrix W_q = Q / 2^64 (within 2^-64 of the file's matrix), whose guarantee is recomputed
 * first, as mechdesign's `Privatizer.check` does.
 */
import { MechanismFileError } from "./errors.js";
import { type MechanismFile, achievedEpsilon, renormalise } from "./mechfile.js";
import { type RandomFill, Sampler } from "./sampler.js";

/**
 * What quantisation to 2^-64 may add to the achieved ε of the sampled matrix W_q (as mechdesign's
 * `Privatizer.check`): the file's own matrix is held to its stated ε with no allowance; its sampled
 * approximation, within 2^-64 per entry, to 1e-12 nats.
 */
export const SAMPLED_SLACK = 1e-12;

export class Privatizer {
  readonly file: MechanismFile;
  readonly sampler: Sampler;
  /** The ε the sampled matrix W_q achieves, rounded up (at most the stated ε + {@link SAMPLED_SLACK}, or
   * construction fails). */
  readonly sampledEpsilon: number;
  private readonly index: Map<string, number>;

  /**
   * @param file a loaded (verified) mechanism file
   * @param fill a source of uniform 32-bit words (default: crypto.getRandomValues); replace it only in tests
   * @throws MechanismFileError if quantisation to 2^-64 pushes the achieved ε above the stated one
   */
  constructor(file: MechanismFile, fill?: RandomFill) {
    this.file = file;
    this.sampler = new Sampler(file.matrix, fill);
    this.sampledEpsilon = achievedEpsilon(renormalise(this.sampler.sampledMatrix()), file.guarantee);
    if (!(this.sampledEpsilon <= file.guarantee.epsilon + SAMPLED_SLACK)) {
      throw new MechanismFileError("sampled matrix", `meet guarantee.epsilon=${file.guarantee.epsilon} after ` +
        "quantisation to 2^-64", "entries too small to sample exactly", this.sampledEpsilon);
    }
    this.index = new Map(file.inputs.map((label, x) => [label, x]));
  }

  /** Input indices of labels; an unknown label is a RangeError naming it. */
  encode(values: readonly string[]): Uint32Array {
    return Uint32Array.from(values, (value) => {
      const x = this.index.get(value);
      if (x === undefined) {
        throw new RangeError(`values must be input labels of the mechanism (${this.file.inputs.slice(0, 5)
          .map((l) => JSON.stringify(l)).join(", ")}${this.file.inputs.length > 5 ? ", ..." : ""}), got value=${JSON.stringify(value)}`);
      }
      return x;
    });
  }

  /** One privatized label per value. */
  privatize(values: readonly string[]): string[] {
    const codes = this.sampler.sampleIndices(this.encode(values));
    return Array.from(codes, (y) => this.file.outputs[y]);
  }
}

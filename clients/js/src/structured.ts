/**
 * Structured (symmetric) mechanism files, `@mechdesign/client/structured`: load, verify and sample large-alphabet
 * designs (issue 43). A separate entry point, outside the browser bundle of the dense client (its size budget):
 * import it where structured files are used.
 */
export {
  KIND, PLACEMENT_FAMILY, cellsFromCounts, groupMinLinear, isSymmetricContent, loadSymmetricFile, primeParts,
  typeCapacities, unpackCounts, verifySymmetricFile,
} from "./symmetric.js";
export type { Cells, SymmetricFile, SymmetricMechanism } from "./symmetric.js";
export { RICE_CODE, unpackRice } from "./symmetricRice.js";
export { SymmetricSampler, placementFamily, primitiveRoot, reportBytes } from "./symmetricSampler.js";
export type { Family } from "./symmetricSampler.js";
export { binaryReport, binaryWidths, readBinaryReport } from "./symmetricBinary.js";

// Print the minified browser bundle's size (raw and gzip) and fail above the budget.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const BUDGET_GZIP = 12 * 1024; // bytes, gzip: the whole client (schema constants, JCS, capacity, sampler, CLI-free)
const bundle = readFileSync(new URL("../dist/mechdesign.min.js", import.meta.url));
const gzip = gzipSync(bundle, { level: 9 }).length;
console.log(`dist/mechdesign.min.js: ${bundle.length} bytes, ${gzip} bytes gzip (budget ${BUDGET_GZIP})`);
if (gzip > BUDGET_GZIP) {
  console.error(`bundle over budget: ${gzip} > ${BUDGET_GZIP} bytes gzip`);
  process.exit(1);
}

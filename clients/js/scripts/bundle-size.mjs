// Print the minified browser bundle's size (raw and gzip) and fail above the budget.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

// Bytes, gzip: the whole client (schema constants, JCS, capacity, sampler, CLI-free). 12 KiB until issue 37 brought
// release policies (verifying a file's T-release account: 11.9 kB with it) and memoized sampling (mechdesign-memo-1
// over WebCrypto: 14.7 kB in all). Both stay in the one bundle: a device that reports again and again must verify
// the policy and memoize its draws, and a second bundle would only make every such page load two files.
const BUDGET_GZIP = 16 * 1024;
const bundle = readFileSync(new URL("../dist/mechdesign.min.js", import.meta.url));
const gzip = gzipSync(bundle, { level: 9 }).length;
console.log(`dist/mechdesign.min.js: ${bundle.length} bytes, ${gzip} bytes gzip (budget ${BUDGET_GZIP})`);
if (gzip > BUDGET_GZIP) {
  console.error(`bundle over budget: ${gzip} > ${BUDGET_GZIP} bytes gzip`);
  process.exit(1);
}

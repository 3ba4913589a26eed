// The demo page in headless Chromium (Debian's `chromium`, driven by puppeteer-core over the DevTools protocol):
// load a signed file with its key, read the guarantee in the DOM, privatize a value, refuse a tampered file, and
// write a screenshot (demo/out/demo.png) that is checked to show the page (not blank, mostly text on white); and the
// memoized words of conformance/memo.json drawn with the browser's own WebCrypto.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { inflateSync } from "node:zlib";
import puppeteer from "puppeteer-core";
import { createDemoServer } from "../scripts/serve-demo.mjs";

const client = fileURLToPath(new URL("..", import.meta.url));
const conformance = fileURLToPath(new URL("../../../conformance/", import.meta.url));
const browserPath = process.env.CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
let server;
let browser;
let base;

before(async () => {
  assert.ok(browserPath, "Chromium not found: install Debian's chromium (apt-get install chromium) or set CHROMIUM");
  server = createDemoServer(); // static files of clients/js, on the loopback only (npm run demo's server)
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await puppeteer.launch({
    executablePath: browserPath, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
});

async function openDemo() {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.setViewport({ width: 900, height: 820 });
  await page.goto(`${base}/demo/index.html`, { waitUntil: "load" });
  return { page, errors };
}

async function loadFile(page, name, key) {
  const input = await page.$("#file");
  await input.uploadFile(join(conformance, "files", `${name}.json`));
  await page.$eval("#key", (element, text) => { element.value = text; }, key ?? "");
  // The page writes the status only when the check ends: clear the previous one, or it would be read instead.
  await page.$eval("#status", (element) => element.replaceChildren());
  await page.click("#load");
  await page.waitForFunction(() => document.querySelector("#status").textContent.length > 0);
  return page.$eval("#status", (element) => element.textContent);
}

/** RGB(A) pixels of an 8-bit, non-interlaced PNG (what Chromium writes), for the blank-page check. */
function decodePng(png) {
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString("ascii", offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      assert.equal(body[8], 8, "8-bit PNG");
      channels = { 2: 3, 6: 4 }[body[9]];
    } else if (type === "IDAT") data.push(body);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x];
      const left = x >= channels ? pixels[y * stride + x - channels] : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const corner = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      const paeth = () => {
        const p = left + up - corner;
        const [a, b, c] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - corner)];
        return a <= b && a <= c ? left : b <= c ? up : corner;
      };
      const predictor = [0, left, up, (left + up) >> 1, paeth()][filter];
      pixels[y * stride + x] = (value + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

test("the demo verifies a signed file, shows its guarantee and privatizes a typed value", async () => {
  const { page, errors } = await openDemo();
  assert.equal(await page.$eval("#needs-server", (element) => element.hidden), true, "served: the notice is hidden");
  const key = readFileSync(join(conformance, "keys", "signer.pub.pem"), "utf8");
  const status = await loadFile(page, "pml-4-signed", key);
  assert.match(status, /Guarantee holds: pml ε = 0\.5814102973, signature valid/);
  // the bound compared, rounded up: the value the conformance manifest expects of every client, not a copy of it
  const manifest = JSON.parse(readFileSync(join(conformance, "manifest.json"), "utf8"));
  const { achieved } = manifest.files.find((entry) => entry.name === "pml-4-signed").expect;
  assert.ok(status.includes(`recomputed ε${achieved} nats`), status);
  await page.type("#value", "x2");
  const seen = new Set();
  for (let i = 0; i < 40; i++) {
    await page.click("#privatize");
    seen.add(await page.$eval("#output", (element) => element.textContent));
  }
  assert.ok([...seen].every((label) => ["y0", "y1", "y2", "y3"].includes(label)), [...seen].join());
  assert.ok(seen.size >= 2, "40 draws from a mechanism with ε ≈ 0.58 give more than one output");
  mkdirSync(join(client, "demo", "out"), { recursive: true });
  const shot = join(client, "demo", "out", "demo.png");
  writeFileSync(shot, await page.screenshot({ fullPage: true }));
  const { width, height, channels, pixels } = decodePng(readFileSync(shot));
  assert.ok(width >= 800 && height >= 600, `${width}x${height}`);
  let dark = 0;
  let white = 0;
  const colours = new Set();
  for (let i = 0; i < pixels.length; i += channels) {
    const [r, g, b] = [pixels[i], pixels[i + 1], pixels[i + 2]];
    colours.add((r << 16) | (g << 8) | b);
    if (r + g + b < 200) dark += 1;
    if (r + g + b > 750) white += 1;
  }
  const total = pixels.length / channels;
  assert.ok(dark / total > 0.005 && white / total > 0.5 && colours.size > 50,
    `dark ${dark / total}, white ${white / total}, ${colours.size} colours: the page did not render`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the demo refuses a tampered file and a wrong key with the loader's one-line reason", async () => {
  const { page } = await openDemo();
  assert.match(await loadFile(page, "tampered-matrix"), /Refused: sha256 must match the canonical content/);
  assert.equal(await page.$eval("#privatize", (element) => element.disabled), true);
  const other = readFileSync(join(conformance, "keys", "other.pub.pem"), "utf8");
  assert.match(await loadFile(page, "ldp-krr-2-signed", other), /signature must be valid for the given public key/);
  assert.match(await loadFile(page, "radius-enlarged"), /Refused: the matrix does not achieve the stated ε/);
  await page.close();
});

test("in the browser, memoized words come from WebCrypto's AES-CBC and equal mechdesign's (conformance/memo.json)", async () => {
  const { page, errors } = await openDemo();
  const vectors = JSON.parse(readFileSync(join(conformance, "memo.json"), "utf8"));
  const files = Object.fromEntries([vectors.file, vectors.two_layer.file].map((path) =>
    [path, readFileSync(join(conformance, path), "utf8")]));
  const result = await page.evaluate(async (memo, texts) => {
    const { MemoFunction, Privatizer, UserIds, loadMechanismFile } = await import("/dist/mechdesign.min.js");
    const key = Uint8Array.from(memo.key.match(/../g), (h) => parseInt(h, 16));
    const file = await loadMechanismFile(texts[memo.file]);
    const words = [];
    for (const attribute of [0, 1, 5]) {
      const cases = memo.cases.filter((c) => c.attribute === attribute);
      const prf = await MemoFunction.create(key, file.sha256); // WebCrypto: the browser's own AES
      const drawn = await prf.words(attribute, cases.map((c) => c.user), cases.map((c) => c.value));
      words.push(...Array.from(drawn, String));
    }
    const zero = memo.cases.filter((c) => c.attribute === 0);
    const outputs = await new Privatizer(file).privatizeMemoized(zero.map((c) => c.input), zero.map((c) => c.user), key);
    const layered = new Privatizer(await loadMechanismFile(texts[memo.two_layer.file]));
    const cases = memo.two_layer.cases;
    const x = layered.encode(cases.map((c) => c.input));
    const halves = await (await MemoFunction.create(key, layered.file.sha256)).halves(0, UserIds.encode(cases.map((c) => c.user)), x);
    const permanent = Array.from(layered.sampler.sampleWords(x, halves), (y) => layered.file.outputs[y]);
    let fresh = null;
    try {
      layered.privatize(["red"]);
    } catch (error) {
      fresh = error.message;
    }
    return { words, outputs, permanent, fresh };
  }, vectors, files);
  const expected = [0, 1, 5].flatMap((a) => vectors.cases.filter((c) => c.attribute === a).map((c) => c.word));
  assert.deepEqual(result.words, expected);
  assert.deepEqual(result.outputs, vectors.cases.filter((c) => c.attribute === 0).map((c) => c.output));
  assert.deepEqual(result.permanent, vectors.two_layer.cases.map((c) => c.permanent));
  assert.match(result.fresh, /^memo_key must be given: the file has release policy 'two-layer'/);
  assert.deepEqual(errors, []);
  await page.close();
});

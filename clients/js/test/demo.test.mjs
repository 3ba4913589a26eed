// The demo page outside a browser: opened from disk it says why nothing runs (browsers refuse module scripts from
// file://) and how to serve it; `npm run demo`'s server gives the page, its script and the bundle with the content
// types module scripts need, and nothing outside clients/js. (demo/browser.test.mjs drives the served page.)
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { get } from "node:http";
import { after, before, test } from "node:test";
import { createDemoServer } from "../scripts/serve-demo.mjs";

const demo = new URL("../demo/", import.meta.url);
let server;
let base;

before(async () => {
  server = createDemoServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => server?.close());

test("opened from disk, the page says it must be served and how; its script hides that notice", () => {
  const html = readFileSync(new URL("index.html", demo), "utf8");
  const notice = /<p id="needs-server"([^>]*)>([\s\S]*?)<\/p>/.exec(html);
  assert.ok(notice, "the page has the notice");
  assert.doesNotMatch(notice[1], /hidden/, "visible unless the module script runs");
  assert.match(notice[2], /npm run demo/);
  const script = readFileSync(new URL("demo.js", demo), "utf8");
  assert.match(script, /\$\("needs-server"\)\.hidden = true/);
});

test("the demo server serves the page, its module and the bundle, with module content types", async () => {
  for (const [path, type] of [["/demo/", "text/html"], ["/demo/demo.js", "text/javascript"],
    ["/dist/mechdesign.min.js", "text/javascript"]]) {
    const response = await fetch(base + path);
    assert.equal(response.status, 200, path);
    assert.ok(response.headers.get("content-type").startsWith(type), `${path}: ${response.headers.get("content-type")}`);
  }
  const page = await (await fetch(`${base}/`)).text();
  assert.match(page, /<script type="module" src="demo.js">/);
});

test("the demo server refuses paths outside clients/js", async () => {
  // Raw request paths (fetch would normalise the dots away): decoded, they climb out of clients/js.
  for (const path of ["/..%2f..%2fREADME.md", "/demo/..%2f..%2f..%2fconformance%2fmanifest.json", "/no-such-file"]) {
    const status = await new Promise((resolve, reject) => {
      get({ host: "127.0.0.1", port: server.address().port, path }, (response) => {
        response.resume();
        resolve(response.statusCode);
      }).on("error", reject);
    });
    assert.equal(status, 404, path);
  }
});

// Serve the demo page on the loopback: `npm run demo`, then open the printed address (http://127.0.0.1:8080/demo/).
//
// Browsers do not run module scripts from file:// (a page opened from disk loads, but its `<script type="module">`
// is refused as a cross-origin request), so the demo needs a server; this one serves clients/js's own files only
// (demo/ and the built dist/), to 127.0.0.1 only, with the content types module scripts require. PORT sets the port.
import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const client = fileURLToPath(new URL("..", import.meta.url));
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
  ".json": "application/json", ".png": "image/png" };

/** A server of clients/js's files (`/` and `/demo` go to the demo page); a path outside clients/js is a 404. */
export function createDemoServer(root = client) {
  const top = root.endsWith(sep) ? root : root + sep;
  return createServer((request, response) => {
    let path = decodeURIComponent(new URL(request.url, "http://x").pathname);
    if (path === "/" || path === "/demo" || path === "/demo/") path = "/demo/index.html";
    const file = normalize(join(top, path));
    if (!file.startsWith(top) || !existsSync(file) || !statSync(file).isFile()) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    response.end(readFileSync(file));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === normalize(process.argv[1])) {
  if (!existsSync(join(client, "dist", "mechdesign.min.js"))) {
    console.error("dist/mechdesign.min.js is missing: run `npm run build` first");
    process.exit(2);
  }
  const server = createDemoServer();
  server.listen(Number(process.env.PORT ?? 8080), "127.0.0.1", () => {
    console.log(`demo: http://127.0.0.1:${server.address().port}/demo/ (Ctrl-C stops it)`);
  });
}

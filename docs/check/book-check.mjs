// Loads every page of a built book in headless Chromium and reports, per page:
// missing images, empty code listings, broken links and anchors, JavaScript errors,
// and any request that would leave the machine.
//
//   node book-check.mjs DIR        check every .html under DIR; exit 1 on any problem
//   node self-test.mjs             prove the checker catches each defect (see fixture/)

import { chromium } from "playwright-core";
import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CHROMIUM = process.env.BOOK_CHECK_CHROMIUM || "/usr/bin/chromium";

// Background-networking flags keep Chromium from calling home; without them its own
// connections would fail on a closed network and clutter the run.
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".ico": "image/x-icon",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8",
};

/** Every .html file under `root`, as sorted relative paths with forward slashes. */
export function listPages(root) {
  const out = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.endsWith(".html")) {
        out.push(path.relative(root, full).split(path.sep).join("/"));
      }
    }
  };
  walk(root);
  return out.sort();
}

/** The file a URL path names inside `root`, or null when it escapes the root. */
function fileFor(root, urlPath) {
  let rel;
  try {
    rel = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (rel.endsWith("/")) rel += "index.html";
  const full = path.resolve(root, "." + rel);
  if (full !== root && !full.startsWith(root + path.sep)) return null;
  return full;
}

function isFile(p) {
  try {
    return p !== null && fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** A static file server on 127.0.0.1, so pages load as they would when served. */
function serve(root) {
  const server = http.createServer((req, res) => {
    const file = fileFor(root, new URL(req.url, "http://127.0.0.1").pathname);
    if (!isFile(file)) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
      return;
    }
    const type = TYPES[path.extname(file).toLowerCase()] || "application/octet-stream";
    res.writeHead(200, { "content-type": type, "cache-control": "no-store" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

/** Runs inside the page: what the rendered DOM holds. */
async function inspectDom() {
  // A lazy image below the fold would never load in a headless viewport.
  const imgs = Array.from(document.images);
  for (const img of imgs) if (img.loading === "lazy") img.loading = "eager";
  const images = await Promise.all(
    imgs.map(async (img) => {
      const attr = img.getAttribute("src") || "";
      if (!img.complete) {
        await new Promise((done) => {
          img.addEventListener("load", done, { once: true });
          img.addEventListener("error", done, { once: true });
          setTimeout(done, 5000);
        });
      }
      // An SVG with only a viewBox can report a zero natural width and still be
      // fine; decode() tells a broken image from an unsized one.
      let broken = img.naturalWidth === 0;
      if (broken) {
        broken = await img.decode().then(
          () => false,
          () => true,
        );
      }
      return { attr, url: img.currentSrc || img.src, broken };
    }),
  );
  const embedded = [];
  for (const el of document.querySelectorAll("object[data], embed[src]")) {
    const attr = el.getAttribute(el.tagName === "OBJECT" ? "data" : "src") || "";
    const url = el.tagName === "OBJECT" ? el.data : el.src;
    let doc = null;
    try {
      doc = el.tagName === "OBJECT" ? el.contentDocument : el.getSVGDocument();
    } catch {
      doc = null;
    }
    const isSvg = /\.svg(\?|#|$)/i.test(attr) || /svg/i.test(el.getAttribute("type") || "");
    const loaded = doc !== null && (!isSvg || doc.documentElement?.localName === "svg");
    embedded.push({ tag: el.tagName.toLowerCase(), attr, url, broken: !loaded });
  }
  const listings = Array.from(document.querySelectorAll("pre > code"));
  const emptyListings = [];
  listings.forEach((code, i) => {
    if (code.textContent.trim() === "") {
      const near = code.closest("[id]") || code.parentElement.previousElementSibling?.querySelector("[id]");
      emptyListings.push(`listing ${i + 1} of ${listings.length}${near ? ` (near #${near.id})` : ""}`);
    }
  });
  const links = Array.from(document.querySelectorAll("a[href], area[href]")).map((a) => ({
    attr: a.getAttribute("href"),
    url: a.href,
  }));
  const ids = Array.from(document.querySelectorAll("[id]"), (el) => el.id).concat(
    Array.from(document.querySelectorAll("a[name]"), (el) => el.getAttribute("name")),
  );
  return { images, embedded, listings: listings.length, emptyListings, links, ids };
}

/**
 * Checks every page under `root`. Returns one entry per page, in sorted order:
 * { page, problems: [string], links, external, images, listings }.
 */
export async function checkBook(root, { log = () => {} } = {}) {
  root = path.resolve(root);
  const pages = listPages(root);
  const server = await serve(root);
  const origin = `http://127.0.0.1:${server.address().port}`;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "book-check-"));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 900 },
    });
    const results = [];
    for (const page of pages) {
      results.push(await loadPage(context, origin, page));
    }
    // Anchors are checked once every page's ids are known.
    const idsOf = new Map(results.map((r) => [r.page, new Set(r.dom.ids)]));
    const report = [];
    for (const r of results) {
      const problems = r.problems.concat(checkLinks(root, origin, r, idsOf));
      report.push({
        page: r.page,
        problems: [...new Set(problems)].sort(),
        links: r.dom.links.length,
        external: r.external,
        images: r.dom.images.length + r.dom.embedded.length,
        listings: r.dom.listings,
      });
      log(report[report.length - 1]);
    }
    return report;
  } finally {
    if (context) await context.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

async function loadPage(context, origin, name) {
  const page = await context.newPage();
  const problems = [];
  const failed = new Map(); // url -> reason
  const isLocal = (u) => {
    const url = new URL(u);
    return url.origin === origin || ["data:", "blob:", "about:"].includes(url.protocol);
  };
  // Nothing leaves the machine: a request elsewhere is a problem and is stopped here.
  await page.route("**/*", (route) => {
    const u = route.request().url();
    if (isLocal(u)) return route.continue();
    problems.push(`request outside the machine: ${u}`);
    return route.abort("blockedbyclient");
  });
  page.on("websocket", (ws) => {
    if (!isLocal(ws.url().replace(/^ws/, "http"))) problems.push(`request outside the machine: ${ws.url()}`);
  });
  page.on("response", (res) => {
    if (res.status() >= 400 && isLocal(res.url())) failed.set(res.url(), `HTTP ${res.status()}`);
  });
  page.on("requestfailed", (req) => {
    // A 404 is often followed by an abort; the HTTP status says more, so it stays.
    if (isLocal(req.url()) && !failed.has(req.url())) failed.set(req.url(), req.failure()?.errorText || "failed");
  });
  page.on("pageerror", (err) => problems.push(`JavaScript error: uncaught ${oneLine(err.message)}`));
  page.on("console", (msg) => {
    // A failed load is also logged to the console; it is reported once, by its request.
    if (msg.type() === "error" && !msg.text().startsWith("Failed to load resource")) {
      problems.push(`JavaScript error: console: ${oneLine(msg.text())}`);
    }
  });
  // The print page calls window.print() on load; there is no printer to wait for.
  await page.addInitScript(() => {
    window.print = () => {};
  });
  try {
    const res = await page.goto(`${origin}/${name}`, { waitUntil: "load", timeout: 30000 });
    if (!res || !res.ok()) problems.push(`page did not load: ${res ? res.status() : "no response"}`);
    await page.waitForLoadState("networkidle", { timeout: 10000 }).catch(() => {});
  } catch (err) {
    problems.push(`page did not load: ${oneLine(err.message)}`);
  }
  let dom = { images: [], embedded: [], listings: 0, emptyListings: [], links: [], ids: [] };
  try {
    dom = await page.evaluate(inspectDom);
  } catch (err) {
    problems.push(`page could not be inspected: ${oneLine(err.message)}`);
  }
  await page.close();

  const reported = new Set();
  for (const img of dom.images) {
    if (img.broken || failed.has(img.url)) {
      problems.push(`missing image: <img src="${img.attr}">${failed.has(img.url) ? ` (${failed.get(img.url)})` : ""}`);
      reported.add(img.url);
    }
  }
  for (const el of dom.embedded) {
    if (el.broken || failed.has(el.url)) {
      const attr = el.tag === "object" ? "data" : "src";
      problems.push(`missing image: <${el.tag} ${attr}="${el.attr}">${failed.has(el.url) ? ` (${failed.get(el.url)})` : ""}`);
      reported.add(el.url);
    }
  }
  for (const [url, reason] of [...failed].sort()) {
    if (!reported.has(url)) problems.push(`failed request: ${url.replace(origin, "")} (${reason})`);
  }
  for (const listing of dom.emptyListings) problems.push(`empty code listing: ${listing}`);
  const external = dom.links.filter((l) => /^https?:$/.test(safeUrl(l.url)?.protocol) && safeUrl(l.url).origin !== origin).length;
  return { page: name, problems, dom, external };
}

function checkLinks(root, origin, r, idsOf) {
  const problems = [];
  for (const { attr, url: raw } of r.dom.links) {
    const url = safeUrl(raw);
    if (!url) {
      problems.push(`broken link: "${attr}" (not a URL)`);
      continue;
    }
    // External links are counted, never fetched.
    if (url.origin !== origin && /^https?:$/.test(url.protocol)) continue;
    if (["mailto:", "tel:", "javascript:"].includes(url.protocol)) continue;
    if (url.origin !== origin) {
      problems.push(`broken link: "${attr}" (points outside the book: ${url.protocol})`);
      continue;
    }
    const file = fileFor(root, url.pathname);
    if (!isFile(file)) {
      problems.push(`broken link: "${attr}" (no file ${url.pathname.replace(/^\//, "")} in the book)`);
      continue;
    }
    const anchor = url.hash.slice(1);
    if (anchor === "") continue;
    let id;
    try {
      id = decodeURIComponent(anchor);
    } catch {
      id = anchor;
    }
    const target = path.relative(root, file).split(path.sep).join("/");
    const ids = idsOf.get(target);
    if (!ids) problems.push(`broken link: "${attr}" (#${id} points into ${target}, which is not a page)`);
    else if (!ids.has(id)) problems.push(`broken link: "${attr}" (no element with id "${id}" in ${target})`);
  }
  return problems;
}

function safeUrl(u) {
  try {
    return new URL(u);
  } catch {
    return null;
  }
}

function oneLine(s) {
  return String(s).split("\n")[0].trim();
}

/** Prints one line per page (and its problems), then the summary; returns the problem count. */
export function printReport(report, out = console.log) {
  let total = 0;
  for (const r of report) {
    total += r.problems.length;
    const counts = `${r.links} links (${r.external} external, not fetched), ${r.images} images, ${r.listings} listings`;
    out(`${r.problems.length === 0 ? "ok  " : "FAIL"} ${r.page}: ${counts}${r.problems.length ? `, ${r.problems.length} problems` : ""}`);
    for (const p of r.problems) out(`       ${r.page}: ${p}`);
  }
  out(`book-check: ${report.length} pages, ${total} problems`);
  return total;
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const dir = process.argv[2];
  if (!dir || !fs.existsSync(path.join(dir, "index.html"))) {
    console.error(`usage: node book-check.mjs BOOK_DIR (a built book with an index.html; got ${dir ?? "nothing"})`);
    process.exit(2);
  }
  const report = await checkBook(dir);
  if (report.length === 0) {
    console.error("book-check: no pages found");
    process.exit(1);
  }
  process.exit(printReport(report) > 0 ? 1 : 0);
}

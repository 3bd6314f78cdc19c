// Proves that book-check can fail: runs it on fixture/, where defects.html holds one of
// each defect and clean.html holds none, and demands exactly the expected report.
// Exit 0 only when every defect is reported once, nothing else is, and clean.html is clean.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { checkBook } from "./book-check.mjs";

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixture");

const expected = {
  "clean.html": { problems: [], external: 1, images: 3, listings: 1 },
  "defects.html": {
    external: 1,
    problems: [
      ["missing <img>", /^missing image: <img src="missing\.png"> \(HTTP 404\)$/],
      ["missing <object> SVG", /^missing image: <object data="missing-diagram\.svg"> \(HTTP 404\)$/],
      ["empty code listing", /^empty code listing: listing 1 of 1$/],
      ["link to a missing file", /^broken link: "nowhere\.html" \(no file nowhere\.html in the book\)$/],
      ["link to a missing anchor", /^broken link: "clean\.html#no-such-heading" \(no element with id "no-such-heading" in clean\.html\)$/],
      ["uncaught exception", /^JavaScript error: uncaught .*fixture: an uncaught exception/],
      ["console error", /^JavaScript error: console: fixture: a console error$/],
      ["CDN request", /^request outside the machine: https:\/\/fonts\.example\.com\/open-sans\.css$/],
    ],
  },
};

const report = await checkBook(fixture);
let failures = 0;
const fail = (msg) => {
  failures += 1;
  console.log(`  FAIL ${msg}`);
};

const pages = report.map((r) => r.page);
if (JSON.stringify(pages) !== JSON.stringify(Object.keys(expected).sort())) {
  fail(`pages checked: ${pages.join(", ")}; expected ${Object.keys(expected).sort().join(", ")}`);
}
for (const r of report) {
  const want = expected[r.page];
  if (!want) continue;
  const left = [...r.problems];
  for (const [what, pattern] of want.problems.map((p) => (Array.isArray(p) ? p : [String(p), p]))) {
    const hits = left.filter((p) => pattern.test(p));
    if (hits.length === 1) {
      console.log(`  ok   ${r.page}: ${what} reported: ${hits[0]}`);
      left.splice(left.indexOf(hits[0]), 1);
    } else {
      fail(`${r.page}: ${what} reported ${hits.length} times, expected once`);
    }
  }
  for (const p of left) fail(`${r.page}: unexpected problem: ${p}`);
  if (want.problems.length === 0 && r.problems.length === 0) console.log(`  ok   ${r.page}: no problem reported`);
  for (const field of ["external", "images", "listings"]) {
    if (field in want && r[field] !== want[field]) fail(`${r.page}: ${field} = ${r[field]}, expected ${want[field]}`);
  }
}
console.log(`book-check self-test: ${failures === 0 ? "ok" : `${failures} failures`}`);
process.exit(failures === 0 ? 0 : 1);

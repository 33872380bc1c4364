// Screenshots of every dashboard page of a running `aisp serve`, over whatever history it serves
// (the device's GPU history, for docs/): the newest run, its first pair, that pair's history,
// the newest two runs compared, the roofline, the ceilings. No assertions: dashboard_test.mjs
// is the test. Usage: node screenshots.mjs CHROMIUM BASE_URL OUT_DIR [RUN [TARGET [EARLIER_RUN]]]
// RUN (default the newest) is the run shown, TARGET (default its first pair) the pair and history,
// EARLIER_RUN (default the run before the newest) the other side of the comparison.
import { mkdirSync } from "node:fs";
import { join } from "node:path";

import puppeteer from "puppeteer-core";

const [chromium, base, out, chosenRun, chosenTarget, earlierRun] = process.argv.slice(2);
if (!out) {
  console.error("usage: node screenshots.mjs CHROMIUM BASE_URL OUT_DIR [RUN [TARGET [EARLIER_RUN]]]");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const api = async (path) => (await fetch(`${base}/api/v1/${path}`)).json();
const { runs } = await api("runs?limit=2");
if (runs.length === 0) throw new Error(`${base} serves no run`);
const newest = chosenRun || runs[0].id;
const target = chosenTarget || (await api(`runs/${newest}`)).pairs[0]?.target || "";
const pages = [
  ["runs", "#/runs"], ["run", `#/run/${newest}`],
  ["pair", `#/pair/${newest}?target=${encodeURIComponent(target)}`], ["history", `#/history?target=${encodeURIComponent(target)}`],
  ["compare", `#/compare?a=${earlierRun || (runs[1]?.id ?? newest)}&b=${newest}`], ["roofline", `#/roofline/${newest}`], ["ceilings", "#/ceilings"],
];
const browser = await puppeteer.launch({ executablePath: chromium, headless: true, timeout: 120000, args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 900 });
for (const [name, hash] of pages) {
  await page.goto(`${base}/${hash}`, { waitUntil: "load" });
  await page.waitForFunction((h) => {
    const main = document.getElementById("page");
    return main?.dataset.hash === h && main.dataset.state !== "loading";
  }, { timeout: 30000 }, hash);
  await new Promise((resolve) => setTimeout(resolve, 500));  // uPlot draws on the next frame
  await page.screenshot({ path: join(out, `${name}.png`), fullPage: true });
  console.log(`${name}: ${join(out, `${name}.png`)}`);
}
await browser.close();

// The dashboard as a person uses it (issue 23): Debian's headless Chromium, driven by
// puppeteer-core, opens every page of `aisp serve` over a history of real host runs, checks that
// each renders with data (table rows, chart canvases), follows the links, starts a run from the
// form and watches its progress stream to a recorded run, and fails on any console error or
// failed request. One screenshot per page goes to SCREENSHOT_DIR.
// Usage: node dashboard_test.mjs CHROMIUM AISP_BINARY SOURCE_DIR WORK_DIR SCREENSHOT_DIR
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import puppeteer from "puppeteer-core";

import { recordHistory, target } from "./history.mjs";
import { startServer } from "./server.mjs";

const [chromium, aisp, sourceDir, work, screenshots] = process.argv.slice(2);
if (!screenshots) {
  console.error("usage: node dashboard_test.mjs CHROMIUM AISP_BINARY SOURCE_DIR WORK_DIR SCREENSHOT_DIR");
  process.exit(2);
}
rmSync(screenshots, { recursive: true, force: true });  // only this run's pages
mkdirSync(screenshots, { recursive: true });

let passed = 0;
let failed = 0;
function check(condition, what) {
  console.log(`${condition ? "ok  " : "FAIL"} ${what}`);
  if (condition) passed += 1;
  else failed += 1;
}

const token = "dashboard-test-token";
const history = recordHistory(aisp, sourceDir, work);
const server = await startServer(aisp, { ...history, token });
// Chromium's first start in a clean clone took over puppeteer's 30 s on CI's two cores (seen
// once, 2026-12-02; the rerun passed): give it two minutes.
const browser = await puppeteer.launch({ executablePath: chromium, headless: true, timeout: 120000,
                                         args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 900 });
const problems = [];
page.on("console", (message) => { if (message.type() === "error") problems.push(`console: ${message.text()}`); });
page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
page.on("requestfailed", (request) => {
  // The start-a-run page closes a job's event stream itself once the end event arrived.
  const closedByPage = request.url().endsWith("/events") && request.failure()?.errorText === "net::ERR_ABORTED";
  if (!closedByPage) problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`);
});
page.on("response", (response) => { if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`); });

let shots = 0;
async function screenshot(name) {
  shots += 1;
  await page.screenshot({ path: join(screenshots, `${String(shots).padStart(2, "0")}-${name}.png`), fullPage: true });
}

// Waits until <main> rendered `hash` (data-state ready or error); returns the state.
async function rendered(hash, timeout = 30000) {
  await page.waitForFunction((h) => {
    const main = document.getElementById("page");
    return main && main.dataset.hash === h && main.dataset.state !== "loading";
  }, { timeout }, hash);
  return page.$eval("#page", (main) => main.dataset.state);
}

async function open(hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  return rendered(hash);
}

async function count(selector) {
  return page.$$eval(selector, (nodes) => nodes.length);
}

// uPlot draws on the next animation frame: wait for the canvases to appear.
async function canvases(atLeast) {
  await page.waitForFunction((n) => document.querySelectorAll("#page canvas").length >= n, { timeout: 10000 }, atLeast)
    .catch(() => {});
  return count("#page canvas");
}

async function clickLink(text) {
  const href = await page.$$eval("#page a", (links, t) => links.find((a) => a.textContent.includes(t))?.getAttribute("href"), text);
  if (!href) return null;
  await page.$$eval("#page a", (links, h) => links.find((a) => a.getAttribute("href") === h).click(), href);
  return rendered(href);
}

const seenLinks = new Set();
async function collectLinks() {
  for (const href of await page.$$eval("#page a[href^='#/'], header a[href^='#/']", (links) => links.map((a) => a.getAttribute("href")))) {
    seenLinks.add(href);
  }
}

try {
  await page.goto(`${server.base}/`, { waitUntil: "load" });
  check(await rendered("#/runs") === "ready", "/ opens the runs page");
  check(await count("#page tbody tr") === 2, "runs: both recorded runs are listed");
  await collectLinks();
  await screenshot("runs");

  check(await open(`#/runs?target=${encodeURIComponent(target)}`) === "ready" && await count("#page tbody tr") === 2,
        "runs: filtering by target keeps the runs that hold it");
  check(await open("#/runs?target=labs/host:matrix_sum") === "ready" && await count("#page tbody tr") === 1,
        "runs: a target only the second run holds keeps that run");
  check(await open("#/runs?gpu=no-such-card") === "ready" && await count("#page tbody tr") === 0 &&
        (await page.$eval("#page", (m) => m.textContent)).includes("No run matches"), "runs: a card filter that matches nothing says so");
  check(await open("#/runs?since=2999-01-01") === "ready" && await count("#page tbody tr") === 0, "runs: a date filter applies");

  await open("#/runs");
  check(await clickLink("#1") === "ready", "runs: the link to run #1 opens it");
  check(await count("#page section:nth-of-type(2) tbody tr") >= 1, "run: its pairs are listed");
  check((await page.$eval("#page", (m) => m.textContent)).includes("×"), "run: a speedup with its CI is shown");
  await collectLinks();
  await screenshot("run");

  check(await clickLink(target) === "ready", "run: the link to the pair opens it");
  check(await canvases(4) >= 4, "pair: a distribution per variant and the time-series chart are drawn");
  const pairText = await page.$eval("#page", (m) => m.textContent);
  check(pairText.includes("Checks") && pairText.includes("Device audit") && pairText.includes("Trace"), "pair: checks, audit and trace sections");
  check(await page.$$eval("#page section", (s) => s.find((x) => x.querySelector("h2").textContent === "Checks")
    ?.querySelectorAll("tbody tr").length || 0) > 0, "pair: the checks are listed with their results");
  await collectLinks();
  await screenshot("pair");

  check(await clickLink("history of this target") === "ready", "pair: the history link opens the target's history");
  check(await canvases(1) >= 1, "history: the speedup chart is drawn");
  check((await page.$eval("#page", (m) => m.textContent)).includes("expected low"), "history: the chart has the expectation band");
  check(await page.$$eval("#page section", (s) => s.find((x) => x.querySelector("h2").textContent === "Expectations")
    ?.querySelectorAll("tbody tr").length || 0) > 0, "history: the expectation is listed");
  await collectLinks();
  await screenshot("history");

  await open("#/runs");
  await page.click("#page input[type=checkbox][value='1']");
  await page.click("#page input[type=checkbox][value='2']");
  await page.$$eval("#page button", (b) => b.find((x) => x.textContent.startsWith("Compare")).click());
  check(await rendered("#/compare?a=1&b=2") === "ready", "runs: two selected runs open the comparison");
  check(await count("#page tbody tr") >= 2, "compare: each variant of the common target is compared");
  await collectLinks();
  await screenshot("compare");

  check(await open("#/roofline/2") === "ready", "the roofline page of run #2 opens");
  check(await canvases(2) >= 2, "roofline: the roofline (the strided sum's FLOPs) and the SOL chart are drawn");
  check(await count("#page tbody tr") >= 4, "roofline: every variant of both pairs is listed");
  await collectLinks();
  await screenshot("roofline");

  check(await open("#/ceilings") === "ready", "the ceilings page opens");
  check(await count("#page .card tbody tr") > 0, "ceilings: the ceilings a run was judged against are shown");
  await collectLinks();
  await screenshot("ceilings");

  check(await open("#/jobs") === "ready", "the start-a-run page opens");
  await page.type("#page input[name=targets]", target);
  await page.$eval("#page input[name=max_time_s]", (input) => { input.value = "0.3"; });
  await page.type("#page input[name=token]", token);
  await page.click("#page button[type=submit]");
  await page.waitForSelector("#page progress", { timeout: 10000 });
  await page.waitForSelector("#page .done a, #page .outcome .warning", { timeout: 300000 });
  check(await count("#page .done a") === 1, "jobs: the run streamed to its end and was recorded");
  check((await page.$eval("#page pre.log", (log) => log.textContent)).includes(target), "jobs: the job's output lines streamed in");
  check(await page.$eval("#page progress", (bar) => bar.value === bar.max), "jobs: the progress bar is full");
  await screenshot("job");
  const runHref = await page.$eval("#page .done a", (a) => a.getAttribute("href"));
  await page.click("#page .done a");
  check(await rendered(runHref) === "ready" && await count("#page tbody tr") > 0, "jobs: the link opens the recorded run");
  await screenshot("job-run");

  // A second job, cancelled from its page: the stream ends with the job's cancelled state.
  check(await open("#/jobs") === "ready", "the start-a-run page opens again");
  await page.type("#page input[name=targets]", "labs/host");
  await page.$eval("#page input[name=max_time_s]", (input) => { input.value = "5"; });
  await page.click("#page button[type=submit]");
  await page.waitForSelector("#page button.cancel", { timeout: 10000 });
  // A DOM click, not one at the button's coordinates: the page may still be laying out the job
  // list below (one CI run's coordinate click landed beside the button and the job ran on).
  await page.$eval("#page button.cancel", (button) => button.click());
  check(await page.$eval("#page button.cancel", (button) => button.disabled).catch(() => true), "jobs: the cancel button was pressed");
  await page.waitForSelector("#page .outcome .warning, #page .outcome .done, #page .outcome .error", { timeout: 60000 });
  check((await page.$eval("#page h3", (h) => h.textContent)).includes("cancelled"), "jobs: a cancelled job ends cancelled");
  await screenshot("job-cancelled");

  // Opened again, the page lists both jobs, and the first can be followed to its recorded run.
  await open("#/runs");
  check(await open("#/jobs") === "ready" && await count("#page button.follow") === 2, "jobs: the server's two jobs are listed");
  await page.$$eval("#page button.follow", (buttons) => buttons.at(-1).click());  // oldest last
  await page.waitForSelector("#page .done a", { timeout: 30000 });
  check((await page.$eval("#page h3", (h) => h.textContent)).startsWith("Job 1"), "jobs: following an ended job shows its recorded run");

  // Every dashboard link the pages showed leads to a page that renders.
  const broken = [];
  for (const href of seenLinks) {
    if (await open(href) !== "ready") broken.push(href);
  }
  check(seenLinks.size >= 10 && broken.length === 0, `every link renders (${seenLinks.size} links${broken.length ? `; broken: ${broken}` : ""})`);
  check(problems.length === 0, `no console error or failed request${problems.length ? `: ${problems.join(" | ")}` : ""}`);

  // A server whose expectations file is malformed still serves the history, and the page says why
  // the bands are missing.
  const brokenDir = join(work, "broken-expectations");
  mkdirSync(brokenDir, { recursive: true });
  writeFileSync(join(brokenDir, "host.json"), "{ not json");
  const brokenServer = await startServer(aisp, { ...history, expectationsDir: brokenDir, token });
  try {
    const hash = `#/history?${new URLSearchParams({ target })}`;
    await page.goto(`${brokenServer.base}/${hash}`, { waitUntil: "load" });
    const state = await rendered(hash);
    const warning = await page.$eval("#expectations-error", (p) => p.textContent).catch(() => "");
    check(state === "ready" && warning.includes("malformed") && await canvases(1) >= 1,
          `history: a malformed expectations file is named on the page, the runs still drawn (${warning || "no warning"})`);
  } finally {
    brokenServer.stop();
  }
} catch (error) {
  check(false, `the walk went through: ${error.stack}`);
  await screenshot("failure").catch(() => {});
} finally {
  await browser.close();
  server.stop();
}
console.log(`screenshots: ${screenshots}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

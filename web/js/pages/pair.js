// One pair of a run: its samples (distribution and time series), the variants' statistics,
// every check with its codes and text, the device audit, and the trace when one was stored.
import { getJson } from "../api.js";
import { distribution, timeSeries } from "../charts.js";
import { badge, el, link, pageHref, section, table } from "../dom.js";
import * as format from "../format.js";

function facts(pair) {
  const workload = Object.entries(pair.workload || {}).map(([k, v]) => `${k}=${v}`).join(" ");
  const rows = [
    ["status", el("span", {}, badge(pair.status), pair.flagged ? badge("flagged") : null, pair.message ? ` ${pair.message}` : "")],
    ["backend", pair.backend], ["timing mode", `${pair.timing_mode}${pair.timing_mode_reason ? ` (${pair.timing_mode_reason})` : ""}`],
    ["workload", workload || "—"],
    ["work per call", `${format.rate(pair.work?.bytes, "B")} moved, ${format.rate(pair.work?.flops, "FLOP")}`],
    ["goal", `${pair.goal || "speed"} (verdict on the ${pair.verdict_statistic || "median"})`],
    ["noise floor", pair.noise_floor == null ? "—" : format.percent(100 * pair.noise_floor)],
  ];
  return el("dl", { class: "facts" }, rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v ?? "—")]));
}

function speedups(pair) {
  return table([
    { title: "variant", cell: (s) => s.variant },
    { title: "speedup [95% CI]", cell: (s) => format.ratioCi(s.speedup), numeric: true },
    { title: "verdict", cell: (s) => badge(s.verdict) },
    { title: "expectation", cell: (s) => s.expectation || "—" },
    { title: "why", cell: (s) => s.verdict_reason || "" },
  ], pair.speedups || [], { emptyText: "No speedup (the pair did not finish)." });
}

function variants(pair) {
  return table([
    { title: "variant", cell: (v) => v.name },
    { title: "samples", cell: (v) => v.sample_count, numeric: true },
    { title: "median", cell: (v) => format.seconds(v.median_s), numeric: true },
    { title: "median 95% CI", cell: (v) => format.secondsCi(v.median_ci_s), numeric: true },
    { title: "IQR", cell: (v) => format.seconds(v.iqr_s), numeric: true },
    { title: "min", cell: (v) => format.seconds(v.min_s), numeric: true },
    { title: "CV", cell: (v) => format.percent(100 * v.cv), numeric: true },
    { title: "achieved", cell: (v) => format.rate(v.achieved_bytes_per_s, "B/s"), numeric: true },
    { title: "SOL memory", cell: (v) => format.percent(v.sol_memory_pct), numeric: true },
    { title: "verified", cell: (v) => (v.verified === null ? "—" : v.verified ? "yes" : badge("no")) },
    { title: "stopped", cell: (v) => v.stop_reason || "—" },
  ], pair.variants || []);
}

// A check's code, with what the validity matrix says of it, fetched when the reader opens it.
function explainedCode(code) {
  const body = el("span", { class: "muted" }, "…");
  const details = el("details", { class: "code" }, el("summary", {}, code), body);
  details.addEventListener("toggle", async () => {
    if (!details.open || body.dataset.loaded) return;
    body.dataset.loaded = "yes";
    try {
      const { rows } = await getJson("validity", { query: code });
      body.replaceChildren(...rows.map((r) => el("div", {}, `${r.issue}: ${r.protection.replaceAll("`", "")}`)));
    } catch (error) {
      body.textContent = error.message;
    }
  });
  return details;
}

function checkTable(rows) {
  return table([
    { title: "check", cell: (c) => c.check },
    { title: "variant", cell: (c) => c.variant || "—" },
    { title: "result", cell: (c) => badge(c.passed ? "pass" : "fail") },
    { title: "codes", cell: (c) => ((c.codes || []).length ? c.codes.map(explainedCode) : "—") },
    { title: "detail", cell: (c) => c.detail || "" },
  ], rows);
}

// The failed checks in full; the passed ones (dozens: every timed call verified is one) folded.
function checks(pair) {
  const all = pair.checks || [];
  if (all.length === 0) return [el("p", { class: "empty" }, "No check was recorded.")];
  const failed = all.filter((c) => !c.passed);
  const passed = all.filter((c) => c.passed);
  return [
    failed.length ? checkTable(failed) : el("p", {}, badge("pass"), ` all ${all.length} checks passed`),
    passed.length ? el("details", { class: "passed" }, el("summary", {}, `${passed.length} passed checks`), checkTable(passed)) : null,
  ];
}

// Nested audit values print as compact JSON: the page shows what was stored, as it was stored.
function audit(pair) {
  const rows = (pair.variants || []).flatMap((v) =>
    Object.entries(v.device_audit || {}).map(([key, value]) => ({ variant: v.name, key, value })));
  return table([
    { title: "variant", cell: (r) => r.variant },
    { title: "field", cell: (r) => r.key },
    { title: "value", cell: (r) => el("code", {}, typeof r.value === "object" ? JSON.stringify(r.value) : String(r.value)) },
  ], rows, { emptyText: "No device audit was stored (host pairs have none)." });
}

function trace(run, pair) {
  if (!pair.trace) return el("p", { class: "muted" }, "No trace was stored for this pair (record one with `aisp bench run --trace DIR`, GPU pairs only).");
  return el("p", {}, link(`/api/v1/runs/${run}/trace?target=${encodeURIComponent(pair.target)}`, "Download the Chrome/Perfetto trace"),
    " (open it in Perfetto or chrome://tracing).");
}

export async function render({ args, params }) {
  const run = args[0];
  const target = params.get("target");
  if (!target) throw new Error("a pair page needs ?target=");
  const pair = await getJson(`runs/${encodeURIComponent(run)}/pair`, { target, samples: 1 });
  const sampled = (pair.variants || []).filter((v) => (v.samples_s || []).length > 0)
    .map((v) => ({ name: v.name, samples: v.samples_s }));
  const charts = sampled.length === 0 ? [el("p", { class: "empty" }, "No samples were stored for this pair.")]
    : [el("div", { class: "chart-grid" }, sampled.map((v, i) => distribution(`${v.name}: sample distribution`, v.samples, i))),
       timeSeries("Per-sample time series", sampled)];
  return {
    title: target,
    nodes: [
      section(`${target} in run #${run}`, facts(pair),
        el("p", {}, link(pageHref(`run/${run}`), `back to run #${run}`), " · ", link(pageHref("history", { target }), "history of this target"))),
      section("Speedups", speedups(pair)),
      section("Samples", ...charts),
      section("Variants", variants(pair)),
      section("Checks", ...checks(pair)),
      section("Device audit", audit(pair)),
      section("Trace", trace(run, pair)),
    ],
  };
}

// One run: per pair the verdicts with their CIs, the medians, SOL and the failed checks.
import { getJson } from "../api.js";
import { badge, el, link, pageHref, section, table } from "../dom.js";
import * as format from "../format.js";

function header(run) {
  const rows = [
    ["started", format.date(run.started_at)], ["state", badge(run.state)],
    ["card", `${run.gpu || "host"} (${run.hardware})`], ["git", format.shortSha(run.git)],
    ["command", el("code", {}, run.command || "—")], ["artifacts", el("code", {}, run.artifacts_dir || "—")],
  ];
  return el("dl", { class: "facts" }, rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

function verdicts(pair) {
  if (pair.speedups.length === 0) return "—";
  return el("div", {}, pair.speedups.map((s) => el("div", {}, `${s.variant}: ${format.ratioCi(s.speedup)} `, badge(s.verdict),
    s.expectation ? el("span", { class: "muted" }, ` (${s.expectation})`) : null)));
}

function failedChecks(pair) {
  if (pair.failed_checks.length === 0) return el("span", { class: "muted" }, `${pair.checks_run} passed`);
  return el("ul", { class: "checks" }, pair.failed_checks.map((c) =>
    el("li", {}, el("strong", {}, (c.codes || []).join(" ") || c.check), ` ${c.check} (${c.variant}): `, c.detail)));
}

function variantRows(run) {
  return run.pairs.flatMap((p) => p.variants.map((v) => ({ target: p.target, ...v })));
}

export async function render({ args }) {
  const id = args[0];
  const run = await getJson(`runs/${encodeURIComponent(id)}`);
  const pairs = table([
    { title: "target", cell: (p) => link(pageHref(`pair/${id}`, { target: p.target }), p.target) },
    { title: "status", cell: (p) => el("div", {}, badge(p.status), p.flagged ? badge("flagged") : null,
      p.message ? el("div", { class: "muted" }, `${p.failure_kind ? `${p.failure_kind}: ` : ""}${p.message}`) : null) },
    { title: "speedup [95% CI] and verdict", cell: verdicts },
    { title: "mode", cell: (p) => p.timing_mode },
    { title: "failed checks", cell: failedChecks },
    { title: "", cell: (p) => link(pageHref("history", { target: p.target }), "history") },
  ], run.pairs, { emptyText: "This run recorded no pair." });
  const variants = table([
    { title: "target", cell: (v) => v.target },
    { title: "variant", cell: (v) => v.name },
    { title: "median", cell: (v) => format.seconds(v.median_s), numeric: true },
    { title: "median 95% CI", cell: (v) => format.secondsCi(v.median_ci_s), numeric: true },
    { title: "CV", cell: (v) => format.percent(100 * v.cv), numeric: true },
    { title: "SOL memory", cell: (v) => format.percent(v.sol_memory_pct), numeric: true },
    { title: "SOL compute", cell: (v) => format.percent(v.sol_compute_pct), numeric: true },
    { title: "verified", cell: (v) => (v.verified === null ? "—" : v.verified ? "yes" : badge("no")) },
  ], variantRows(run));
  return {
    title: `run ${id}`,
    nodes: [
      section(`Run #${id}`, header(run), el("p", {}, link(pageHref(`roofline/${id}`), "Roofline of this run"), " · ",
        link(pageHref("runs"), "all runs"))),
      section("Pairs", pairs),
      section("Variants", variants),
    ],
  };
}

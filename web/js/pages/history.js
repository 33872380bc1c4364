// A target across runs: per variant its speedup with the CI, against the expectation band of the
// card it ran on, and the medians, regressions marked.
import { getJson } from "../api.js";
import { speedupHistory } from "../charts.js";
import { badge, el, link, pageHref, section, table } from "../dom.js";
import * as format from "../format.js";

function variantsOf(runs) {
  return [...new Set(runs.flatMap((r) => r.speedups.map((s) => s.variant)))];
}

function chartFor(variant, runs, expectations) {
  const oldestFirst = [...runs].reverse();
  const speedupOf = (r) => r.speedups.find((s) => s.variant === variant)?.speedup;
  const hardware = oldestFirst.at(-1)?.hardware;
  const expected = expectations?.[hardware]?.[variant];
  return speedupHistory(`${variant}: speedup per run${expected ? ` (expectation for ${hardware})` : ""}`,
    oldestFirst.map((r) => `#${r.run}`),
    oldestFirst.map((r) => speedupOf(r)?.point ?? null),
    oldestFirst.map((r) => speedupOf(r)?.low ?? null),
    oldestFirst.map((r) => speedupOf(r)?.high ?? null),
    expected?.band);
}

function expectationRows(expectations) {
  return Object.entries(expectations || {}).flatMap(([hardware, variants]) =>
    Object.entries(variants).map(([variant, e]) => ({ hardware, variant, ...e })));
}

export async function render({ params }) {
  const target = params.get("target");
  if (!target) throw new Error("a history page needs ?target=");
  const history = await getJson("history", { target, limit: 100 });
  const runs = table([
    { title: "run", cell: (r) => link(pageHref(`pair/${r.run}`, { target }), `#${r.run}`) },
    { title: "started", cell: (r) => format.date(r.started_at) },
    { title: "card", cell: (r) => `${r.gpu || "host"} (${r.hardware})` },
    { title: "status", cell: (r) => badge(r.status) },
    { title: "medians", cell: (r) => Object.entries(r.median_s).map(([v, s]) => `${v} ${format.seconds(s)}`).join(", ") },
    { title: "speedups", cell: (r) => el("div", {}, r.speedups.map((s) =>
      el("div", {}, `${s.variant} ${format.ratioCi(s.speedup)} `, s.regressed ? badge("regressed") : badge(s.verdict)))) },
    { title: "failed checks", cell: (r) => r.failed_checks.map((c) => (c.codes || []).join(" ") || c.check).join(", ") || "—" },
  ], history.runs);
  const expected = table([
    { title: "card", cell: (e) => e.hardware },
    { title: "variant", cell: (e) => e.variant },
    { title: "expected speedup [CI]", cell: (e) => format.ratioCi(e.speedup), numeric: true },
    { title: "band (met inside)", cell: (e) => `[${e.band.low.toFixed(3)}, ${e.band.high.toFixed(3)}]`, numeric: true },
    { title: "median", cell: (e) => format.seconds(e.median_s), numeric: true },
    { title: "from", cell: (e) => `${e.provenance?.card || "?"}, ${format.date(e.provenance?.date)}` },
  ], expectationRows(history.expectations), { emptyText: "No expectation is recorded for this target on these cards (expectations/<card>.json)." });
  // The server answers without the bands when its expectations file is malformed, and says why.
  const unreadable = history.expectations_error
    ? [el("p", { class: "warning", id: "expectations-error" }, `The server's expectations could not be read: ${history.expectations_error}`)]
    : [];
  return {
    title: `history of ${target}`,
    nodes: [
      section(`History of ${target}`, ...variantsOf(history.runs).map((v) => chartFor(v, history.runs, history.expectations))),
      section("Runs", runs),
      section("Expectations", ...unreadable, expected),
    ],
  };
}

// Run b against run a, per target and variant: the time ratio with its CI and the verdict.
import { getJson } from "../api.js";
import { badge, el, link, pageHref, section, table } from "../dom.js";
import * as format from "../format.js";

function picker(runs, a, b) {
  const options = (selected) => runs.map((r) =>
    el("option", { value: r.id, selected: String(r.id) === String(selected) }, `#${r.id} ${format.date(r.started_at)} ${r.gpu || "host"}`));
  const form = el("form", { class: "filters" },
    el("label", {}, "run a", el("select", { name: "a" }, options(a))),
    el("label", {}, "run b", el("select", { name: "b" }, options(b))),
    el("button", { type: "submit" }, "Compare"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = pageHref("compare", Object.fromEntries(new FormData(form)));
  });
  return form;
}

export async function render({ params }) {
  const { runs } = await getJson("runs", { limit: 200 });
  const a = params.get("a") || runs[1]?.id || runs[0]?.id;
  const b = params.get("b") || runs[0]?.id;
  const nodes = [section("Compare two runs", picker(runs, a, b))];
  if (!a || !b) return { title: "compare", nodes: [...nodes, el("p", { class: "empty" }, "No run recorded yet.")] };
  const comparison = await getJson("compare", { a, b });
  const changes = table([
    { title: "target", cell: (c) => link(pageHref(`pair/${b}`, { target: c.target }), c.target) },
    { title: "variant", cell: (c) => c.variant },
    { title: `run #${a}`, cell: (c) => format.seconds(c.median_a_s), numeric: true },
    { title: `run #${b}`, cell: (c) => format.seconds(c.median_b_s), numeric: true },
    { title: "time b/a [95% CI]", cell: (c) => format.ratioCi(c.time_ratio_b_over_a), numeric: true },
    { title: "verdict", cell: (c) => badge(c.verdict) },
  ], comparison.changes, { emptyText: "The two runs have no target in common." });
  const warnings = (comparison.warnings || []).map((w) => el("p", { class: "warning" }, w));
  return {
    title: `compare #${a} and #${b}`,
    nodes: [...nodes, section(`Run #${b} against run #${a}`,
      el("p", {}, link(pageHref(`run/${a}`), `run #${a}`), " · ", link(pageHref(`run/${b}`), `run #${b}`)), ...warnings, changes)],
  };
}

// Runs, newest first, filtered by target, card and date; pick two to compare them.
import { getJson } from "../api.js";
import { badge, el, link, pageHref, section, table } from "../dom.js";
import * as format from "../format.js";

function filterForm(params, targets) {
  const field = (name, label, attributes = {}) =>
    el("label", {}, label, el("input", { name, value: params.get(name) || "", ...attributes }));
  const form = el("form", { class: "filters" },
    field("target", "target", { list: "target-names", placeholder: "labs/host:transpose", size: 28 }),
    field("gpu", "card", { placeholder: "h100", size: 10 }),
    field("since", "since", { type: "date" }),
    field("until", "until", { type: "date" }),
    el("button", { type: "submit" }, "Filter"),
    el("datalist", { id: "target-names" }, targets.map((t) => el("option", { value: t.target }))));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = pageHref("runs", Object.fromEntries(new FormData(form)));
  });
  return form;
}

function compareButton(box) {
  const button = el("button", { type: "button", disabled: true }, "Compare the two selected runs");
  box.addEventListener("change", () => {
    const picked = [...box.querySelectorAll("input[type=checkbox]:checked")].map((c) => Number(c.value));
    button.disabled = picked.length !== 2;
    button.onclick = () => { location.hash = pageHref("compare", { a: Math.min(...picked), b: Math.max(...picked) }); };
  });
  return button;
}

export async function render({ params }) {
  const filter = Object.fromEntries(["target", "gpu", "since", "until"].map((n) => [n, params.get(n) || ""]));
  const [{ runs }, { targets }] = await Promise.all([getJson("runs", { ...filter, limit: 200 }), getJson("targets")]);
  const rows = table([
    { title: "", cell: (r) => el("input", { type: "checkbox", value: r.id, "aria-label": `select run ${r.id}` }) },
    { title: "run", cell: (r) => link(pageHref(`run/${r.id}`), `#${r.id}`) },
    { title: "started", cell: (r) => format.date(r.started_at) },
    { title: "state", cell: (r) => badge(r.state) },
    { title: "card", cell: (r) => `${r.gpu || "host"} (${r.hardware || "?"})` },
    { title: "pairs", cell: (r) => r.pairs, numeric: true },
    ...(filter.target ? [{ title: filter.target, cell: (r) => badge(r.status) }] : []),
    { title: "git", cell: (r) => format.shortSha({ sha: r.git_sha }) },
    { title: "", cell: (r) => link(pageHref(`roofline/${r.id}`), "roofline") },
  ], runs, { emptyText: "No run matches (record runs with `aisp bench run --history`)." });
  const box = el("div", { class: "runs" }, rows);
  return {
    title: "runs",
    nodes: [section("Runs", filterForm(params, targets), box, compareButton(box))],
  };
}

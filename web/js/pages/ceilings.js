// The hardware ceilings: what `aisp hw` measured and cached on the serving machine, and the
// ceilings the latest run of each card was judged against (recorded with its pairs).
import { getJson } from "../api.js";
import { el, link, pageHref, section, table } from "../dom.js";
import * as format from "../format.js";

const ceilingNames = {
  memory_bytes_per_s: ["memory bandwidth", "B/s"], fp32_flops_per_s: ["FP32", "FLOP/s"], tf32_flops_per_s: ["TF32", "FLOP/s"],
  fp16_flops_per_s: ["FP16", "FLOP/s"], bf16_flops_per_s: ["BF16", "FLOP/s"], fp8_flops_per_s: ["FP8", "FLOP/s"],
  pcie_h2d_bytes_per_s: ["PCIe host to device", "B/s"], pcie_d2h_bytes_per_s: ["PCIe device to host", "B/s"],
  interconnect_bytes_per_s: ["GPU interconnect", "B/s"],
};

function ceilingTable(ceilings) {
  const rows = Object.entries(ceilingNames).map(([key, [name, unit]]) => ({ name, value: format.rate(ceilings[key], unit) }));
  return table([{ title: "ceiling", cell: (r) => r.name }, { title: "value", cell: (r) => r.value, numeric: true }], rows,
    { caption: `source: ${ceilings.source || "?"}` });
}

// The newest run of each hardware key, with the ceilings its first pair was judged against.
async function judgedAgainst(runs) {
  const newest = new Map();
  for (const r of runs) if (!newest.has(r.hardware)) newest.set(r.hardware, r);
  const found = await Promise.all([...newest.values()].map(async (r) => {
    const roof = await getJson(`runs/${r.id}/roofline`);
    return { run: r, ceilings: roof.pairs.find((p) => p.roofline?.ceilings)?.roofline.ceilings };
  }));
  return found.filter((f) => f.ceilings);
}

export async function render() {
  const [{ cards }, { runs }] = await Promise.all([getJson("ceilings"), getJson("runs", { limit: 100 })]);
  const measured = cards.length === 0
    ? [el("p", { class: "empty" }, "No ceilings were measured on this machine (`aisp hw` measures and caches them).")]
    : cards.map((c) => el("div", { class: "card" }, el("h3", {}, `${c.uuid} (driver ${c.driver})`), ceilingTable(c.ceilings)));
  const judged = await judgedAgainst(runs);
  const recorded = judged.length === 0 ? [el("p", { class: "empty" }, "No recorded run holds its ceilings.")]
    : judged.map(({ run, ceilings }) => el("div", { class: "card" },
      el("h3", {}, `${run.gpu || "host"} (${run.hardware}), as of `, link(pageHref(`run/${run.id}`), `run #${run.id}`)),
      ceilingTable(ceilings)));
  return {
    title: "ceilings",
    nodes: [section("Measured on this machine", ...measured), section("What the latest runs were judged against", ...recorded)],
  };
}

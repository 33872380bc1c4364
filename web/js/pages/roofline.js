// A run's roofline: each variant's achieved FLOP/s at its arithmetic intensity under the roof of
// the ceilings it was judged against, and every variant's SOL %.
import { getJson } from "../api.js";
import { pairedBars, roofline as drawRoofline } from "../charts.js";
import { badge, el, link, pageHref, section, table } from "../dom.js";
import * as format from "../format.js";

function variantRows(data) {
  return data.pairs.flatMap((p) => p.variants.map((v) => ({ pair: p, ...v })));
}

// The ceilings key of a variant's math unit: bf16_tensor -> bf16_flops_per_s, fp32 -> fp32_flops_per_s.
function peakKey(unit) {
  return `${(unit || "fp32").replace(/_tensor$/, "")}_flops_per_s`;
}

// The roof is the memory ceiling's diagonal, flattened at the highest compute peak among the
// plotted variants' math units (a tensor-core variant under an fp32 roof would sit above it);
// a host run has a copy bandwidth but no compute ceiling.
function rooflineChart(rows) {
  const plotted = rows.filter((r) => r.pair.roofline.arithmetic_intensity_flop_per_byte > 0 && r.achieved_flops_per_s > 0);
  const points = plotted
    .map((r) => ({ label: `${r.pair.target} ${r.name}`, intensity: r.pair.roofline.arithmetic_intensity_flop_per_byte,
                   flops: r.achieved_flops_per_s }));
  const roofline = rows.find((r) => r.pair.roofline.bandwidth_ceiling_bytes_per_s > 0)?.pair.roofline;
  if (points.length === 0 || !roofline) {
    return el("p", { class: "empty" }, "No variant of this run does FLOPs against a known memory ceiling, so there is no roofline to draw; the SOL bars below still hold.");
  }
  const units = [...new Set(plotted.map((r) => peakKey(r.math_unit)))].filter((key) => roofline.ceilings?.[key] > 0);
  const unit = units.sort((a, b) => roofline.ceilings[b] - roofline.ceilings[a])[0] || "fp32_flops_per_s";
  const peak = roofline.ceilings?.[unit] || 0;
  const name = unit.replace(/_flops_per_s$/, "");
  const title = peak > 0 ? `Roofline (the memory ceiling and the ${name} peak)` : "Roofline (the memory ceiling; no compute ceiling was measured)";
  return drawRoofline(title, peak, roofline.bandwidth_ceiling_bytes_per_s, points);
}

export async function render({ args }) {
  const run = args[0];
  const data = await getJson(`runs/${encodeURIComponent(run)}/roofline`);
  const rows = variantRows(data);
  const labels = rows.map((r) => `${r.pair.target.split(":").pop()} ${r.name}`);
  const sol = rows.length === 0 ? el("p", { class: "empty" }, "This run recorded no pair.")
    : pairedBars("Speed of light: share of the measured ceiling reached", labels,
      [{ label: "memory SOL %", values: rows.map((r) => r.sol_memory_pct) },
       { label: "compute SOL %", values: rows.map((r) => r.sol_compute_pct) }], "% of ceiling");
  const details = table([
    { title: "target", cell: (r) => link(pageHref(`pair/${run}`, { target: r.pair.target }), r.pair.target) },
    { title: "variant", cell: (r) => r.name },
    { title: "FLOP/byte", cell: (r) => (r.pair.roofline.arithmetic_intensity_flop_per_byte ?? 0).toPrecision(3), numeric: true },
    { title: "bound", cell: (r) => badge(r.pair.roofline.bound || "unknown") },
    { title: "achieved bandwidth", cell: (r) => format.rate(r.achieved_bytes_per_s, "B/s"), numeric: true },
    { title: "achieved compute", cell: (r) => format.rate(r.achieved_flops_per_s, "FLOP/s"), numeric: true },
    { title: "SOL memory", cell: (r) => format.percent(r.sol_memory_pct), numeric: true },
    { title: "SOL compute", cell: (r) => format.percent(r.sol_compute_pct), numeric: true },
    { title: "ceiling", cell: (r) => `${format.rate(r.pair.roofline.bandwidth_ceiling_bytes_per_s, "B/s")} (${r.pair.roofline.ceilings?.source || "?"})` },
  ], rows);
  return {
    title: `roofline of run ${run}`,
    nodes: [section(`Roofline of run #${run}`, el("p", {}, link(pageHref(`run/${run}`), `back to run #${run}`)), rooflineChart(rows), sol),
            section("Per variant", details)],
  };
}

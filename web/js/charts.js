// Charts, drawn by uPlot (loaded from /vendor as the global uPlot). Each function returns a
// <figure> with the chart inside; data arrive as arrays in SI units.
import { el } from "./dom.js";
import * as format from "./format.js";

const palette = ["#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#0969da", "#bf3989"];

export function colour(i) {
  return palette[i % palette.length];
}

function figure(title, note) {
  const holder = el("div", { class: "chart" });
  return { holder, node: el("figure", {}, el("figcaption", {}, title), holder, note ? el("p", { class: "note" }, note) : null) };
}

// Drawn on the next frame, once the page put the figure in the document and it has a width.
function draw(holder, options, data) {
  requestAnimationFrame(() => {
    const width = Math.max(320, Math.min(holder.clientWidth || 860, 1100));
    new uPlot({ width, height: 300, ...options }, data, holder);
  });
}

// An x axis of categories at 1, 2, 3...: one tick each, labelled.
function categoryAxis(labels, label = "") {
  return { label, splits: () => labels.map((_, i) => i + 1), values: (u, ticks) => ticks.map((t) => labels[t - 1] ?? ""), size: 60 };
}

const timeAxis = (label) => ({ label, values: (u, ticks) => ticks.map(format.seconds), size: 70 });

// Each variant's samples in the order they were taken (x: sample number).
export function timeSeries(title, variants) {
  const { holder, node } = figure(title, "Per-sample time in the order the samples were taken: drift, warm-up or throttling show as a trend.");
  const longest = Math.max(0, ...variants.map((v) => v.samples.length));
  const x = Array.from({ length: longest }, (_, i) => i + 1);
  const ys = variants.map((v) => x.map((_, i) => (i < v.samples.length ? v.samples[i] : null)));
  draw(holder, {
    scales: { x: { time: false } },
    axes: [{ label: "sample" }, timeAxis("time per sample")],
    series: [{ label: "sample" }, ...variants.map((v, i) => ({ label: v.name, stroke: colour(i), width: 1, points: { size: 3 } }))],
  }, [x, ...ys]);
  return node;
}

// One variant's samples as a histogram on its own bins (x: seconds at the bin's centre): a
// baseline 100x slower than its candidate would leave both in one bin each on shared ones. A
// long tail (the slowest sample over twice the 99th percentile) would squeeze the rest into a few
// bins: the bins then stop at the 99th percentile, and the note counts what lies past.
export function distribution(title, samples, colourIndex, binCount = 30) {
  const sorted = [...samples].sort((a, b) => a - b);
  const low = sorted[0];
  const p99 = sorted[Math.floor(0.99 * (sorted.length - 1))];
  const high = sorted.at(-1) > 2 * p99 ? p99 : sorted.at(-1);
  const beyond = sorted.filter((s) => s > high).length;
  const { holder, node } = figure(title, `${sorted.length} samples${beyond ? `; ${beyond} slower than ${format.seconds(high)} left out of the bins` : ""}.`);
  const width = (high - low) / binCount || Math.abs(low) * 1e-3 || 1e-9;
  const x = Array.from({ length: binCount }, (_, i) => low + (i + 0.5) * width);
  const counts = new Array(binCount).fill(0);
  for (const s of sorted) if (s <= high) counts[Math.min(binCount - 1, Math.floor((s - low) / width))] += 1;
  draw(holder, {
    height: 200,
    legend: { show: false },
    scales: { x: { time: false, range: () => [low - width / 2, low + (binCount + 0.5) * width] } },
    axes: [timeAxis("time per sample"), { label: "samples" }],
    series: [{ label: "time", value: (u, v) => format.seconds(v) },
             { label: "samples", stroke: colour(colourIndex), fill: `${colour(colourIndex)}55`, width: 1.5, points: { show: false },
               paths: uPlot.paths.bars({ size: [1, Infinity], gap: 1 }) }],
  }, [x, counts]);
  return node;
}

// A speedup across runs (x: run order) with its CI and, when known, the expectation band.
export function speedupHistory(title, labels, points, lows, highs, band) {
  const { holder, node } = figure(title, band ? "Shaded: the expected speedup CI widened by the expectation tolerance; a run whose CI lies below it regressed." : null);
  const x = labels.map((_, i) => i + 1);
  const series = [{ label: "run", value: (u, v) => (v ? labels[v - 1] : "") },
                  { label: "speedup", stroke: colour(0), width: 2, points: { size: 6 } },
                  { label: "CI low", stroke: `${colour(0)}88`, dash: [4, 4] },
                  { label: "CI high", stroke: `${colour(0)}88`, dash: [4, 4] }];
  const data = [x, points, lows, highs];
  const options = { scales: { x: { time: false, range: [0.5, labels.length + 0.5] } }, axes: [categoryAxis(labels, "run"), { label: "speedup (×)" }], series };
  if (band) {
    series.push({ label: "expected high", stroke: colour(2), dash: [2, 6] }, { label: "expected low", stroke: colour(2), dash: [2, 6] });
    data.push(x.map(() => band.high), x.map(() => band.low));
    options.bands = [{ series: [4, 5], fill: `${colour(2)}22` }];
  }
  draw(holder, options, data);
  return node;
}

// Two bars per label, side by side (memory and compute SOL %, for instance).
export function pairedBars(title, labels, [left, right], axisLabel) {
  const { holder, node } = figure(title);
  const x = labels.map((_, i) => i + 1);
  const barSeries = (s, i, align) => ({ label: s.label, stroke: colour(i), fill: `${colour(i)}88`,
                                        paths: uPlot.paths.bars({ size: [0.35, 60], align }) });
  draw(holder, {
    scales: { x: { time: false, range: [0.5, labels.length + 0.5] }, y: { range: (u, min, max) => [0, Math.max(100, max)] } },
    axes: [categoryAxis(labels), { label: axisLabel }],
    series: [{ label: "", value: (u, v) => labels[v - 1] ?? "" }, barSeries(left, 0, -1), barSeries(right, 1, 1)],
  }, [x, left.values, right.values]);
  return node;
}

// The roofline, log-log: min(peak FLOP/s, bandwidth × intensity) and the variants as points. The
// x range spans the points and the ridge point, a factor of 16 either side.
export function roofline(title, peakFlops, bandwidth, points) {
  const { holder, node } = figure(title, "x: arithmetic intensity (FLOP/byte), y: achieved FLOP/s; the line is the roof the measured ceilings allow.");
  const intensities = points.map((p) => p.intensity);
  if (peakFlops > 0) intensities.push(peakFlops / bandwidth);
  const low = Math.log2(Math.min(...intensities)) - 4;
  const high = Math.log2(Math.max(...intensities)) + 4;
  const grid = Array.from({ length: Math.ceil(high - low) + 1 }, (_, i) => 2 ** (low + i));
  const x = [...new Set([...grid, ...points.map((p) => p.intensity)])].sort((a, b) => a - b);
  const roof = x.map((i) => (peakFlops > 0 ? Math.min(peakFlops, bandwidth * i) : bandwidth * i));
  const pointSeries = points.map((p) => x.map((i) => (i === p.intensity ? p.flops : null)));
  // A log axis labels its powers of ten only: uPlot ticks every 1-9 × 10^k.
  const decades = (label) => (u, ticks) => ticks.map((t) => (Math.abs(Math.log10(t) - Math.round(Math.log10(t))) < 1e-9 ? label(t) : ""));
  draw(holder, {
    scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
    axes: [{ label: "FLOP / byte", values: decades((t) => String(Number(t.toPrecision(3)))) },
           { label: "FLOP/s", values: decades((t) => format.rate(t, "FLOP/s")), size: 90 }],
    series: [{ label: "intensity" }, { label: "roof", stroke: "#57606a", width: 2, points: { show: false } },
             ...points.map((p, i) => ({ label: p.label, stroke: colour(i), paths: () => null, points: { show: true, size: 9, fill: colour(i) } }))],
  }, [x, roof, ...pointSeries]);
  return node;
}

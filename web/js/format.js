// Numbers arrive in SI base units (seconds, bytes, FLOPs); they get their prefixes here, at the edge.

const prefixes = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""]];

function finite(x) {
  return typeof x === "number" && Number.isFinite(x);
}

export function seconds(x) {
  if (!finite(x)) return "—";
  const a = Math.abs(x);
  if (a === 0) return "0 s";
  if (a < 1e-6) return `${(x * 1e9).toPrecision(3)} ns`;
  if (a < 1e-3) return `${(x * 1e6).toPrecision(3)} µs`;
  if (a < 1) return `${(x * 1e3).toPrecision(3)} ms`;
  return `${x.toPrecision(3)} s`;
}

export function rate(x, unit) {
  if (!finite(x) || x === 0) return "—";
  const [scale, prefix] = prefixes.find(([s]) => Math.abs(x) >= s) || [1e-3, "m"];
  return `${(x / scale).toPrecision(3)} ${prefix}${unit}`;
}

export function ratio(x) {
  return finite(x) ? `${x.toFixed(x >= 100 ? 0 : 3)}×` : "—";
}

// A point with its 95% CI: "1.234× [1.200, 1.260]".
export function ratioCi(estimate) {
  if (!estimate || !finite(estimate.point)) return "—";
  return `${ratio(estimate.point)} [${estimate.low.toFixed(3)}, ${estimate.high.toFixed(3)}]`;
}

export function secondsCi(ci) {
  if (!ci || !finite(ci.low)) return "—";
  return `[${seconds(ci.low)}, ${seconds(ci.high)}]`;
}

export function percent(x) {
  return finite(x) && x !== 0 ? `${x.toFixed(1)}%` : "—";
}

export function date(iso) {
  return iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC") : "—";
}

export function shortSha(git) {
  return git && git.sha ? `${git.sha.slice(0, 10)}${git.dirty ? "+" : ""}` : "—";
}

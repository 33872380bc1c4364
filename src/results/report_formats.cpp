#include "results/report_formats.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "results/result_json.hpp"
#include "results/terminal_table.hpp"
#include "support/markup.hpp"

namespace aisp {
namespace {

using nlohmann::json;

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

const json* find_speedup(const json& pair, const std::string& variant) {
  for (const auto& s : pair["speedups"]) {
    if (s.value("variant", "") == variant) return &s;
  }
  return nullptr;
}

// One row per variant (twin excluded): the shared shape of the Markdown and CSV tables.
struct row {
  std::string target, variant, status, verdict, expectation, precision;
  std::string message;  // why the pair failed or was skipped; "" where it passed
  double median_us = 0, speedup = 0, low = 0, high = 0, gbps = 0, sol = 0, tflops = 0;
  double peer = 0, peer_low = 0, peer_high = 0;  // share of the pair's peer variant; 0 without one
  int samples = 0;
  // Note [goals]: the statistic the verdict is on, and a latency or throughput pair's own figures.
  std::string statistic = "median";
  double p50_s = 0, p99_s = 0, calls_per_s = 0, items_per_s = 0;
  std::string item;  // what items_per_s counts ("tokens"); "" where the pair declares none
  std::string goal;  // "p50 1.2 ms [1.1, 1.3], p99 ..." or "1234/s [..]"; "" for a speed pair
  // Note [recorded metrics]: "ttft_s p50 .. [..], p99 .. [..]; tpot_s ..."; "" where none.
  std::string recorded;
  [[nodiscard]] std::string goal_cell() const {
    if (recorded.empty()) return goal.empty() ? "—" : goal;
    return goal.empty() ? recorded : goal + "; " + recorded;
  }
};

// A goal metric's "point [low, high]", each shown by `show`.
template <class Show>
std::string estimate_text(const json& metric, Show show) {
  return fmt::format("{} [{}, {}]", show(metric.value("point", 0.0)), show(metric.value("low", 0.0)), show(metric.value("high", 0.0)));
}

void read_goal(const json& pair, const json& variant, row& r) {
  r.statistic = pair.value("verdict_statistic", "median");
  const auto metrics = variant.value("goal_metrics", json::object());
  if (metrics.contains("p99_s")) {
    r.p50_s = metrics["p50_s"].value("point", 0.0);
    r.p99_s = metrics["p99_s"].value("point", 0.0);
    r.goal = "p50 " + estimate_text(metrics["p50_s"], format_duration) + ", p99 " + estimate_text(metrics["p99_s"], format_duration);
  }
  if (metrics.contains("calls_per_s")) {
    r.calls_per_s = metrics["calls_per_s"].value("point", 0.0);
    r.goal = estimate_text(metrics["calls_per_s"], [](double per_s) { return fmt::format("{:.4g}", per_s); }) + " calls/s";
  }
  if (metrics.contains("recorded")) {
    for (const auto& [metric, e] : metrics["recorded"].items())
      r.recorded += fmt::format("{}{} {}", r.recorded.empty() ? "" : "; ", metric, recorded_estimates(metric, e));
  }
  if (metrics.contains("items_per_s")) {  // Note [items]
    r.items_per_s = metrics["items_per_s"].value("point", 0.0);
    r.item = metrics.value("item", "items");
    r.goal = estimate_text(metrics["items_per_s"], [](double per_s) { return fmt::format("{:.4g}", per_s); }) + " " + r.item + "/s";
  }
}

std::vector<row> rows_of(const json& results) {
  std::vector<row> rows;
  for (const auto& p : results.value("pairs", json::array())) {
    const auto rows_before = rows.size();
    for (const auto& v : p.value("variants", json::array())) {
      const auto name = v.value("name", "");
      if (name == "baseline_twin") continue;
      row r;
      r.target = p.value("target", "");
      r.variant = name;
      r.status = p.value("status", "");
      r.message = r.status == "pass" ? "" : p.value("message", "");
      r.median_us = v.value("median_s", 0.0) * 1e6;
      r.gbps = v.value("achieved_bytes_per_s", 0.0) / 1e9;
      r.sol = v.value("sol_memory_pct", 0.0);
      r.tflops = v.value("achieved_flops_per_s", 0.0) / 1e12;
      r.precision = v.value("precision", "");
      if (const auto peer = v.find("vs_peer"); peer != v.end() && peer->is_object()) {
        r.peer = peer->value("point", 0.0);
        r.peer_low = peer->value("low", 0.0);
        r.peer_high = peer->value("high", 0.0);
      }
      r.samples = v.value("sample_count", 0);
      read_goal(p, v, r);
      if (const auto* s = find_speedup(p, name)) {
        r.speedup = (*s)["speedup"].value("point", 0.0);
        r.low = (*s)["speedup"].value("low", 0.0);
        r.high = (*s)["speedup"].value("high", 0.0);
        r.verdict = s->value("verdict", "");
        r.expectation = s->value("expectation", "");
      }
      rows.push_back(r);
    }
    // A pair that never ran a variant (skipped without a GPU, or failed at load) keeps a row: a
    // report that drops it reads as if it was never asked for.
    if (rows.size() == rows_before) {
      row r;
      r.target = p.value("target", "");
      r.variant = "—";
      r.status = p.value("status", "");
      r.message = p.value("message", "");
      rows.push_back(r);
    }
  }
  return rows;
}

// Why each pair that did not pass failed or was skipped: "- target (status): message" lines.
std::string unpassed_notes(const json& results) {
  std::string notes;
  for (const auto& p : results.value("pairs", json::array())) {
    const auto status = p.value("status", "");
    if (status == "pass") continue;
    notes += fmt::format("- {} ({}): {}\n", p.value("target", ""), status, p.value("message", ""));
  }
  return notes;
}

std::string samples_svg(const json& pair) {
  // A histogram per variant over a shared time axis: where each variant's samples fall.
  std::vector<std::pair<std::string, std::vector<double>>> series;
  double lo = 1e30, hi = 0;
  for (const auto& v : pair.value("variants", json::array())) {
    std::vector<double> values;
    for (const auto& s : v.value("samples_s", json::array())) values.push_back(s.get<double>());
    if (values.empty()) continue;
    lo = std::min(lo, *std::min_element(values.begin(), values.end()));
    hi = std::max(hi, *std::max_element(values.begin(), values.end()));
    series.emplace_back(v.value("name", ""), std::move(values));
  }
  if (series.empty() || hi <= lo) return "<p>no samples</p>";
  constexpr int bins = 40;
  constexpr double w = 640, h = 60;
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}">)", w + 160,
                                h * static_cast<double>(series.size()) + 20);
  for (std::size_t s = 0; s < series.size(); ++s) {
    std::vector<int> counts(bins, 0);
    for (double x : series[s].second) counts[static_cast<std::size_t>(std::min(bins - 1, static_cast<int>((x - lo) / (hi - lo) * bins)))]++;
    const int top = *std::max_element(counts.begin(), counts.end());
    const double base = h * static_cast<double>(s + 1);
    svg += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" font-size="11">{}</text>)", w + 8, base - 20, xml_escaped(series[s].first));
    for (int b = 0; b < bins; ++b) {
      const double bar = counts[static_cast<std::size_t>(b)] * (h - 12) / std::max(1, top);
      svg += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#2471a3"/>)", b * w / bins, base - bar,
                         w / bins - 1, bar);
    }
  }
  svg += fmt::format(R"(<text x="0" y="{0:.0f}" font-size="11">{1:.2f} us</text><text x="{2:.0f}" y="{0:.0f}" font-size="11">{3:.2f} us</text></svg>)",
                     h * static_cast<double>(series.size()) + 16, lo * 1e6, w - 60, hi * 1e6);
  return svg;
}

std::string bars_svg(const std::vector<row>& rows, bool speedups) {
  // Speedups with their CI whiskers (a line at 1x), or SOL % of the memory ceiling.
  double top = speedups ? 1.0 : 100.0;
  for (const auto& r : rows) top = std::max(top, speedups ? r.high : r.sol);
  constexpr double w = 420;
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}">)", w + 330,
                                22.0 * static_cast<double>(rows.size()) + 10);
  int i = 0;
  for (const auto& r : rows) {
    if (speedups && r.speedup <= 0) continue;
    const double y = 22.0 * i++;
    const double value = speedups ? r.speedup : r.sol;
    svg += fmt::format(R"(<rect x="0" y="{:.0f}" width="{:.1f}" height="16" fill="{}"/>)", y, value / top * w,
                       speedups ? "#27ae60" : "#8e44ad");
    if (speedups)
      svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.0f}" x2="{2:.1f}" y2="{1:.0f}" stroke="black"/>)", r.low / top * w, y + 8,
                         r.high / top * w);
    svg += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" font-size="11">{} {}: {}</text>)", w + 8, y + 12, xml_escaped(r.target),
                       xml_escaped(r.variant),
                       speedups ? fmt::format("{:.3f}x [{:.3f}, {:.3f}] {}", r.speedup, r.low, r.high, r.verdict)
                                : fmt::format("{:.1f}%", r.sol));
  }
  if (speedups) svg += fmt::format(R"(<line x1="{0:.1f}" y1="0" x2="{0:.1f}" y2="{1:.0f}" stroke="#c0392b"/>)", w / top, 22.0 * i);
  return svg + "</svg>";
}

}  // namespace

// "2.000x [1.9, 2.1]", with the statistic when the verdict is not on the median (a p99 pair).
std::string speedup_cell(const row& r) {
  if (r.speedup <= 0) return "—";
  return fmt::format("{:.3f}x [{:.3f}, {:.3f}]{}", r.speedup, r.low, r.high, r.statistic == "median" ? "" : " " + r.statistic);
}

// A variant that never ran (its pair failed first) has no median: "—", not 0.00.
std::string median_cell(const row& r, std::string_view unit) {
  return r.samples > 0 ? fmt::format("{:.2f}{}", r.median_us, unit) : "—";
}

std::string peer_cell(const row& r) {
  return r.peer > 0 ? fmt::format("{:.0f}% [{:.0f}, {:.0f}]", 100 * r.peer, 100 * r.peer_low, 100 * r.peer_high) : "—";
}

std::string report_markdown(const json& results) {
  std::string md = fmt::format("# aisp results — {}\n\nCard: {}. Mode: {}. aisp {}.\n\n", results.value("started_at", ""),
                               primary_gpu(results).value("name", "host only"),
                               results.value("config", json::object()).value("mode", "?"), results.value("aisp_version", ""));
  md += "| target | variant | status | median | speedup [95% CI] | verdict | expectation | GB/s | SOL % | TFLOP/s | vs peer | samples | "
        "latency / throughput |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::string precision_notes;
  for (const auto& r : rows_of(results)) {
    md += fmt::format("| {} | {}{} | {} | {} | {} | {} | {} | {:.0f} | {:.1f} | {:.2f} | {} | {} | {} |\n", r.target, r.variant,
                      r.precision.empty() ? "" : " *", r.status, median_cell(r, " µs"), speedup_cell(r), r.verdict.empty() ? "—" : r.verdict,
                      r.expectation.empty() ? "—" : r.expectation, r.gbps, r.sol, r.tflops, peer_cell(r), r.samples, r.goal_cell());
    if (!r.precision.empty()) precision_notes += fmt::format("- {} {}: declared precision change: {}\n", r.target, r.variant, r.precision);
  }
  if (!precision_notes.empty()) md += "\n\\* " + std::string("declared precision changes, verified with their own tolerance:\n\n") + precision_notes;
  if (const auto notes = unpassed_notes(results); !notes.empty()) md += "\nFailed or skipped:\n\n" + notes;
  return md;
}

std::string report_csv(const json& results) {
  std::string csv =
      "target,variant,status,median_us,speedup,speedup_low,speedup_high,verdict,expectation,gb_per_s,sol_memory_pct,samples,"
      "tflop_per_s,vs_peer,vs_peer_low,vs_peer_high,precision,verdict_statistic,p50_s,p99_s,calls_per_s,items_per_s,item,recorded,message\n";
  // An empty field where a value does not apply (the baseline's speedup, a pair without a peer),
  // as the Markdown's "—": 0 read as a measurement.
  const auto or_empty = [](double value, const char* format) { return value > 0 ? fmt::format(fmt::runtime(format), value) : std::string(); };
  for (const auto& r : rows_of(results)) {
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{:.2f},{:.2f},{},{:.4f},{},{},{},{},{},{:.9g},{:.9g},{:.6g},{:.6g},{},{},{}\n",
                       csv_field(r.target), csv_field(r.variant), r.status, r.samples > 0 ? fmt::format("{:.4f}", r.median_us) : "",
                       or_empty(r.speedup, "{:.5f}"), or_empty(r.low, "{:.5f}"), or_empty(r.high, "{:.5f}"), r.verdict,
                       r.expectation, r.gbps, r.sol, r.samples, r.tflops, or_empty(r.peer, "{:.4f}"), or_empty(r.peer_low, "{:.4f}"),
                       or_empty(r.peer_high, "{:.4f}"), csv_field(r.precision),
                       r.statistic, r.p50_s, r.p99_s, r.calls_per_s, r.items_per_s, csv_field(r.item), csv_field(r.recorded), csv_field(r.message));
  }
  return csv;
}

std::string report_html(const json& results) {
  const auto rows = rows_of(results);
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>aisp results</title>\n"
                     "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
                     "padding:3px 8px;text-align:left}</style>\n</head>\n<body>\n";
  html += "<h1>aisp results " + xml_escaped(results.value("started_at", "")) + "</h1>\n<h2>Speedups (95% CI)</h2>\n" +
          bars_svg(rows, true) + "\n<h2>Share of the memory ceiling (SOL %)</h2>\n" + bars_svg(rows, false) + "\n<h2>Table</h2>\n<table>\n";
  html += "<tr><th>target</th><th>variant</th><th>status</th><th>median (µs)</th><th>speedup</th><th>verdict</th><th>expectation</th>"
          "<th>GB/s</th><th>SOL %</th><th>TFLOP/s</th><th>vs peer</th><th>precision</th><th>latency / throughput</th></tr>\n";
  for (const auto& r : rows) {
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0f}</td><td>{:.1f}</td>"
                        "<td>{:.2f}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        xml_escaped(r.target), xml_escaped(r.variant), r.status, median_cell(r, ""), speedup_cell(r), r.verdict,
                        r.expectation, r.gbps, r.sol, r.tflops, peer_cell(r), xml_escaped(r.precision), xml_escaped(r.goal_cell()));
  }
  html += "</table>\n";
  if (const auto notes = unpassed_notes(results); !notes.empty()) {
    html += "<h2>Failed or skipped</h2>\n<ul>\n";
    std::size_t from = 0;
    for (std::size_t end = notes.find('\n'); end != std::string::npos; from = end + 1, end = notes.find('\n', from))
      html += "<li>" + xml_escaped(notes.substr(from + 2, end - from - 2)) + "</li>\n";
    html += "</ul>\n";
  }
  html += "<h2>Sample distributions</h2>\n";
  for (const auto& p : results.value("pairs", json::array())) {
    html += "<h3>" + xml_escaped(p.value("target", "")) + "</h3>\n" + samples_svg(p) + "\n";
  }
  // The data, embedded: "</" is escaped so no string in it can close the script element.
  std::string data = results.dump();
  for (std::size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 2)) data.replace(at, 2, "<\\/");
  html += "<script type=\"application/json\" id=\"aisp-results\">" + data + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace aisp

#include "results/terminal_table.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace aisp {
namespace {

using row = std::vector<std::string>;

const variant_result* find_variant(const pair_result& result, const std::string& name) {
  for (const auto& v : result.variants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::string median_iqr(const variant_result* v) {
  if (v == nullptr || v->stats.count == 0) return "-";
  return format_duration(v->stats.median) + " ± " + format_duration(v->stats.iqr / 2);
}

std::string rate(const variant_result* v) {
  if (v == nullptr || v->achieved_bytes_per_s <= 0) return "-";
  return fmt::format("{:.0f}", v->achieved_bytes_per_s / 1e9);
}

// The candidate's share of the memory ceiling (SOL %), when a ceiling is known.
std::string sol(const variant_result* v) {
  if (v == nullptr || v->sol_memory <= 0) return "";
  return fmt::format(" ({:.0f}%)", 100 * v->sol_memory);
}

std::string verified_text(const pair_result& result, const variant_result* v) {
  if (v == nullptr) return "-";
  if (v->verified) return "yes";
  for (const auto& check : result.checks) {
    if (check.variant == v->name && !check.passed) return "NO (" + (check.codes.empty() ? "?" : check.codes.front()) + ")";
  }
  return "no";
}

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;  // count UTF-8 code points
  return width;
}

}  // namespace

std::string format_duration(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.2f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3f} ms", seconds * 1e3);
  return fmt::format("{:.3f} s", seconds);
}

std::string render_table(const suite_result& suite) {
  std::vector<row> rows = {{"target", "variant", "baseline", "candidate", "speedup [95% CI]",
                            "verdict", "verified", "GB/s base→cand (SOL)"}};
  std::vector<std::string> notes;
  for (const auto& p : suite.pairs) {
    if (p.status == "skip") {
      rows.push_back({p.target, "-", "-", "-", "-", "skipped", "-", "-"});
      notes.push_back(p.target + " skipped: " + p.message);
      continue;
    }
    if (p.status == "fail" && p.failure_kind != "verify") {
      rows.push_back({p.target, "-", "-", "-", "-", "FAIL(" + p.failure_kind + ")", "-", "-"});
      notes.push_back(p.target + " failed (" + p.failure_kind + "): " + p.message);
      continue;
    }
    const auto* base = find_variant(p, "baseline");
    if (p.speedups.empty()) {  // bench verify: checks only, no timing claims
      for (const auto& v : p.variants) {
        if (v.name == "baseline_twin") continue;
        rows.push_back({p.target, v.name, "-", "-", "-", p.flagged ? "flagged" : "checked", verified_text(p, &v), "-"});
      }
    }
    for (const auto& s : p.speedups) {
      const auto* cand = find_variant(p, s.variant);
      rows.push_back({p.target, s.variant, median_iqr(base), median_iqr(cand),
                      fmt::format("{:.3f}x [{:.3f}, {:.3f}]", s.speedup.point, s.speedup.low, s.speedup.high),
                      s.verdict, verified_text(p, cand), rate(base) + "→" + rate(cand) + sol(cand)});
    }
    for (const auto& check : p.checks) {
      if (!check.passed) notes.push_back(p.target + " " + check.variant + " " + check.check + ": " + check.detail);
    }
    for (const auto& v : p.variants) {
      if (v.low_clock_samples > 0)
        notes.push_back(fmt::format("{} {}: {} samples below 75% of the default SM clock", p.target, v.name, v.low_clock_samples));
    }
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) widths[c] = std::max(widths[c], display_width(r[c]));
  std::string text;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      text += rows[i][c] + std::string(widths[c] - display_width(rows[i][c]) + 2, ' ');
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    text += '\n';
    if (i == 0) {
      std::size_t total = 0;
      for (auto w : widths) total += w + 2;
      text += std::string(total - 2, '-') + '\n';
    }
  }
  for (const auto& note : notes) text += "  " + note + '\n';
  return text;
}

}  // namespace aisp

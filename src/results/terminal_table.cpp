#include "results/terminal_table.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "harness/recorded_metrics.hpp"
#include "support/readable_error.hpp"
#include "verify/battery.hpp"

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

// The candidate's share of the memory ceiling (SOL %), when a ceiling is known, and of the
// special-function units' when the pair declares such work (an exp-bound kernel's real limit).
std::string sol(const variant_result* v) {
  if (v == nullptr) return "";
  std::string text;
  if (v->sol_memory > 0) text = fmt::format("{:.0f}%", 100 * v->sol_memory);
  if (v->sol_special_function > 0) text += fmt::format("{}SFU {:.0f}%", text.empty() ? "" : ", ", 100 * v->sol_special_function);
  return text.empty() ? "" : " (" + text + ")";
}

// A busy machine fails honest code on the load-sensitive checks (a user's walkthrough read
// host-idle, outliers and timed-slower on an honest pair with 1.27 CPUs of other work beside it,
// 2026-12-04): where one failed, how busy the machine was, and what to do. "" when the machine
// was not measurably busy (under half a CPU of other work beside every variant).
std::string busy_machine_note(const pair_result& p) {
  constexpr double busy_cpus = 0.5;
  double most = 0;
  std::string where;
  for (const auto& v : p.variants) {
    if (v.other_work_cpus && *v.other_work_cpus > most) {
      most = *v.other_work_cpus;
      where = v.name;
    }
  }
  if (most < busy_cpus) return "";
  return fmt::format("the machine was busy: other work kept up to {:.2f} CPUs busy beside the timed visits ({}'s); outliers, "
                     "host-idle, timed-slower, sample-count and the other load-sensitive checks fail honest code on a busy "
                     "machine: run again when it is quiet",
                     most, where);
}

std::string verified_text(const pair_result& result, const variant_result* v) {
  if (v == nullptr) return "-";
  if (v->verified) return "yes";
  for (const auto& check : result.checks) {
    // The code and the check's name: "NO (S2 host-idle)" says what failed, a bare "S2" did not.
    if (check.variant == v->name && !check.passed)
      return "NO (" + (check.codes.empty() ? std::string() : check.codes.front() + " ") + check.check + ")";
  }
  return "no";
}

// "72% [70, 74]" of the pair's peer (a vendor library measured in the same run).
std::string peer_text(const variant_result* v) {
  if (v == nullptr || !v->vs_peer) return "-";
  return fmt::format("{:.0f}% [{:.0f}, {:.0f}]", 100 * v->vs_peer->point, 100 * v->vs_peer->low, 100 * v->vs_peer->high);
}

bool any_peer(const suite_result& suite) {
  for (const auto& p : suite.pairs)
    for (const auto& v : p.variants)
      if (v.vs_peer) return true;
  return false;
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

std::string format_recorded(std::string_view metric, double value) {
  return is_time_metric(metric) ? format_duration(value) : fmt::format("{:.4g}", value);
}

std::string recorded_estimates(std::string_view metric, const nlohmann::json& entry) {
  const auto show = [&](const char* key) {
    const auto& q = entry[key];
    return fmt::format("{} [{}, {}]", format_recorded(metric, q.value("point", 0.0)), format_recorded(metric, q.value("low", 0.0)),
                       format_recorded(metric, q.value("high", 0.0)));
  };
  return fmt::format("{}p50 {}, p99 {}", entry.contains("mean") ? "mean " + show("mean") + ", " : "", show("p50"), show("p99"));
}

std::string render_table(const suite_result& suite) {
  std::vector<row> rows = {{"target", "variant", "baseline", "candidate", "speedup [95% CI]",
                            "verdict", "verified", "GB/s base→cand (SOL)"}};
  std::vector<std::string> notes;
  bool failed_check = false;
  std::map<std::string, std::vector<std::string>> skipped;  // reason -> targets: one note per reason
  const bool with_peer = any_peer(suite);
  if (with_peer) rows.front().push_back("vs peer");
  const auto add_row = [&](row r, const variant_result* v) {
    if (with_peer) r.push_back(peer_text(v));
    rows.push_back(std::move(r));
  };
  for (const auto& p : suite.pairs) {
    if (p.status == "skip") {
      add_row({p.target, "-", "-", "-", "-", "skipped", "-", "-"}, nullptr);
      skipped[p.message].push_back(p.target);
      continue;
    }
    if (p.status == "fail" && p.failure_kind != "verify") {
      add_row({p.target, "-", "-", "-", "-", "FAIL(" + p.failure_kind + ")", "-", "-"}, nullptr);
      notes.push_back(p.target + " failed (" + p.failure_kind + "): " + without_source_locations(p.message));
      continue;
    }
    const auto* base = find_variant(p, "baseline");
    if (p.speedups.empty()) {  // bench verify: checks only, no timing claims
      for (const auto& v : p.variants) {
        if (v.name == "baseline_twin") continue;
        // The row's own checks: a baseline whose checks all passed is not flagged for its candidate's.
        const bool own_failed = std::any_of(p.checks.begin(), p.checks.end(),
                                            [&](const check_result& c) { return !c.passed && c.variant == v.name; });
        const bool failed = own_failed || (p.status == "fail" && !v.verified);
        add_row({p.target, v.name, "-", "-", "-", failed ? (p.flagged ? "flagged" : "failed") : "checked", verified_text(p, &v), "-"}, &v);
      }
    }
    for (const auto& s : p.speedups) {
      const auto* cand = find_variant(p, s.variant);
      add_row({p.target, s.variant + (cand != nullptr && !cand->precision.empty() ? " *" : ""), median_iqr(base),
               median_iqr(cand),
               fmt::format("{:.3f}x [{:.3f}, {:.3f}]{}", s.speedup.point, s.speedup.low, s.speedup.high,
                           p.verdict_statistic == "median" ? "" : " " + p.verdict_statistic),
               s.verdict, verified_text(p, cand), rate(base) + "→" + rate(cand) + sol(cand)},
              cand);
      if (!s.verdict_reason.empty()) notes.push_back(p.target + " " + s.variant + " " + s.verdict + ": " + s.verdict_reason);
    }
    for (const auto& v : p.variants) {  // Note [goals]: the goal's own figures
      const auto estimate = [&](const char* key, auto&& show) {
        const auto& e = v.goal_metrics[key];
        return fmt::format("{} [{}, {}]", show(e.value("point", 0.0)), show(e.value("low", 0.0)), show(e.value("high", 0.0)));
      };
      const auto rate_text = [](double per_s) { return fmt::format("{:.4g}/s", per_s); };
      if (v.goal_metrics.contains("p99_s"))
        notes.push_back(fmt::format("{} {}: latency p50 {}, p99 {}", p.target, v.name, estimate("p50_s", format_duration),
                                    estimate("p99_s", format_duration)));
      if (v.goal_metrics.contains("recorded")) {  // Note [recorded metrics]
        for (const auto& [metric, e] : v.goal_metrics["recorded"].items()) {
          std::string line =
              fmt::format("{} {}: {} {} ({} values)", p.target, v.name, metric, recorded_estimates(metric, e), e.value("count", 0));
          if (e.contains("p99_ratio"))
            line += fmt::format(", baseline p99 / this {:.3f}x [{:.3f}, {:.3f}]", e["p99_ratio"].value("point", 0.0),
                                e["p99_ratio"].value("low", 0.0), e["p99_ratio"].value("high", 0.0));
          notes.push_back(std::move(line));
        }
      }
      if (v.goal_metrics.contains("items_per_s"))
        notes.push_back(fmt::format("{} {}: throughput {} {}", p.target, v.name, estimate("items_per_s", rate_text),
                                    v.goal_metrics.value("item", "items")));
      else if (v.goal_metrics.contains("calls_per_s"))
        notes.push_back(fmt::format("{} {}: throughput {} calls", p.target, v.name, estimate("calls_per_s", rate_text)));
    }
    if (with_peer && base != nullptr && base->vs_peer)
      notes.push_back(p.target + " baseline: " + peer_text(base) + " of the peer");
    for (const auto& v : p.variants) {
      if (!v.precision.empty()) notes.push_back(p.target + " " + v.name + " * declared precision change: " + v.precision);
    }
    bool failed_load_sensitive = false;
    for (const auto& check : p.checks) {
      if (!check.passed) notes.push_back(p.target + " " + check.variant + " " + check.check + ": " + check.detail);
      failed_check = failed_check || !check.passed;
      failed_load_sensitive = failed_load_sensitive || (!check.passed && verify::checks::load_sensitive(check.check));
    }
    if (failed_load_sensitive) {
      if (const auto note = busy_machine_note(p); !note.empty()) notes.push_back(p.target + ": " + note);
    }
    for (const auto& v : p.variants) {
      if (v.low_clock_samples > 0)
        notes.push_back(fmt::format("{} {}: {} samples below 75% of the default SM clock", p.target, v.name, v.low_clock_samples));
      if (p.launch_gate && v.gated_samples() < v.samples.size())
        notes.push_back(fmt::format("{} {}: the launch gate held {} of {} samples: run() waits for the GPU, or its host queues a "
                                    "sample slower than the GPU runs it (Note [launch gate])",
                                    p.target, v.name, v.gated_samples(), v.samples.size()));
      if (v.device_audit.is_object() && v.device_audit.value("launch_bound", false))
        notes.push_back(fmt::format("{} {}: launch-bound (C7): the device was busy {:.0f}% of the median sample", p.target, v.name,
                                    100 * v.device_audit.value("busy_fraction_median", 0.0)));
    }
  }
  for (const auto& [reason, targets] : skipped) {
    notes.push_back(targets.size() == 1 ? targets.front() + " skipped: " + reason
                                        : fmt::format("{} pairs skipped: {}", targets.size(), reason));
  }
  if (failed_check) notes.push_back("what a failed check means: aisp bench explain <check>, e.g. aisp bench explain outliers");
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

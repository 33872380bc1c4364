#include "history/run_comparison.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "stats/summary.hpp"

namespace aisp {
namespace {

using nlohmann::json;

// A change smaller than this is "unchanged" even with a tight CI (Note [minimum effect]).
constexpr double min_effect = 0.01;

std::string first_gpu(const json& header, const char* key) {
  const auto gpu = primary_gpu(header);
  return gpu.empty() ? "host" : gpu.value(key, "");
}

}  // namespace

run_comparison compare_runs(history_store& history, std::int64_t run_a, std::int64_t run_b) {
  const auto header_a = history.run_header(run_a);
  const auto header_b = history.run_header(run_b);
  if (!header_a || !header_b)
    throw history_error(fmt::format("unknown run id {} (see `aisp bench history`)", !header_a ? run_a : run_b));
  run_comparison comparison;
  comparison.run_a = run_a;
  comparison.run_b = run_b;
  if (first_gpu(*header_a, "uuid") != first_gpu(*header_b, "uuid"))
    comparison.warnings.push_back(fmt::format("different cards: {} vs {}: differences include the card",
                                              first_gpu(*header_a, "uuid"), first_gpu(*header_b, "uuid")));
  const auto driver = [](const json& h) { return h.value("device", json::object()).value("cuda_driver_version", 0); };
  if (driver(*header_a) != driver(*header_b))
    comparison.warnings.push_back(fmt::format("different drivers: {} vs {}", driver(*header_a), driver(*header_b)));
  const auto mode = [](const json& h) { return h.value("config", json::object()).value("mode", ""); };
  if (mode(*header_a) != mode(*header_b))
    comparison.warnings.push_back("different timing modes: " + mode(*header_a) + " vs " + mode(*header_b));
  // `bench verify` takes a token of samples and claims no speedup: its times are no baseline for
  // a regression gate (a user's verify run read 1.46x "slower" against a timing run).
  const auto verify_only = [](const json& h) { return h.value("config", json::object()).value("verify_only", false); };
  for (const auto& [id, header] : {std::pair{run_a, &*header_a}, std::pair{run_b, &*header_b}}) {
    if (verify_only(*header))
      comparison.warnings.push_back(fmt::format("run {} is a `bench verify` run: a token of samples, not a timing run, so its times "
                                                "compare with nothing",
                                                id));
  }
  // Note [launch gate]: runs before 2026-12-02 have no key and were not gated.
  const auto gated = [](const json& h) { return h.value("config", json::object()).value("launch_gate", false); };
  if (first_gpu(*header_b, "uuid") != "host" && gated(*header_a) != gated(*header_b))
    comparison.warnings.push_back(fmt::format("different launch gates: {} vs {}: a gated GPU sample leaves the host's launch latency out, "
                                              "so short calls read faster gated (Note [launch gate])",
                                              gated(*header_a) ? "on" : "off", gated(*header_b) ? "on" : "off"));

  std::map<std::string, json> pairs_a;
  for (const auto& p : history.pairs_of(run_a)) pairs_a[p.value("target", "")] = p;
  for (const auto& pair_b : history.pairs_of(run_b)) {
    const auto target = pair_b.value("target", "");
    if (!pairs_a.count(target)) continue;
    if (pairs_a[target].value("workload", json::object()) != pair_b.value("workload", json::object()))
      comparison.warnings.push_back(fmt::format("different benchmark sizes for {}: {} vs {}", target,
                                                pairs_a[target].value("workload", json::object()).dump(),
                                                pair_b.value("workload", json::object()).dump()));
    for (const auto& v : pair_b.value("variants", json::array())) {
      const auto name = v.value("name", "");
      if (name == "baseline_twin") continue;
      const auto a = history.samples(run_a, target, name);
      const auto b = history.samples(run_b, target, name);
      if (a.empty() || b.empty()) continue;
      variant_change change;
      change.target = target;
      change.variant = name;
      change.time_ratio = stats::bootstrap_median_ratio(b, a);
      change.median_a_s = stats::summarize(a).median;
      change.median_b_s = stats::summarize(b).median;
      const auto& r = change.time_ratio;
      change.verdict = r.high < 1 - min_effect ? "faster" : r.low > 1 + min_effect ? "slower" : "unchanged";
      comparison.changes.push_back(change);
    }
  }
  return comparison;
}

json to_json(const run_comparison& c) {
  json changes = json::array();
  for (const auto& ch : c.changes) {
    changes.push_back({{"target", ch.target}, {"variant", ch.variant}, {"median_a_s", ch.median_a_s}, {"median_b_s", ch.median_b_s},
                       {"time_ratio_b_over_a", {{"point", ch.time_ratio.point}, {"low", ch.time_ratio.low}, {"high", ch.time_ratio.high}}},
                       {"verdict", ch.verdict}});
  }
  json made = {{"run_a", c.run_a}, {"run_b", c.run_b}, {"warnings", c.warnings}, {"changes", changes}};
  if (!c.folder_a.empty() || !c.folder_b.empty())
    made.update({{"run_a", nullptr}, {"run_b", nullptr}, {"folder_a", c.folder_a}, {"folder_b", c.folder_b}});
  return made;
}

std::string render_text(const run_comparison& c) {
  std::string text;
  for (const auto& w : c.warnings) text += "warning: " + w + "\n";
  const bool folders = !c.folder_a.empty() || !c.folder_b.empty();
  if (folders) text += fmt::format("A: {}\nB: {}\n", c.folder_a, c.folder_b);
  text += fmt::format("{:<34} {:<14} {:>12} {:>12}  {:<26} {}\n", "target", "variant", folders ? "A" : "run " + std::to_string(c.run_a),
                      folders ? "B" : "run " + std::to_string(c.run_b), "time B/A [95% CI]", "verdict");
  for (const auto& ch : c.changes) {
    text += fmt::format("{:<34} {:<14} {:>10.2f}us {:>10.2f}us  {:.4f} [{:.4f}, {:.4f}]   {}\n", ch.target, ch.variant,
                        ch.median_a_s * 1e6, ch.median_b_s * 1e6, ch.time_ratio.point, ch.time_ratio.low, ch.time_ratio.high,
                        ch.verdict);
  }
  if (c.changes.empty()) text += "no target in common\n";
  return text;
}

}  // namespace aisp

#include "history/expectations.hpp"

#include <filesystem>
#include <fstream>

#include "aisp/check.hpp"
#include "history/history_store.hpp"
#include "support/json_file.hpp"

namespace aisp {

using nlohmann::json;

namespace {

constexpr int expectations_schema_version = 1;

// An interval {low, high} of numbers at `where`, or (where `may_be_null`) null.
void check_interval(const json& value, const std::string& path, const std::string& where, bool may_be_null) {
  if (may_be_null && value.is_null()) return;
  if (!value.is_object() || !value.contains("low") || !value.contains("high") || !value["low"].is_number() ||
      !value["high"].is_number())
    throw contract_error("expectations file " + path + ": " + where + " must be {\"low\": number, \"high\": number}" +
                         (may_be_null ? " or null" : "") + ", not " + value.dump());
}

// Every entry as aisp writes it, checked when the file is read: a malformed one was found only
// when the run's first pair was marked against it, after measuring, and the run's results were
// lost with the error (a user's walkthrough, 2026-12-04).
void check_entries(const json& entries, const std::string& path) {
  for (const auto& [target, variants] : entries.items()) {
    if (!variants.is_object()) throw contract_error("expectations file " + path + ": entries." + target + " must be an object of variants");
    for (const auto& [variant, entry] : variants.items()) {
      const auto where = "entries." + target + "." + variant;
      if (!entry.is_object()) throw contract_error("expectations file " + path + ": " + where + " must be an object");
      check_interval(entry.contains("speedup") ? entry["speedup"] : json(nullptr), path, where + ".speedup", false);
      if (entry.contains("median_s") && !entry["median_s"].is_number())
        throw contract_error("expectations file " + path + ": " + where + ".median_s must be a number, not " + entry["median_s"].dump());
      if (entry.contains("vs_peer")) check_interval(entry["vs_peer"], path, where + ".vs_peer", true);
      if (!entry.contains("tail_ratios") || entry["tail_ratios"].is_null()) continue;
      if (!entry["tail_ratios"].is_object())
        throw contract_error("expectations file " + path + ": " + where + ".tail_ratios must be an object or null");
      for (const auto& [metric, ratio] : entry["tail_ratios"].items()) check_interval(ratio, path, where + ".tail_ratios." + metric, false);
    }
  }
}

}  // namespace

json load_expectations(const std::string& path, const std::string& hardware) {
  std::ifstream in(path);
  if (!in) return {{"schema", "aisp.expectations"}, {"schema_version", expectations_schema_version}, {"hardware", hardware}, {"entries", json::object()}};
  auto document = json::parse(in, nullptr, false);
  if (document.is_discarded() || !document.is_object() || !document.contains("entries") || !document["entries"].is_object())
    throw contract_error("expectations file " + path + " is malformed (want an object with \"entries\")");
  if (const auto version = document.value("schema_version", json(expectations_schema_version));
      !version.is_number_integer() || version.get<int>() > expectations_schema_version)
    throw contract_error("expectations file " + path + " has schema_version " + version.dump() + "; this aisp reads " +
                         std::to_string(expectations_schema_version) + " (a newer aisp wrote it?)");
  check_entries(document["entries"], path);
  if (document.value("hardware", hardware) != hardware)
    throw contract_error("expectations file " + path + " is for " + document.value("hardware", "?") + ", not " + hardware);
  return document;
}

void save_expectations(const std::string& path, const json& expectations) {
  if (const auto parent = std::filesystem::path(path).parent_path(); !parent.empty()) std::filesystem::create_directories(parent);
  write_json_file(path, expectations, 2);
}

json recorded_metrics_of(const json& goal_metrics) {
  return goal_metrics.is_object() ? goal_metrics.value("recorded", json(nullptr)) : json(nullptr);  // null for speed pairs
}

namespace {

// Note [tail expectations]: a serving pair's speedup is its throughput, but issue 21 judges it
// at no worse TPOT p99 as well; a scheduler change that keeps the tokens a second and stretches
// the tail would pass a speedup-only expectation. So an entry also keeps, for each metric the
// variant recorded (goal_metrics.recorded: TTFT, TPOT...), the baseline's p99 over the variant's
// with its CI, and a later run whose ratio CI lies wholly below it (less the tolerance) is
// "regressed <metric> p99". Null where the variant recorded nothing.
json tail_ratios_of(const json& variant) {
  json ratios = json::object();
  const json recorded = recorded_metrics_of(variant.value("goal_metrics", json(nullptr)));  // a copy: it outlives the loop
  if (!recorded.is_object()) return nullptr;
  for (const auto& [metric, values] : recorded.items()) {
    if (values.contains("p99_ratio")) ratios[metric] = values["p99_ratio"];
  }
  return ratios.empty() ? json(nullptr) : ratios;
}

}  // namespace

int update_expectations(json& expectations, const json& results, double min_speedup) {
  const json card = primary_gpu(results);
  int written = 0;
  for (const auto& pair : results.value("pairs", json::array())) {
    if (pair.value("status", "") != "pass" || pair.value("flagged", false)) continue;
    for (const auto& s : pair.value("speedups", json::array())) {
      const auto& speedup = s["speedup"];
      if (s.value("verdict", "") != "faster" || speedup.value("low", 0.0) < min_speedup) continue;
      json variant;
      for (const auto& v : pair["variants"]) {
        if (v.value("name", "") == s.value("variant", "")) variant = v;
      }
      expectations["entries"][pair.value("target", "")][s.value("variant", "")] = {
          {"median_s", variant.value("median_s", 0.0)},
          {"speedup", speedup},
          {"sol_memory_pct", variant.contains("sol_memory_pct") ? variant["sol_memory_pct"] : json(nullptr)},  // older runs: none
          // The variant's time as a ratio of the library peer's (Note [peer ratio]): a drop
          // against cuBLAS is a regression even where the speedup over the baseline holds.
          {"vs_peer", variant.value("vs_peer", json(nullptr))},
          // Note [tail expectations]: each recorded metric's baseline-p99-over-this ratio.
          {"tail_ratios", tail_ratios_of(variant)},
          {"provenance",
           {{"date", results.value("started_at", "")}, {"aisp_version", results.value("aisp_version", "")},
            {"git_sha", results.value("git", json::object()).value("sha", "")},
            {"card_uuid", card.value("uuid", "")}, {"card", card.value("name", "")},
            {"driver", results.value("device", json::object()).value("cuda_driver_version", 0)},
            {"samples", variant.value("sample_count", 0)}, {"artifacts_dir", results.value("artifacts_dir", "")},
            {"launch_gate", pair.value("launch_gate", false)}}}};
      ++written;
    }
  }
  return written;
}

namespace {

// Note [expectation tolerance]: a run's CI is compared with the trusted run's CI widened by
// expectation_tolerance on each side. Both CIs are often ~0.1% wide, while the same build on
// another lent H100 moved medians by 1-2% (ch06:ilp_accumulators 1.618x on GPU-1a49f6ae,
// 1.599x on GPU-7672367b, 2026-11-26/27): without the margin every other card "regressed".
std::string compare_intervals(const json& expected, double low, double high) {
  if (high < expected.value("low", 0.0) * (1.0 - expectation_tolerance)) return "regressed";
  if (low > expected.value("high", 0.0) * (1.0 + expectation_tolerance)) return "improved";
  return "met";
}

}  // namespace

// Note [baseline moved]: a speedup is a ratio, and the baseline's half of it can move without the
// variant's code changing: launch- and host-bound baselines follow the lent machine's CPU. On two
// H100 machines on 2026-11-27 ch01:batched_launches, ch01:pinned_staging and
// ch10:cooperative_grid_sync "regressed" (412x to 366x, 6.8x to 5.0x, 2.54x to 1.74x) while their
// optimized variants ran within 2.2% of their recorded medians: their baselines got faster. A
// variant within expectation_tolerance of its recorded median is marked "baseline moved"; one
// slower than that is still "regressed" (labs/gemm:bf16_8192 optimized_wgmma_tma, 29% slower).
std::string mark_against(const json& expectations, const std::string& target, const std::string& variant, double low,
                         double high, const json& vs_peer, double median_s, const json& recorded) {
  const auto entries = expectations.value("entries", json::object());
  if (!entries.contains(target) || !entries[target].contains(variant)) return "new";
  const auto& entry = entries[target][variant];
  auto speedup = compare_intervals(entry["speedup"], low, high);
  const double recorded_s = entry.value("median_s", 0.0);
  if (speedup == "regressed" && median_s > 0 && recorded_s > 0 && median_s <= recorded_s * (1.0 + expectation_tolerance))
    speedup = "baseline moved";
  const auto expected_tails = entry.value("tail_ratios", json(nullptr));
  if (expected_tails.is_object() && recorded.is_object()) {  // Note [tail expectations]
    for (const auto& [metric, expected] : expected_tails.items()) {
      const auto now = recorded.value(metric, json::object()).value("p99_ratio", json(nullptr));
      if (now.is_object() && compare_intervals(expected, now.value("low", 0.0), now.value("high", 0.0)) == "regressed")
        return "regressed " + metric + " p99";
    }
  }
  const auto expected_peer = entry.value("vs_peer", json(nullptr));
  if (!vs_peer.is_object() || !expected_peer.is_object()) return speedup;
  const auto peer = compare_intervals(expected_peer, vs_peer.value("low", 0.0), vs_peer.value("high", 0.0));
  if (peer == "regressed") return "regressed vs peer";
  return speedup == "met" && peer == "improved" ? "improved vs peer" : speedup;
}

}  // namespace aisp

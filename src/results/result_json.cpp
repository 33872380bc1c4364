#include "results/result_json.hpp"

#include "results/time_breakdown.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "aisp/check.hpp"
#include "aisp_git.hpp"

namespace aisp {
namespace {

using nlohmann::json;

json to_json(const stats::ratio_estimate& r) { return {{"point", r.point}, {"low", r.low}, {"high", r.high}}; }

json to_json(const variant_result& v) {
  json samples = json::array();
  json clocks = json::array();
  json walls = json::array();
  for (const auto& s : v.samples) {
    samples.push_back(s.duration_s);
    walls.push_back(s.host_wall_s);
    clocks.push_back(s.sm_clock_mhz);
  }
  return {
      {"name", v.name},
      {"summary", v.summary},
      {"precision", v.precision},
      {"host_threads", v.host_threads},
      {"library", v.library},
      {"math_unit", std::string(math_unit_name(v.math))},
      {"vs_peer", v.vs_peer ? to_json(*v.vs_peer) : json(nullptr)},
      {"verified", v.verified},
      {"stop_reason", v.stop_reason},
      {"sample_count", v.stats.count},
      {"calls_per_sample", v.calls_per_sample},
      {"median_s", v.stats.median},
      {"median_ci_s", {{"low", v.median_ci.low}, {"high", v.median_ci.high}}},
      {"q1_s", v.stats.q1},
      {"q3_s", v.stats.q3},
      {"iqr_s", v.stats.iqr},
      {"min_s", v.stats.min},
      {"max_s", v.stats.max},
      {"mean_s", v.stats.mean},
      {"cv", v.stats.cv},
      {"robust_cv", v.stats.robust_cv},
      {"outliers", v.stats.outliers},
      {"sampling_s", v.sampling_s},
      {"setup_s", v.setup_s},
      {"warmup_s", v.warmup_s},
      {"buffer_bytes", v.buffer_bytes},
      {"sm_clock_median_mhz", v.sm_clock_median_mhz},
      {"low_clock_samples", v.low_clock_samples},
      {"achieved_bytes_per_s", v.achieved_bytes_per_s},
      {"achieved_flops_per_s", v.achieved_flops_per_s},
      {"sol_memory_pct", 100 * v.sol_memory},
      {"sol_memory_pct_ci", v.sol_memory_ci.high > 0 ? json{{"low", 100 * v.sol_memory_ci.low},
                                                            {"high", 100 * v.sol_memory_ci.high}}
                                                      : json(nullptr)},
      {"sol_compute_pct", 100 * v.sol_compute},
      {"achieved_special_function_ops_per_s", v.achieved_special_function_ops_per_s},
      {"sol_special_function_pct", 100 * v.sol_special_function},
      {"samples_s", samples},
      {"sample_host_wall_s", walls},
      {"gated_samples", v.gated_samples()},
      {"sample_sm_clock_mhz", clocks},
      {"throttled_samples", v.throttled_samples},
      {"clock_event_reasons", v.clock_event_reasons},
      {"energy_per_call_j", v.energy_per_call_j},
      {"energy_window_power_w", v.energy_window_power_w},
      {"energy_window_s", v.energy_window_s},
      {"device_audit", v.device_audit},
      {"traffic", v.traffic},
      {"sandbox", v.sandbox},
      {"other_work_cpus", v.other_work_cpus ? json(*v.other_work_cpus) : json(nullptr)},
      {"worker_cpu", v.worker_cpu},
      {"visit_cost", v.visit_cost},
      {"notes", v.notes},
      {"goal_metrics", v.goal_metrics},
  };
}

// Seconds by phase (a phase that ran twice adds up).
json phases_json(const std::vector<std::pair<std::string, double>>& phases) {
  json out = json::object();
  for (const auto& [phase, seconds] : phases) out[phase] = out.value(phase, 0.0) + seconds;
  return out;
}

}  // namespace

json to_json(const pair_result& result) {
  json variants = json::array();
  for (const auto& v : result.variants) variants.push_back(to_json(v));
  json speedups = json::array();
  for (const auto& s : result.speedups) {
    speedups.push_back({{"variant", s.variant}, {"speedup", to_json(s.speedup)}, {"verdict", s.verdict}, {"expectation", s.expectation}});
    if (!s.verdict_reason.empty()) speedups.back()["verdict_reason"] = s.verdict_reason;
  }
  json checks = json::array();
  for (const auto& c : result.checks) {
    checks.push_back({{"check", c.check}, {"variant", c.variant}, {"passed", c.passed},
                      {"codes", c.codes}, {"detail", c.detail}});
  }
  json params = json::object();
  for (const auto& [name, value] : result.benchmark.params) params[name] = value;
  json out = {
      {"target", result.target},
      {"status", result.status},
      {"failure_kind", result.failure_kind},
      {"message", result.message},
      {"backend", result.backend},
      {"timing_mode", result.mode},
      {"timing_mode_reason", result.mode_reason},
      {"launch_gate", result.launch_gate},
      {"launch_gate_reason", result.launch_gate_reason},
      {"host_threads", result.host_threads},
      {"host_threads_reason", result.host_threads_reason.empty() ? json(nullptr) : json(result.host_threads_reason)},
      {"aa_test", result.aa_test},
      {"flagged", result.flagged},
      {"workload", params},
      {"work", {{"bytes", result.work.bytes}, {"flops", result.work.flops}}},
      {"variants", variants},
      {"speedups", speedups},
      {"noise_floor", result.noise_floor},
      {"goal", result.goal},
      {"verdict_statistic", result.verdict_statistic},
      {"checks", checks},
      {"wall_s", result.wall_s},
      {"phase_s", phases_json(result.phase_s)},
      {"tags", result.tags},
      {"roofline", result.roofline},
  };
  out["noise"] = result.noise ? to_json(*result.noise) : json(nullptr);
  if (!result.verdict_statistic_why.empty()) out["verdict_statistic_why"] = result.verdict_statistic_why;
  for (const auto& trade : result.latency_trades) {  // Note [declared latency trade]
    out["latency_trades"][trade.metric] = {{"worst_factor", trade.worst_factor}, {"why", trade.why}};
  }
  if (!result.data_dependent_launches.empty()) out["data_dependent_launches"] = result.data_dependent_launches;
  if (!result.ranks.is_null()) out["ranks"] = result.ranks;
  if (result.gpu >= 0) out["gpu"] = result.gpu;
  return out;
}

json to_json(const suite_result& suite) {
  json pairs = suite.carried_pairs;  // Note [resumed runs]: the interrupted run's pairs first
  for (const auto& p : suite.pairs) pairs.push_back(to_json(p));
  json document = {{"schema", results_schema},
          {"schema_version", result_schema_version},
          {"aisp_version", suite.aisp_version},
          {"git", {{"sha", AISP_GIT_SHA}, {"dirty", AISP_GIT_DIRTY}}},
          {"started_at", suite.started_at},
          {"command", suite.command},
          {"artifacts_dir", suite.artifacts_dir},
          {"config", suite.config},
          {"device", suite.device},
          {"environment", suite.environment},
          {"telemetry_end", suite.telemetry_end},
          {"time", to_json(break_down(suite.pairs))},
          {"pairs", pairs}};
  if (suite.interrupted_by != 0) document["interrupted_by"] = strsignal(suite.interrupted_by);  // Note [interrupted runs]
  if (!suite.resumed_from.is_null()) document["resumed_from"] = suite.resumed_from;  // Note [resumed runs]
  return document;
}

nlohmann::json primary_gpu(const nlohmann::json& results) {
  const auto gpus = results.value("device", nlohmann::json::object()).value("gpus", nlohmann::json::array());
  return gpus.empty() ? nlohmann::json::object() : gpus[0];
}

namespace {

// A field whose name says it holds a measurement: a number, null (JSON's NaN), or a list or an
// object (a CI: low, point, high) of those.
bool is_measurement_name(const std::string& key) {
  for (const char* suffix : {"_s", "_pct", "_j", "_w", "_mhz", "_count", "_bytes", "_samples", "cv"}) {
    if (key.ends_with(suffix)) return true;
  }
  return key == "outliers" || key == "calls_per_sample" || key == "speedup";
}

bool is_measurement(const nlohmann::json& value) {
  const auto scalar = [](const nlohmann::json& v) { return v.is_number() || v.is_null(); };
  if (scalar(value)) return true;
  if (!value.is_array() && !value.is_object()) return false;
  return std::all_of(value.begin(), value.end(), scalar);
}

// The first measurement field of `object` that holds something else, as "key", or "".
std::string bad_measurement(const nlohmann::json& object) {
  for (const auto& [key, value] : object.items()) {
    if (is_measurement_name(key) && !is_measurement(value)) return key;
  }
  return "";
}

// What a reader of a results document relies on beyond being an object with "pairs" (checked
// first): a file edited by hand or written by something else fails where it is read, saying where
// it differs, instead of as a JSON type error deep in a report, a roofline or a merge.
std::string results_shape_problem(const nlohmann::json& document) {
  if (document.contains("schema") && document["schema"] != results_schema) {
    return "its schema is " + document["schema"].dump() + ", not \"" + std::string(results_schema) + "\"";
  }
  // A newer aisp's document may mean its fields differently: refused, as the expectations are.
  if (const auto version = document.value("schema_version", nlohmann::json(result_schema_version));
      !version.is_number_integer() || version.get<int>() > result_schema_version)
    return "its schema_version is " + version.dump() + "; this aisp reads " + std::to_string(result_schema_version) +
           " (a newer aisp wrote it?)";
  if (!document["pairs"].is_array()) return "its \"pairs\" is not an array";
  const auto& pairs = document["pairs"];
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& pair = pairs[i];
    const std::string at = "pairs[" + std::to_string(i) + "]";
    if (!pair.is_object()) return at + " is not an object";
    if (!pair.contains("target") || !pair["target"].is_string()) return at + ".target is not a string";
    for (const char* list : {"variants", "speedups", "checks"}) {
      if (pair.contains(list) && !pair[list].is_array()) return at + "." + list + " is not an array";
    }
    if (!pair.contains("variants")) continue;
    for (std::size_t v = 0; v < pair["variants"].size(); ++v) {
      const auto& variant = pair["variants"][v];
      if (!variant.is_object() || !variant.contains("name") || !variant["name"].is_string()) {
        return at + ".variants[" + std::to_string(v) + "] has no name";
      }
      if (const auto key = bad_measurement(variant); !key.empty()) {
        return at + ".variants[" + std::to_string(v) + "]." + key + " is not a number (or a list of numbers)";
      }
    }
    for (std::size_t i_s = 0; pair.contains("speedups") && i_s < pair["speedups"].size(); ++i_s) {
      const auto& speedup = pair["speedups"][i_s];
      if (!speedup.is_object()) return at + ".speedups[" + std::to_string(i_s) + "] is not an object";
      if (const auto key = bad_measurement(speedup); !key.empty()) {
        return at + ".speedups[" + std::to_string(i_s) + "]." + key + " is not a number (or a list of numbers)";
      }
    }
  }
  return "";
}

}  // namespace

nlohmann::json read_results_document(const std::string& run) {
  std::filesystem::path file = run;
  if (std::filesystem::is_directory(file)) file /= "results.json";
  std::ifstream in(file);
  AISP_EXPECTS(in.good(), "no results at " + file.string() + " (give a run's artifacts folder or its results.json)");
  auto document = nlohmann::json::parse(in, nullptr, false);
  AISP_EXPECTS(!document.is_discarded() && document.is_object() && document.contains("pairs"),
               file.string() + " is not a complete results document (truncated or not aisp's)");
  const std::string problem = results_shape_problem(document);
  AISP_EXPECTS(problem.empty(), file.string() + " is not a results document as aisp writes it: " + problem);
  return document;
}

}  // namespace aisp

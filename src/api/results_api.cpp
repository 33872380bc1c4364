#include "api/results_api.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "history/run_comparison.hpp"
#include "stats/summary.hpp"
#include "support/paths.hpp"

namespace aisp::api {
namespace {

using nlohmann::json;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// ISO 8601 timestamps order as text; a bound compares on its own length, so "2026-11" keeps
// the whole of November on both sides.
bool within_dates(const std::string& started_at, const run_filter& filter) {
  if (!filter.since.empty() && started_at.substr(0, filter.since.size()) < filter.since) return false;
  if (!filter.until.empty() && started_at.substr(0, filter.until.size()) > filter.until) return false;
  return true;
}

bool on_gpu(const json& run, const std::string& gpu) {
  if (gpu.empty()) return true;
  const auto wanted = lower(gpu);
  return lower(run.value("gpu", "")).find(wanted) != std::string::npos || lower(run.value("hardware", "")) == wanted;
}

json header_of(history_store& history, std::int64_t run) {
  auto header = history.run_header(run);
  if (!header) throw api_error(fmt::format("unknown run id {} (list_runs / `aisp bench history` names them)", run));
  return *header;
}

json pair_in(history_store& history, std::int64_t run, const std::string& target) {
  std::string targets;
  for (auto& pair : history.pairs_of(run)) {
    if (pair.value("target", "") == target) return pair;
    targets += (targets.empty() ? "" : ", ") + pair.value("target", "");
  }
  throw api_error(fmt::format("run {} has no pair '{}' (it has: {})", run, target, targets.empty() ? "none" : targets));
}

json failed_checks(const json& pair) {
  json failed = json::array();
  for (const auto& c : pair.value("checks", json::array())) {
    if (!c.value("passed", true)) failed.push_back(c);
  }
  return failed;
}

// A variant as a run's overview shows it: the time and how close to the ceiling.
json variant_overview(const json& v) {
  return {{"name", v.value("name", "")}, {"verified", v.value("verified", json(nullptr))}, {"median_s", v.value("median_s", 0.0)},
          {"median_ci_s", v.value("median_ci_s", json(nullptr))}, {"cv", v.value("cv", 0.0)},
          {"sol_memory_pct", v.value("sol_memory_pct", 0.0)}, {"sol_compute_pct", v.value("sol_compute_pct", 0.0)}};
}

json pair_overview(const json& pair) {
  json variants = json::array();
  for (const auto& v : pair.value("variants", json::array())) variants.push_back(variant_overview(v));
  return {{"target", pair.value("target", "")}, {"status", pair.value("status", "")},
          {"failure_kind", pair.value("failure_kind", "")}, {"message", pair.value("message", "")},
          {"timing_mode", pair.value("timing_mode", "")}, {"flagged", pair.value("flagged", false)},
          {"speedups", pair.value("speedups", json::array())}, {"noise_floor", pair.value("noise_floor", json(nullptr))},
          {"variants", variants}, {"checks_run", pair.value("checks", json::array()).size()},
          {"failed_checks", failed_checks(pair)}};
}

json samples_summary(const std::vector<double>& samples) {
  if (samples.empty()) return {{"count", 0}};
  const auto s = stats::summarize(samples);
  return {{"count", s.count}, {"median_s", s.median}, {"q1_s", s.q1},   {"q3_s", s.q3},
          {"min_s", s.min},   {"max_s", s.max},       {"cv", s.cv},     {"outliers", s.outliers}};
}

json speedups_marked(const json& pair) {
  json speedups = pair.value("speedups", json::array());
  for (auto& s : speedups) s["regressed"] = s.value("expectation", "").starts_with("regressed");
  return speedups;
}

}  // namespace

history_store open_history(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw api_error("no history database at " + path + " (record runs with `aisp bench run --history`, or pass --db)");
  try {
    return history_store(path);
  } catch (const history_error& error) {  // a file that is not aisp's history: bad input, as a missing one is
    throw api_error(error.what());
  }
}

void check_history_if_present(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return;
  if (!std::filesystem::is_regular_file(path, error)) throw api_error("the history database " + path + " is not a file");
  static_cast<void>(open_history(path));
}

namespace {
// An ISO 8601 date or time, or a prefix of one that ends on a whole field: 2026, 2026-11,
// 2026-11-29, 2026-11-29T10:32, ...; anything else would silently match no run (or every run).
bool is_date_prefix(const std::string& text) {
  static const std::string shape = "dddd-dd-ddTdd:dd:ddZ";
  static const std::set<std::size_t> whole{4, 7, 10, 13, 16, 19, 20};
  if (whole.count(text.size()) == 0) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(text[i])) != 0;
    if (shape[i] == 'd' ? !digit : text[i] != shape[i]) return false;
  }
  return true;
}
}  // namespace

json list_runs(history_store& history, const run_filter& filter) {
  if (filter.limit < 1) throw api_error(fmt::format("limit must be at least 1, not {}", filter.limit));
  for (const auto& [name, bound] : {std::pair{"since", filter.since}, std::pair{"until", filter.until}}) {
    if (!bound.empty() && !is_date_prefix(bound))
      throw contract_error(fmt::format("--{} (the API's `{}`) must be an ISO 8601 date or a prefix of one (2026-11, 2026-11-29, "
                                       "2026-11-29T10:32), not '{}'",
                                       name, name, bound));
  }
  json kept = json::array();
  for (auto& run : history.runs(filter.target)) {
    if (static_cast<int>(kept.size()) >= filter.limit) break;
    if (!on_gpu(run, filter.gpu) || !within_dates(run.value("started_at", ""), filter)) continue;
    if (run.contains("result")) {
      run["status"] = run["result"].value("status", "");
      run["speedups"] = run["result"].value("speedups", json::array());
      run.erase("result");
    }
    kept.push_back(std::move(run));
  }
  return kept;
}

json show_run(history_store& history, std::int64_t run) {
  const auto header = header_of(history, run);
  json pairs = json::array();
  for (const auto& pair : history.pairs_of(run)) pairs.push_back(pair_overview(pair));
  return {{"id", run}, {"state", header.value("state", "")}, {"started_at", header.value("started_at", "")},
          {"command", header.value("command", "")}, {"artifacts_dir", header.value("artifacts_dir", "")},
          {"git", header.value("git", json(nullptr))}, {"hardware", hardware_key_of(header)},
          {"gpu", primary_gpu(header).value("name", "")}, {"config", header.value("config", json(nullptr))}, {"pairs", pairs}};
}

json show_pair(history_store& history, std::int64_t run, const std::string& target, bool with_samples) {
  header_of(history, run);  // an unknown run says so, not "no pair"
  auto pair = pair_in(history, run, target);
  for (auto& v : pair["variants"]) {
    const auto samples = history.samples(run, target, v.value("name", ""));
    v["stored_samples"] = samples_summary(samples);
    if (with_samples) v["samples_s"] = samples;
  }
  pair["run"] = run;
  pair["failed_checks"] = failed_checks(pair);
  pair["trace"] = !pair_trace_path(history, run, target).empty();
  return pair;
}

std::string pair_trace_path(history_store& history, std::int64_t run, const std::string& target) {
  const auto config = header_of(history, run).value("config", json::object());
  const auto dir = config.is_object() ? config.value("trace_dir", "") : "";
  if (dir.empty()) return "";
  // Where pair_runner writes it: the folder the run was given, one file per target.
  const auto file = std::filesystem::path(dir) / (file_safe(target) + ".trace.json");
  return std::filesystem::is_regular_file(file) ? file.string() : "";
}

json pair_trace(history_store& history, std::int64_t run, const std::string& target) {
  pair_in(history, run, target);  // an unknown pair says so
  const auto path = pair_trace_path(history, run, target);
  if (path.empty()) throw api_error(fmt::format("run {} stored no trace of '{}' (record one with bench run --trace DIR)", run, target));
  std::ifstream in(path);
  auto trace = json::parse(in, nullptr, false);
  if (trace.is_discarded()) throw api_error("the trace at " + path + " is not JSON (cut short?)");
  return trace;
}

json run_roofline(history_store& history, std::int64_t run) {
  header_of(history, run);
  json pairs = json::array();
  for (const auto& pair : history.pairs_of(run)) {
    json variants = json::array();
    for (const auto& v : pair.value("variants", json::array())) {
      variants.push_back({{"name", v.value("name", "")}, {"median_s", v.value("median_s", 0.0)}, {"math_unit", v.value("math_unit", "")},
                          {"achieved_bytes_per_s", v.value("achieved_bytes_per_s", 0.0)},
                          {"achieved_flops_per_s", v.value("achieved_flops_per_s", 0.0)},
                          {"sol_memory_pct", v.value("sol_memory_pct", 0.0)}, {"sol_compute_pct", v.value("sol_compute_pct", 0.0)}});
    }
    pairs.push_back({{"target", pair.value("target", "")}, {"status", pair.value("status", "")},
                     {"work", pair.value("work", json::object())}, {"roofline", pair.value("roofline", json::object())},
                     {"variants", variants}});
  }
  return {{"run", run}, {"pairs", pairs}};
}

run_comparison compare_checked(history_store& history, std::int64_t run_a, std::int64_t run_b) {
  header_of(history, run_a);
  header_of(history, run_b);
  return compare_runs(history, run_a, run_b);
}

json compare(history_store& history, std::int64_t run_a, std::int64_t run_b) { return to_json(compare_checked(history, run_a, run_b)); }

json target_history(history_store& history, const std::string& target, int limit) {
  if (target.empty()) throw api_error("target_history needs a target (e.g. labs/host:transpose)");
  if (limit < 1) throw api_error(fmt::format("limit must be at least 1, not {}", limit));
  json rows = json::array();
  for (const auto& run : history.runs(target)) {
    if (static_cast<int>(rows.size()) >= limit) break;
    const auto& pair = run["result"];
    json medians = json::object();
    for (const auto& v : pair.value("variants", json::array())) medians[v.value("name", "")] = v.value("median_s", 0.0);
    rows.push_back({{"run", run["id"]}, {"started_at", run["started_at"]}, {"gpu", run["gpu"]}, {"hardware", run["hardware"]},
                    {"state", run["state"]}, {"status", pair.value("status", "")}, {"median_s", medians},
                    {"speedups", speedups_marked(pair)}, {"failed_checks", failed_checks(pair)}});
  }
  if (rows.empty()) throw api_error("no recorded run holds '" + target + "'");
  return {{"target", target}, {"runs", rows}};
}

}  // namespace aisp::api

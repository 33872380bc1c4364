// Nsight Compute's `--csv --page details` output, read back into the metrics aisp reports
// (Note [ncu details] in ncu_report.cpp). Parsing is tested on real outputs captured on the H100
// (tests/unit/data/ncu/).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp::profile {

struct ncu_metric {
  std::string section;
  std::string name;
  std::string unit;
  std::string text;             // as ncu printed it
  std::optional<double> value;  // text as a number (thousands separators dropped), if it is one
};

// One profiled launch.
struct ncu_kernel {
  std::string id;
  std::string name;
  std::string grid;
  std::string block;
  std::string nvtx;  // the push/pop range stack, as ncu prints it
  std::vector<ncu_metric> metrics;

  // The first metric of this name (and section, when given) with a numeric value.
  [[nodiscard]] std::optional<double> number(std::string_view name, std::string_view section = {}) const;
};

// Throws contract_error when the text holds no ncu details table (no "ID" header).
[[nodiscard]] std::vector<ncu_kernel> parse_ncu_details(std::string_view text);

// The metrics a performance engineer reads first, in aisp's units (seconds, percent of peak).
struct kernel_metrics {
  std::string name;
  std::optional<double> duration_s;
  std::optional<double> dram_pct;
  std::optional<double> l2_pct;
  std::optional<double> l1_pct;
  std::optional<double> sm_pct;  // Compute (SM) throughput
  std::optional<double> issue_busy_pct;
  std::optional<double> achieved_occupancy_pct;
  std::optional<double> theoretical_occupancy_pct;
  std::string occupancy_limiter;  // registers, shared memory, warps, barriers or blocks
  std::optional<double> registers_per_thread;
  std::optional<double> local_spill_requests;
  std::optional<double> eligible_warps_per_scheduler;
  std::optional<double> no_eligible_pct;
  std::optional<double> l1_hit_pct;
  std::optional<double> l2_hit_pct;
  std::optional<double> elapsed_cycles;  // SM cycles the launch took: issue slots x cycles ~ instructions
  // From the raw page (add_raw_metrics): why warps wait, and how well accesses use what they move.
  std::vector<std::pair<std::string, double>> top_stalls;  // reason, warps stalled per issued instruction; largest first
  std::optional<double> global_load_sectors_per_request;   // 4 for 32 lanes of 4 coalesced bytes; 32 at worst
  std::optional<double> global_store_sectors_per_request;
  std::optional<double> shared_bank_conflicts;             // shared loads and stores, whole launch
};

// `--page raw`: one row per launch (after a row of units), one column per metric.
struct ncu_raw_launch {
  std::string id;
  std::string name;
  std::map<std::string, double> values;  // numeric cells only
};
[[nodiscard]] std::vector<ncu_raw_launch> parse_ncu_raw(std::string_view text);

// The raw metrics aisp asks ncu for beyond the sections (raw_metric_names), read into `metrics`.
[[nodiscard]] const std::vector<std::string>& raw_metric_names();
void add_raw_metrics(kernel_metrics& metrics, const ncu_raw_launch& raw);

[[nodiscard]] kernel_metrics key_metrics(const ncu_kernel& kernel);
[[nodiscard]] nlohmann::json to_json(const kernel_metrics& metrics);
// Back from profile.json (`aisp profile diff`): what to_json wrote.
[[nodiscard]] kernel_metrics metrics_from_json(const nlohmann::json& kernel);

}  // namespace aisp::profile

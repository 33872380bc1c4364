#include "profile/ncu_report.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

#include "aisp/check.hpp"

namespace aisp::profile {
namespace {

// Note [ncu details]: `ncu --csv --page details` prints its own progress lines (==PROF==,
// ==WARNING==) and whatever the profiled program prints, then one table whose header starts
// with "ID". Each row is one metric (or one rule, with an empty metric name) of one launch:
// ID, process, host, the NVTX stacks, kernel name, context, stream, block, grid, device, CC,
// section, metric name, unit, value, then the rule's columns. Values carry thousands
// separators ("1,916,315,732.22") and units vary per metric (Duration in ns here, us or ms
// elsewhere), so both are normalized here and nowhere else.

// One CSV line: fields in double quotes, "" inside a field for a quote.
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

std::optional<double> number_of(std::string text) {
  std::erase(text, ',');
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> seconds(const ncu_kernel& kernel) {
  for (const auto& metric : kernel.metrics) {
    if (metric.name != "Duration" || !metric.value) continue;
    static const std::map<std::string, double> scale = {{"ns", 1e-9}, {"nsecond", 1e-9}, {"us", 1e-6},   {"usecond", 1e-6},
                                                        {"ms", 1e-3}, {"msecond", 1e-3}, {"s", 1.0},    {"second", 1.0}};
    const auto found = scale.find(metric.unit);
    if (found != scale.end()) return *metric.value * found->second;
  }
  return std::nullopt;
}

// The occupancy limiter: the block limit with the fewest blocks (ties: the first named).
std::string limiter_of(const ncu_kernel& kernel) {
  static const std::pair<const char*, const char*> limits[] = {{"Block Limit Registers", "registers"},
                                                               {"Block Limit Shared Mem", "shared memory"},
                                                               {"Block Limit Warps", "warps"},
                                                               {"Block Limit Barriers", "barriers"},
                                                               {"Block Limit SM", "blocks"}};
  std::string limiter;
  double fewest = 0;
  for (const auto& [metric, what] : limits) {
    const auto blocks = kernel.number(metric);
    if (blocks && (limiter.empty() || *blocks < fewest)) {
      limiter = what;
      fewest = *blocks;
    }
  }
  return limiter;
}

// Calls `row` with the header and each row of the table that starts at the "ID" header line;
// false when there is no such table. Lines that are not CSV rows (ncu's progress) are skipped.
template <typename Row>
bool for_each_row(std::string_view text, Row&& row) {
  std::vector<std::string> header;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (header.empty()) {
      if (line.starts_with("\"ID\"")) header = csv_fields(line);
    } else if (line.starts_with('"')) {
      row(header, csv_fields(line));
    }
  }
  return !header.empty();
}

constexpr const char* stall_prefix = "smsp__average_warps_issue_stalled_";
constexpr const char* stall_suffix = "_per_issue_active.ratio";

// The metrics read as ncu names them, and their keys in profile.json.
struct reported_metric {
  const char* key;
  const char* ncu_name;
  std::optional<double> kernel_metrics::*member;
};
constexpr reported_metric reported[] = {
    {"dram_pct", "DRAM Throughput", &kernel_metrics::dram_pct},
    {"l2_pct", "L2 Cache Throughput", &kernel_metrics::l2_pct},
    {"l1_pct", "L1/TEX Cache Throughput", &kernel_metrics::l1_pct},
    {"sm_pct", "Compute (SM) Throughput", &kernel_metrics::sm_pct},
    {"issue_busy_pct", "Issue Slots Busy", &kernel_metrics::issue_busy_pct},
    {"achieved_occupancy_pct", "Achieved Occupancy", &kernel_metrics::achieved_occupancy_pct},
    {"theoretical_occupancy_pct", "Theoretical Occupancy", &kernel_metrics::theoretical_occupancy_pct},
    {"registers_per_thread", "Registers Per Thread", &kernel_metrics::registers_per_thread},
    {"local_spill_requests", "Local Memory Spilling Requests", &kernel_metrics::local_spill_requests},
    {"eligible_warps_per_scheduler", "Eligible Warps Per Scheduler", &kernel_metrics::eligible_warps_per_scheduler},
    {"no_eligible_pct", "No Eligible", &kernel_metrics::no_eligible_pct},
    {"l1_hit_pct", "L1/TEX Hit Rate", &kernel_metrics::l1_hit_pct},
    {"l2_hit_pct", "L2 Hit Rate", &kernel_metrics::l2_hit_pct},
    {"elapsed_cycles", "Elapsed Cycles", &kernel_metrics::elapsed_cycles},
};

}  // namespace

std::optional<double> ncu_kernel::number(std::string_view metric, std::string_view section) const {
  for (const auto& m : metrics) {
    if (m.name == metric && (section.empty() || m.section == section) && m.value) return m.value;
  }
  return std::nullopt;
}

std::vector<ncu_kernel> parse_ncu_details(std::string_view text) {
  std::vector<ncu_kernel> kernels;
  std::map<std::string, std::size_t> at;  // launch ID -> index in kernels
  const bool found_table = for_each_row(text, [&](const std::vector<std::string>& header, const std::vector<std::string>& fields) {
    std::map<std::string_view, std::string_view> row;  // a metric's row stops before the rule's columns
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    const std::string id(row["ID"]);
    auto [found, added] = at.try_emplace(id, kernels.size());
    if (added) {
      ncu_kernel kernel;
      kernel.id = id;
      kernel.name = row["Kernel Name"];
      kernel.grid = row["Grid Size"];
      kernel.block = row["Block Size"];
      for (const auto& [column, value] : row) {
        if (column.find("Push/Pop_Range") != std::string_view::npos) kernel.nvtx = value;
      }
      kernels.push_back(std::move(kernel));
    }
    if (row["Metric Name"].empty()) return;  // a rule's row
    ncu_metric metric{.section = std::string(row["Section Name"]),
                      .name = std::string(row["Metric Name"]),
                      .unit = std::string(row["Metric Unit"]),
                      .text = std::string(row["Metric Value"]),
                      .value = number_of(std::string(row["Metric Value"]))};
    kernels[found->second].metrics.push_back(std::move(metric));
  });
  AISP_EXPECTS(found_table, "no Nsight Compute details table (a line starting with \"ID\") in the ncu output");
  return kernels;
}

std::vector<ncu_raw_launch> parse_ncu_raw(std::string_view text) {
  std::vector<ncu_raw_launch> launches;
  const bool found_table = for_each_row(text, [&](const std::vector<std::string>& header, const std::vector<std::string>& fields) {
    if (fields.empty() || fields[0].empty()) return;  // the row of units
    ncu_raw_launch launch;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) {
      if (header[i] == "ID") launch.id = fields[i];
      if (header[i] == "Kernel Name") launch.name = fields[i];
      if (header[i].find("__") == std::string::npos) continue;  // ncu's metric names: unit__counter.rollup
      if (const auto value = number_of(fields[i])) launch.values[header[i]] = *value;
    }
    launches.push_back(std::move(launch));
  });
  AISP_EXPECTS(found_table, "no Nsight Compute raw table (a line starting with \"ID\") in the ncu output");
  return launches;
}

kernel_metrics key_metrics(const ncu_kernel& kernel) {
  kernel_metrics out;
  out.name = kernel.name;
  out.duration_s = seconds(kernel);
  for (const auto& f : reported) out.*f.member = kernel.number(f.ncu_name);
  out.occupancy_limiter = limiter_of(kernel);
  return out;
}

nlohmann::json to_json(const kernel_metrics& m) {
  nlohmann::json out = {{"kernel", m.name}};
  if (m.duration_s) out["duration_s"] = *m.duration_s;
  for (const auto& f : reported) {
    if (m.*f.member) out[f.key] = *(m.*f.member);
  }
  if (!m.occupancy_limiter.empty()) out["occupancy_limiter"] = m.occupancy_limiter;
  if (!m.top_stalls.empty()) {
    out["top_stalls"] = nlohmann::json::array();
    for (const auto& [reason, per_issue] : m.top_stalls) out["top_stalls"].push_back({{"reason", reason}, {"warps_per_issue", per_issue}});
  }
  if (m.global_load_sectors_per_request) out["global_load_sectors_per_request"] = *m.global_load_sectors_per_request;
  if (m.global_store_sectors_per_request) out["global_store_sectors_per_request"] = *m.global_store_sectors_per_request;
  if (m.shared_bank_conflicts) out["shared_bank_conflicts"] = *m.shared_bank_conflicts;
  return out;
}

const std::vector<std::string>& raw_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    // The reasons ncu accepted on the H100 (2026-11-27); an unknown metric name would make ncu
    // profile nothing, so a reason joins this list only after a device run has taken it.
    for (const char* reason : {"barrier", "drain", "lg_throttle", "long_scoreboard", "math_pipe_throttle", "mio_throttle",
                               "not_selected", "selected", "short_scoreboard", "wait"}) {
      out.push_back(std::string(stall_prefix) + reason + stall_suffix);
    }
    for (const char* m : {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                          "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"}) {
      out.emplace_back(m);
    }
    return out;
  }();
  return names;
}

void add_raw_metrics(kernel_metrics& m, const ncu_raw_launch& raw) {
  const std::string prefix = stall_prefix;
  const std::string suffix = stall_suffix;
  std::vector<std::pair<std::string, double>> stalls;
  for (const auto& [name, value] : raw.values) {
    // "selected" is the warp that issued, not a stall.
    if (!name.starts_with(prefix) || !name.ends_with(suffix) || name.find("_not_issued") != std::string::npos) continue;
    const auto reason = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (reason != "selected" && value > 0) stalls.emplace_back(reason, value);
  }
  std::sort(stalls.begin(), stalls.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (stalls.size() > 3) stalls.resize(3);
  m.top_stalls = std::move(stalls);
  const auto ratio = [&](const char* sectors, const char* requests) -> std::optional<double> {
    const auto s = raw.values.find(sectors);
    const auto r = raw.values.find(requests);
    if (s == raw.values.end() || r == raw.values.end() || r->second <= 0) return std::nullopt;
    return s->second / r->second;
  };
  m.global_load_sectors_per_request = ratio("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
  m.global_store_sectors_per_request = ratio("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum");
  const auto ld = raw.values.find("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
  const auto st = raw.values.find("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
  if (ld != raw.values.end() || st != raw.values.end())
    m.shared_bank_conflicts = (ld != raw.values.end() ? ld->second : 0) + (st != raw.values.end() ? st->second : 0);
}

kernel_metrics metrics_from_json(const nlohmann::json& kernel) {
  kernel_metrics m;
  m.name = kernel.value("kernel", "");
  if (kernel.contains("duration_s")) m.duration_s = kernel["duration_s"].get<double>();
  for (const auto& f : reported) {
    if (kernel.contains(f.key) && kernel[f.key].is_number()) m.*f.member = kernel[f.key].get<double>();
  }
  m.occupancy_limiter = kernel.value("occupancy_limiter", "");
  return m;
}

}  // namespace aisp::profile

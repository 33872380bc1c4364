#include "hw/hw_suite.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "hw/hw_probes.hpp"
#include "hw/system_info.hpp"
#include "support/json_file.hpp"
#include "support/utc_time.hpp"

namespace aisp {
namespace {

using probe_group = std::vector<probe_result> (*)();

const std::map<std::string, probe_group>& probe_groups() {
  static const std::map<std::string, probe_group> groups{
      {"memory", hw_probes::memory_probes}, {"cache", hw_probes::cache_probes}, {"fp32", hw_probes::fp32_probes},
      {"tensor", hw_probes::tensor_probes}, {"pcie", hw_probes::pcie_probes},   {"launch", hw_probes::launch_probes},
      {"p2p", hw_probes::p2p_probes},       {"nccl", hw_probes::nccl_probes}};
  return groups;
}

nlohmann::json read_cache(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();  // a corrupt cache is re-measured, not trusted
}

std::string human(double value, const std::string& unit) {
  if (unit == "B/s") return value >= 1e12 ? fmt::format("{:.3f} TB/s", value / 1e12) : fmt::format("{:.1f} GB/s", value / 1e9);
  if (unit == "FLOP/s") return fmt::format("{:.1f} TFLOP/s", value / 1e12);
  if (unit == "s") return value < 1e-6 ? fmt::format("{:.0f} ns", value * 1e9) : fmt::format("{:.2f} us", value * 1e6);
  return fmt::format("{:.4g} {}", value, unit);
}

}  // namespace

const std::vector<std::string>& hw_groups() {
  static const std::vector<std::string> groups{"all", "memory", "cache", "fp32", "tensor", "pcie", "launch", "p2p", "nccl"};
  return groups;
}

ceiling_set ceilings_from(const std::vector<probe_result>& probes) {
  ceiling_set c;
  for (const auto& p : probes) {
    if (!p.error.empty()) continue;
    if (p.group == "memory") c.memory_bytes_per_s = std::max(c.memory_bytes_per_s, p.median);
    if (p.name == "fp32_fma") c.fp32_flops_per_s = p.median;
    // Note [pcie ceiling]: the best repetition, not the median. The link is shared with other
    // traffic through the host's PCIe switch, which only slows a copy: on one H100 host the
    // median H2D came out at 48.8 GB/s (range 48.6-53.0) minutes before ch01:pinned_staging
    // moved 54.9 GB/s through the same link, and the physics gate (V3) failed an honest pair.
    if (p.name == "h2d_pinned") c.pcie_h2d_bytes_per_s = p.max;
    if (p.name == "d2h_pinned") c.pcie_d2h_bytes_per_s = p.max;
    if (p.name.starts_with("p2p_bandwidth_")) c.interconnect_bytes_per_s = std::max(c.interconnect_bytes_per_s, p.max);
    if (p.name == "tf32_tensor") c.tf32_flops_per_s = std::max(c.tf32_flops_per_s, p.median);
    if (p.name == "fp16_tensor") c.fp16_flops_per_s = std::max(c.fp16_flops_per_s, p.median);
    if (p.name == "bf16_tensor") c.bf16_flops_per_s = std::max(c.bf16_flops_per_s, p.median);
    if (p.name == "fp8_tensor") c.fp8_flops_per_s = std::max(c.fp8_flops_per_s, p.median);
  }
  if (c.known()) c.source = "measured";
  return c;
}

hw_report run_hw(const std::string& group, int device, bool refresh, const hw_progress& progress) {
  AISP_EXPECTS(std::find(hw_groups().begin(), hw_groups().end(), group) != hw_groups().end(),
               "unknown group '" + group + "' (all, memory, cache, fp32, tensor, pcie, launch, p2p, nccl)");
  int devices = 0;
  const cudaError_t found = cudaGetDeviceCount(&devices);
  if (found != cudaSuccess || devices == 0)
    throw no_gpu_error(gpu_absence_reason(found));
  AISP_EXPECTS(device < devices, "--device " + std::to_string(device) + " does not exist (" + std::to_string(devices) + " GPUs)");
  AISP_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp properties{};
  AISP_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  hw_report report;
  report.gpu_name = properties.name;
  report.uuid = format_uuid(properties.uuid);
  AISP_CUDA_CHECK(cudaDriverGetVersion(&report.driver_version));
  const auto file = ceilings_cache_file(report.uuid, report.driver_version);
  report.cache_file = file.string();
  auto cache = read_cache(file);
  std::map<std::string, nlohmann::json> cached;  // probe name -> its result
  for (const auto& p : cache.value("probes", nlohmann::json::array())) cached[p.value("name", "")] = p;

  for (const auto& [name, run] : probe_groups()) {
    if (group != "all" && group != name) continue;
    const bool have = std::any_of(cached.begin(), cached.end(), [&](const auto& entry) { return entry.second.value("group", "") == name; });
    if (have && !refresh) continue;
    progress(fmt::format("measuring {}...", name));
    for (auto& p : run()) {
      progress(fmt::format("  {}: {}", p.name, p.error.empty() ? human(p.median, p.unit) : p.error));
      cached[p.name] = to_json(p);
    }
    cache["measured_at"] = utc_now();
  }
  std::vector<probe_result> all;
  nlohmann::json stored = nlohmann::json::array();
  for (const auto& [name, j] : cached) {
    all.push_back(probe_result_from_json(j));
    stored.push_back(j);
    if (group == "all" || all.back().group == group) report.probes.push_back(all.back());
  }
  report.from_cache = cache.value("measured_at", "") == "" || !refresh;
  report.measured_at = cache.value("measured_at", "");
  report.ceilings = ceilings_from(all);
  cache["gpu"] = report.gpu_name;
  cache["uuid"] = report.uuid;
  cache["driver_version"] = report.driver_version;
  cache["probes"] = stored;
  cache["ceilings"] = to_json(report.ceilings);
  std::filesystem::create_directories(file.parent_path());
  write_json_file(file.string(), cache, 2);
  return report;
}

nlohmann::json to_json(const hw_report& r) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : r.probes) probes.push_back(to_json(p));
  return {{"gpu", r.gpu_name}, {"uuid", r.uuid}, {"driver_version", r.driver_version}, {"measured_at", r.measured_at},
          {"probes", probes}, {"ceilings", to_json(r.ceilings)}, {"cache_file", r.cache_file}};
}

std::string render_text(const hw_report& r) {
  std::string text = fmt::format("{} ({}), driver {}; measured {}\n", r.gpu_name, r.uuid, r.driver_version, r.measured_at);
  for (const auto& p : r.probes) {
    if (!p.error.empty()) {
      text += fmt::format("  {:<8} {:<24} not measured: {}\n", p.group, p.name, p.error);
      continue;
    }
    text += fmt::format("  {:<8} {:<24} {:>14}  [{} .. {}] x{}  {} ({})\n", p.group, p.name, human(p.median, p.unit),
                        human(p.min, p.unit), human(p.max, p.unit), p.repetitions, p.method, p.size);
  }
  text += fmt::format("ceilings: memory {}, FP32 {}; cache {}\n", human(r.ceilings.memory_bytes_per_s, "B/s"),
                      human(r.ceilings.fp32_flops_per_s, "FLOP/s"), r.cache_file);
  return text;
}

}  // namespace aisp

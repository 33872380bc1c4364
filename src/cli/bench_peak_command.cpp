// `aisp bench theoretical-peak`: the datasheet ceilings of the cards users compare against, with
// their source, beside what `aisp hw` measured on this machine's GPUs when that is cached.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "cli/commands.hpp"
#include "hw/ceilings.hpp"
#include "hw/datasheet.hpp"
#include "hw/system_info.hpp"

namespace aisp::cli {
namespace {

using nlohmann::json;

std::string tera(double value) { return value > 0 ? fmt::format("{:.1f}", value / 1e12) : "—"; }
std::string giga(double value) { return value > 0 ? fmt::format("{:.0f}", value / 1e9) : "—"; }

// The cached `aisp hw` ceilings of each local GPU whose datasheet is `sheet`.
json measured_for(const gpu_datasheet& sheet, const system_info& system) {
  json found = json::array();
  for (const auto& gpu : system.gpus) {
    if (datasheet_for_device(gpu.name) != &sheet) continue;
    if (const auto measured = load_cached_ceilings(gpu.uuid, system.cuda_driver_version)) {
      found.push_back({{"gpu", gpu.index}, {"uuid", gpu.uuid}, {"ceilings", to_json(*measured)}});
    }
  }
  return found;
}

int theoretical_peak(const std::string& key, bool as_json) {
  const gpu_datasheet* only = key.empty() ? nullptr : find_datasheet(key);
  AISP_EXPECTS(key.empty() || only != nullptr, "unknown --gpu '" + key + "' (h100, h200, b200, a100)");
  const auto system = probe_system();
  json rows = json::array();
  for (const auto& sheet : datasheets()) {
    if (only != nullptr && &sheet != only) continue;
    auto row = to_json(sheet);
    row["measured_here"] = measured_for(sheet, system);
    rows.push_back(row);
  }
  if (as_json) {
    std::printf("%s\n", rows.dump(2).c_str());
    return 0;
  }
  std::printf("%-6s %-34s %8s %8s %8s %8s %8s %8s %8s\n", "gpu", "card", "HBM GB/s", "FP32 TF", "TF32 TF", "BF16 TF",
              "FP8 TF", "PCIe GB/s", "NVLink");
  for (const auto& sheet : datasheets()) {
    if (only != nullptr && &sheet != only) continue;
    std::printf("%-6s %-34s %8s %8s %8s %8s %8s %8s %8s\n", sheet.key.c_str(), sheet.name.c_str(),
                giga(sheet.memory_bytes_per_s).c_str(), tera(sheet.fp32_flops_per_s).c_str(), tera(sheet.tf32_flops_per_s).c_str(),
                tera(sheet.bf16_flops_per_s).c_str(), tera(sheet.fp8_flops_per_s).c_str(), giga(sheet.pcie_bytes_per_s).c_str(),
                giga(sheet.nvlink_bytes_per_s).c_str());
    std::printf("       source: %s (tensor figures dense: half the sparse ones)\n", sheet.source.c_str());
    for (const auto& m : measured_for(sheet, system)) {
      const auto c = ceiling_set_from_json(m["ceilings"]);
      std::printf("       measured here (GPU %d): %s GB/s, FP32 %s TF\n", m["gpu"].get<int>(), giga(c.memory_bytes_per_s).c_str(),
                  tera(c.fp32_flops_per_s).c_str());
    }
  }
  return 0;
}

}  // namespace

void add_bench_peak_command(CLI::App& bench, outcome& result) {
  auto* peak = bench.add_subcommand("theoretical-peak",
                                    "The datasheet ceilings (memory, FP32, tensor, links) with their source, beside\n"
                                    "the ones `aisp hw` measured on this machine's GPUs when cached.");
  auto key = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  peak->add_option("--gpu", *key, "only this card: h100, h200, b200 or a100");
  peak->add_flag("--json", *as_json, "print machine-readable JSON");
  peak->callback([=, &result] { result.exit_code = theoretical_peak(*key, *as_json); });
}

}  // namespace aisp::cli

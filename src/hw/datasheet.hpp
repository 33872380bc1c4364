// The vendor's numbers for the cards users compare against: dense (no sparsity) tensor peaks,
// memory bandwidth and links, each with the document it comes from. A measured ceiling
// (`aisp hw`) always wins over these; they are what `bench theoretical-peak` prints beside it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp {

struct gpu_datasheet {
  std::string key;    // h100, h200, b200, a100
  std::string name;
  std::string source;
  double memory_bytes_per_s = 0;
  double fp32_flops_per_s = 0;      // 0 where the document does not state it
  double tf32_flops_per_s = 0;
  double bf16_flops_per_s = 0;
  double fp16_flops_per_s = 0;
  double fp8_flops_per_s = 0;       // 0: no fp8 tensor cores
  double pcie_bytes_per_s = 0;      // one direction
  double nvlink_bytes_per_s = 0;    // total, both directions
};

[[nodiscard]] const std::vector<gpu_datasheet>& datasheets();
[[nodiscard]] const gpu_datasheet* find_datasheet(std::string_view key);
// The sheet of a CUDA device name ("NVIDIA H100 80GB HBM3" -> h100); nullptr when unknown.
[[nodiscard]] const gpu_datasheet* datasheet_for_device(std::string_view device_name);
[[nodiscard]] nlohmann::json to_json(const gpu_datasheet& sheet);

}  // namespace aisp

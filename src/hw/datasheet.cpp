#include "hw/datasheet.hpp"

#include <algorithm>
#include <cctype>

namespace aisp {
namespace {

constexpr double tera = 1e12;
constexpr double giga = 1e9;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const std::vector<gpu_datasheet>& datasheets() {
  // Dense figures: the datasheets print tensor peaks "with sparsity"; these are half of those.
  static const std::vector<gpu_datasheet> sheets{
      {"h100", "NVIDIA H100 SXM5 80GB", "NVIDIA H100 Tensor Core GPU datasheet (SXM5 column)", 3.35 * tera,
       67 * tera, 494.5 * tera, 989.5 * tera, 989.5 * tera, 1979 * tera, 64 * giga, 900 * giga},
      {"h200", "NVIDIA H200 SXM 141GB", "NVIDIA H200 Tensor Core GPU datasheet (SXM column)", 4.8 * tera, 67 * tera,
       494.5 * tera, 989.5 * tera, 989.5 * tera, 1979 * tera, 64 * giga, 900 * giga},
      {"b200", "NVIDIA B200 (HGX B200, per GPU)", "NVIDIA HGX B200 specifications, per GPU (FP32 not stated)",
       8 * tera, 0, 1100 * tera, 2250 * tera, 2250 * tera, 4500 * tera, 64 * giga, 1800 * giga},
      {"a100", "NVIDIA A100 SXM4 80GB", "NVIDIA A100 Tensor Core GPU datasheet (SXM 80GB column)", 2.039 * tera,
       19.5 * tera, 156 * tera, 312 * tera, 312 * tera, 0, 32 * giga, 600 * giga},
  };
  return sheets;
}

const gpu_datasheet* find_datasheet(std::string_view key) {
  const auto wanted = lower(key);
  for (const auto& sheet : datasheets()) {
    if (sheet.key == wanted) return &sheet;
  }
  return nullptr;
}

const gpu_datasheet* datasheet_for_device(std::string_view device_name) {
  const auto name = lower(device_name);
  for (const auto& sheet : datasheets()) {
    if (name.find(sheet.key) != std::string::npos) return &sheet;
  }
  return nullptr;
}

nlohmann::json to_json(const gpu_datasheet& s) {
  return {{"key", s.key},
          {"name", s.name},
          {"source", s.source},
          {"memory_bytes_per_s", s.memory_bytes_per_s},
          {"fp32_flops_per_s", s.fp32_flops_per_s},
          {"tf32_flops_per_s", s.tf32_flops_per_s},
          {"bf16_flops_per_s", s.bf16_flops_per_s},
          {"fp16_flops_per_s", s.fp16_flops_per_s},
          {"fp8_flops_per_s", s.fp8_flops_per_s},
          {"pcie_bytes_per_s", s.pcie_bytes_per_s},
          {"nvlink_bytes_per_s", s.nvlink_bytes_per_s}};
}

}  // namespace aisp

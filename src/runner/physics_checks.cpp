#include "runner/physics_checks.hpp"

#include <fmt/format.h>

#include "runner/judge_checks.hpp"

namespace aisp {

void assess_speed_of_light(const work_amount& work, const ceiling_set& ceilings, const std::vector<variant_result*>& variants,
                           nlohmann::json& roofline, std::vector<check_result>& checks, data_path path) {
  const double intensity = work.bytes > 0 ? work.flops / work.bytes : 0;
  const bool over_pcie = crosses_pcie(path);
  const double bandwidth = ceilings.bandwidth_ceiling(path);
  const bool over_link = path == data_path::gpu_interconnect;
  const char* path_name = path == data_path::pcie_both_directions ? "PCIe (both directions)"
                          : over_pcie                              ? "PCIe (one direction)"
                          : over_link                              ? "GPU interconnect (one direction)"
                                                                   : "memory";  // for messages
  const char* bound_name = over_pcie ? "pcie" : over_link ? "interconnect" : "memory";
  roofline = {{"arithmetic_intensity_flop_per_byte", intensity},
              {"ceilings", to_json(ceilings)},
              {"data_path", std::string(data_path_name(path))},
              {"bandwidth_ceiling_bytes_per_s", bandwidth}};
  if (!ceilings.known()) {
    roofline["bound"] = "unknown";
    return;
  }
  if (bandwidth > 0 && ceilings.fp32_flops_per_s > 0) {
    const double ridge = ceilings.fp32_flops_per_s / bandwidth;
    roofline["ridge_flop_per_byte"] = ridge;
    roofline["bound"] = intensity < ridge ? bound_name : "compute";
  } else {
    roofline["bound"] = bandwidth > 0 ? bound_name : "compute";
  }
  for (auto* variant : variants) {
    auto& v = *variant;
    if (bandwidth > 0) v.sol_memory = v.achieved_bytes_per_s / bandwidth;
    if (v.sol_memory > 0 && v.median_ci.low > 0 && v.median_ci.high > 0) {
      v.sol_memory_ci = {.low = v.sol_memory * v.stats.median / v.median_ci.high,
                         .high = v.sol_memory * v.stats.median / v.median_ci.low};
    }
    // Note [math unit]: each variant's FLOP/s against the peak of the unit it declared.
    const math_unit unit = v.math;
    const double flops_ceiling = ceilings.flops_ceiling(unit);
    if (flops_ceiling > 0) v.sol_compute = v.achieved_flops_per_s / flops_ceiling;
    // Note [special-function peak] (ceilings.hpp): exp-bound kernels are judged against MUFU too.
    const double special_ceiling = ceilings.special_function_ops_per_s();
    if (work.special_function_ops > 0 && special_ceiling > 0) {
      v.sol_special_function = v.achieved_special_function_ops_per_s / special_ceiling;
      if (v.sol_special_function > physics_margin) {
        add_check(checks, verify::checks::speed_of_light, v.name, false,
                  fmt::format("{:.2f} T special-function results/s is {:.0f}% of the {} MUFU ceiling ({:.2f} T/s)",
                              v.achieved_special_function_ops_per_s / 1e12, 100 * v.sol_special_function, ceilings.source,
                              special_ceiling / 1e12));
      }
    }
    if (v.sol_memory > physics_margin) {
      add_check(checks, verify::checks::speed_of_light, v.name, false,
                fmt::format("{:.0f} GB/s is {:.0f}% of the {} {} ceiling ({:.0f} GB/s)", v.achieved_bytes_per_s / 1e9,
                            100 * v.sol_memory, ceilings.source, path_name, bandwidth / 1e9));
    }
    if (v.sol_compute > physics_margin) {
      add_check(checks, verify::checks::speed_of_light, v.name, false,
                fmt::format("{:.1f} TFLOP/s is {:.0f}% of the {} {} ceiling ({:.1f} TFLOP/s)", v.achieved_flops_per_s / 1e12,
                            100 * v.sol_compute, ceilings.source, math_unit_name(unit), flops_ceiling / 1e12));
    }
  }
}

}  // namespace aisp

// The tensor group of `aisp hw`: cuBLASLt GEMM peaks at 8192^3 on random inputs, per precision.
#include "hw/hw_probes.hpp"
#include "hw/tensor_probe.hpp"

namespace aisp::hw_probes {

std::vector<probe_result> tensor_probes() {
  constexpr int size = 8192;
  constexpr int repetitions = 20;
  std::vector<probe_result> results;
  for (const auto precision : {tensor_precision::bf16, tensor_precision::fp16, tensor_precision::tf32, tensor_precision::fp8_e4m3}) {
    results.push_back(measure_tensor_peak(precision, size, size, size, repetitions, 2026));
  }
  return results;
}

}  // namespace aisp::hw_probes

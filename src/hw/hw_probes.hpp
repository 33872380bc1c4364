// The probes of `aisp hw`, one function per group. Each runs on the current CUDA device and
// returns its measurements; a probe that cannot run says why in its `error`.
#pragma once

#include <vector>

#include "hw/probe_result.hpp"

namespace aisp::hw_probes {

[[nodiscard]] std::vector<probe_result> memory_probes();   // copy (memcpy, kernel), triad
[[nodiscard]] std::vector<probe_result> cache_probes();    // L2 and shared bandwidth, latency ladder
[[nodiscard]] std::vector<probe_result> fp32_probes();     // FMA peak
[[nodiscard]] std::vector<probe_result> launch_probes();   // launch throughput, launch+sync, graph kernel
[[nodiscard]] std::vector<probe_result> pcie_probes();     // H2D / D2H, pinned / pageable
[[nodiscard]] std::vector<probe_result> tensor_probes();   // cuBLASLt bf16, fp16, tf32, fp8 peaks
[[nodiscard]] std::vector<probe_result> p2p_probes();      // with two or more GPUs
[[nodiscard]] std::vector<probe_result> nccl_probes();     // with two or more GPUs

}  // namespace aisp::hw_probes

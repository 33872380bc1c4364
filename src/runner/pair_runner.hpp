// Runs one pair end to end: workers, verification, interleaved sampling, statistics, verdicts.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "results/pair_result.hpp"
#include "runner/run_config.hpp"
#include "hw/ceilings.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

struct pair_request {
  const pair* declared = nullptr;
  std::vector<std::string> candidates;  // variants compared with the baseline; empty = all
};

// Why CUDA pairs cannot run here ("" when a GPU is usable), and the default SM clock.
struct device_availability {
  std::string absence_reason;
  double default_sm_clock_mhz = 0;
  telemetry_fn read_telemetry;  // NVML around each visit of samples; empty without NVML
  ceiling_set ceilings;         // of the GPU: measured by `aisp hw`, else its datasheet
  int compute_major = 0;        // the GPU's compute capability (pairs may need one exactly)
  int compute_minor = 0;
  int gpu_count = 0;            // GPUs on this machine: a multi-GPU pair needs world size of them
  // E4: device memory free now (NVML), else the card's total; nullopt where neither is known.
  std::function<std::optional<std::uint64_t>()> free_device_memory;
};

using progress_fn = std::function<void(const std::string& line)>;

// The pair's benchmark workload with the run's --size overrides applied; contract_error when an
// override names a parameter the pair does not have.
[[nodiscard]] workload benchmark_of(const pair& declared, const run_config& config);

[[nodiscard]] pair_result run_pair(const pair_request& request, const run_config& config,
                                   const device_availability& device, const progress_fn& progress);

}  // namespace aisp

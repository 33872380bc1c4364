// What ch04's pairs share (their fp64 references are aisp/pair_kit.hpp's): NCCL variants and
// their declared interconnect bytes (NCCL's "bus bytes": what one rank must send to its
// peers at the least, whatever the algorithm). Note [ranks] in aisp/run_context.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"

namespace aisp::ch04 {

// The lab's multi-GPU pairs run on two GPUs (the smallest multi-GPU machine lent).
inline constexpr int ranks = 2;

// A variant that communicates through NCCL (library "NCCL": its kernels are NCCL's, X6/D2).
[[nodiscard]] inline variant nccl_variant(std::string name, std::string summary, stage_fn run, stage_fn setup = {},
                                          stage_fn teardown = {}) {
  variant v = kit::with_state(std::move(name), std::move(summary), std::move(run), std::move(setup), std::move(teardown));
  v.library = "NCCL";
  return v;
}

// Bytes one rank sends at the least: (W-1)/W of the data for a reduce-scatter or an all-gather,
// twice that for an all-reduce.
[[nodiscard]] inline double reduce_scatter_bus_bytes(double n_bytes) { return n_bytes * (ranks - 1) / ranks; }
[[nodiscard]] inline double all_reduce_bus_bytes(double n_bytes) { return 2 * reduce_scatter_bus_bytes(n_bytes); }

}  // namespace aisp::ch04

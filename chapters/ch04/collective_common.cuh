// What ch04's pairs share (their fp64 references are aisp/pair_kit.hpp's): NCCL variants and
// their declared interconnect bytes (NCCL's "bus bytes": what one rank must send to its
// peers at the least, whatever the algorithm). Note [ranks] in aisp/run_context.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"

namespace aisp::ch04 {

// Each pair is registered for two GPUs (ch04:<name>) and for four (ch04:<name>_x4): the same
// code, to read how it scales; on a machine with fewer GPUs the larger is skipped with the reason.
inline constexpr int world_sizes[] = {2, 4};
[[nodiscard]] inline std::string scaled_name(const std::string& name, int world) {
  return world == world_sizes[0] ? name : name + "_x" + std::to_string(world);
}

// Note [positive sums]: the collectives add W fp32 values in an order of NCCL's choosing. Signed
// inputs summing to nearly zero made that order show: on four GPUs, sums of 1e-4 came out
// 3e-4 relative from fp64, over fp32's 1e-5 (H200 x4, 2026-11-27), in the baseline and the
// optimized variant alike. The inputs are positive, so no sum cancels and W roundings stay
// within W ulps of the truth.
// A variant that communicates through NCCL (library "NCCL": its kernels are NCCL's, X6/D2).
[[nodiscard]] inline variant nccl_variant(std::string name, std::string summary, stage_fn run, stage_fn setup = {},
                                          stage_fn teardown = {}) {
  variant v = kit::with_state(std::move(name), std::move(summary), std::move(run), std::move(setup), std::move(teardown));
  v.library = "NCCL";
  return v;
}

// The sizes of a pair over n fp32 per rank (ring_allreduce, host_staged_allreduce, p2p_copy):
// 256 MiB a rank to time, ragged small sizes to verify, one held out.
inline pair& vector_sizes(pair& p) {
  return p.benchmark_size({{"n", std::int64_t{1} << 26}})
      .validation_size({{"n", 1}})
      .validation_size({{"n", 1001}})
      .validation_size({{"n", 65537}})
      .held_out_size({{"n", 4099}});
}

// D5: a variant whose calls make the same number of NCCL collectives at every size.
[[nodiscard]] inline std::function<std::int64_t(const workload&)> collectives_per_call(std::int64_t count) {
  return [count](const workload&) { return count; };
}

// Bytes one rank sends at the least: (W-1)/W of the data for a reduce-scatter or an all-gather,
// twice that for an all-reduce.
[[nodiscard]] inline double reduce_scatter_bus_bytes(double n_bytes, int world) { return n_bytes * (world - 1) / world; }
[[nodiscard]] inline double all_reduce_bus_bytes(double n_bytes, int world) { return 2 * reduce_scatter_bus_bytes(n_bytes, world); }

}  // namespace aisp::ch04

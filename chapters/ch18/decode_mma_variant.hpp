// The tensor-core split decode (decode_mma_kernels.cuh) as a variant on the bf16 cache: decode_split's
// scratch for the partial records plus the shared-memory opt-in. paged_decode's optimized and
// fp8_kv_decode's baseline.
#pragma once

#include <string>
#include <utility>

#include "aisp/device_scratch.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "decode_mma_kernels.cuh"
#include "paged_kv_contract.hpp"

namespace aisp::ch18 {
namespace {  // as paged_decode_kernels.cuh

void setup_split_mma(run_context& ctx) {
  setup_split(ctx);
  prepare_decode_split_mma();
}
void run_split_mma(run_context& ctx) {
  launch_decode_split_mma(problem_of(ctx), static_cast<float*>(state_of<device_scratch>(ctx).data()), ctx.stream());
}

[[nodiscard]] variant tensor_core_decode_variant(std::string name, std::string summary) {
  return kit::with_state(std::move(name), std::move(summary), run_split_mma, setup_split_mma, teardown_split);
}

}  // namespace
}  // namespace aisp::ch18

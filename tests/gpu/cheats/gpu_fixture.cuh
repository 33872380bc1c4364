// The frame every GPU planted cheat shares: y = 2x + 1 in fp32 on 2^24 elements, an honest
// baseline, the fp64 reference, and small validation sizes. A fixture supplies only its
// "optimized" variant, the cheat, tagged with the VALIDITY.md code that must catch it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::cheats_gpu {
namespace {

constexpr int block_threads = 256;

__global__ void affine_kernel(const float* x, float* y, std::int64_t n, int skip_modulus) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  if (skip_modulus > 0 && i % skip_modulus == 3) return;  // O10: scattered elements never written
  y[i] = 2.0f * x[i] + 1.0f;
}

__host__ __device__ inline unsigned blocks_for(std::int64_t n) { return static_cast<unsigned>((n + block_threads - 1) / block_threads); }

inline void launch_affine(run_context& ctx, cudaStream_t stream, int skip_modulus = 0, int threads = block_threads) {
  const std::int64_t n = ctx.num_elements("x");
  affine_kernel<<<blocks_for(n), threads, 0, stream>>>(ctx.as<const float>("x"), ctx.as<float>("y"), n, skip_modulus);
}

inline void honest(run_context& ctx) {
  launch_affine(ctx, ctx.stream());
  AISP_CHECK_LAUNCH();
}

// y = 2x + 1 on `n` fp32 elements (2^24 at the benchmark size) with its fp64 reference and the
// small validation sizes, without variants.
inline pair affine_declaration(const std::string& target, const std::string& summary,
                               std::int64_t benchmark_n = std::int64_t{1} << 24) {
  const auto count = [](const workload& w) { return w.get("n"); };
  return pair(target)
      .summary(summary)
      .benchmark_size({{"n", benchmark_n}})
      .validation_size({{"n", 1}})
      .validation_size({{"n", 7}})
      .validation_size({{"n", 1000}})
      .held_out_size({{"n", 1003}})
      .input("x", dtype::f32, count)
      .output("y", dtype::f32, count)
      .work([](const workload& w) { return work_amount{8.0 * static_cast<double>(w.get("n")), 2.0 * static_cast<double>(w.get("n"))}; })
      .reference([](reference_io& io) {
        const auto x = io.input("x");
        auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i] + 1.0;
      })
      .add_variant("baseline", "honest y = 2x + 1", honest);
}

// The fixture's pair under its full target name (gpu_fixture puts it in cheats_gpu).
inline pair gpu_pair(const std::string& target, const std::string& code, const std::string& what, variant cheat) {
  cheat.name = "optimized";
  cheat.summary = "planted cheat " + code + ": " + what;
  return affine_declaration(target, "planted cheat " + code + ": " + what).tag("cheat:" + code).add_variant(std::move(cheat));
}

inline pair gpu_fixture(const std::string& name, const std::string& code, const std::string& what, variant cheat) {
  return gpu_pair("cheats_gpu:" + name, code, what, std::move(cheat));
}

inline variant plain(stage_fn run) { return variant{"", "", std::move(run), {}, {}, {}, {}, {}, {}, {}}; }
// gpu_fixture() names the variant; state between setup and run goes through aisp/variant_state.hpp.
inline variant with_setup(stage_fn run, stage_fn setup, stage_fn teardown) {
  return kit::with_state("", "", std::move(run), std::move(setup), std::move(teardown));
}

}  // namespace
}  // namespace aisp::cheats_gpu

// Planted cheats of the multi-GPU rows (Note [ranks]) on a reduce-scatter over two GPUs, group
// cheats_multi_gpu (tests/gpu/multi_gpu_cheats_test.cpp runs them where two GPUs are usable).
// Each is the honest ncclReduceScatter baseline plus one cheat.
// Run: aisp_cheats bench run --targets cheats_multi_gpu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/nccl.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::cheats_multi_gpu {
namespace {

constexpr int ranks = 2;

std::size_t shard_of(const run_context& ctx) { return static_cast<std::size_t>(ctx.param("n")) / static_cast<std::size_t>(ctx.world_size()); }

void reduce_scatter(run_context& ctx) {
  AISP_NCCL_CHECK(nccl().reduce_scatter(ctx.as<const float>("x"), ctx.as<float>("y"), shard_of(ctx), ncclFloat32, ncclSum,
                                        nccl_comm(ctx), ctx.stream()));
}

__global__ void spin_for(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

pair rank_fixture(const std::string& name, const std::string& code, const std::string& what, stage_fn cheat,
                  stage_fn setup = {}, stage_fn teardown = {}) {
  pair p("cheats_multi_gpu:" + name);
  p.summary("planted cheat " + code + ": " + what)
      .tag("cheat:" + code)
      .world_size(ranks)
      .moves_data_over(data_path::gpu_interconnect)
      .benchmark_size({{"n", std::int64_t{1} << 24}})
      .validation_size({{"n", 2}})
      .validation_size({{"n", 2002}})
      .held_out_size({{"n", 2 * 1003}})
      .input("x", dtype::f32, [](const workload& w) { return w.get("n"); })
      .output("y", dtype::f32, [](const workload& w) { return w.get("n") / ranks; })
      .work([](const workload& w) { return work_amount{2.0 * static_cast<double>(w.get("n")), static_cast<double>(w.get("n")) / 2}; })
      .reference([](reference_io& io) { kit::reduce_scatter_reference(io, "x", "y"); });
  variant baseline = kit::with_state("baseline", "honest ncclReduceScatter", reduce_scatter, {}, {});
  baseline.library = "NCCL";
  variant optimized = kit::with_state("optimized", "planted cheat " + code + ": " + what, std::move(cheat), std::move(setup),
                                      std::move(teardown));
  optimized.library = "NCCL";
  p.add_variant(baseline).add_variant(optimized);
  return p;
}

// D1: every rank joins the collective (the others would wait for it forever), but the last rank
// lands its slice in a private buffer and never writes its output; rank 0's sums are right.
AISP_REGISTER(rank_fixture(
    "d1_last_rank_skips_its_output", "D1", "the last rank never writes its slice",
    [](run_context& ctx) {
      float* into = ctx.rank() == ctx.world_size() - 1 ? static_cast<float*>(ctx.user_state()) : ctx.as<float>("y");
      AISP_NCCL_CHECK(nccl().reduce_scatter(ctx.as<const float>("x"), into, shard_of(ctx), ncclFloat32, ncclSum, nccl_comm(ctx),
                                            ctx.stream()));
    },
    [](run_context& ctx) { AISP_CUDA_CHECK(cudaMalloc(&ctx.user_state(), shard_of(ctx) * sizeof(float))); },
    [](run_context& ctx) { cudaFree(ctx.user_state()); }));

// D2: no collective at all; each rank copies its own slice, which is only its own term of the sum.
AISP_REGISTER(rank_fixture("d2_skips_the_collective", "D2", "each rank copies its own slice instead of reducing",
                           [](run_context& ctx) {
                             const auto shard = shard_of(ctx);
                             AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"),
                                                             ctx.as<const float>("x") + static_cast<std::size_t>(ctx.rank()) * shard,
                                                             shard * sizeof(float), cudaMemcpyDeviceToDevice, ctx.stream()));
                           }));

// D4: honest sums on every rank, then rank 1 keeps its GPU busy for ~1 ms: rank 0 alone would
// time as fast as the baseline.
AISP_REGISTER(rank_fixture("d4_rank_one_lags", "D4", "rank 1 spins 1 ms after the collective", [](run_context& ctx) {
  reduce_scatter(ctx);
  if (ctx.rank() == 0) return;
  spin_for<<<1, 1, 0, ctx.stream()>>>(2'000'000);  // ~1 ms at 1.98 GHz
  AISP_CHECK_LAUNCH();
}));

// D6: the reduce-scatter runs on a stream of the variant's own that the timed stream never waits
// for: the stop event is recorded while the collective still moves bytes.
struct side_stream {
  cudaStream_t stream = nullptr;
  side_stream() { AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~side_stream() { cudaStreamDestroy(stream); }
  side_stream(const side_stream&) = delete;
  side_stream& operator=(const side_stream&) = delete;
};

AISP_REGISTER(rank_fixture(
    "d6_collective_left_running", "D6", "the reduce-scatter runs on a side stream nobody waits for",
    [](run_context& ctx) {
      AISP_NCCL_CHECK(nccl().reduce_scatter(ctx.as<const float>("x"), ctx.as<float>("y"), shard_of(ctx), ncclFloat32, ncclSum,
                                            nccl_comm(ctx), state_of<side_stream>(ctx).stream));
    },
    [](run_context& ctx) { make_state<side_stream>(ctx); }, release_state<side_stream>));

// D5: the workload names its buckets (16 at the benchmark size), and the honest baseline
// all-reduces each on its own; the cheat all-reduces them four at a time. The sums are the same,
// but the bucket layout measured is not the one the results name: fewer, larger collectives.
void all_reduce_in_pieces(run_context& ctx, std::int64_t pieces) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  const std::size_t per = (n + static_cast<std::size_t>(pieces) - 1) / static_cast<std::size_t>(pieces);
  float* y = ctx.as<float>("y");
  const float* x = ctx.as<const float>("x");
  for (std::size_t first = 0; first < n; first += per) {
    const std::size_t count = std::min(per, n - first);
    AISP_NCCL_CHECK(nccl().all_reduce(x + first, y + first, count, ncclFloat32, ncclSum, nccl_comm(ctx), ctx.stream()));
  }
}

// The all-reduces the workload's buckets make: the non-empty ones.
std::int64_t bucket_collectives(const workload& w) {
  const std::int64_t per = (w.get("n") + w.get("buckets") - 1) / w.get("buckets");
  return (w.get("n") + per - 1) / per;
}

pair bucket_fixture() {
  const auto n = [](const workload& w) { return w.get("n"); };
  pair p("cheats_multi_gpu:d5_buckets_merged");
  p.summary("planted cheat D5: the workload's 16 buckets all-reduced four at a time")
      .tag("cheat:D5")
      .world_size(ranks)
      .moves_data_over(data_path::gpu_interconnect)
      .benchmark_size({{"n", std::int64_t{1} << 24}, {"buckets", 16}})
      .validation_size({{"n", 1}, {"buckets", 1}})
      .validation_size({{"n", 2002}, {"buckets", 7}})
      .held_out_size({{"n", 1003}, {"buckets", 3}})
      .input("x", dtype::f32, n, init_distribution::uniform_unit)
      .output("y", dtype::f32, n)
      .work([](const workload& w) { return work_amount{4.0 * static_cast<double>(w.get("n")), static_cast<double>(w.get("n"))}; })
      .reference([](reference_io& io) { kit::all_reduce_reference(io, "x", "y"); });
  variant baseline = kit::with_state(
      "baseline", "honest: one ncclAllReduce per bucket", [](run_context& ctx) { all_reduce_in_pieces(ctx, ctx.param("buckets")); }, {},
      {});
  variant merged = kit::with_state(
      "optimized", "planted cheat D5: four buckets per ncclAllReduce",
      [](run_context& ctx) { all_reduce_in_pieces(ctx, (ctx.param("buckets") + 3) / 4); }, {}, {});
  for (variant* v : {&baseline, &merged}) {
    v->library = "NCCL";
    v->collectives = bucket_collectives;  // both claim the workload's buckets
  }
  p.add_variant(baseline).add_variant(merged);
  return p;
}
AISP_REGISTER(bucket_fixture());

}  // namespace
}  // namespace aisp::cheats_multi_gpu

// reduce_scatter: every rank holds x (n fp32); rank r ends with slice r of the sum over ranks
// (n / W elements). The job of a sharded optimizer step or the first half of an all-reduce.
// Baseline: ncclAllReduce of all of x into a full-size buffer, then a copy of this rank's slice:
// what a first version written from "all-reduce, then take my part" does.
// Optimized: ncclReduceScatter: each rank receives only the partial sums of its own slice.
// Why faster: an all-reduce is a reduce-scatter followed by an all-gather; the slice needs only
// the first half, so half the bytes cross the link (plus no full-size write and copy).
// Run: aisp bench run --targets ch04:reduce_scatter   (two GPUs)
#include <cstdint>
#include <string>


#include "aisp/check.hpp"
#include "aisp/nccl.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "collective_common.cuh"

namespace aisp::ch04 {
namespace {

// Workload: n fp32 per rank, n a multiple of the world size. Napkin math at n = 2^26 (256 MiB a
// rank): a reduce-scatter sends 128 MiB from each rank; at ~370 GB/s of NVLink bus bandwidth
// (NCCL all-reduce measured 329-361 GB/s on these machines) that is ~0.36 ms, the all-reduce twice
// that plus a 128 MiB copy: ~2x.
void check_divisible(run_context& ctx) {
  AISP_EXPECTS(ctx.param("n") % ctx.world_size() == 0, "ch04:reduce_scatter needs n divisible by the world size");
}

void all_reduce_then_slice(run_context& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  const std::size_t shard = n / static_cast<std::size_t>(ctx.world_size());
  float* sum = ctx.as<float>("sum");
  AISP_NCCL_CHECK(nccl().all_reduce(ctx.as<const float>("x"), sum, n, ncclFloat32, ncclSum, nccl_comm(ctx), ctx.stream()));
  AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), sum + static_cast<std::size_t>(ctx.rank()) * shard, shard * sizeof(float),
                                  cudaMemcpyDeviceToDevice, ctx.stream()));
}

void reduce_scatter(run_context& ctx) {
  const auto shard = static_cast<std::size_t>(ctx.param("n")) / static_cast<std::size_t>(ctx.world_size());
  AISP_NCCL_CHECK(nccl().reduce_scatter(ctx.as<const float>("x"), ctx.as<float>("y"), shard, ncclFloat32, ncclSum, nccl_comm(ctx),
                                        ctx.stream()));
}

pair declare(int world) {
  pair p(scaled_name("ch04:reduce_scatter", world));
  p.summary("reduce-scatter of fp32 over " + std::to_string(world) + " GPUs: all-reduce then slice vs ncclReduceScatter")
      .world_size(world)
      .moves_data_over(data_path::gpu_interconnect)
      .benchmark_size({{"n", std::int64_t{1} << 26}})
      .validation_size({{"n", world}})
      .validation_size({{"n", world * 1001}})
      .validation_size({{"n", world * 65537}})
      .held_out_size({{"n", world * 4099}})
      .input("x", dtype::f32, [](const workload& w) { return w.get("n"); }, init_distribution::uniform_unit)  // Note [positive sums]
      .output("y", dtype::f32, [world](const workload& w) { return w.get("n") / world; })
      .scratch("sum", dtype::f32, [](const workload& w) { return w.get("n"); })
      .work([world](const workload& w) {
        return work_amount{.bytes = reduce_scatter_bus_bytes(4.0 * static_cast<double>(w.get("n")), world),
                           .flops = static_cast<double>(w.get("n")) / world * (world - 1)};
      })
      .reference([](reference_io& io) { kit::reduce_scatter_reference(io, "x", "y"); });
  p.add_variant(nccl_variant("baseline", "ncclAllReduce of all of x, then cudaMemcpyAsync of this rank's slice",
                             all_reduce_then_slice, check_divisible))
      .add_variant(nccl_variant("optimized", "ncclReduceScatter: only this rank's slice of the sum arrives", reduce_scatter,
                                check_divisible));
  return p;
}

AISP_REGISTER(declare(world_sizes[0]));
AISP_REGISTER(declare(world_sizes[1]));

}  // namespace
}  // namespace aisp::ch04

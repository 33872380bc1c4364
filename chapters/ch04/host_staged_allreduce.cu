// host_staged_allreduce: every rank holds x (n fp32) and ends with y = the elementwise sum over
// ranks, as in ch04:ring_allreduce, but the baseline is what one writes without NCCL.
// Baseline: staged through host memory shared by the ranks' processes (shared_host_region): each
// rank copies x device to host into its slot of a pinned shared region; a barrier; each rank
// copies its W-1 peers' slots host to device and adds them to x with a kernel.
// Optimized: ncclAllReduce, GPU to GPU over NVLink.
// Why faster: the host path crosses PCIe (~50 GB/s a direction on an H100's Gen5 x16) twice, and
// each rank pulls W-1 whole copies of x back, where NCCL's ring sends 2 (W-1)/W of x over NVLink
// (~300 GB/s of bus bandwidth) and reduces inside its copy kernels.
// Run: aisp bench run --targets ch04:host_staged_allreduce   (two GPUs)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "aisp/check.hpp"
#include "aisp/nccl.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "collective_common.cuh"
#include "rank_sync.cuh"
#include "shared_host_region.cuh"

namespace aisp::ch04 {
namespace {

// Workload: n fp32 per rank, the size of ch04:ring_allreduce, so the two read side by side.
// Napkin math at n = 2^26 (256 MiB a rank) on H100s: the baseline moves 256 MiB device to host,
// then (W-1) x 256 MiB host to device per rank: at ~50 GB/s per direction, ~5 ms + (W-1) x 5 ms,
// ~10 ms on two GPUs and ~20 ms on four (more where the GPUs share a PCIe switch or host memory
// bandwidth); the sum kernel reads W x 256 MiB of HBM (~0.5 ms on four). ncclAllReduce: 2 (W-1)/W
// x 256 MiB of bus bytes at ~300 GB/s, ~0.9 ms on two GPUs, ~1.2 ms on four: ~10x and ~15x.
// Both variants enqueue the same two barriers (Note [stream barrier]), ~20 us each.

// y = the sum of every rank's x, in rank order (so every rank's y is the same bits): this rank's
// term is x, the others come from staging, the W-1 peers' copies in rank order without this one.
__global__ void sum_ranks_kernel(const float* __restrict__ x, const float* __restrict__ staging, float* __restrict__ y,
                                 std::size_t count, int world, int rank) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int q = 0; q < world; ++q) {
      const std::size_t peer_slot = static_cast<std::size_t>(q < rank ? q : q - 1);
      sum += q == rank ? x[i] : staging[peer_slot * count + i];
    }
    y[i] = sum;
  }
}

void launch_sum_ranks(const float* x, const float* staging, float* y, std::size_t count, int world, int rank, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 132 * 8));
  sum_ranks_kernel<<<blocks, 256, 0, stream>>>(x, staging, y, count, world, rank);
  AISP_CHECK_LAUNCH();
}

void make_region(run_context& ctx) {
  make_state<shared_host_region>(ctx, ctx, static_cast<std::size_t>(ctx.param("n")) * sizeof(float));
}

void host_staged(run_context& ctx) {
  const auto& region = state_of<shared_host_region>(ctx);
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  const std::size_t bytes = n * sizeof(float);
  const int world = ctx.world_size();
  const int rank = ctx.rank();
  const float* x = ctx.as<const float>("x");
  float* staging = ctx.as<float>("staging");
  AISP_CUDA_CHECK(cudaMemcpyAsync(region.slot(rank), x, bytes, cudaMemcpyDeviceToHost, ctx.stream()));
  stream_barrier(ctx);  // every rank's slot holds this call's x
  for (int q = 0, peer_slot = 0; q < world; ++q) {
    if (q == rank) continue;
    AISP_CUDA_CHECK(cudaMemcpyAsync(staging + static_cast<std::size_t>(peer_slot++) * n, region.slot(q), bytes, cudaMemcpyHostToDevice,
                                    ctx.stream()));
  }
  launch_sum_ranks(x, staging, ctx.as<float>("y"), n, world, rank, ctx.stream());
  stream_barrier(ctx);  // every peer read this rank's slot: the next call may overwrite it
}

void nccl_all_reduce(run_context& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  stream_barrier(ctx);  // the baseline's two barriers, so both pay the same (Note [stream barrier])
  AISP_NCCL_CHECK(nccl().all_reduce(ctx.as<const float>("x"), ctx.as<float>("y"), n, ncclFloat32, ncclSum, nccl_comm(ctx),
                                    ctx.stream()));
  stream_barrier(ctx);
}

pair declare(int world) {
  const auto n = [](const workload& w) { return w.get("n"); };
  pair p(scaled_name("ch04:host_staged_allreduce", world));
  vector_sizes(p);
  p.summary("all-reduce of fp32 over " + std::to_string(world) + " GPUs: staged through shared pinned host memory vs ncclAllReduce")
      .world_size(world)
      .moves_data_over(data_path::gpu_interconnect)
      .input("x", dtype::f32, n, init_distribution::uniform_unit)  // Note [positive sums]
      .output("y", dtype::f32, n)
      .scratch("staging", dtype::f32, [world](const workload& w) { return w.get("n") * (world - 1); })  // the peers' copies
      .scratch("handshake", dtype::i32, [world](const workload&) { return handshake_elements(world); })
      .work([world](const workload& w) {
        return work_amount{.bytes = all_reduce_bus_bytes(4.0 * static_cast<double>(w.get("n")), world),
                           .flops = static_cast<double>(w.get("n")) * (world - 1)};
      })
      .reference([](reference_io& io) { kit::all_reduce_reference(io, "x", "y"); });
  // D5: the NCCL kernels of one call: the two barriers, and the optimized variant's all-reduce.
  variant staged = nccl_variant("baseline",
                                "device to host into a shared pinned region, barrier, host to device of the W-1 peers' slots, add kernel",
                                host_staged, make_region, release_state<shared_host_region>);
  staged.collectives = collectives_per_call(2);
  variant direct = nccl_variant("optimized", "ncclAllReduce over NVLink: no host round trip, the sum inside NCCL's copy kernels",
                                nccl_all_reduce);
  direct.collectives = collectives_per_call(3);
  p.add_variant(staged).add_variant(direct);
  return p;
}

AISP_REGISTER(declare(world_sizes[0]));
AISP_REGISTER(declare(world_sizes[1]));

}  // namespace
}  // namespace aisp::ch04

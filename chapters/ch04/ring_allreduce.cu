// ring_allreduce: every rank holds x (n fp32) and ends with y = the elementwise sum over ranks.
// Baseline: the ring all-reduce written by hand, the textbook algorithm: y = x, then W-1
// reduce-scatter steps (send one chunk to the next rank, receive one from the previous into a
// staging buffer, add it in with a kernel) and W-1 all-gather steps (pass the reduced chunks
// along), with ncclSend/ncclRecv as the point-to-point copies.
// Optimized: ncclAllReduce.
// Why faster: the hand ring moves the same bytes (2 (W-1)/W n per rank, the minimum), but one
// step at a time: each transfer waits for the previous add, and each add re-reads what the
// transfer just wrote. NCCL's kernels reduce inside the copy, chunk by chunk, so the link never
// waits for an add and the staging round trip through memory disappears.
// Run: aisp bench run --targets ch04:ring_allreduce   (two GPUs)
#include <cstdint>
#include <string>


#include "aisp/check.hpp"
#include "aisp/nccl.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "collective_common.cuh"

namespace aisp::ch04 {
namespace {

__global__ void add_into(float* __restrict__ y, const float* __restrict__ received, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    y[i] += received[i];
  }
}

// Chunk c of a buffer of n elements cut into `world` chunks (the last takes the remainder).
struct chunk {
  std::size_t first = 0;
  std::size_t count = 0;
};
chunk chunk_of(std::size_t n, int world, int c) {
  const std::size_t base = n / static_cast<std::size_t>(world);
  const std::size_t first = base * static_cast<std::size_t>(c);
  return {first, c == world - 1 ? n - first : base};
}

void exchange(const float* send, std::size_t send_count, float* receive, std::size_t receive_count, run_context& ctx) {
  const int world = ctx.world_size();
  const int next = (ctx.rank() + 1) % world;
  const int previous = (ctx.rank() + world - 1) % world;
  const auto& api = nccl();
  AISP_NCCL_CHECK(api.group_start());
  AISP_NCCL_CHECK(api.send(send, send_count, ncclFloat32, next, nccl_comm(ctx), ctx.stream()));
  AISP_NCCL_CHECK(api.recv(receive, receive_count, ncclFloat32, previous, nccl_comm(ctx), ctx.stream()));
  AISP_NCCL_CHECK(api.group_end());
}

void hand_ring(run_context& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  const int world = ctx.world_size();
  const int rank = ctx.rank();
  float* y = ctx.as<float>("y");
  float* staging = ctx.as<float>("staging");
  AISP_CUDA_CHECK(cudaMemcpyAsync(y, ctx.as<const float>("x"), n * sizeof(float), cudaMemcpyDeviceToDevice, ctx.stream()));
  // Reduce-scatter: after step s, chunk (rank - s - 1) holds s + 2 ranks' terms; after W-1
  // steps chunk (rank + 1) mod W holds all of them.
  for (int step = 0; step < world - 1; ++step) {
    const chunk out = chunk_of(n, world, ((rank - step) % world + world) % world);
    const chunk in = chunk_of(n, world, ((rank - step - 1) % world + world) % world);
    exchange(y + out.first, out.count, staging, in.count, ctx);
    if (in.count == 0) continue;
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((in.count + 255) / 256, 132 * 8));
    add_into<<<blocks, 256, 0, ctx.stream()>>>(y + in.first, staging, in.count);
    AISP_CHECK_LAUNCH();
  }
  // All-gather: pass the complete chunks around the ring, straight into y.
  for (int step = 0; step < world - 1; ++step) {
    const chunk out = chunk_of(n, world, ((rank + 1 - step) % world + world) % world);
    const chunk in = chunk_of(n, world, ((rank - step) % world + world) % world);
    exchange(y + out.first, out.count, y + in.first, in.count, ctx);
  }
}

void nccl_all_reduce(run_context& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  AISP_NCCL_CHECK(nccl().all_reduce(ctx.as<const float>("x"), ctx.as<float>("y"), n, ncclFloat32, ncclSum, nccl_comm(ctx),
                                    ctx.stream()));
}

pair declare(int world) {
  const auto n = [](const workload& w) { return w.get("n"); };
  pair p(scaled_name("ch04:ring_allreduce", world));
  vector_sizes(p);
  p.summary("all-reduce of fp32 over " + std::to_string(world) + " GPUs: a hand-written ring of send/recv + add kernels vs ncclAllReduce")
      .world_size(world)
      .moves_data_over(data_path::gpu_interconnect)
      .input("x", dtype::f32, n, init_distribution::uniform_unit)  // Note [positive sums]
      .output("y", dtype::f32, n)
      .scratch("staging", dtype::f32, n)
      .work([world](const workload& w) {
        return work_amount{.bytes = all_reduce_bus_bytes(4.0 * static_cast<double>(w.get("n")), world),
                           .flops = static_cast<double>(w.get("n")) * (world - 1)};
      })
      .reference([](reference_io& io) { kit::all_reduce_reference(io, "x", "y"); });
  p.add_variant(nccl_variant("baseline", "hand ring: W-1 send/recv + add steps, then W-1 send/recv all-gather steps", hand_ring))
      .add_variant(nccl_variant("optimized", "ncclAllReduce: the reduction fused into NCCL's pipelined copy kernels", nccl_all_reduce));
  return p;
}

AISP_REGISTER(declare(world_sizes[0]));
AISP_REGISTER(declare(world_sizes[1]));

}  // namespace
}  // namespace aisp::ch04

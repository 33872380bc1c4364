// p2p_copy: every rank holds x (n fp32) and rank r ends with y = the x of rank (r - 1) mod W: a
// ring shift, the pattern of pipeline-parallel activations passed from stage to stage.
// Baseline: staged through host memory shared by the ranks' processes (shared_host_region): each
// rank copies x device to host into its slot; a barrier; each rank copies its predecessor's slot
// host to device into y.
// Optimized: CUDA IPC: in setup each rank exports its x (cudaIpcGetMemHandle) and maps its
// predecessor's (cudaIpcOpenMemHandle, lazy peer access); run() is one cudaMemcpyAsync device to
// device from the peer's x into y: a copy engine reads over NVLink.
// Why faster: one hop over NVLink (~390 GB/s measured by `aisp hw p2p` on the H200 pair) against
// two serial hops over PCIe (~50 GB/s each way) through host memory.
// Run: aisp bench run --targets ch04:p2p_copy   (two GPUs)
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "collective_common.cuh"
#include "peer_buffer.cuh"
#include "rank_sync.cuh"
#include "shared_host_region.cuh"

namespace aisp::ch04 {
namespace {

// Workload: n fp32 per rank. Napkin math at n = 2^26 (256 MiB) on H100s: the baseline is a
// 256 MiB device-to-host copy then a 256 MiB host-to-device one, ~5 ms each at ~50 GB/s: ~10 ms;
// the IPC copy moves 256 MiB over NVLink once, ~0.7 ms at ~390 GB/s: ~15x. Both variants enqueue
// the same two barriers (Note [stream barrier]), ~20 us each.
// The barriers: the first orders every rank's writes of this call (the harness's fresh inputs,
// the baseline's device-to-host copy) before any peer reads them; the second keeps the next
// call's writes (a fresh x, the next slot copy) from landing while a peer still reads.
int predecessor(const run_context& ctx) { return (ctx.rank() + ctx.world_size() - 1) % ctx.world_size(); }

void make_region(run_context& ctx) {
  make_state<shared_host_region>(ctx, ctx, static_cast<std::size_t>(ctx.param("n")) * sizeof(float));
}

void host_staged(run_context& ctx) {
  const auto& region = state_of<shared_host_region>(ctx);
  const std::size_t bytes = static_cast<std::size_t>(ctx.param("n")) * sizeof(float);
  AISP_CUDA_CHECK(cudaMemcpyAsync(region.slot(ctx.rank()), ctx.as<const float>("x"), bytes, cudaMemcpyDeviceToHost, ctx.stream()));
  stream_barrier(ctx);  // every slot holds this call's x
  AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), region.slot(predecessor(ctx)), bytes, cudaMemcpyHostToDevice, ctx.stream()));
  stream_barrier(ctx);  // the successor read this rank's slot: the next call may overwrite it
}

void map_predecessor(run_context& ctx) { make_state<peer_buffer>(ctx, ctx, ctx.buffer("x"), predecessor(ctx)); }

void ipc_copy(run_context& ctx) {
  const auto& mapping = state_of<peer_buffer>(ctx);
  const std::size_t bytes = static_cast<std::size_t>(ctx.param("n")) * sizeof(float);
  const void* peer_x = mapping.peer(ctx.buffer("x"));
  stream_barrier(ctx);  // the predecessor's x holds this call's inputs
  AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), peer_x, bytes, cudaMemcpyDeviceToDevice, ctx.stream()));
  stream_barrier(ctx);  // the successor read this rank's x: the harness may refill it
}

pair declare(int world) {
  const auto n = [](const workload& w) { return w.get("n"); };
  pair p(scaled_name("ch04:p2p_copy", world));
  vector_sizes(p);
  p.summary("ring shift of fp32 over " + std::to_string(world) + " GPUs: staged through shared pinned host memory vs CUDA IPC copy over NVLink")
      .world_size(world)
      .moves_data_over(data_path::gpu_interconnect)
      .exact_math()  // a copy: every bit arrives
      .input("x", dtype::f32, n)
      .output("y", dtype::f32, n)
      .scratch("handshake", dtype::i32, [world](const workload&) { return handshake_elements(world); })
      .work([](const workload& w) { return work_amount{.bytes = 4.0 * static_cast<double>(w.get("n")), .flops = 0}; })
      .reference([](reference_io& io) {
        const auto x = io.input("x");
        const auto y = io.output("y");
        const auto ranks = static_cast<std::size_t>(io.world_size());
        const std::size_t count = x.size() / ranks;
        for (std::size_t r = 0; r < ranks; ++r) {
          const std::size_t from = (r + ranks - 1) % ranks;
          for (std::size_t i = 0; i < count; ++i) y[r * count + i] = x[from * count + i];
        }
      });
  // D5: the NCCL kernels of one call: the two barriers of either variant, nothing else.
  variant staged = nccl_variant("baseline", "device to host into a shared pinned region, barrier, host to device of the predecessor's slot",
                                host_staged, make_region, release_state<shared_host_region>);
  staged.collectives = collectives_per_call(2);
  variant direct = nccl_variant("optimized", "CUDA IPC mapping of the predecessor's x: one device-to-device copy over NVLink", ipc_copy,
                                map_predecessor, release_state<peer_buffer>);
  direct.collectives = collectives_per_call(2);
  p.add_variant(staged).add_variant(direct);
  return p;
}

AISP_REGISTER(declare(world_sizes[0]));
AISP_REGISTER(declare(world_sizes[1]));

}  // namespace
}  // namespace aisp::ch04

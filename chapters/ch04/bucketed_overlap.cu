// bucketed_overlap: every rank computes a gradient g = f(x) (n fp32: a 256-step contracting FMA
// recurrence per element, the stand-in for a backward pass) and ends with y = the sum of every
// rank's g: data-parallel training's backward pass and gradient all-reduce.
// Baseline: compute all of g, then one ncclAllReduce of all of it: the link idles while the
// SMs compute, and the SMs idle while the link moves the bytes.
// Optimized: g in `buckets` buckets; each bucket's all-reduce starts on a communication stream as
// soon as its compute finished, while the next bucket computes (what DDP's gradient buckets do).
// Why faster: compute and communication overlap; the time tends to the longer of the two plus
// one bucket. The bucket count is part of the workload (D5), so both variants do the same job.
// Run: aisp bench run --targets ch04:bucketed_overlap   (two GPUs)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>


#include "aisp/check.hpp"
#include "aisp/nccl.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "collective_common.cuh"

namespace aisp::ch04 {
namespace {

// Workload: n fp32 per rank in `buckets` buckets, `steps` FMA steps per element.
// Napkin math at n = 2^26, steps = 256 on an H100: compute 2^26 x 256 x 2 FLOP at ~50 TFLOP/s of
// FP32 FMA ~ 0.7 ms; the all-reduce of 256 MiB ~ 0.9 ms (ch04:ring_allreduce). Serial ~1.6 ms,
// overlapped ~1.0 ms plus one bucket (1/16): ~1.5x at best, less where NCCL's kernels take SMs
// from the compute.
constexpr float contraction = 0.5f;

// y = x, then y = y * 0.5 + x, steps times: converges to 2x; each step's rounding is halved by the
// next, so the fp32 result stays within about an ulp of the fp64 one.
__global__ void gradient(const float* __restrict__ x, float* __restrict__ y, std::size_t count, int steps) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float xi = x[i];
    float g = xi;
    for (int s = 0; s < steps; ++s) g = fmaf(g, contraction, xi);
    y[i] = g;
  }
}

void launch_gradient(const float* x, float* y, std::size_t count, int steps, cudaStream_t stream) {
  if (count == 0) return;
  // One element per thread, no grid-stride loop: blocks retire all the time, so the all-reduce's
  // blocks (on a higher-priority stream) get SMs while a bucket computes (Note [SM sharing]).
  const auto blocks = static_cast<unsigned>((count + 255) / 256);
  gradient<<<blocks, 256, 0, stream>>>(x, y, count, steps);
  AISP_CHECK_LAUNCH();
}

struct bucket_range {
  std::size_t first = 0;
  std::size_t count = 0;
};
bucket_range bucket_of(std::size_t n, std::size_t buckets, std::size_t b) {
  const std::size_t per = (n + buckets - 1) / buckets;
  const std::size_t first = std::min(n, per * b);
  return {first, std::min(n, first + per) - first};
}

std::int64_t non_empty_buckets(const workload& w) {
  const auto n = static_cast<std::size_t>(w.get("n"));
  const auto buckets = static_cast<std::size_t>(w.get("buckets"));
  std::int64_t count = 0;
  for (std::size_t b = 0; b < buckets; ++b) count += bucket_of(n, buckets, b).count > 0;
  return count;
}

void compute_then_all_reduce(run_context& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  float* y = ctx.as<float>("y");
  launch_gradient(ctx.as<const float>("x"), y, n, static_cast<int>(ctx.param("steps")), ctx.stream());
  AISP_NCCL_CHECK(nccl().all_reduce(y, y, n, ncclFloat32, ncclSum, nccl_comm(ctx), ctx.stream()));
}

// Note [SM sharing]: NCCL's all-reduce runs as kernels on the SMs, beside the next bucket's
// compute. A compute grid that holds every SM until it ends (a persistent grid-stride loop), on a
// stream of the same priority, left the all-reduce waiting for it: 1.04x on two H200s
// (2026-11-27). The communication stream has the highest priority, and the compute grid is made
// of short blocks, so the block scheduler hands the all-reduce SMs as compute blocks retire.
// The communication stream and one event per bucket (made in setup, freed in teardown).
struct overlap_streams {
  cudaStream_t comm = nullptr;
  std::vector<cudaEvent_t> computed;
  cudaEvent_t communicated = nullptr;
  explicit overlap_streams(std::size_t buckets) : computed(buckets) {
    int least = 0;
    int greatest = 0;
    AISP_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    AISP_CUDA_CHECK(cudaStreamCreateWithPriority(&comm, cudaStreamNonBlocking, greatest));
    for (auto& e : computed) AISP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    AISP_CUDA_CHECK(cudaEventCreateWithFlags(&communicated, cudaEventDisableTiming));
  }
  ~overlap_streams() {
    for (auto e : computed) cudaEventDestroy(e);
    cudaEventDestroy(communicated);
    cudaStreamDestroy(comm);
  }
  overlap_streams(const overlap_streams&) = delete;
  overlap_streams& operator=(const overlap_streams&) = delete;
};

void bucketed(run_context& ctx) {
  auto& streams = state_of<overlap_streams>(ctx);
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  const std::size_t buckets = streams.computed.size();
  const int steps = static_cast<int>(ctx.param("steps"));
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t b = 0; b < buckets; ++b) {
    const bucket_range r = bucket_of(n, buckets, b);
    if (r.count == 0) continue;  // more buckets than elements: no collective for an empty one (D5)
    launch_gradient(x + r.first, y + r.first, r.count, steps, ctx.stream());
    AISP_CUDA_CHECK(cudaEventRecord(streams.computed[b], ctx.stream()));
    AISP_CUDA_CHECK(cudaStreamWaitEvent(streams.comm, streams.computed[b]));
    AISP_NCCL_CHECK(nccl().all_reduce(y + r.first, y + r.first, r.count, ncclFloat32, ncclSum, nccl_comm(ctx), streams.comm));
  }
  // The harness's stream waits for the last all-reduce: every byte lands inside the window (T1).
  AISP_CUDA_CHECK(cudaEventRecord(streams.communicated, streams.comm));
  AISP_CUDA_CHECK(cudaStreamWaitEvent(ctx.stream(), streams.communicated));
}

pair declare(int world) {
  const auto n = [](const workload& w) { return w.get("n"); };
  pair p(scaled_name("ch04:bucketed_overlap", world));
  p.summary("gradient compute + fp32 all-reduce over " + std::to_string(world) + " GPUs: compute then communicate vs bucketed overlap")
      .world_size(world)
      .moves_data_over(data_path::gpu_interconnect)
      .benchmark_size({{"n", std::int64_t{1} << 26}, {"buckets", 16}, {"steps", 256}})
      .validation_size({{"n", 1}, {"buckets", 1}, {"steps", 3}})
      .validation_size({{"n", 1001}, {"buckets", 7}, {"steps", 17}})
      .validation_size({{"n", 65537}, {"buckets", 16}, {"steps", 64}})
      .held_out_size({{"n", 4099}, {"buckets", 5}, {"steps", 33}})
      .input("x", dtype::f32, n, init_distribution::uniform_unit)  // positive: the ranks' sums never cancel
      .output("y", dtype::f32, n)
      .work([world](const workload& w) {
        const auto elements = static_cast<double>(w.get("n"));
        return work_amount{.bytes = all_reduce_bus_bytes(4.0 * elements, world),
                           .flops = elements * (2.0 * static_cast<double>(w.get("steps")) + world - 1)};
      })
      .reference([](reference_io& io) {
        const auto x = io.input("x");
        const auto y = io.output("y");
        const auto steps = io.param("steps");
        const std::size_t world = static_cast<std::size_t>(io.world_size());
        const std::size_t count = x.size() / world;
        for (std::size_t i = 0; i < count; ++i) {
          double sum = 0;
          for (std::size_t q = 0; q < world; ++q) {
            const double xi = x[q * count + i];
            double g = xi;
            for (std::int64_t s = 0; s < steps; ++s) g = g * 0.5 + xi;
            sum += g;
          }
          for (std::size_t r = 0; r < world; ++r) y[r * count + i] = sum;
        }
      });
  variant serial = nccl_variant("baseline", "compute every bucket, then one ncclAllReduce of all of them", compute_then_all_reduce);
  serial.collectives = collectives_per_call(1);
  variant overlapped = nccl_variant(
      "optimized", "each bucket's ncclAllReduce on a communication stream while the next bucket computes", bucketed,
      [](run_context& ctx) { make_state<overlap_streams>(ctx, static_cast<std::size_t>(ctx.param("buckets"))); },
      release_state<overlap_streams>);
  overlapped.collectives = non_empty_buckets;  // D5: the bucket layout measured is the workload's
  p.add_variant(serial).add_variant(overlapped);
  return p;
}

AISP_REGISTER(declare(world_sizes[0]));
AISP_REGISTER(declare(world_sizes[1]));

}  // namespace
}  // namespace aisp::ch04

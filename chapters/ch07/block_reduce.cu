// block_reduce: sum of n fp32 values into one fp32 value.
// Baseline: grid-stride partial sum per thread, then one global atomicAdd per thread.
// Optimized: float4 grid-stride loads with 4 in flight, warp-shuffle tree, shared memory across
// warps, one global atomicAdd per block.
// Why faster: one full wave is 132 SMs x 2048 threads = 270k threads. The baseline ends with 270k
// fp32 atomics on one address, which the L2 applies one after another; the optimized kernel ends
// with 1056 (256x fewer), and its 16-byte loads keep more bytes in flight per SM. Reading 512 MiB
// at ~3.0 TB/s is ~180 us; the optimized kernel should sit at that floor. H100: see README.
// Peer: cub::DeviceReduce::Sum, the same fp32 sum in fp32 (per-block partials, then one block).
// Run: aisp bench run --targets ch07:block_reduce
#include <cub/device/device_reduce.cuh>

#include <cstddef>
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch07 {
namespace {

// Workload: input (n,) fp32, uniform in [0, 1); output sum (1,) fp32.
// Napkin math: bytes = 4n read + 4 written, FLOPs = n adds. n = 2^27: 512 MiB, ~180 us at
// 3.0 TB/s; arithmetic intensity 0.25 FLOP/byte, far below the ridge: bandwidth-bound.
//
// Note [zero the accumulator]: the harness poisons outputs and does not zero them, so each run
// starts with a 4-byte cudaMemsetAsync on ctx.stream() before the kernel. Both variants pay it;
// the CUB peer writes the sum instead of adding to it, so it needs none.
//
// Note [reduce tolerance]: fp32 summation in another order than the fp64 reference. The input is
// non-negative, so the sum S grows like n/2 and the error is best measured relative to it. The
// baseline's last stage adds N = 270k per-thread partials into one fp32 accumulator that grows
// from 0 to S. Each add rounds by up to half an ulp (ulp/acc in [2^-24, 2^-23]), independently:
// error std ~ S * 2.4e-8 * sqrt(N / 3) ~= 7e-6 S. The per-thread partials (~500 terms) add ~1e-6.
// rtol = 1e-4 is >10 sigma above that at every size (N is fixed by the grid, not by n), yet a
// dropped element is still caught at the small sizes: at n = 7 the sum is ~3.5, at n = 1003
// ~500 (tolerance 0.05). A signed input would make the sum ~0 +- 0.58 sqrt(n) and force an
// absolute tolerance of ~1 at the benchmark size, which lets a dropped element pass at n = 7.
// The CUB peer adds in a tree (per-thread runs, block trees, then a tree over the block
// partials): its sequential chains are far shorter than 270k, so it sits well inside the bound.

constexpr unsigned int block_threads = 256;
constexpr unsigned int warps_per_block = block_threads / 32;
constexpr int vectors_in_flight = 4;

// ---- Baseline: per-thread partial sums, one atomic per thread ----
__global__ void sum_thread_atomic_kernel(const float* __restrict__ input, float* __restrict__ sum,
                                         std::int64_t num_elements) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  float partial = 0.0f;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < num_elements;
       i += stride) {
    partial += input[i];
  }
  atomicAdd(sum, partial);  // every thread: ~270k same-address atomics per wave
}

void launch_baseline(run_context& ctx) {
  const std::int64_t num_elements = ctx.param("n");
  auto* sum = ctx.as<float>("sum");
  AISP_CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(float), ctx.stream()));  // [zero the accumulator]
  sum_thread_atomic_kernel<<<wave_grid(num_elements, static_cast<int>(block_threads)), block_threads, 0, ctx.stream()>>>(
      ctx.as<const float>("input"), sum, num_elements);
  AISP_CHECK_LAUNCH();
}

// ---- Optimized: float4 loads, warp shuffles, one atomic per block ----
// Changed: 16-byte loads, 4 of them in flight per thread, and the 256 partials of a block are
// combined on chip (5 shuffle steps per warp, then 8 warp sums through shared memory).
namespace warp {
__device__ float reduce_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;  // lane 0 holds the warp's sum
}
}  // namespace warp

namespace block {
__device__ float reduce_sum(float value) {
  __shared__ float warp_sums[warps_per_block];
  const unsigned int lane = threadIdx.x % 32;
  const unsigned int warp_id = threadIdx.x / 32;
  value = warp::reduce_sum(value);
  if (lane == 0) {
    warp_sums[warp_id] = value;
  }
  __syncthreads();
  value = lane < warps_per_block ? warp_sums[lane] : 0.0f;
  return warp_id == 0 ? warp::reduce_sum(value) : 0.0f;  // thread 0 holds the block's sum
}
}  // namespace block

__global__ void sum_block_atomic_kernel(const float* __restrict__ input, float* __restrict__ sum,
                                        std::int64_t num_elements) {
  const std::int64_t num_vectors = num_elements / 4;
  const auto* input4 = reinterpret_cast<const float4*>(input);  // 16-byte aligned: see launcher
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t thread = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;

  // Independent accumulators, so the 4 loads of an iteration need not wait on each other's adds.
  float accumulators[vectors_in_flight] = {};
  std::int64_t v = thread;
  for (; v + (vectors_in_flight - 1) * stride < num_vectors; v += vectors_in_flight * stride) {
    float4 loaded[vectors_in_flight];
#pragma unroll
    for (int k = 0; k < vectors_in_flight; ++k) {
      loaded[k] = input4[v + k * stride];
    }
#pragma unroll
    for (int k = 0; k < vectors_in_flight; ++k) {
      accumulators[k] += (loaded[k].x + loaded[k].y) + (loaded[k].z + loaded[k].w);
    }
  }
  for (; v < num_vectors; v += stride) {
    const float4 loaded = input4[v];
    accumulators[0] += (loaded.x + loaded.y) + (loaded.z + loaded.w);
  }
  float partial = (accumulators[0] + accumulators[1]) + (accumulators[2] + accumulators[3]);

  // Tail: the last n % 4 elements (0..3), one per thread of the first threads of the grid.
  const std::int64_t tail_index = num_vectors * 4 + thread;
  if (tail_index < num_elements) {
    partial += input[tail_index];
  }

  partial = block::reduce_sum(partial);
  if (threadIdx.x == 0) {
    atomicAdd(sum, partial);  // one per block: ~1k atomics per wave
  }
}

void launch_optimized(run_context& ctx) {
  const std::int64_t num_elements = ctx.param("n");
  const auto* input = ctx.as<const float>("input");
  auto* sum = ctx.as<float>("sum");
  AISP_EXPECTS(reinterpret_cast<std::uintptr_t>(input) % alignof(float4) == 0,
               "float4 loads need a 16-byte aligned input");
  AISP_CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(float), ctx.stream()));  // [zero the accumulator]
  sum_block_atomic_kernel<<<wave_grid(num_elements / 4, static_cast<int>(block_threads)), block_threads, 0, ctx.stream()>>>(
      input, sum, num_elements);
  AISP_CHECK_LAUNCH();
}

// ---- Peer: CUB's device-wide sum ----
// cub::DeviceReduce::Sum over the fp32 input into the fp32 output, accumulating in fp32 (its
// accumulator is the type of float + float): the same job and precision as the variants above.
// It needs no atomics and no memset: a first kernel writes one partial per block into its
// temporary storage and a single-block kernel sums them into `sum`. The storage is sized for n
// in setup() (a size query launches nothing) and kept in variant state.
void cub_sum(run_context& ctx, void* storage, std::size_t& storage_bytes) {
  AISP_CUDA_CHECK(cub::DeviceReduce::Sum(storage, storage_bytes, ctx.as<const float>("input"),
                                         ctx.as<float>("sum"), ctx.param("n"), ctx.stream()));
}

void setup_cub(run_context& ctx) {
  std::size_t storage_bytes = 0;
  cub_sum(ctx, nullptr, storage_bytes);  // null storage: CUB only writes the size it needs
  make_state<device_scratch>(ctx, storage_bytes);
}

void run_cub(run_context& ctx) {
  const auto& storage = state_of<device_scratch>(ctx);
  std::size_t storage_bytes = storage.bytes();
  cub_sum(ctx, storage.data(), storage_bytes);  // CUB checks its own launches and returns the error
}

[[nodiscard]] variant cub_peer() {
  variant peer = kit::with_state("peer_cub",
                                 "cub::DeviceReduce::Sum, fp32 accumulate: per-block partials, "
                                 "then one block; no atomics, no memset",
                                 run_cub, setup_cub, release_state<device_scratch>);
  peer.library = "CUB";
  return peer;
}

}  // namespace
}  // namespace aisp::ch07

AISP_REGISTER(
    aisp::pair("ch07:block_reduce")
        .summary("fp32 sum: one atomic per thread vs float4 + warp shuffles, one atomic per block")
        .benchmark_size({{"n", std::int64_t{1} << 27}})
        .validation_size({{"n", 1}})
        .validation_size({{"n", 7}})
        .validation_size({{"n", 1000}})
        .validation_size({{"n", 1003}})
        .held_out_size({{"n", 65537}})
        .input("input", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("n"); },
               aisp::init_distribution::uniform_unit)
        .output("sum", aisp::dtype::f32, [](const aisp::workload&) { return std::int64_t{1}; })
        .exact_math()  // small-integer inputs give bitwise-exact results (X5 challenge)
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(w.get("n"));
          return aisp::work_amount{.bytes = 4.0 * elements + 4.0, .flops = elements};
        })
        .reference([](aisp::reference_io& io) {
          double total = 0.0;
          for (const double value : io.input("input")) {
            total += value;
          }
          io.output("sum")[0] = total;
        })
        .tolerance_override(aisp::tolerance{
            .rtol = 1e-4,
            .atol = 1e-6,
            .max_rel_l2 = 1e-4,
            .reason = "fp32 sum in a different order than the fp64 reference; non-negative input, "
                      "so error scales with the sum: ~1e-5 relative at 270k atomics, rtol 1e-4 "
                      "(see Note [reduce tolerance])"})
        .add_variant("baseline", "per-thread grid-stride sum, one atomicAdd per thread",
                     aisp::ch07::launch_baseline)
        .add_variant("optimized",
                     "float4 loads 4 in flight, warp shuffle + shared-memory tree, one atomicAdd "
                     "per block",
                     aisp::ch07::launch_optimized)
        .add_variant(aisp::ch07::cub_peer()));

// spill_restructure: per-pixel sort of a stack of frames (all order statistics at once: the
// per-pixel median or percentiles of a background model), fp32, frames <= 32.
// Baseline: each thread copies its pixel's values into `float v[32]` and insertion-sorts them.
// The shifts index v with run-time values, so v cannot live in registers: ptxas gives it a
// 128-byte stack frame in local memory, and every compare and shift is an LDL or STL.
// Optimized (two fixes):
//   optimized_smem: the same insertion sort on a column of shared memory (lane-interleaved, so
//     conflict-free): dynamic indexing is free there, and no local memory is left.
//   optimized: a 32-input bitonic sorting network, fully unrolled: every index is a compile-time
//     constant, so v stays in 32 registers and each compare-exchange is one FMNMX pair.
// Why faster: for 32 random keys insertion sort shifts ~n(n - 1) / 4 = 248 times, an LDL and an
// STL each: ~650 local accesses per pixel with the copies in and out, 2.5 KB of local traffic per
// 256 B of DRAM traffic, from 2048 threads x 128 B = 256 KB of stack per SM, more than L1 holds.
// The network does 240 compare-exchanges in registers, so the kernel is HBM-bound: 1 GiB ~=
// 360 us. H100: see README.
// Run: aisp bench run --targets ch08:spill_restructure
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch08 {
namespace {

// Workload: stack (frames, pixels) fp32 frame-major (frame f of pixel p at f * pixels + p),
// sorted (frames, pixels) fp32: sorted[f][p] is the f-th smallest of stack[0..frames)[p].
// Napkin math: bytes = 8 frames pixels, no FLOPs (comparisons only). frames = 32, pixels = 2^22:
// 1 GiB, ~360 us at 3.0 TB/s. One thread per pixel: lanes take consecutive pixels, so each load
// and store of a frame is 128 contiguous bytes per warp.
//
// Note [local memory]: a per-thread array indexed by a run-time value is placed in local memory:
// per-thread slices of device memory, cached in L1 and L2, laid out so that the same index across
// a warp's lanes is contiguous. ptxas reports it as a stack frame, not as a spill (it warns only
// about spills), but the SASS is the same LDL/STL traffic a spill makes.
//
// Note [network]: bitonic sort of 32 keys: log2(32) (log2(32) + 1) / 2 = 15 stages of 16
// compare-exchanges, 240 in all, each a FMNMX for the minimum and one for the maximum. The
// direction of each exchange depends only on (i, k), known at compile time, so no selects remain.
// Frames beyond `frames` are +inf, which sorts them to the end where they are not written.
//
// Note [exact sort]: every variant outputs the same multiset of input values in ascending order,
// so the outputs are bitwise equal to each other and to the reference.

constexpr int max_frames = 32;
constexpr unsigned int block_threads = 256;

[[nodiscard]] int checked_frames(const run_context& ctx) {
  const std::int64_t frames = ctx.param("frames");
  AISP_EXPECTS(frames >= 1 && frames <= max_frames, "frames must be in [1, 32]");
  return static_cast<int>(frames);
}

[[nodiscard]] unsigned int pixel_blocks(std::int64_t pixels) {
  const std::int64_t blocks = (pixels + block_threads - 1) / block_threads;
  AISP_EXPECTS(blocks <= 0x7fffffff, "pixels exceed the gridDim.x limit");
  return static_cast<unsigned int>(blocks);
}

template <auto Kernel>
void launch_sort(run_context& ctx) {
  const std::int64_t pixels = ctx.param("pixels");
  Kernel<<<pixel_blocks(pixels), block_threads, 0, ctx.stream()>>>(
      ctx.as<const float>("stack"), ctx.as<float>("sorted"), pixels, checked_frames(ctx));
  AISP_CHECK_LAUNCH();
}

// ---- Baseline: insertion sort of a per-thread array (local memory) ----
__global__ void sort_local_array_kernel(const float* __restrict__ stack,
                                        float* __restrict__ sorted, std::int64_t pixels,
                                        int frames) {
  const std::int64_t p = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (p >= pixels) {
    return;
  }
  float v[max_frames];  // indexed by run-time values below: local memory (Note [local memory])
  for (int f = 0; f < frames; ++f) {
    v[f] = stack[f * pixels + p];
  }
  for (int next = 1; next < frames; ++next) {
    const float key = v[next];
    int slot = next - 1;
    while (slot >= 0 && v[slot] > key) {  // each step: LDL, compare, STL
      v[slot + 1] = v[slot];
      --slot;
    }
    v[slot + 1] = key;
  }
  for (int f = 0; f < frames; ++f) {
    sorted[f * pixels + p] = v[f];
  }
}

// ---- optimized_smem: the same insertion sort on a shared-memory column ----
// Changed: v is column threadIdx.x of a (32, 256) shared array, element f at word 256 f + t.
// The 32 lanes of a warp access 32 consecutive words (32 banks) whatever f each uses, and there
// is no local memory left. 32 KB per block still allows 7 blocks (56 warps) per SM.
__global__ void __launch_bounds__(block_threads)
    sort_shared_column_kernel(const float* __restrict__ stack, float* __restrict__ sorted,
                              std::int64_t pixels, int frames) {
  __shared__ float columns[max_frames * block_threads];
  const std::int64_t p = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (p >= pixels) {
    return;  // no __syncthreads below: each thread touches only its own column
  }
  float* v = columns + threadIdx.x;  // v[f * block_threads] is element f
  for (int f = 0; f < frames; ++f) {
    v[f * block_threads] = stack[f * pixels + p];
  }
  for (int next = 1; next < frames; ++next) {
    const float key = v[next * block_threads];
    int slot = next - 1;
    while (slot >= 0 && v[slot * block_threads] > key) {
      v[(slot + 1) * block_threads] = v[slot * block_threads];
      --slot;
    }
    v[(slot + 1) * block_threads] = key;
  }
  for (int f = 0; f < frames; ++f) {
    sorted[f * pixels + p] = v[f * block_threads];
  }
}

// ---- optimized: bitonic sorting network in registers ----
// Changed: a fixed network instead of data-dependent shifts (Note [network]). With all loops
// unrolled, i, i ^ j and the direction are constants, so v[] is 32 registers: no stack frame.
__global__ void __launch_bounds__(block_threads)
    sort_network_kernel(const float* __restrict__ stack, float* __restrict__ sorted,
                        std::int64_t pixels, int frames) {
  const std::int64_t p = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (p >= pixels) {
    return;
  }
  float v[max_frames];
#pragma unroll
  for (int f = 0; f < max_frames; ++f) {
    v[f] = f < frames ? stack[f * pixels + p] : INFINITY;  // 32 independent loads in flight
  }
#pragma unroll
  for (int k = 2; k <= max_frames; k *= 2) {      // length of the bitonic runs being merged
#pragma unroll
    for (int j = k / 2; j > 0; j /= 2) {          // compare distance
#pragma unroll
      for (int i = 0; i < max_frames; ++i) {
        const int partner = i ^ j;
        if (partner > i) {
          const float low = fminf(v[i], v[partner]);
          const float high = fmaxf(v[i], v[partner]);
          const bool ascending = (i & k) == 0;
          v[i] = ascending ? low : high;
          v[partner] = ascending ? high : low;
        }
      }
    }
  }
#pragma unroll
  for (int f = 0; f < max_frames; ++f) {
    if (f < frames) {
      sorted[f * pixels + p] = v[f];
    }
  }
}

[[nodiscard]] std::int64_t stack_elements(const workload& w) {
  return w.get("frames") * w.get("pixels");
}

}  // namespace
}  // namespace aisp::ch08

AISP_REGISTER(
    aisp::pair("ch08:spill_restructure")
        .summary("per-pixel sort of a 32-frame fp32 stack: insertion sort in a local-memory "
                 "array vs in shared memory vs a bitonic network in registers")
        .benchmark_size({{"frames", 32}, {"pixels", std::int64_t{1} << 22}})
        .validation_size({{"frames", 1}, {"pixels", 1}})
        .validation_size({{"frames", 7}, {"pixels", 65}})
        .validation_size({{"frames", 32}, {"pixels", 1003}})
        .validation_size({{"frames", 17}, {"pixels", 300}})
        .validation_size({{"frames", 2}, {"pixels", 7}})
        .held_out_size({{"frames", 29}, {"pixels", 4099}})
        .input("stack", aisp::dtype::f32, std::vector<std::string>{"frames", "pixels"})
        .output("sorted", aisp::dtype::f32, std::vector<std::string>{"frames", "pixels"})
        .exact_math()  // Note [exact sort]
        .work([](const aisp::workload& w) {
          return aisp::work_amount{
              .bytes = 8.0 * static_cast<double>(aisp::ch08::stack_elements(w)), .flops = 0.0};
        })
        .reference([](aisp::reference_io& io) {
          const auto frames = static_cast<std::size_t>(io.param("frames"));
          const auto pixels = static_cast<std::size_t>(io.param("pixels"));
          const std::span<const double> stack = io.input("stack");
          const std::span<double> sorted = io.output("sorted");
          std::vector<double> values(frames);
          for (std::size_t p = 0; p < pixels; ++p) {
            for (std::size_t f = 0; f < frames; ++f) {
              values[f] = stack[f * pixels + p];
            }
            std::sort(values.begin(), values.end());
            for (std::size_t f = 0; f < frames; ++f) {
              sorted[f * pixels + p] = values[f];
            }
          }
        })
        .tag("local-memory")
        .tag("register-spills")
        .tag("sorting-network")
        .add_variant("baseline",
                     "insertion sort of float v[32] indexed at run time: 128 B stack frame, "
                     "every shift an LDL/STL",
                     aisp::ch08::launch_sort<aisp::ch08::sort_local_array_kernel>)
        .add_variant("optimized_smem",
                     "the same insertion sort on a lane-interleaved shared-memory column: no "
                     "local memory",
                     aisp::ch08::launch_sort<aisp::ch08::sort_shared_column_kernel>)
        .add_variant("optimized",
                     "32-key bitonic network, fully unrolled: compile-time indices, v[] in "
                     "registers, 480 FMNMX per pixel",
                     aisp::ch08::launch_sort<aisp::ch08::sort_network_kernel>));

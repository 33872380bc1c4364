// cluster_reduction: layer normalization without affine parameters over long rows,
// y[r, :] = (x[r, :] - mean_r) / sqrt(var_r + 1e-5), x (rows, cols) fp32, cols = 65536 (256 KB
// per row: more than one block can hold on chip, so eight blocks share a row).
// Baseline: two kernels. The first has each of a row's 8 blocks reduce its eighth of the row
// (sum and sum of squares) and combine the partials with global atomicAdd into a rows x 2
// buffer (zeroed by a memset); the second reads x again and normalizes it.
// Optimized: one kernel launched in clusters of 8 blocks, one cluster per row. Each block keeps
// its eighth of the row in registers, reduces it, and the 8 partials are combined through
// distributed shared memory (cluster.map_shared_rank) after a cluster barrier; every block then
// normalizes the registers it already holds. x is read once, no atomics, no second launch.
// Why faster: global atomics can combine partials but not hand the total back to the same
// kernel (that needs a grid-wide barrier), so the row has to be read twice: 12 bytes per element
// against 8. A cluster is a group of blocks that are guaranteed co-resident with a hardware
// barrier and access to each other's shared memory. Both variants are HBM-bound: ~270 us vs
// ~185 us at 1024 x 65536, ~1.45x. H100: see README.
// Run: aisp bench run --targets ch10:cluster_reduction
#include <cooperative_groups.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch10 {
namespace {

namespace cg = cooperative_groups;

// Workload: x (rows, cols) fp32 row-major, y (rows, cols) fp32; eps = 1e-5, biased variance.
// Napkin math: the fewest bytes are x read once and y written once, 8 rows cols: at 1024 x
// 65536 (2^26 elements) 512 MiB, ~180 us at 3.0 TB/s. FLOPs: 5 per element (add, square-add,
// subtract, multiply). 0.6 FLOP/byte: HBM-bound.
//
// Note [row split]: each row is split among 8 blocks of 256 threads (block b of a row owns
// columns b * chunk .. (b + 1) * chunk - 1, chunk = ceil(cols / 8) rounded up to a multiple of 4
// so that with cols % 4 == 0 every chunk starts 16-byte aligned). A thread holds up to 8 float4s
// of its chunk (vectors t, t + 256, ..., coalesced), 8192 floats per block: a 65536-column row
// fits exactly, 32 data registers per thread, 4 blocks per SM. Longer chunks are correct too:
// the part beyond the registers is read again for the normalization. Rows whose cols % 4 != 0
// use scalar elements (8 per thread). The baseline splits the row the same way.
//
// Note [cluster protocol]: one cluster of 8 blocks per row (grid (8, rows), cluster (8, 1, 1)).
// A block writes its (sum, sum of squares) to its own shared memory, then cluster.sync()
// (barrier.cluster arrive.release + wait.acquire) makes all 8 partials visible to the cluster.
// Lanes 0-7 of warp 0 read partial r from block r through map_shared_rank and add them in the
// same tree in every block, so all 8 blocks derive bitwise the same mean and rstd. A block must
// not exit while a peer may still read its shared memory: after its remote reads each thread
// arrives on the cluster barrier (split barrier), and waits on it only at the very end, so the
// normalization and the stores overlap the slowest peer's reads.
//
// Note [layernorm tolerance]: sums in fp32 in another order than fp64 (and, in the baseline,
// an atomic order that changes run to run). For uniform [-1, 1) inputs, sum x is ~ +-148 at
// 65536 columns with an absolute error ~ u sqrt(cols) ~ 2e-5, i.e. 3e-10 on the mean; sum x^2
// (~21845) has a relative error of a few u. So rstd is off by < 1e-6 relative and y by < 1e-6
// |y| plus ~2 u |x - mean| rstd: ~2e-7 absolute at |y| <= 3 (an fp32 emulation of the kernel's
// summation tree measured at most 2.7e-7 at 7 to 65536 columns). rtol 1e-5, atol 1e-6 covers it
// with 4x margin and still fails a row normalized with another row's statistics; the default
// atol of 1e-8 would leave outputs near 0 with only 2.5x margin at cols = 7.

constexpr int cluster_blocks = 8;
constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / 32;
constexpr int cached_per_thread = 8;  // float4s (or floats) of the chunk held in registers
constexpr float norm_eps = 1e-5f;

template <int Vec>
struct vec_of;
template <>
struct vec_of<4> {
  using type = float4;
};
template <>
struct vec_of<1> {
  using type = float;
};

__device__ float4 zero_of(float4) { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }
__device__ float zero_of(float) { return 0.0f; }
__device__ void accumulate(float4 v, float& s1, float& s2) {
  s1 += (v.x + v.y) + (v.z + v.w);
  s2 += fmaf(v.x, v.x, v.y * v.y) + fmaf(v.z, v.z, v.w * v.w);
}
__device__ void accumulate(float v, float& s1, float& s2) {
  s1 += v;
  s2 = fmaf(v, v, s2);
}
__device__ float4 normalize(float4 v, float mean, float rstd) {
  return make_float4((v.x - mean) * rstd, (v.y - mean) * rstd, (v.z - mean) * rstd,
                     (v.w - mean) * rstd);
}
__device__ float normalize(float v, float mean, float rstd) { return (v - mean) * rstd; }

// Columns [begin, end) of the block's chunk (Note [row split]).
struct chunk_span {
  int begin = 0;
  int end = 0;
};
__device__ chunk_span chunk_of(int block_in_row, int cols, int chunk) {
  const int begin = min(block_in_row * chunk, cols);
  return {begin, min(begin + chunk, cols)};
}

// Both sums of a block, in a fixed order: every thread returns the block's totals.
__device__ float2 block_sum2(float s1, float s2) {
  __shared__ float2 warp_sums[warps_per_block];
  __shared__ float2 total;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    s1 += __shfl_down_sync(0xffffffffu, s1, offset);
    s2 += __shfl_down_sync(0xffffffffu, s2, offset);
  }
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  if (lane == 0) {
    warp_sums[warp] = make_float2(s1, s2);
  }
  __syncthreads();
  if (warp == 0) {
    float2 v = lane < warps_per_block ? warp_sums[lane] : make_float2(0.0f, 0.0f);
#pragma unroll
    for (int offset = warps_per_block / 2; offset > 0; offset /= 2) {
      v.x += __shfl_down_sync(0xffffffffu, v.x, offset);
      v.y += __shfl_down_sync(0xffffffffu, v.y, offset);
    }
    if (lane == 0) {
      total = v;
    }
  }
  __syncthreads();
  return total;
}

__device__ float2 mean_rstd(float s1, float s2, int cols) {
  const float mean = s1 / static_cast<float>(cols);
  const float var = fmaxf(s2 / static_cast<float>(cols) - mean * mean, 0.0f);
  return make_float2(mean, 1.0f / sqrtf(var + norm_eps));
}

// ---- Baseline: partial sums by global atomics, then a second pass over x ----
template <int Vec>
__global__ void __launch_bounds__(block_threads)
    row_stats_atomic_kernel(const float* __restrict__ x, float* __restrict__ stats, int cols,
                            int chunk) {
  using vec = typename vec_of<Vec>::type;
  const int row = static_cast<int>(blockIdx.y);
  const chunk_span span = chunk_of(static_cast<int>(blockIdx.x), cols, chunk);
  const float* row_x = x + std::int64_t{row} * cols;
  float s1 = 0.0f;
  float s2 = 0.0f;
  for (int base = span.begin; base < span.end; base += cached_per_thread * block_threads * Vec) {
    vec loaded[cached_per_thread];
#pragma unroll
    for (int j = 0; j < cached_per_thread; ++j) {  // 8 loads in flight per thread
      const int c = base + (static_cast<int>(threadIdx.x) + j * block_threads) * Vec;
      loaded[j] = c < span.end ? *reinterpret_cast<const vec*>(row_x + c) : zero_of(vec{});
    }
#pragma unroll
    for (int j = 0; j < cached_per_thread; ++j) {
      accumulate(loaded[j], s1, s2);
    }
  }
  const float2 sums = block_sum2(s1, s2);
  if (threadIdx.x == 0) {
    atomicAdd(&stats[2 * row], sums.x);
    atomicAdd(&stats[2 * row + 1], sums.y);
  }
}

template <int Vec>
__global__ void __launch_bounds__(block_threads)
    normalize_rows_kernel(const float* __restrict__ x, const float* __restrict__ stats,
                          float* __restrict__ y, int cols, int chunk) {
  using vec = typename vec_of<Vec>::type;
  const int row = static_cast<int>(blockIdx.y);
  const chunk_span span = chunk_of(static_cast<int>(blockIdx.x), cols, chunk);
  const float2 mr = mean_rstd(stats[2 * row], stats[2 * row + 1], cols);
  const std::int64_t row_offset = std::int64_t{row} * cols;
  for (int base = span.begin; base < span.end; base += cached_per_thread * block_threads * Vec) {
    vec loaded[cached_per_thread];
#pragma unroll
    for (int j = 0; j < cached_per_thread; ++j) {
      const int c = base + (static_cast<int>(threadIdx.x) + j * block_threads) * Vec;
      loaded[j] = c < span.end ? *reinterpret_cast<const vec*>(x + row_offset + c) : zero_of(vec{});
    }
#pragma unroll
    for (int j = 0; j < cached_per_thread; ++j) {
      const int c = base + (static_cast<int>(threadIdx.x) + j * block_threads) * Vec;
      if (c < span.end) {
        *reinterpret_cast<vec*>(y + row_offset + c) = normalize(loaded[j], mr.x, mr.y);
      }
    }
  }
}

// ---- Optimized: one cluster of 8 blocks per row, partials through DSMEM ----
// Changed: the two passes become one. Each block keeps its chunk in registers, and the row's
// statistics are combined on chip through the cluster's distributed shared memory (see Note
// [cluster protocol]) instead of through global atomics and a second launch.
// Four blocks per SM cap the kernel at 64 registers: enough on sm_90a, 4 bytes short on sm_100a,
// whose code spills there; three (85 registers) on sm_100a keeps it in registers.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
constexpr int cluster_min_blocks = 3;
#else
constexpr int cluster_min_blocks = 4;
#endif

template <int Vec>
__global__ void __launch_bounds__(block_threads, cluster_min_blocks)
    layernorm_cluster_kernel(const float* __restrict__ x, float* __restrict__ y, int cols,
                             int chunk) {
  using vec = typename vec_of<Vec>::type;
  __shared__ float2 partial;  // this block's (sum, sum of squares), read by the whole cluster
  __shared__ float2 row_stats;
  const cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int row = static_cast<int>(blockIdx.y);
  const chunk_span span = chunk_of(rank, cols, chunk);
  const std::int64_t row_offset = std::int64_t{row} * cols;
  const auto column = [&](int j) {
    return span.begin + (static_cast<int>(threadIdx.x) + j * block_threads) * Vec;
  };

  vec cached[cached_per_thread];
#pragma unroll
  for (int j = 0; j < cached_per_thread; ++j) {  // all 8 loads in flight before the first add
    cached[j] = column(j) < span.end ? *reinterpret_cast<const vec*>(x + row_offset + column(j))
                                     : zero_of(vec{});
  }
  float s1 = 0.0f;
  float s2 = 0.0f;
#pragma unroll
  for (int j = 0; j < cached_per_thread; ++j) {
    accumulate(cached[j], s1, s2);
  }
  constexpr int cached_columns = cached_per_thread * block_threads * Vec;
  for (int c = column(cached_per_thread); c < span.end; c += block_threads * Vec) {
    accumulate(*reinterpret_cast<const vec*>(x + row_offset + c), s1, s2);  // beyond registers
  }
  const float2 sums = block_sum2(s1, s2);
  if (threadIdx.x == 0) {
    partial = sums;
  }
  cluster.sync();  // all 8 partials written and visible cluster-wide

  if (threadIdx.x < 32) {
    const int lane = static_cast<int>(threadIdx.x);
    float2 v = make_float2(0.0f, 0.0f);
    if (lane < cluster_blocks) {
      v = *cluster.map_shared_rank(&partial, lane);  // DSMEM read from block `lane`
    }
#pragma unroll
    for (int offset = cluster_blocks / 2; offset > 0; offset /= 2) {  // same tree everywhere
      v.x += __shfl_down_sync(0xffffffffu, v.x, offset);
      v.y += __shfl_down_sync(0xffffffffu, v.y, offset);
    }
    if (lane == 0) {
      row_stats = mean_rstd(v.x, v.y, cols);
    }
  }
  auto done_reading_peers = cluster.barrier_arrive();  // no more remote reads by this thread
  __syncthreads();                                     // row_stats visible to the block
  const float2 mr = row_stats;
#pragma unroll
  for (int j = 0; j < cached_per_thread; ++j) {
    if (column(j) < span.end) {
      *reinterpret_cast<vec*>(y + row_offset + column(j)) = normalize(cached[j], mr.x, mr.y);
    }
  }
  for (int c = span.begin + cached_columns + static_cast<int>(threadIdx.x) * Vec; c < span.end;
       c += block_threads * Vec) {
    *reinterpret_cast<vec*>(y + row_offset + c) =
        normalize(*reinterpret_cast<const vec*>(x + row_offset + c), mr.x, mr.y);
  }
  cluster.barrier_wait(std::move(done_reading_peers));  // peers are done with our `partial`
}

// ---- Launchers ----
struct row_shape {
  int rows = 0;
  int cols = 0;
  int chunk = 0;  // columns per block, Note [row split]
  bool vector = false;
};

[[nodiscard]] row_shape shape_of(const run_context& ctx) {
  row_shape s;
  s.rows = static_cast<int>(ctx.param("rows"));
  s.cols = static_cast<int>(ctx.param("cols"));
  AISP_EXPECTS(s.rows <= 65535, "rows exceed gridDim.y");
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  s.vector = s.cols % 4 == 0 && aligned(ctx.buffer("x")) && aligned(ctx.buffer("y"));
  s.chunk = (s.cols + cluster_blocks - 1) / cluster_blocks;
  if (s.vector) {
    s.chunk = (s.chunk + 3) / 4 * 4;
  }
  return s;
}

template <int Vec>
void launch_two_pass(run_context& ctx, const row_shape& s) {
  const auto* x = ctx.as<const float>("x");
  auto* stats = ctx.as<float>("row_stats");
  const dim3 grid(cluster_blocks, static_cast<unsigned int>(s.rows));
  row_stats_atomic_kernel<Vec><<<grid, block_threads, 0, ctx.stream()>>>(x, stats, s.cols, s.chunk);
  AISP_CHECK_LAUNCH();
  normalize_rows_kernel<Vec><<<grid, block_threads, 0, ctx.stream()>>>(x, stats, ctx.as<float>("y"),
                                                                      s.cols, s.chunk);
  AISP_CHECK_LAUNCH();
}

void launch_baseline(run_context& ctx) {
  const row_shape s = shape_of(ctx);
  AISP_CUDA_CHECK(cudaMemsetAsync(ctx.buffer("row_stats"), 0, sizeof(float) * 2 * s.rows,
                                  ctx.stream()));  // the atomics need zeros; scratch is noise
  if (s.vector) {
    launch_two_pass<4>(ctx, s);
  } else {
    launch_two_pass<1>(ctx, s);
  }
}

template <int Vec>
void launch_cluster(run_context& ctx, const row_shape& s) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(cluster_blocks, static_cast<unsigned int>(s.rows));
  config.blockDim = dim3(block_threads);
  config.dynamicSmemBytes = 0;
  config.stream = ctx.stream();
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster_blocks;  // one cluster = the 8 blocks of one row
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  AISP_CUDA_CHECK(cudaLaunchKernelEx(&config, layernorm_cluster_kernel<Vec>,
                                     ctx.as<const float>("x"), ctx.as<float>("y"), s.cols,
                                     s.chunk));
  AISP_CHECK_LAUNCH();
}

void launch_optimized(run_context& ctx) {
  const row_shape s = shape_of(ctx);
  if (s.vector) {
    launch_cluster<4>(ctx, s);
  } else {
    launch_cluster<1>(ctx, s);
  }
}

}  // namespace
}  // namespace aisp::ch10

AISP_REGISTER(
    aisp::pair("ch10:cluster_reduction")
        .summary("layer norm over 65536-wide rows split across 8 blocks: global atomics + a "
                 "second pass vs an 8-block cluster combining partials through DSMEM")
        .benchmark_size({{"rows", 1024}, {"cols", 65536}})
        .validation_size({{"rows", 1}, {"cols", 1}})
        .validation_size({{"rows", 3}, {"cols", 7}})
        .validation_size({{"rows", 5}, {"cols", 1003}})
        .validation_size({{"rows", 7}, {"cols", 4100}})
        .validation_size({{"rows", 2}, {"cols", 65536}})
        .validation_size({{"rows", 3}, {"cols", 70004}})
        .validation_size({{"rows", 2}, {"cols", 20001}})
        .held_out_size({{"rows", 37}, {"cols", 24580}})
        .input("x", aisp::dtype::f32, {"rows", "cols"})
        .output("y", aisp::dtype::f32, {"rows", "cols"})
        .scratch("row_stats", aisp::dtype::f32,
                 [](const aisp::workload& w) { return 2 * w.get("rows"); })
        .work([](const aisp::workload& w) {
          const double elements = static_cast<double>(w.get("rows") * w.get("cols"));
          return aisp::work_amount{.bytes = 8.0 * elements, .flops = 5.0 * elements};
        })
        .reference([](aisp::reference_io& io) {
          const std::int64_t rows = io.param("rows");
          const std::int64_t cols = io.param("cols");
          const std::span<const double> x = io.input("x");
          const std::span<double> y = io.output("y");
          for (std::int64_t r = 0; r < rows; ++r) {
            const auto row = static_cast<std::size_t>(r * cols);
            double sum = 0.0;
            for (std::int64_t c = 0; c < cols; ++c) {
              sum += x[row + static_cast<std::size_t>(c)];
            }
            const double mean = sum / static_cast<double>(cols);
            double squares = 0.0;  // two-pass variance: the fp64 truth, no cancellation
            for (std::int64_t c = 0; c < cols; ++c) {
              const double d = x[row + static_cast<std::size_t>(c)] - mean;
              squares += d * d;
            }
            const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(cols) + 1e-5);
            for (std::int64_t c = 0; c < cols; ++c) {
              y[row + static_cast<std::size_t>(c)] =
                  (x[row + static_cast<std::size_t>(c)] - mean) * rstd;
            }
          }
        })
        .tolerance_override(aisp::tolerance{
            .rtol = 1e-5,
            .atol = 1e-6,
            .max_rel_l2 = 1e-5,
            .reason = "row sums in fp32 in another (and for atomics, varying) order: mean off "
                      "by ~3e-10, rstd by < 1e-6 relative, y by ~2e-7 absolute; atol 1e-6 (see "
                      "Note [layernorm tolerance])"})
        .tag("thread-block-clusters")
        .tag("distributed-shared-memory")
        .tag("reduction")
        .tag("fusion")
        .tag("normalization")
        .add_variant("baseline",
                     "8 blocks per row: partial sums combined by global atomicAdd, then a second "
                     "kernel re-reads x to normalize",
                     aisp::ch10::launch_baseline)
        .add_variant("optimized",
                     "one 8-block cluster per row: chunk kept in registers, partials combined "
                     "through DSMEM, one read of x",
                     aisp::ch10::launch_optimized));

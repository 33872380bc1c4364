// The row machinery of ch16's bf16 row operations (softmax, layer_norm, rms_norm): a row of
// `cols` bf16 values is read as vectors of N values (N = 8, 16-byte loads, when cols % 8 == 0 and
// every row starts 16-byte aligned; else N = 1), by a row group (row_group below): one block of
// 128 threads for rows up to 4096 values; for longer ones one block of 512 threads, or a thread
// block cluster of 8 CTAs of 128 threads (Note [cluster rows]). Reductions over a row group return
// the result to every thread of it.
//
// Note [row in registers]: the fused kernels keep the first Vectors x threads vectors of their
// row in registers (packed bf16, 4 registers a 16-byte vector), so the row crosses HBM once
// whatever the number of passes over it; a row longer than that re-reads its overflow from
// global memory (L2) in each later pass. A warp a 4096-value row was tried first: 16 vectors a
// lane took 96-128 registers and spilled once the residual doubled the loads; a 128-thread block
// keeps 4 vectors a thread (16 registers) and a long row's 512-thread block 8.
//
// Note [cluster rows]: a 32768-value row in one CTA leaves one or two CTAs an SM, and then
// nothing overlaps a CTA's loads with its reductions and stores (the fused norm's 1024-thread
// block measured 87-89% of the copy ceiling on an H100, 2026-11-27). A cluster of 8 CTAs of 128
// threads holds the row as the 4096-value kernel holds its own (4 vectors a thread, 8 CTAs an
// SM: 94% there); the row group's thread index spans the cluster (thread() below), so the cached
// vectors and the overflow loop are the single-CTA code. A reduction writes each warp's partial
// to shared memory, crosses one cluster barrier (release/acquire), and every warp of every CTA
// reads the same 32 partials from distributed shared memory into the same lanes: one tree, the
// same bits cluster-wide. Consecutive reductions alternate two arrays (Slot), so one barrier a
// reduction suffices: a peer's reads of slot s precede its arrival at the next reduction's
// barrier, which precedes any rewrite of slot s. A CTA must not exit while a peer may still read
// it: arrive_after_last_read() after the last reduction, wait_before_exit() at the end, so the
// stores overlap the slowest peer's reads. The 8 CTAs then also retire together, freeing 8 slots
// of a GPC at once for the next cluster.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>

#include "aisp/check.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch16 {
// Internal linkage: several pair files include these kernels.
namespace {

// N adjacent bf16 values, loaded and stored as one access (16 bytes at N = 8).
template <int N>
struct alignas(2 * N) bf16_vec {
  __nv_bfloat16 value[N];
};

// Note [widen in each pass]: a plain conversion lets the compiler widen a cached row once and
// keep the fp32 copy for the later passes, twice the registers of the packed row (164 a thread
// for 4096-value rows in a warp, then spills). The volatile move makes each pass widen again:
// one integer op per value, against the registers that keep 24 warps an SM loading.
template <int N>
[[nodiscard]] __device__ float to_float(const bf16_vec<N>& v, int i) {
  std::uint32_t bits;
  asm volatile("cvt.u32.u16 %0, %1;" : "=r"(bits) : "h"(__bfloat16_as_ushort(v.value[i])));
  return __uint_as_float(bits << 16);
}

// A row group: Ctas CTAs of CtaThreads threads own a row (a thread block cluster when Ctas > 1,
// Note [cluster rows]), each thread keeping Vectors 16-byte vectors of it in registers (Note [row
// in registers]); CtasPerSm is the occupancy its kernels' launch bounds ask for.
template <int CtaThreads, int Ctas, int Vectors, int CtasPerSm>
struct row_group {
  static constexpr int cta_threads = CtaThreads;
  static constexpr int ctas = Ctas;
  static constexpr int threads = CtaThreads * Ctas;
  static constexpr int vectors = Vectors;
  static constexpr int ctas_per_sm = CtasPerSm;
  // A cluster's CTAs are consecutive in x (clusters of (Ctas, 1, 1)): CTA rank blockIdx.x % Ctas.
  [[nodiscard]] __device__ static int thread() { return static_cast<int>(blockIdx.x % Ctas * CtaThreads + threadIdx.x); }
  [[nodiscard]] __device__ static std::int64_t row() { return blockIdx.x / Ctas; }
};

constexpr int short_row_limit = 4096;
// The benchmark rows fill the registers exactly: 4096 = 128 x 4 x 8; 32768 = 512 x 8 x 8 =
// 8 x 128 x 4 x 8. Two 512-thread blocks an SM: one block's loads overlap the other's
// reductions and stores (a 512-thread block of 98 registers ran alone on its SM).
using short_rows = row_group<128, 1, 4, 8>;
using long_rows = row_group<512, 1, 8, 2>;
using wide_rows = row_group<1024, 1, 4, 1>;  // the fused norm's long rows (Note [fused long rows])
using cluster_rows = row_group<128, 8, 4, 8>;

// Vectors a thread keeps in registers. Unaligned rows (N = 1, the validation sizes' ragged widths)
// keep 4 values: that path is for correctness, and unrolled scalar updates cost more registers
// than vectors.
template <class Group, int N>
constexpr int cached_vectors = N == 1 ? 4 : Group::vectors;

namespace warp {
template <class Op>
[[nodiscard]] __device__ float reduce(float value, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}
}  // namespace warp

struct max_op {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sum_op {
  __device__ float operator()(float a, float b) const { return a + b; }
};

namespace block {
// The block's reduction, returned to every thread; safe to call several times in a row.
template <int Threads, class Op>
[[nodiscard]] __device__ float reduce(float value, Op op) {
  __shared__ float warp_values[Threads / 32];
  value = warp::reduce(value, op);
  __syncthreads();  // the previous reduction's readers are done with warp_values
  if (threadIdx.x % 32 == 0) warp_values[threadIdx.x / 32] = value;
  __syncthreads();
  float total = warp_values[0];
#pragma unroll
  for (int w = 1; w < Threads / 32; ++w) total = op(total, warp_values[w]);  // broadcast reads
  return total;
}
}  // namespace block

namespace cluster {
// The cluster's reduction, returned to every thread (Note [cluster rows]): consecutive calls in a
// kernel take different Slots.
template <int CtaThreads, int Ctas, int Slot, class Op>
[[nodiscard]] __device__ float reduce(float value, Op op) {
  constexpr int warps = CtaThreads / 32;
  static_assert(warps * Ctas == 32, "one warp's partial a lane");
  __shared__ float warp_values[warps];  // one array a Slot (and Op)
  value = warp::reduce(value, op);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (lane == 0) warp_values[threadIdx.x / 32] = value;
  const cooperative_groups::cluster_group group = cooperative_groups::this_cluster();
  group.sync();
  const float partial = *group.map_shared_rank(&warp_values[lane % warps], lane / warps);
  return warp::reduce(partial, op);
}
}  // namespace cluster

namespace row {
// The row group's reduction, returned to every thread of it; Slot as in cluster::reduce.
template <class Group, int Slot, class Op>
[[nodiscard]] __device__ float reduce(float value, Op op) {
  if constexpr (Group::ctas == 1) {
    return block::reduce<Group::cta_threads>(value, op);
  } else {
    return cluster::reduce<Group::cta_threads, Group::ctas, Slot>(value, op);
  }
}

// Note [cluster rows]: after the last reduction, and before the kernel ends.
template <class Group>
__device__ void arrive_after_last_read() {
  if constexpr (Group::ctas > 1) (void)cooperative_groups::cluster_group::barrier_arrive();
}
template <class Group>
__device__ void wait_before_exit() {
  if constexpr (Group::ctas > 1) cooperative_groups::cluster_group::barrier_wait();
}
}  // namespace row

// Visits vector i of a row, for each i < the row's vector count this thread owns: the first
// Vecs x Group::threads come from the registers that load_row() filled (Note [row in registers]),
// the rest from load(i), global memory.
template <class Group, int Vecs, int N, class Load, class Visit>
__device__ void for_each_vector(int num_vectors, const bf16_vec<N> (&cached)[Vecs], Load load, Visit visit) {
  const int t = Group::thread();
#pragma unroll
  for (int j = 0; j < Vecs; ++j) {
    const int i = t + j * Group::threads;
    if (i < num_vectors) visit(i, cached[j]);
  }
  for (int i = t + Vecs * Group::threads; i < num_vectors; i += Group::threads) visit(i, load(i));
}

// Issues every cached vector's load before any is used: Vecs x 16 bytes in flight a thread (per
// source: the fused norm's load reads x and the residual).
template <class Group, int Vecs, int N, class Load>
__device__ void load_row(int num_vectors, bf16_vec<N> (&cached)[Vecs], Load load) {
  const int t = Group::thread();
#pragma unroll
  for (int j = 0; j < Vecs; ++j) {
    const int i = t + j * Group::threads;
    if (i < num_vectors) cached[j] = load(i);
  }
}

// Whether the rows of every named buffer can be read as 16-byte vectors.
[[nodiscard]] inline bool rows_take_16_byte_vectors(const run_context& ctx, std::initializer_list<const char*> names) {
  if (ctx.param("cols") % 8 != 0) return false;
  for (const char* name : names) {
    if (reinterpret_cast<std::uintptr_t>(ctx.buffer(name)) % 16 != 0) return false;
  }
  return true;
}

// Runs Launcher<Group, N>::run(ctx): the row group by row length (short_rows up to
// short_row_limit values, else LongGroup), the vector width by whether every named buffer's rows
// take 16-byte vectors.
template <template <class, int> class Launcher, class LongGroup = long_rows>
void dispatch_rows(run_context& ctx, std::initializer_list<const char*> row_buffers) {
  const bool vectors = rows_take_16_byte_vectors(ctx, row_buffers);
  if (ctx.param("cols") <= short_row_limit) {
    vectors ? Launcher<short_rows, 8>::run(ctx) : Launcher<short_rows, 1>::run(ctx);
  } else {
    vectors ? Launcher<LongGroup, 8>::run(ctx) : Launcher<LongGroup, 1>::run(ctx);
  }
}

// Launches kernel(args...) with one row group a row: rows x Group::ctas CTAs, in clusters of
// Group::ctas (Note [cluster rows]).
template <class Group, class... Params, class... Args>
void launch_rows(void (*kernel)(Params...), std::int64_t rows, cudaStream_t stream, const Args&... args) {
  AISP_EXPECTS(rows * Group::ctas <= 0x7fffffff, "one row group a row: rows x CTAs a row must fit gridDim.x");
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(rows * Group::ctas));
  config.blockDim = dim3(Group::cta_threads);
  config.stream = stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = Group::ctas;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = Group::ctas > 1 ? 1 : 0;  // a single-CTA group launches as a plain grid
  AISP_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
  AISP_CHECK_LAUNCH();
}

inline void check_row_shape(const run_context& ctx) {
  AISP_EXPECTS(ctx.param("rows") >= 1 && ctx.param("cols") >= 1, "rows and cols must be at least 1");
  AISP_EXPECTS(ctx.param("rows") <= 0x7fffffff, "one row a row group: rows must fit gridDim.x");
  AISP_EXPECTS(ctx.param("cols") <= 0x7fffffff, "cols must fit a 32-bit index");
}

}  // namespace
}  // namespace aisp::ch16

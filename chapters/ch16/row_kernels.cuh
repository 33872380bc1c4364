// The row machinery of ch16's bf16 row operations (softmax, layer_norm, rms_norm): a row of
// `cols` bf16 values is read as vectors of N values (N = 8, 16-byte loads, when cols % 8 == 0 and
// every row starts 16-byte aligned; else N = 1), by a row group of RowThreads threads: a warp
// (RowThreads = 32, several rows a block) for rows up to 4096 values, or a whole block for longer
// ones. Reductions over a row group return the result to every thread of it.
//
// Note [row in registers]: the fused kernels keep the first Vecs x RowThreads vectors of their
// row in registers (packed bf16, 4 registers a 16-byte vector), so the row crosses HBM once
// whatever the number of passes over it; a row longer than that re-reads its overflow from
// global memory (L2) in each later pass. A warp a 4096-value row was tried first: 16 vectors a
// lane took 96-128 registers and spilled once the residual doubled the loads; a 128-thread block
// keeps 4 vectors a thread (16 registers) and a long row's block 8.
#pragma once

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

// Row groups: a block of short_row_threads for rows up to short_row_limit values, else a block
// of long_row_threads (Note [row in registers]).
constexpr int short_row_limit = 4096;
constexpr int short_row_threads = 128;
constexpr int long_row_limit = 32768;
constexpr int long_row_threads = 512;

// Vectors a thread keeps in registers: the benchmark rows exactly (4096 = 128 x 4 x 8, 32768 =
// 512 x 8 x 8). Unaligned rows (N = 1, the validation sizes' ragged widths) keep 4 values: that
// path is for correctness, and unrolled scalar updates cost more registers than vectors.
template <int RowThreads, int N>
constexpr int cached_vectors = N == 1 ? 4 : (RowThreads == short_row_threads ? short_row_limit : long_row_limit) / RowThreads / N;

// At least two row blocks resident an SM, so one block's loads overlap another's reductions and
// stores (a 512-thread block of 98 registers ran alone on its SM); 128-thread blocks fit 8+.
template <int RowThreads>
constexpr int blocks_per_sm = RowThreads == 1024 ? 1 : RowThreads == long_row_threads ? 2 : 8;

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

// Visits vector i of a row, for each i < the row's vector count this thread owns: the first
// Vecs x RowThreads come from the registers that load_row() filled (Note [row in registers]), the
// rest from load(i), global memory.
template <int RowThreads, int Vecs, int N, class Load, class Visit>
__device__ void for_each_vector(int num_vectors, const bf16_vec<N> (&cached)[Vecs], Load load, Visit visit) {
  const int t = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int j = 0; j < Vecs; ++j) {
    const int i = t + j * RowThreads;
    if (i < num_vectors) visit(i, cached[j]);
  }
  for (int i = t + Vecs * RowThreads; i < num_vectors; i += RowThreads) visit(i, load(i));
}

// Issues the cached vectors' loads in batches of Batch, each batch's loads before any is used
// (Batch x 16 bytes in flight a thread, per source). A load that reads two sources (x and the
// residual) holds twice the registers until it is combined: the empty asm with a memory clobber
// keeps the compiler from hoisting the next batch's loads above it (128 live registers, spills).
template <int RowThreads, int Batch = 0, int Vecs, int N, class Load>
__device__ void load_row(int num_vectors, bf16_vec<N> (&cached)[Vecs], Load load) {
  constexpr int batch = Batch == 0 ? Vecs : Batch;
  const int t = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int j = 0; j < Vecs; ++j) {
    if (j > 0 && j % batch == 0) asm volatile("" ::: "memory");
    const int i = t + j * RowThreads;
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

// Runs Launcher<RowThreads, N>::run(ctx): the row group by row length, the vector width by
// whether every named buffer's rows take 16-byte vectors. Launchers launch one block a row.
// LongThreads: the block of a long row (long_row_threads, or 1024 for a kernel whose 8 cached
// vectors a thread would not leave room for two blocks an SM).
template <template <int, int> class Launcher, int LongThreads = long_row_threads>
void dispatch_rows(run_context& ctx, std::initializer_list<const char*> row_buffers) {
  const bool vectors = rows_take_16_byte_vectors(ctx, row_buffers);
  if (ctx.param("cols") <= short_row_limit) {
    vectors ? Launcher<short_row_threads, 8>::run(ctx) : Launcher<short_row_threads, 1>::run(ctx);
  } else {
    vectors ? Launcher<LongThreads, 8>::run(ctx) : Launcher<LongThreads, 1>::run(ctx);
  }
}

inline void check_row_shape(const run_context& ctx) {
  AISP_EXPECTS(ctx.param("rows") >= 1 && ctx.param("cols") >= 1, "rows and cols must be at least 1");
  AISP_EXPECTS(ctx.param("rows") <= 0x7fffffff, "one row a warp or block: rows must fit gridDim.x");
  AISP_EXPECTS(ctx.param("cols") <= 0x7fffffff, "cols must fit a 32-bit index");
}

}  // namespace
}  // namespace aisp::ch16

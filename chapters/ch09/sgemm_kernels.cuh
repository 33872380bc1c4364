// sgemm kernels: the classic fp32 GEMM progression, C (M, N) = A (M, K) @ B (K, N), all fp32
// row-major, fp32 accumulate. Each step is one kernel and its launcher; sgemm.cu registers them.
//
// Every kernel accumulates each C element over k = 0, 1, ..., K-1 in order with one FFMA per
// term, so all six variants produce bitwise-identical outputs (zero-filled tile padding adds
// exact zeros). Only cuBLAS may sum in another order.
//
// Note [edge tiles]: the tiled kernels come in two instantiations of one template. `Checked =
// false` assumes M and N are multiples of the block tile and K of the k-tile (and 16-byte
// aligned rows for float4): no bounds tests at all. `Checked = true` zero-fills every
// out-of-range element it loads into shared memory (a zero contributes an exact 0 to the sum)
// and guards every store. The launcher picks the unchecked one only when the shape allows it,
// so every shape is correct and the aligned benchmark shape pays nothing for the edges.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "aisp/async_copy.cuh"
#include "aisp/check.hpp"

namespace aisp::ch09 {

struct gemm_args {
  const float* a;  // (m, k) row-major
  const float* b;  // (k, n) row-major
  float* c;        // (m, n) row-major
  int m;
  int n;
  int k;
};

[[nodiscard]] inline unsigned int ceil_div(int value, int divisor) {
  return static_cast<unsigned int>((value + divisor - 1) / divisor);
}

// ---- 1. Naive: one thread per C element, lanes along M ----
// threadIdx.x walks rows of C: lane i reads A row (row0 + i), 32 rows K floats apart, and
// writes C 32 rows apart. B[k][col] is one address for the whole warp (a broadcast).
__global__ void sgemm_naive_kernel(gemm_args args) {
  const int row = static_cast<int>(blockIdx.x * 32 + threadIdx.x);
  const int col = static_cast<int>(blockIdx.y * 32 + threadIdx.y);
  if (row >= args.m || col >= args.n) {
    return;
  }
  float sum = 0.0f;
  for (int k = 0; k < args.k; ++k) {
    sum += args.a[row * args.k + k] * args.b[k * args.n + col];
  }
  args.c[row * args.n + col] = sum;
}

inline void launch_naive(const gemm_args& args, cudaStream_t stream) {
  sgemm_naive_kernel<<<dim3(ceil_div(args.m, 32), ceil_div(args.n, 32)), dim3(32, 32), 0,
                       stream>>>(args);
  AISP_CHECK_LAUNCH();
}

// ---- 2. Coalesced: lanes along N ----
// Changed: threadIdx.x walks columns. A warp's B load and C store are 128 contiguous bytes,
// and its A load is one address (a broadcast).
__global__ void sgemm_coalesced_kernel(gemm_args args) {
  const int col = static_cast<int>(blockIdx.x * 32 + threadIdx.x);
  const int row = static_cast<int>(blockIdx.y * 32 + threadIdx.y);
  if (row >= args.m || col >= args.n) {
    return;
  }
  float sum = 0.0f;
  for (int k = 0; k < args.k; ++k) {
    sum += args.a[row * args.k + k] * args.b[k * args.n + col];
  }
  args.c[row * args.n + col] = sum;
}

inline void launch_coalesced(const gemm_args& args, cudaStream_t stream) {
  sgemm_coalesced_kernel<<<dim3(ceil_div(args.n, 32), ceil_div(args.m, 32)), dim3(32, 32), 0,
                           stream>>>(args);
  AISP_CHECK_LAUNCH();
}

// ---- 3. Shared-memory tiles: 32 x 32 ----
// Changed: the block stages a 32 x 32 tile of A and of B in shared memory, so each global
// element is read once per block instead of once per thread: 32x fewer global loads.
constexpr int smem_tile = 32;

__global__ void sgemm_smem_tile_kernel(gemm_args args) {
  __shared__ float a_tile[smem_tile][smem_tile];
  __shared__ float b_tile[smem_tile][smem_tile];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int col = static_cast<int>(blockIdx.x) * smem_tile + tx;
  const int row = static_cast<int>(blockIdx.y) * smem_tile + ty;
  float sum = 0.0f;
  for (int k0 = 0; k0 < args.k; k0 += smem_tile) {
    // [edge tiles]: zero-fill outside A and B.
    a_tile[ty][tx] = (row < args.m && k0 + tx < args.k) ? args.a[row * args.k + k0 + tx] : 0.0f;
    b_tile[ty][tx] = (k0 + ty < args.k && col < args.n) ? args.b[(k0 + ty) * args.n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < smem_tile; ++k) {
      sum += a_tile[ty][k] * b_tile[k][tx];  // a_tile: broadcast; b_tile: 32 banks
    }
    __syncthreads();
  }
  if (row < args.m && col < args.n) {
    args.c[row * args.n + col] = sum;
  }
}

inline void launch_smem_tiles(const gemm_args& args, cudaStream_t stream) {
  sgemm_smem_tile_kernel<<<dim3(ceil_div(args.n, smem_tile), ceil_div(args.m, smem_tile)),
                           dim3(smem_tile, smem_tile), 0, stream>>>(args);
  AISP_CHECK_LAUNCH();
}

// ---- 4. Register tiles: 128 x 128 block tile, 8 x 8 per thread ----
// Changed: 256 threads share a 128 x 128 C tile and each keeps an 8 x 8 tile of C in
// registers. Per k, a thread loads 8 A and 8 B values from shared memory and does 64 FFMAs:
// 4 FFMAs per shared load instead of 1 (step 3 loads two values per FFMA).
namespace register_tile {
constexpr int block_m = 128;
constexpr int block_n = 128;
constexpr int block_k = 8;
constexpr int thread_m = 8;
constexpr int thread_n = 8;
constexpr int threads = (block_m / thread_m) * (block_n / thread_n);
static_assert(threads == 256);
static_assert(threads % block_k == 0 && threads % block_n == 0);
}  // namespace register_tile

template <bool Checked>
__global__ void __launch_bounds__(register_tile::threads)
    sgemm_register_tile_kernel(gemm_args args) {
  using namespace register_tile;
  __shared__ float a_tile[block_m * block_k];  // (block_m, block_k), as A is laid out
  __shared__ float b_tile[block_k * block_n];  // (block_k, block_n)
  const int tid = static_cast<int>(threadIdx.x);
  const int block_row = static_cast<int>(blockIdx.y) * block_m;
  const int block_col = static_cast<int>(blockIdx.x) * block_n;
  const int thread_row = tid / (block_n / thread_n);  // 0..15
  const int thread_col = tid % (block_n / thread_n);  // 0..15
  const int a_row = tid / block_k;                    // 32 rows of 8 per pass
  const int a_col = tid % block_k;
  const int b_row = tid / block_n;  // 2 rows of 128 per pass
  const int b_col = tid % block_n;

  float acc[thread_m][thread_n] = {};
  float a_frag[thread_m];
  float b_frag[thread_n];
  for (int k0 = 0; k0 < args.k; k0 += block_k) {
#pragma unroll
    for (int pass = 0; pass < block_m; pass += threads / block_k) {
      const int r = block_row + a_row + pass;
      const int c = k0 + a_col;
      a_tile[(a_row + pass) * block_k + a_col] =
          (!Checked || (r < args.m && c < args.k)) ? args.a[r * args.k + c] : 0.0f;
    }
#pragma unroll
    for (int pass = 0; pass < block_k; pass += threads / block_n) {
      const int r = k0 + b_row + pass;
      const int c = block_col + b_col;
      b_tile[(b_row + pass) * block_n + b_col] =
          (!Checked || (r < args.k && c < args.n)) ? args.b[r * args.n + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < block_k; ++k) {
#pragma unroll
      for (int i = 0; i < thread_m; ++i) {
        a_frag[i] = a_tile[(thread_row * thread_m + i) * block_k + k];
      }
#pragma unroll
      for (int j = 0; j < thread_n; ++j) {
        b_frag[j] = b_tile[k * block_n + thread_col * thread_n + j];
      }
#pragma unroll
      for (int i = 0; i < thread_m; ++i) {
#pragma unroll
        for (int j = 0; j < thread_n; ++j) {
          acc[i][j] += a_frag[i] * b_frag[j];
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const int r = block_row + thread_row * thread_m + i;
#pragma unroll
    for (int j = 0; j < thread_n; ++j) {
      const int c = block_col + thread_col * thread_n + j;
      if (!Checked || (r < args.m && c < args.n)) {
        args.c[r * args.n + c] = acc[i][j];
      }
    }
  }
}

[[nodiscard]] inline bool tiles_evenly(const gemm_args& args, int block_m, int block_n,
                                       int block_k) {
  return args.m % block_m == 0 && args.n % block_n == 0 && args.k % block_k == 0;
}

inline void launch_register_tiles(const gemm_args& args, cudaStream_t stream) {
  using namespace register_tile;
  const dim3 grid(ceil_div(args.n, block_n), ceil_div(args.m, block_m));
  if (tiles_evenly(args, block_m, block_n, block_k)) {  // [edge tiles]
    sgemm_register_tile_kernel<false><<<grid, threads, 0, stream>>>(args);
  } else {
    sgemm_register_tile_kernel<true><<<grid, threads, 0, stream>>>(args);
  }
  AISP_CHECK_LAUNCH();
}

// ---- Helpers shared by steps 5 and 6 ----
// Four consecutive floats of row `row` from column `col` of a (rows, cols) matrix: one 16-byte
// access in the unchecked instantiation; element by element in the checked one, where loads
// outside the matrix read as zero and stores outside it are dropped ([edge tiles]).
template <bool Checked>
__device__ __forceinline__ float4 load_row4(const float* matrix, int row, int col, int rows,
                                            int cols) {
  if constexpr (!Checked) {
    return *reinterpret_cast<const float4*>(matrix + row * cols + col);
  } else {
    float values[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      values[j] = (row < rows && col + j < cols) ? matrix[row * cols + col + j] : 0.0f;
    }
    return make_float4(values[0], values[1], values[2], values[3]);
  }
}

template <bool Checked>
__device__ __forceinline__ void store_row4(float* matrix, int row, int col, int rows, int cols,
                                           float4 value) {
  if constexpr (!Checked) {
    *reinterpret_cast<float4*>(matrix + row * cols + col) = value;
  } else {
    const float values[4] = {value.x, value.y, value.z, value.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (row < rows && col + j < cols) {
        matrix[row * cols + col + j] = values[j];
      }
    }
  }
}

[[nodiscard]] inline bool rows_16b_aligned(const gemm_args& args) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return aligned(args.a) && aligned(args.b) && aligned(args.c);
}

// ---- 5. Vectorized: float4 global and shared loads, A transposed in shared memory ----
// Changed: each thread moves its A and B tile elements as one float4 each, and A is stored
// transposed, a_tile[k][m], so the 8 A values a thread needs per k are contiguous: the inner
// loop reads 2 + 2 LDS.128 instead of 8 + 8 scalar loads.
template <bool Checked>
__global__ void __launch_bounds__(register_tile::threads)
    sgemm_vectorized_kernel(gemm_args args) {
  using namespace register_tile;
  static_assert(block_m * block_k / 4 == threads && block_k * block_n / 4 == threads);
  __shared__ __align__(16) float a_tile[block_k * block_m];  // (block_k, block_m): transposed
  __shared__ __align__(16) float b_tile[block_k * block_n];  // (block_k, block_n)
  const int tid = static_cast<int>(threadIdx.x);
  const int block_row = static_cast<int>(blockIdx.y) * block_m;
  const int block_col = static_cast<int>(blockIdx.x) * block_n;
  const int thread_row = tid / (block_n / thread_n);
  const int thread_col = tid % (block_n / thread_n);
  const int a_row = tid / (block_k / 4);  // one float4 of A per thread
  const int a_col = (tid % (block_k / 4)) * 4;
  const int b_row = tid / (block_n / 4);  // one float4 of B per thread
  const int b_col = (tid % (block_n / 4)) * 4;

  float acc[thread_m][thread_n] = {};
  for (int k0 = 0; k0 < args.k; k0 += block_k) {
    const float4 a4 = load_row4<Checked>(args.a, block_row + a_row, k0 + a_col, args.m, args.k);
    a_tile[(a_col + 0) * block_m + a_row] = a4.x;
    a_tile[(a_col + 1) * block_m + a_row] = a4.y;
    a_tile[(a_col + 2) * block_m + a_row] = a4.z;
    a_tile[(a_col + 3) * block_m + a_row] = a4.w;
    *reinterpret_cast<float4*>(&b_tile[b_row * block_n + b_col]) =
        load_row4<Checked>(args.b, k0 + b_row, block_col + b_col, args.k, args.n);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < block_k; ++k) {
      float a_frag[thread_m];
      float b_frag[thread_n];
#pragma unroll
      for (int i = 0; i < thread_m; i += 4) {
        const float4 v =
            *reinterpret_cast<const float4*>(&a_tile[k * block_m + thread_row * thread_m + i]);
        a_frag[i] = v.x;
        a_frag[i + 1] = v.y;
        a_frag[i + 2] = v.z;
        a_frag[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < thread_n; j += 4) {
        const float4 v =
            *reinterpret_cast<const float4*>(&b_tile[k * block_n + thread_col * thread_n + j]);
        b_frag[j] = v.x;
        b_frag[j + 1] = v.y;
        b_frag[j + 2] = v.z;
        b_frag[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < thread_m; ++i) {
#pragma unroll
        for (int j = 0; j < thread_n; ++j) {
          acc[i][j] += a_frag[i] * b_frag[j];
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const int r = block_row + thread_row * thread_m + i;
#pragma unroll
    for (int j = 0; j < thread_n; j += 4) {
      store_row4<Checked>(args.c, r, block_col + thread_col * thread_n + j, args.m, args.n,
                          make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    }
  }
}

inline void launch_vectorized(const gemm_args& args, cudaStream_t stream) {
  using namespace register_tile;
  AISP_EXPECTS(rows_16b_aligned(args), "float4 access needs 16-byte aligned A, B and C");
  const dim3 grid(ceil_div(args.n, block_n), ceil_div(args.m, block_m));
  if (tiles_evenly(args, block_m, block_n, block_k)) {  // [edge tiles]
    sgemm_vectorized_kernel<false><<<grid, threads, 0, stream>>>(args);
  } else {
    sgemm_vectorized_kernel<true><<<grid, threads, 0, stream>>>(args);
  }
  AISP_CHECK_LAUNCH();
}

// ---- 6. Warp tiling: block tile -> warp tiles -> 4 x 4 lane fragments, double-buffered ----
// Changed: (a) a 128 x 256 block tile split into 8 warp tiles of 32 x 128; a warp's 32 lanes
// form a 4 x 8 grid and each lane holds 2 x 4 fragments of 4 x 4 spread 16 rows / 32 columns
// apart (8 x 16 accumulators): a warp's fragment loads are 64 or 128 contiguous bytes shared
// by the lanes that need them, so reads never conflict, and per k a thread issues 6 LDS.128
// for 128 FFMAs. (b) A's transposed tile is padded to BlockM + 4 floats per row, which makes
// the transposed stores conflict-free too (Note [transposed store banks]). (c) Two stages: the
// loads of tile t + 1 are issued before the FFMAs of tile t (A into registers, B by cp.async
// straight into shared memory), so global latency hides behind math and one __syncthreads per
// k-tile suffices. (d) block_k = 32: 4x fewer barriers per FFMA than step 5.
//
// Note [transposed store banks]: bank = word % 32. A thread stores A[row][4 kq .. 4 kq + 3] to
// a_tile[4 kq + j][row], word (4 kq + j) * (BlockM + 4) + row. The loader maps each warp to 16
// rows x 2 float4 (kq = 2c, 2c + 1): 16 full 32-byte sectors of A, and with BlockM % 32 == 0
// the bank is (16 kq + 4 j + row) % 32 = const + 16 (kq % 2) + row % 16: 32 lanes, 32 banks.
// Without the pad the bank would not depend on kq: a 2-way conflict on every store.
namespace warp_tile {
constexpr int lanes_m = 4;  // lane grid inside a warp: 4 rows x 8 columns of lanes
constexpr int lanes_n = 8;
constexpr int frag = 4;  // each lane's fragment: 4 x 4, one float4 per row

template <int BlockM, int BlockN, int BlockK, int WarpM, int WarpN>
struct config {
  static constexpr int block_m = BlockM;
  static constexpr int block_n = BlockN;
  static constexpr int block_k = BlockK;
  static constexpr int warp_m = WarpM;
  static constexpr int warp_n = WarpN;
  static constexpr int warps_n = BlockN / WarpN;
  static constexpr int threads = (BlockM / WarpM) * warps_n * 32;
  static constexpr int iter_m = WarpM / (lanes_m * frag);
  static constexpr int iter_n = WarpN / (lanes_n * frag);
  static constexpr int a_stride = BlockM + 4;  // [transposed store banks]
  static constexpr int a_stage_floats = BlockK * a_stride;
  static constexpr int b_stage_floats = BlockK * BlockN;
  static constexpr int smem_bytes = 2 * (a_stage_floats + b_stage_floats) * 4;
  static constexpr int a_loads = BlockM * BlockK / 4 / threads;  // float4 per thread per tile
  static constexpr int b_loads = BlockK * BlockN / 4 / threads;
  static_assert(BlockM % WarpM == 0 && BlockN % WarpN == 0);
  static_assert(iter_m >= 1 && iter_n >= 1 && WarpM % (lanes_m * frag) == 0 &&
                WarpN % (lanes_n * frag) == 0);
  static_assert(BlockM % 32 == 0 && BlockK % 8 == 0, "loader: 16 rows x 2 float4 per warp");
  static_assert(a_loads * threads * 4 == BlockM * BlockK);
  static_assert(b_loads * threads * 4 == BlockK * BlockN && BlockN % 128 == 0);
};

// H100: 8 x 16 accumulators per thread (~250 registers, one 256-thread block per SM), 97 KB
// of shared memory; 128 x 256 tiles give 512 blocks at 4096^2: 3.9 waves on 132 SMs.
using h100 = config<128, 256, 32, 32, 128>;
}  // namespace warp_tile

// cp.async (sm_80+): global -> shared without a register round trip. The 16-byte form
// bypasses L1; edges use aisp/async_copy.cuh's 4-byte form, whose source size of 0 reads
// nothing and writes a zero.
__device__ __forceinline__ void copy_async_16(float* shared_dst, const float* global_src) {
  const auto dst = static_cast<unsigned int>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global_src));
}
template <class Cfg, bool Checked>
__global__ void __launch_bounds__(Cfg::threads) sgemm_warp_tile_kernel(gemm_args args) {
  using warp_tile::frag;
  using warp_tile::lanes_m;
  using warp_tile::lanes_n;
  constexpr int acc_m = Cfg::iter_m * frag;
  constexpr int acc_n = Cfg::iter_n * frag;
  extern __shared__ __align__(16) float smem[];
  float* const a_tiles = smem;                            // 2 x (block_k, a_stride): A^T
  float* const b_tiles = smem + 2 * Cfg::a_stage_floats;  // 2 x (block_k, block_n)

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int warp_row = (warp / Cfg::warps_n) * Cfg::warp_m;
  const int warp_col = (warp % Cfg::warps_n) * Cfg::warp_n;
  const int lane_row = (lane / lanes_n) * frag;
  const int lane_col = (lane % lanes_n) * frag;
  const int block_row = static_cast<int>(blockIdx.y) * Cfg::block_m;
  const int block_col = static_cast<int>(blockIdx.x) * Cfg::block_n;

  // A loader coordinates of this thread's float4s, fixed for the whole K loop.
  int a_row[Cfg::a_loads];
  int a_col[Cfg::a_loads];  // k offset in the tile, a multiple of 4
#pragma unroll
  for (int i = 0; i < Cfg::a_loads; ++i) {
    const int index = tid + i * Cfg::threads;
    const int group = index / 32;  // [transposed store banks]: 16 rows x 2 float4 per warp
    a_row[i] = (group % (Cfg::block_m / 16)) * 16 + index % 16;
    a_col[i] = ((group / (Cfg::block_m / 16)) * 2 + (index % 32) / 16) * 4;
  }
  float4 a_next[Cfg::a_loads];
  // Issue tile k0's loads: A into registers, B by cp.async into `stage` (a row of the tile is
  // 32 lanes x 16 contiguous bytes).
  const auto load_tile = [&](int k0, int stage) {
#pragma unroll
    for (int i = 0; i < Cfg::a_loads; ++i) {
      a_next[i] = load_row4<Checked>(args.a, block_row + a_row[i], k0 + a_col[i], args.m, args.k);
    }
    float* const b_dst = b_tiles + stage * Cfg::b_stage_floats;
#pragma unroll
    for (int i = 0; i < Cfg::b_loads; ++i) {
      const int index = tid + i * Cfg::threads;
      const int row = index / (Cfg::block_n / 4);
      const int col = (index % (Cfg::block_n / 4)) * 4;
      if constexpr (!Checked) {
        copy_async_16(b_dst + row * Cfg::block_n + col,
                      args.b + (k0 + row) * args.n + block_col + col);
      } else {  // [edge tiles]: element by element, zero outside B
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const bool in_range = k0 + row < args.k && block_col + col + j < args.n;
          ptx::cp_async_zfill4(b_dst + row * Cfg::block_n + col + j,
                               in_range ? args.b + (k0 + row) * args.n + block_col + col + j
                                        : args.b,
                               in_range ? 4 : 0);
        }
      }
    }
    ptx::cp_async_commit();
  };
  // Finish tile `stage`: A registers -> shared, transposed; wait for this thread's B copies.
  const auto store_tile = [&](int stage) {
    float* const a_dst = a_tiles + stage * Cfg::a_stage_floats;
#pragma unroll
    for (int i = 0; i < Cfg::a_loads; ++i) {
      a_dst[(a_col[i] + 0) * Cfg::a_stride + a_row[i]] = a_next[i].x;
      a_dst[(a_col[i] + 1) * Cfg::a_stride + a_row[i]] = a_next[i].y;
      a_dst[(a_col[i] + 2) * Cfg::a_stride + a_row[i]] = a_next[i].z;
      a_dst[(a_col[i] + 3) * Cfg::a_stride + a_row[i]] = a_next[i].w;
    }
    ptx::cp_async_wait<0>();
  };

  float acc[acc_m][acc_n] = {};
  const int num_tiles = (args.k + Cfg::block_k - 1) / Cfg::block_k;
  load_tile(0, 0);
  store_tile(0);
  __syncthreads();
  for (int tile = 0; tile < num_tiles; ++tile) {
    const int stage = tile % 2;
    const bool has_next = tile + 1 < num_tiles;
    if (has_next) {  // the other stage: every warp left it at the last barrier
      load_tile((tile + 1) * Cfg::block_k, stage ^ 1);
    }
    const float* const a_src = a_tiles + stage * Cfg::a_stage_floats + warp_row + lane_row;
    const float* const b_src = b_tiles + stage * Cfg::b_stage_floats + warp_col + lane_col;
#pragma unroll
    for (int k = 0; k < Cfg::block_k; ++k) {
      float a_frag[acc_m];
      float b_frag[acc_n];
#pragma unroll
      for (int mi = 0; mi < Cfg::iter_m; ++mi) {
        const float4 v = *reinterpret_cast<const float4*>(
            a_src + k * Cfg::a_stride + mi * lanes_m * frag);
        a_frag[mi * frag + 0] = v.x;
        a_frag[mi * frag + 1] = v.y;
        a_frag[mi * frag + 2] = v.z;
        a_frag[mi * frag + 3] = v.w;
      }
#pragma unroll
      for (int ni = 0; ni < Cfg::iter_n; ++ni) {
        const float4 v = *reinterpret_cast<const float4*>(
            b_src + k * Cfg::block_n + ni * lanes_n * frag);
        b_frag[ni * frag + 0] = v.x;
        b_frag[ni * frag + 1] = v.y;
        b_frag[ni * frag + 2] = v.z;
        b_frag[ni * frag + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < acc_m; ++i) {
#pragma unroll
        for (int j = 0; j < acc_n; ++j) {
          acc[i][j] += a_frag[i] * b_frag[j];
        }
      }
    }
    if (has_next) {
      store_tile(stage ^ 1);
    }
    __syncthreads();
  }

#pragma unroll
  for (int mi = 0; mi < Cfg::iter_m; ++mi) {
#pragma unroll
    for (int r = 0; r < frag; ++r) {
      const int row = block_row + warp_row + mi * lanes_m * frag + lane_row + r;
#pragma unroll
      for (int ni = 0; ni < Cfg::iter_n; ++ni) {
        const int col = block_col + warp_col + ni * lanes_n * frag + lane_col;
        const float* const acc4 = &acc[mi * frag + r][ni * frag];
        store_row4<Checked>(args.c, row, col, args.m, args.n,
                            make_float4(acc4[0], acc4[1], acc4[2], acc4[3]));
      }
    }
  }
}

template <class Cfg>
void launch_warp_tiles_with(const gemm_args& args, cudaStream_t stream) {
  AISP_EXPECTS(rows_16b_aligned(args), "float4 access needs 16-byte aligned A, B and C");
  const dim3 grid(ceil_div(args.n, Cfg::block_n), ceil_div(args.m, Cfg::block_m));
  const auto launch = [&](auto kernel) {
    if constexpr (Cfg::smem_bytes > 48 * 1024) {  // above the default: opt in
      AISP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Cfg::smem_bytes));
    }
    kernel<<<grid, Cfg::threads, Cfg::smem_bytes, stream>>>(args);
  };
  if (tiles_evenly(args, Cfg::block_m, Cfg::block_n, Cfg::block_k)) {  // [edge tiles]
    launch(sgemm_warp_tile_kernel<Cfg, false>);
  } else {
    launch(sgemm_warp_tile_kernel<Cfg, true>);
  }
  AISP_CHECK_LAUNCH();
}

inline void launch_warp_tiles(const gemm_args& args, cudaStream_t stream) {
  launch_warp_tiles_with<warp_tile::h100>(args, stream);
}

}  // namespace aisp::ch09

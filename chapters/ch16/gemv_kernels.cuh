// The GEMV kernels of ch16's decode pairs (gemv.cu, gemv_fp8_weights.cu): y (rows) = w (rows, k)
// x (k), w row-major as nn.Linear stores it (out_features, in_features), x and y bf16, fp32
// accumulation; y[r] is scaled by scale[r] when a per-channel scale is given.
//
// Note [one warp a row]: a decode GEMV is a stream of weight bytes, each used once; the job is to
// keep enough of them in flight. A warp owns a row: its lanes read consecutive 16-byte chunks of
// the row (512 bytes a warp instruction, fully coalesced), four chunks a lane in flight
// (unrolled), multiply by the matching chunk of x (16 KB at k = 8192, L1- and L2-resident after
// the first warps) and reduce with shuffles. Weights are loaded with ld.global.nc.L1::no_allocate
// so the streaming rows do not evict x from L1.
//
// Note [persistent rows]: with a block of 8 rows a launch unit, a block's slot on its SM frees
// only when its slowest warp is done, and each new block ramps up from nothing in flight; an
// fp8 row (8 KB at k = 8192, 16 chunks a lane) is short enough for that to cost (81% of the copy
// ceiling, against 92% for the 16 KB bf16 rows, H100 2026-11-27). gemv_ring_kernel launches only
// the resident blocks and walks each warp over rows warp, warp + warps, ... A lane keeps a ring
// of Ring chunk loads in flight: it consumes slot u and at once refills it with the chunk Ring
// steps ahead, crossing into the warp's next row, so the next row's loads are in flight while
// the current row finishes its chunks, reduces and stores. Ring x 16 bytes a lane stay in flight
// the whole time, where the unrolled loop drains to nothing between batches.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "aisp/check.hpp"
#include "aisp/launch_shape.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace aisp::ch16 {
// Internal linkage: two pair files include these kernels.
namespace {

// The tolerance of a bf16 GEMV: each output is a fp32 sum of k products of bf16 values (exact in fp32) in another
// order than the fp64 reference, then rounded to bf16 (2^-9 relative): rtol 1.6e-2 as the bf16
// default; atol 1e-3 for the outputs that land near zero, where the fp32 sum's rounding (~2^-24
// x sqrt(k) x |partial sums| ~ 1e-5 at k = 8192) is all that is left. rel-L2 1e-2.
const tolerance gemv_tolerance{
    .rtol = 1.6e-2,
    .atol = 1e-3,
    .max_rel_l2 = 1e-2,
    .reason = "fp32 sums of k bf16 products in another order, rounded to bf16: atol covers outputs near zero"};

constexpr int gemv_block_threads = 256;  // 8 rows a block
constexpr int gemv_rows_per_block = gemv_block_threads / 32;
constexpr int gemv_unroll = 4;

// A 16-byte chunk of a weight row and how it widens: 8 bf16, 16 fp8 e4m3 or 16 int8 values.
template <class Weight>
struct weight_chunk;
template <>
struct weight_chunk<__nv_bfloat16> {
  static constexpr int values = 8;
  __device__ static void widen(const uint4& bits, float (&out)[values]) {
    const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&bits);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 two = __bfloat1622float2(pairs[i]);
      out[2 * i] = two.x;
      out[2 * i + 1] = two.y;
    }
  }
};
template <>
struct weight_chunk<__nv_fp8_e4m3> {
  static constexpr int values = 16;
  __device__ static void widen(const uint4& bits, float (&out)[values]) {
    const auto* pairs = reinterpret_cast<const __nv_fp8x2_e4m3*>(&bits);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float2 two = static_cast<float2>(pairs[i]);
      out[2 * i] = two.x;
      out[2 * i + 1] = two.y;
    }
  }
};

template <>
struct weight_chunk<std::int8_t> {
  static constexpr int values = 16;
  __device__ static void widen(const uint4& bits, float (&out)[values]) {
    const auto* quads = reinterpret_cast<const char4*>(&bits);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[4 * i] = static_cast<float>(quads[i].x);
      out[4 * i + 1] = static_cast<float>(quads[i].y);
      out[4 * i + 2] = static_cast<float>(quads[i].z);
      out[4 * i + 3] = static_cast<float>(quads[i].w);
    }
  }
};

// Note [widening by bits]: the 8-bit chunks above widen through conversion instructions (I2F for
// int8; cvt e4m3x2 -> f16x2, then f16 -> f32 for fp8); sm_90 issues the general conversions at a
// quarter of the FMA rate (16 a clock an SM). int8_by_bits widens the same int8 codes exactly
// with a byte permute and an add: a code c, biased to the unsigned byte c + 128 (xor 0x80),
// placed under the exponent of 2^23 is the float 2^23 + c + 128; subtracting 2^23 + 128 leaves
// c. Measured in ch16:gemv_int8_weights: 85.8 -> 74.8 us (H200, 2026-11-29). The same idea for
// e4m3 (the byte's sign and 7 bits placed at fp32 bits 31 and 26..20, a value 2^-120 times the
// code's, the 2^120 applied to the row's sum) took three integer operations a value and measured
// 73.6 against the conversions' 71.3 us in the same run: fp8 keeps the conversions.
struct int8_by_bits {
  std::int8_t code;
};

template <>
struct weight_chunk<int8_by_bits> {
  static constexpr int values = 16;
  __device__ static void widen(const uint4& bits, float (&out)[values]) {
    const unsigned words[4] = {bits.x, bits.y, bits.z, bits.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const unsigned biased = words[w] ^ 0x80808080u;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        // Result bytes: the biased code, 0x00, 0x00, 0x4b: the float 2^23 + code + 128.
        out[4 * w + b] = __uint_as_float(__byte_perm(biased, 0x4b000000u, 0x7540u + b)) - 8388736.0f;
      }
    }
  }
};

// Streaming 16-byte load that does not allocate in L1 (Note [one warp a row]).
[[nodiscard]] __device__ uint4 load_streaming(const uint4* address) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(address));
  return v;
}

// Eight consecutive values of x from one 16-byte load.
__device__ void load_x8(const __nv_bfloat16* x, int first, float* out) {
  const uint4 bits = __ldg(reinterpret_cast<const uint4*>(x + first));
  const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&bits);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 two = __bfloat1622float2(pairs[i]);
    out[2 * i] = two.x;
    out[2 * i + 1] = two.y;
  }
}

struct gemv_args {
  const void* w = nullptr;  // (rows, k) of the kernel's Weight type
  const float* scale = nullptr;  // (rows,) or null
  float code_scale = 1.0f;       // the weights' codes times this are their values (int8: 1 / 127)
  const __nv_bfloat16* x = nullptr;
  __nv_bfloat16* y = nullptr;
  std::int64_t rows = 0;
  int k = 0;
};

// The arguments of the pair's buffers: weights `weights` (rows, k), x, y; per-channel scales from
// the input `scale` when named; codes times `code_scale` are the weights' values.
[[nodiscard]] inline gemv_args gemv_args_of(run_context& ctx, const char* weights, const char* scale = nullptr,
                                            double code_scale = 1.0) {
  AISP_EXPECTS(ctx.param("k") <= 0x7fffffff, "k must fit a 32-bit index");
  gemv_args a;
  a.w = ctx.buffer(weights);
  a.scale = scale != nullptr ? ctx.as<const float>(scale) : nullptr;
  a.code_scale = static_cast<float>(1.0 / code_scale);
  a.x = ctx.as<const __nv_bfloat16>("x");
  a.y = ctx.as<__nv_bfloat16>("y");
  a.rows = ctx.param("rows");
  a.k = static_cast<int>(ctx.param("k"));
  return a;
}

[[nodiscard]] __device__ float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__device__ void store_row(const gemv_args& a, std::int64_t row, float sum) {
  if (threadIdx.x % 32 == 0) {
    const float value = sum * a.code_scale;
    a.y[row] = __float2bfloat16_rn(a.scale != nullptr ? value * a.scale[row] : value);
  }
}

// sum += chunk c of a weight row (its 16 bytes in `bits`) . the matching values of x.
template <class Weight>
__device__ void accumulate_chunk(const uint4& bits, const __nv_bfloat16* x, int c, float& sum) {
  using chunk = weight_chunk<Weight>;
  float weights[chunk::values];
  chunk::widen(bits, weights);
  float xs[chunk::values];
#pragma unroll
  for (int part = 0; part < chunk::values / 8; ++part) load_x8(x, c * chunk::values + part * 8, xs + part * 8);
#pragma unroll
  for (int i = 0; i < chunk::values; ++i) sum = fmaf(weights[i], xs[i], sum);
}

// Whether the chunked kernels apply: k % values_per_chunk == 0, 16-byte aligned rows and x.
template <class Weight>
[[nodiscard]] bool takes_chunks(const gemv_args& a) {
  return a.k % weight_chunk<Weight>::values == 0 && reinterpret_cast<std::uintptr_t>(a.w) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(a.x) % 16 == 0;
}

// Note [one warp a row]; needs takes_chunks.
template <class Weight>
__global__ void __launch_bounds__(gemv_block_threads) gemv_chunked_kernel(gemv_args a) {
  const std::int64_t row = std::int64_t{blockIdx.x} * gemv_rows_per_block + threadIdx.x / 32;
  if (row >= a.rows) return;  // the whole warp leaves together
  const int lane = static_cast<int>(threadIdx.x % 32);
  const auto* w_row = reinterpret_cast<const uint4*>(static_cast<const Weight*>(a.w) + row * a.k);
  const int chunks = a.k / weight_chunk<Weight>::values;
  float sum = 0.0f;
#pragma unroll gemv_unroll
  for (int c = lane; c < chunks; c += 32) accumulate_chunk<Weight>(load_streaming(w_row + c), a.x, c, sum);
  store_row(a, row, warp_sum(sum));
}

// Note [persistent rows]; needs takes_chunks. A step is Ring chunks of a lane's row (chunks lane
// + 32 j, j = the step's first .. + Ring - 1); a row takes `steps` of them. WholeSteps: 32 x Ring
// divides the row's chunks (the benchmark rows), so no slot's math needs a bounds test;
// otherwise the last step is ragged and each slot is tested. MinBlocks caps the registers so that
// MinBlocks x 8 warps x Ring x 512 bytes stay in flight an SM: uncapped, ptxas hoists every
// slot's loads of x (120-145 registers), and with the refills unguarded it spilled at the cap;
// the warp-uniform test of `more` keeps each refill where it is.
template <class Weight, int Ring, int MinBlocks, bool WholeSteps>
__global__ void __launch_bounds__(gemv_block_threads, MinBlocks) gemv_ring_kernel(gemv_args a) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warps = static_cast<int>(gridDim.x) * gemv_rows_per_block;
  const int rows = static_cast<int>(a.rows);  // launch_gemv_ring checks that it fits
  int row = static_cast<int>(blockIdx.x) * gemv_rows_per_block + static_cast<int>(threadIdx.x / 32);
  if (row >= rows) return;  // the whole warp leaves together
  const int chunks = a.k / weight_chunk<Weight>::values;  // a row's 16-byte chunks, and its stride
  const int steps = ((chunks + 31) / 32 + Ring - 1) / Ring;
  // This lane's chunk u of a step is at step_src(row, step) + 32 u.
  const auto step_src = [&](int r, int step) {
    return static_cast<const uint4*>(a.w) + std::int64_t{r} * chunks + lane + 32 * Ring * step;
  };
  const auto valid = [&](int step, int u) { return WholeSteps || lane + 32 * (step * Ring + u) < chunks; };
  uint4 ring[Ring] = {};
#pragma unroll
  for (int u = 0; u < Ring; ++u) {
    if (valid(0, u)) ring[u] = load_streaming(step_src(row, 0) + 32 * u);
  }
  float sum = 0.0f;
  for (int step = 0;;) {
    // The step whose loads refill the ring: the next of this row, or the first of the next row.
    int next_step = step + 1;
    int next_row = row;
    if (next_step == steps) {
      next_step = 0;
      next_row += warps;
    }
    const bool more = next_row < rows;
    const uint4* refill = step_src(next_row, next_step);
    const int first_chunk = lane + 32 * Ring * step;
#pragma unroll
    for (int u = 0; u < Ring; ++u) {
      if (valid(step, u)) accumulate_chunk<Weight>(ring[u], a.x, first_chunk + 32 * u, sum);
      if (more && valid(next_step, u)) ring[u] = load_streaming(refill + 32 * u);
    }
    if (next_step == 0) {
      store_row(a, row, warp_sum(sum));  // the next row's loads are already in flight
      sum = 0.0f;
      if (!more) break;
    }
    row = next_row;
    step = next_step;
  }
}

[[nodiscard]] __device__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
[[nodiscard]] __device__ float to_float(__nv_fp8_e4m3 v) { return static_cast<float>(v); }
[[nodiscard]] __device__ float to_float(std::int8_t v) { return static_cast<float>(v); }
[[nodiscard]] __device__ float to_float(int8_by_bits v) { return static_cast<float>(v.code); }

// Any k and alignment: one element a lane a step (the validation sizes' ragged shapes).
template <class Weight>
__global__ void __launch_bounds__(gemv_block_threads) gemv_scalar_kernel(gemv_args a) {
  const std::int64_t row = std::int64_t{blockIdx.x} * gemv_rows_per_block + threadIdx.x / 32;
  if (row >= a.rows) return;
  const Weight* w_row = static_cast<const Weight*>(a.w) + row * a.k;
  float sum = 0.0f;
  for (int i = static_cast<int>(threadIdx.x % 32); i < a.k; i += 32) sum = fmaf(to_float(w_row[i]), __bfloat162float(a.x[i]), sum);
  store_row(a, row, warp_sum(sum));
}

template <class Weight>
void launch_gemv_chunked(const gemv_args& a, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((a.rows + gemv_rows_per_block - 1) / gemv_rows_per_block);
  if (takes_chunks<Weight>(a)) {
    gemv_chunked_kernel<Weight><<<blocks, gemv_block_threads, 0, stream>>>(a);
  } else {
    gemv_scalar_kernel<Weight><<<blocks, gemv_block_threads, 0, stream>>>(a);
  }
  AISP_CHECK_LAUNCH();
}

// Launches a persistent GEMV kernel (Note [persistent rows]): one resident wave of blocks, fewer
// for a short matrix. The occupancy is cached a process (as device_sm_count: a worker runs on one
// device).
template <auto Kernel>
void launch_resident(const gemv_args& a, cudaStream_t stream) {
  AISP_EXPECTS(a.rows < (std::int64_t{1} << 30), "the ring kernel's row counters (row + warps) are 32-bit");
  static const std::int64_t resident_blocks = [] {
    int per_sm = 0;
    AISP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, gemv_block_threads, 0));
    AISP_EXPECTS(per_sm >= 1, "a GEMV block must fit on an SM");
    return std::int64_t{per_sm} * device_sm_count();
  }();
  const auto row_blocks = (a.rows + gemv_rows_per_block - 1) / gemv_rows_per_block;
  Kernel<<<static_cast<unsigned>(std::min(row_blocks, resident_blocks)), gemv_block_threads, 0, stream>>>(a);
}

template <class Weight, int Ring, int MinBlocks>
void launch_gemv_ring(const gemv_args& a, cudaStream_t stream) {
  if (!takes_chunks<Weight>(a)) {
    const auto blocks = static_cast<unsigned>((a.rows + gemv_rows_per_block - 1) / gemv_rows_per_block);
    gemv_scalar_kernel<Weight><<<blocks, gemv_block_threads, 0, stream>>>(a);
  } else if (a.k / weight_chunk<Weight>::values % (32 * Ring) == 0) {
    launch_resident<gemv_ring_kernel<Weight, Ring, MinBlocks, true>>(a, stream);
  } else {
    launch_resident<gemv_ring_kernel<Weight, Ring, MinBlocks, false>>(a, stream);
  }
  AISP_CHECK_LAUNCH();
}

}  // namespace
}  // namespace aisp::ch16

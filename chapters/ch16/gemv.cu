// gemv: the decode step's matrix-vector product in bf16, y = W x with W (rows, k) as nn.Linear
// stores it, fp32 accumulation, bf16 out. Two pairs: ch16:gemv_8192 (8192 x 8192, an attention
// projection of a 70B-class model) and ch16:gemv_28672 (28672 x 8192, its MLP up-projection).
// Baseline: the first version, a thread per output (each thread walks its own row).
// optimized_warp_row: a warp per row, 4 bytes (two bf16) a lane a step: coalesced.
// Optimized: a warp per row reading 16-byte chunks, four a lane in flight, weights streamed past
// L1 (Note [one warp a row] in gemv_kernels.cuh).
// The persistent ring kernel of ch16:gemv_fp8_weights (Note [persistent rows]) was measured here
// too: 166.4 against 168.4 us at 28672 rows, 56.0 against 55.3 at 8192 (H100 GPU-6a533c4a,
// 2026-11-27): within 1%, so the bf16 pairs keep the simpler kernel.
// Peer: cublasGemmEx with n = 1 (what torch.nn.functional.linear runs for a vector): cuBLAS's GEMV path.
// Why faster: every weight byte is used once, so the time is the bytes in flight and how many of
// each fetched sector are used: the first version's warp touches 32 rows at once (32 sectors a
// load, 2 bytes of each used now, the rest only if L1 still holds them); a warp a row uses every
// byte it fetches; 16-byte chunks put 4x more bytes in flight a load.
// H100: see README. Run: aisp bench run --targets ch16:gemv_8192 ch16:gemv_28672
#include <cuda_bf16.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "aisp/cublas_handle.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "gemv_kernels.cuh"

namespace aisp::ch16 {
namespace {

// Workload: w (rows, k), x (k), y (rows), bf16. The fewest bytes are the weights, 2 rows k (x and
// y are 1/rows of that): 128 MiB at 8192^2, ~45 us at the 3.0 TB/s copy ceiling; 448 MiB at
// 28672 x 8192, ~157 us. FLOPs 2 rows k: 1 FLOP/byte, bandwidth-bound.
// Tolerance: gemv_tolerance (gemv_kernels.cuh).

// ---- Baseline: a thread per output ----
// The first GEMV most people write (y[r] = dot(W[r, :], x) in a loop, one thread per r): no
// reduction across threads, and x is shared by all. Each thread's loads are sequential, but a
// warp's 32 loads fall in 32 rows k x 2 bytes apart: only L1 turns the 32 sectors a load into
// useful bytes later.
constexpr int thread_row_block_threads = 256;

__global__ void __launch_bounds__(thread_row_block_threads) gemv_thread_row_kernel(gemv_args a) {
  const std::int64_t row = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (row >= a.rows) return;
  const auto* w_row = static_cast<const __nv_bfloat16*>(a.w) + row * a.k;
  float sum = 0.0f;
  for (int i = 0; i < a.k; ++i) sum = fmaf(__bfloat162float(w_row[i]), __bfloat162float(a.x[i]), sum);
  a.y[row] = __float2bfloat16_rn(sum);
}

// ---- optimized_warp_row: a warp per row, two bf16 a lane a step ----
// Changed: the row's dot product is split over a warp's lanes and reduced with shuffles, so a
// warp load reads 128 consecutive bytes of one row: every fetched byte is used at once.
__global__ void __launch_bounds__(gemv_block_threads) gemv_bf16x2_kernel(gemv_args a) {
  const std::int64_t row = std::int64_t{blockIdx.x} * gemv_rows_per_block + threadIdx.x / 32;
  if (row >= a.rows) return;
  const auto* w_row = reinterpret_cast<const __nv_bfloat162*>(static_cast<const __nv_bfloat16*>(a.w) + row * a.k);
  const auto* x2 = reinterpret_cast<const __nv_bfloat162*>(a.x);
  float sum = 0.0f;
  for (int i = static_cast<int>(threadIdx.x % 32); i < a.k / 2; i += 32) {
    const float2 w = __bfloat1622float2(w_row[i]);
    const float2 x = __bfloat1622float2(x2[i]);
    sum = fmaf(w.x, x.x, fmaf(w.y, x.y, sum));
  }
  store_row(a, row, warp_sum(sum));
}

void launch_baseline(run_context& ctx) {
  const gemv_args a = gemv_args_of(ctx, "w");
  gemv_thread_row_kernel<<<static_cast<unsigned>((a.rows + thread_row_block_threads - 1) / thread_row_block_threads),
                           thread_row_block_threads, 0, ctx.stream()>>>(a);
  AISP_CHECK_LAUNCH();
}

void launch_warp_row(run_context& ctx) {
  const gemv_args a = gemv_args_of(ctx, "w");
  const auto blocks = static_cast<unsigned>((a.rows + gemv_rows_per_block - 1) / gemv_rows_per_block);
  if (a.k % 2 == 0) {
    gemv_bf16x2_kernel<<<blocks, gemv_block_threads, 0, ctx.stream()>>>(a);
  } else {
    gemv_scalar_kernel<__nv_bfloat16><<<blocks, gemv_block_threads, 0, ctx.stream()>>>(a);
  }
  AISP_CHECK_LAUNCH();
}

// ---- Optimized: 16-byte chunks, four a lane in flight, weights past L1 ----
// Changed: each lane loads 16 bytes of its row (8 weights) and the matching 16 bytes of x, four
// such chunks unrolled; weights are read with ld.global.nc.L1::no_allocate.
void launch_optimized(run_context& ctx) { launch_gemv_chunked<__nv_bfloat16>(gemv_args_of(ctx, "w"), ctx.stream()); }

// ---- Peer: cuBLAS, n = 1 ----
// cublasGemmEx with n = 1, as PyTorch's F.linear calls it on a vector: cuBLAS's heuristics take
// its GEMV kernels there, which beat an autotuned cuBLASLt matmul with n = 1 (68.7 against 49.8 us
// at 8192 x 8192 on an H100, README). y (rows) = op(A) x with A = W read as a column-major
// (k, rows) matrix and op = T.
void setup_cublas(run_context& ctx) {
  const auto& blas = make_state<cublas_handle>(ctx);
  AISP_CUBLAS_CHECK(cublasSetStream(blas.handle, ctx.stream()));
  AISP_CUBLAS_CHECK(cublasSetMathMode(blas.handle, CUBLAS_DEFAULT_MATH));
}

void run_cublas(run_context& ctx) {
  const std::int64_t rows = ctx.param("rows");
  const std::int64_t k = ctx.param("k");
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  AISP_EXPECTS(rows <= int_max && k <= int_max, "cublasGemmEx takes int dimensions");
  const float alpha = 1.0f;
  const float beta = 0.0f;  // y is written, never read
  AISP_CUBLAS_CHECK(cublasGemmEx(state_of<cublas_handle>(ctx).handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), 1,
                                 static_cast<int>(k), &alpha, ctx.buffer("w"), CUDA_R_16BF, static_cast<int>(k), ctx.buffer("x"),
                                 CUDA_R_16BF, static_cast<int>(k), &beta, ctx.buffer("y"), CUDA_R_16BF, static_cast<int>(rows),
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

[[nodiscard]] variant cublas_peer() {
  variant peer;
  peer.name = "peer_cublas";
  peer.summary = "cublasGemmEx with n = 1 (bf16, CUBLAS_COMPUTE_32F): cuBLAS's GEMV path, as PyTorch's F.linear takes it";
  peer.run = run_cublas;
  peer.setup = setup_cublas;
  peer.teardown = [](run_context& ctx) { release_state<cublas_handle>(ctx); };
  peer.library = "cuBLAS";
  return peer;
}

void gemv_reference(reference_io& io) {
  const auto rows = static_cast<std::size_t>(io.param("rows"));
  const auto k = static_cast<std::size_t>(io.param("k"));
  const std::span<const double> w = io.input("w");
  const std::span<const double> x = io.input("x");
  const std::span<double> y = io.output("y");
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (std::size_t i = 0; i < k; ++i) sum += w[r * k + i] * x[i];
    y[r] = sum;
  }
}

[[nodiscard]] pair gemv_pair(std::int64_t rows, std::int64_t k) {
  pair declared = pair("ch16:gemv_" + std::to_string(rows))
      .summary("decode GEMV y = W x in bf16, W " + std::to_string(rows) + " x " + std::to_string(k) +
               ": a thread a row -> a warp a row -> 16-byte chunks in flight, against cuBLAS")
      .benchmark_size({{"rows", rows}, {"k", k}})
      .validation_size({{"rows", 1}, {"k", 1}})
      .validation_size({{"rows", 7}, {"k", 3}})
      .validation_size({{"rows", 65}, {"k", 33}})
      .validation_size({{"rows", 33}, {"k", 1024}})
      .validation_size({{"rows", 9}, {"k", 8200}})  // 1025 chunks: a lane with one more
      .validation_size({{"rows", 1000}, {"k", 8}})  // one chunk a row
      .held_out_size({{"rows", 301}, {"k", 2056}})
      .input("w", dtype::bf16, {"rows", "k"})
      .input("x", dtype::bf16, {"k"})
      .output("y", dtype::bf16, {"rows"})
      .work([](const workload& w) {
        const double weights = static_cast<double>(w.get("rows") * w.get("k"));
        return work_amount{.bytes = 2.0 * (weights + static_cast<double>(w.get("k") + w.get("rows"))),
                           .flops = 2.0 * weights};
      })
      .reference(gemv_reference)
      .tolerance_override(gemv_tolerance)
      .tag("inference")
      .tag("decode")
      .add_variant("baseline", "a thread per output row, walking the row", launch_baseline)
      .add_variant("optimized_warp_row", "a warp per row, two bf16 (4 bytes) a lane a step, shuffle reduction",
                   launch_warp_row)
      .add_variant("optimized", "a warp per row, 16-byte chunks, four a lane in flight, weights past L1",
                   launch_optimized)
      .add_variant(cublas_peer());
  if (rows * k <= 8192LL * 8192)
    declared.short_calls("a decode GEMV of 128 MiB of weights takes ~41 us on an H200, under the 50 us timer floor; a warm L2 holds "
                         "at most a third of the weights, which stream from HBM either way");
  return declared;
}

}  // namespace
}  // namespace aisp::ch16

AISP_REGISTER(aisp::ch16::gemv_pair(8192, 8192));
AISP_REGISTER(aisp::ch16::gemv_pair(28672, 8192));

// sgemm: C (M, N) = A (M, K) @ B (K, N), fp32 row-major, fp32 accumulate: the classic SGEMM
// worklog, one variant per step, and cuBLASLt's fp32 GEMM (no TF32) as the peer.
// Baseline: naive, one thread per C element, lanes along M (uncoalesced), the usual first try.
// Steps: lanes along N (coalesced) -> 32 x 32 shared-memory tiles -> 128 x 128 block tiles with
// 8 x 8 register tiles -> float4 loads, A transposed in shared memory -> warp tiling with
// conflict-free fragments, a padded A tile and a double-buffered (cp.async) k loop.
// Why faster: each step raises the FFMAs per byte moved through the level that limited the
// previous one (DRAM/L2 sectors, then L1, then shared-memory instructions, then latency), until
// the last one is bound by FFMA issue: ~47 TFLOP/s of the 65.5 measured FP32 peak. H100: see
// README_sgemm.part.md. Kernels: sgemm_kernels.cuh.
// Run: aisp bench run --targets ch09:sgemm
#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <limits>

#include "aisp/check.hpp"
#include "aisp/cublaslt_plan.hpp"
#include "aisp/cublas_check.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "sgemm_kernels.cuh"

namespace aisp::ch09 {
namespace {

// Workload: a (m, k), b (k, n) fp32 inputs uniform in [-1, 1); c (m, n) fp32 output.
// Napkin math at m = n = k = 4096: FLOPs = 2 m n k = 137.4 GFLOP; bytes = 4 (mk + kn + mn) =
// 201 MB, 67 us at 3.0 TB/s. Arithmetic intensity 683 FLOP/byte, ~30x the H100's FP32 ridge
// (65.5 TFLOP/s / 3.0 TB/s = 22): compute-bound once data is reused on chip. Floor at the
// measured FFMA peak: 137.4 GFLOP / 65.5 TFLOP/s = 2.10 ms; cuBLASLt reaches ~51 TFLOP/s
// (2.7 ms). The naive baseline is bound by L1/L2 traffic instead: ~275 ms (its A rows are
// 16 KiB apart at K = 4096 and alias in the caches; at 4093 x 4097 x 4095 it takes ~83 ms).
//
// Note [sgemm tolerance]: every variant sums each output's K products in fp32, one rounding
// per FFMA, in an order other than the fp64 reference's (ours: k = 0..K-1 in sequence; cuBLAS:
// its own). With a, b uniform in [-1, 1), E[(ab)^2] = 1/9, so the running sum s_k is a random
// walk with E[s_k^2] = k / 9 and |c| ~ sqrt(K / 9) (21 at K = 4096). Step k rounds by at most
// half an ulp of s_k, an rms of ~u |s_k| (u = 2^-24), independently, so the error of one output
// has sigma ~ u sqrt(sum_k k / 9) = u K / sqrt(18) = 5.8e-5 at K = 4096 (measured on H100: max
// |err| over the 16.8M outputs 3.5e-4, i.e. ~6 sigma, the expected extreme). Two kernels with
// different orders differ by up to sqrt(2) x that. atol = 1e-3 is ~3x the worst element at
// 4096^3 against fp64 and ~2x the worst expected kernel-vs-kernel difference; at the
// validation sizes (K <= 257, sigma <= 4e-6) it is still ~250x smaller than the typical product
// |ab| ~ 0.25, so a dropped or doubled term is caught. The error does not scale with |c|, so
// rtol stays at the fp32 default. rel-L2 = sigma / rms(c) = u sqrt(K / 2) = 2.7e-6 at
// K = 4096 (measured 1.1e-6): the fp32 default 1e-5 holds with ~4x headroom.
//
// Note [small-integer inputs]: with integers in [-8, 8] every product is an integer of at most
// 64 and every partial sum at most 64 K = 262,144 < 2^24 at K = 4096: all exact in fp32 in any
// order, so every variant (cuBLAS included) is bitwise exact and the pair declares exact_math.

[[nodiscard]] gemm_args args_of(run_context& ctx) {
  const std::int64_t m = ctx.param("m");
  const std::int64_t n = ctx.param("n");
  const std::int64_t k = ctx.param("k");
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  // The kernels index with 32-bit ints: every matrix must have fewer than 2^31 elements.
  AISP_EXPECTS(m * k <= int_max && k * n <= int_max && m * n <= int_max,
               "sgemm kernels index with int: each matrix needs < 2^31 elements");
  return {ctx.as<const float>("a"), ctx.as<const float>("b"), ctx.as<float>("c"),
          static_cast<int>(m),      static_cast<int>(n),      static_cast<int>(k)};
}

template <void (*Launch)(const gemm_args&, cudaStream_t)>
void run_step(run_context& ctx) {
  Launch(args_of(ctx), ctx.stream());
}

// ---- Peer: cuBLASLt fp32 GEMM, CUBLAS_COMPUTE_32F (full fp32 FFMA math, no TF32) ----
// cuBLASLt is column-major. Row-major C (m, n) = A B is column-major C^T (n, m) = B^T A^T, and
// a row-major (r, c) matrix read as column-major is its (c, r) transpose: so pass B as the
// first operand (n, k; ld n), A as the second (k, m; ld k), and C as (n, m; ld n). No copies.
constexpr std::size_t cublas_workspace_bytes = std::size_t{32} << 20;

// C^T (n, m) = B^T (n, k) A^T (k, m) in column-major terms: cuBLASLt's A is b, its B is a.
void setup_cublas(run_context& ctx) {
  const std::int64_t m = ctx.param("m");
  const std::int64_t n = ctx.param("n");
  const std::int64_t k = ctx.param("k");
  auto& plan = make_state<cublaslt_plan>(ctx, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  plan.layout_a = cublaslt_plan::column_major(CUDA_R_32F, n, k, n);  // B^T: (n, k), ld n
  plan.layout_b = cublaslt_plan::column_major(CUDA_R_32F, k, m, k);  // A^T: (k, m), ld k
  plan.layout_c = cublaslt_plan::column_major(CUDA_R_32F, n, m, n);  // C^T: (n, m), ld n
  plan.allocate_workspace(cublas_workspace_bytes);
  // Fixed for every timed call (K6): the fastest of cuBLASLt's top candidates on these operands.
  plan.autotune_algorithm(ctx, {ctx.buffer("b"), ctx.buffer("a"), plan.workspace, cublas_workspace_bytes},
                          "this fp32 shape");
}

void run_cublas(run_context& ctx) {
  const auto& plan = state_of<cublaslt_plan>(ctx);
  const float alpha = 1.0f;
  const float beta = 0.0f;  // C is written, never read
  float* const c = ctx.as<float>("c");
  AISP_CUBLAS_CHECK(cublasLtMatmul(plan.handle, plan.desc, &alpha, ctx.as<const float>("b"),
                                   plan.layout_a, ctx.as<const float>("a"),
                                   plan.layout_b, &beta, c, plan.layout_c, c,
                                   plan.layout_c, &plan.algo, plan.workspace,
                                   cublas_workspace_bytes, ctx.stream()));
}

void teardown_cublas(run_context& ctx) { release_state<cublaslt_plan>(ctx); }

[[nodiscard]] variant cublas_peer() {
  variant peer;
  peer.name = "peer_cublas";
  peer.summary = "cuBLASLt fp32 matmul, CUBLAS_COMPUTE_32F (no TF32), autotuned over the top 16 heuristic "
                 "algorithms";
  peer.run = run_cublas;
  peer.setup = setup_cublas;
  peer.teardown = teardown_cublas;
  peer.library = "cuBLAS";
  return peer;
}

}  // namespace
}  // namespace aisp::ch09

AISP_REGISTER(
    aisp::pair("ch09:sgemm")
        .summary("fp32 SGEMM worklog: naive -> coalesced -> smem tiles -> register tiles -> "
                 "float4 -> warp tiles, against cuBLASLt fp32")
        .benchmark_size({{"m", 4096}, {"n", 4096}, {"k", 4096}})
        .validation_size({{"m", 1}, {"n", 1}, {"k", 1}})
        .validation_size({{"m", 7}, {"n", 5}, {"k", 3}})
        .validation_size({{"m", 65}, {"n", 33}, {"k", 17}})
        .validation_size({{"m", 130}, {"n", 66}, {"k", 40}})
        .held_out_size({{"m", 509}, {"n", 383}, {"k", 257}})
        .input("a", aisp::dtype::f32, {"m", "k"})
        .input("b", aisp::dtype::f32, {"k", "n"})
        .output("c", aisp::dtype::f32, {"m", "n"})
        .exact_math()  // see Note [small-integer inputs]
        .work(aisp::kit::matmul_work(sizeof(float)))  // fp32 a, b and c
        .reference(aisp::kit::matmul_reference)
        .tolerance_override(aisp::tolerance{
            .rtol = 1e-5,
            .atol = 1e-3,
            .max_rel_l2 = 1e-5,
            .reason = "fp32 K-term dot products summed in another order than the fp64 "
                      "reference: per-output error sigma ~ 2^-24 K / sqrt(18) = 5.8e-5 at "
                      "K = 4096 (max over 16.8M outputs measured 3.5e-4); atol 1e-3, rel-L2 "
                      "~2^-24 sqrt(K/2) = 2.7e-6 under 1e-5 (see Note [sgemm tolerance])"})
        .tag("sgemm")
        .tag("register-tiling")
        .tag("warp-tiling")
        .add_variant("baseline",
                     "naive: one thread per C element, lanes along M (strided A loads and C "
                     "stores)",
                     aisp::ch09::run_step<aisp::ch09::launch_naive>)
        .add_variant("optimized_coalesced",
                     "lanes along N: B loads and C stores 128 contiguous bytes per warp, A a "
                     "broadcast",
                     aisp::ch09::run_step<aisp::ch09::launch_coalesced>)
        .add_variant("optimized_smem_tiles",
                     "32 x 32 shared-memory tiles of A and B: each global element loaded once "
                     "per block, not once per thread",
                     aisp::ch09::run_step<aisp::ch09::launch_smem_tiles>)
        .add_variant("optimized_register_tiles",
                     "128 x 128 block tile, 8 x 8 C tile per thread in registers: 4 FFMAs per "
                     "shared-memory load instead of 0.5",
                     aisp::ch09::run_step<aisp::ch09::launch_register_tiles>)
        .add_variant("optimized_vectorized",
                     "float4 global loads, A transposed into shared memory, LDS.128 fragment "
                     "reads: 4 shared loads per 64 FFMAs instead of 16",
                     aisp::ch09::run_step<aisp::ch09::launch_vectorized>)
        .add_variant("optimized_warp_tiling",
                     "128 x 256 x 32 block, 32 x 128 warp tiles of 4 x 4 lane fragments (8 x 16 "
                     "per thread): conflict-free LDS.128, padded A, 2-stage k loop, cp.async B",
                     aisp::ch09::run_step<aisp::ch09::launch_warp_tiles>)
        .add_variant(aisp::ch09::cublas_peer()));

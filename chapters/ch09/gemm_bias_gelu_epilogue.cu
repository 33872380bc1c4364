// gemm_bias_gelu_epilogue: D = gelu(A @ B + bias), A (M, K) and B (K, N) bf16, D (M, N) fp32.
// Baseline: cuBLASLt matmul writes A @ B to D, then a bias + GELU kernel reads D and rewrites it.
// Optimized: cuBLASLt with CUBLASLT_EPILOGUE_GELU_BIAS: bias and GELU applied to the fp32
// accumulators in registers before the one store of D.
// Why faster: at M = N = 8192, K = 1024 the GEMM is ~137 GFLOP (~250 us at the ~550 TFLOP/s
// cuBLASLt reaches at this shape) and D is 256 MiB. The separate epilogue reads and rewrites D:
// 512 MiB, ~170 us at 3.0 TB/s. Fused, it is a few FMAs and a tanh per element on registers,
// hidden under the GEMM: ~1.65x.
// H100: see README.
// Run: aisp bench run --targets ch09:gemm_bias_gelu_epilogue
#include <cublasLt.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "aisp/check.hpp"
#include "aisp/cublaslt_plan.hpp"
#include "aisp/cublas_check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::ch09 {
namespace {

// Workload: A (M, K) bf16 row-major, B (K, N) bf16 row-major, bias (N,) fp32, D (M, N) fp32
// row-major. bf16 inputs with fp32 accumulate in both variants: the harness fills A and B as bf16
// and the reference reads those exact values, so there is no precision change between variants.
// GELU is the tanh form that cuBLASLt's epilogue uses:
//   gelu(t) = 0.5 t (1 + tanh(sqrt(2 / pi) (t + 0.044715 t^3))).
// Napkin math: FLOPs = 2 M N K (+ ~10 M N for the epilogue, not counted). Fewest bytes: A and B
// read once, D written once: 2 M K + 2 K N + 4 M N + 4 N. At 8192 x 8192 x 1024: 137 GFLOP and
// 288 MiB; at the ~790 TFLOP/s bf16 peak ~175 us, and storing D alone takes ~90 us of HBM time:
// at K = 1024 the output is a large share of the GEMM's own cost. The unfused epilogue adds
// 2 x 256 MiB of pure traffic.
//
// Note [row-major through cuBLASLt]: cuBLASLt is column-major. A row-major (M, N) matrix is the
// column-major (N, M) one with the same bytes, so D^T = B^T A^T is computed column-major with
// m' = N, n' = M: the "A" operand is the B buffer as (N, K), ld N; the "B" operand is the A
// buffer as (K, M), ld K; D is (N, M), ld N. cuBLASLt's bias has one value per row of its D,
// i.e. per column n of the row-major D: what a linear layer's bias is.
//
// Note [gemm epilogue tolerance]: two errors, the same in kind for both variants. (1) The K-sum
// in fp32 (bf16 products are exact in fp32): each add rounds by <= 2^-24 of partial sums of size
// ~sqrt(K / 9), so ~sqrt(K) x 2^-24 x sqrt(K / 9): ~5e-6 at the held-out K = 263, and relative to
// outputs of that size. (2) GELU: the baseline uses tanhf (2 ulps); cuBLASLt's epilogue evaluates
// the same formula with a faster tanh, measured on an H100 (cuBLASLt 13) at up to 6e-6 absolute
// from the fp64 formula, largest near y ~ -0.1 where a relative bound allows little. atol 3e-5 and
// rtol 1e-4 hold both with a >= 5x margin at the validation and held-out sizes; at the benchmark
// size (K = 1024) the two variants were measured 5.6e-6 apart. The relative L2 bound is the rtol:
// a one-element size is a single relative error, and with random seeds (issue 15) a 1x1x1 output
// of 0.146 came out 2.8e-6 from fp64 (1.9e-5 relative, H100, 2026-11-26), over the 1e-5 it had.

constexpr std::size_t workspace_bytes = std::size_t{32} << 20;  // split-K / stream-K scratch
constexpr std::uint32_t block_threads = 256;
constexpr std::uint32_t vectors_per_thread = 4;  // 64 bytes of loads in flight per thread
constexpr std::uint32_t vectors_per_block = vectors_per_thread * block_threads;

// The matmul plan (aisp/cublaslt_plan.hpp): autotuned and fixed in setup (K6: no retuning while
// timed), each variant for its own epilogue. Pointers to the harness's buffers are set again in run().
void build_plan(run_context& ctx, cublasLtEpilogue_t epilogue) {
  const std::int64_t m = ctx.param("m");
  const std::int64_t n = ctx.param("n");
  const std::int64_t k = ctx.param("k");
  auto& plan = make_state<cublaslt_plan>(ctx, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                   &epilogue, sizeof(epilogue)));
  if (epilogue == CUBLASLT_EPILOGUE_GELU_BIAS) {
    const void* bias = ctx.buffer("bias");  // fp32: the bias type defaults to D's type
    AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                     &bias, sizeof(bias)));
  }
  // Note [row-major through cuBLASLt]: cuBLASLt's A is the b buffer, its B the a buffer.
  plan.layout_a = cublaslt_plan::column_major(CUDA_R_16BF, n, k, n);  // (N, K)
  plan.layout_b = cublaslt_plan::column_major(CUDA_R_16BF, k, m, k);  // (K, M)
  plan.layout_c = cublaslt_plan::column_major(CUDA_R_32F, n, m, n);   // D, (N, M)
  plan.allocate_workspace(workspace_bytes);
  // The tuning calls run this epilogue too: the bias pointer above is the harness's, valid now.
  plan.autotune_algorithm(ctx, {ctx.buffer("b"), ctx.buffer("a"), plan.workspace, workspace_bytes}, "this matmul");
}

void release_plan(run_context& ctx) { release_state<cublaslt_plan>(ctx); }

// D = A @ B (+ the plan's epilogue), on ctx.stream(). C = D with beta = 0: C is not read.
void run_matmul(run_context& ctx, bool with_bias) {
  auto& plan = state_of<cublaslt_plan>(ctx);
  if (with_bias) {  // the buffers may have moved since setup (the harness re-addresses them)
    const void* bias = ctx.buffer("bias");
    AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                     &bias, sizeof(bias)));
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  void* d = ctx.buffer("d");
  AISP_CUBLAS_CHECK(cublasLtMatmul(plan.handle, plan.desc, &alpha, ctx.buffer("b"), plan.layout_a,
                                   ctx.buffer("a"), plan.layout_b, &beta, d, plan.layout_c, d,
                                   plan.layout_c, &plan.algo, plan.workspace, workspace_bytes,
                                   ctx.stream()));
}

// ---- Baseline: plain matmul, then a bias + GELU kernel over D in place ----
// The kernel walks D as a flat array of float4s, one 16 KB tile per block (4 loads in flight per
// thread), the column of element e being e % N; the last block takes the M N % 4 tail. It is
// bandwidth-bound on its own: the cost is that D crosses HBM three times (GEMM store, kernel load
// and store).
[[nodiscard]] __device__ float gelu_tanh(float t) {
  constexpr float sqrt_2_over_pi = 0.7978845608028654f;
  return 0.5f * t * (1.0f + tanhf(sqrt_2_over_pi * fmaf(0.044715f * t, t * t, t)));
}

__global__ void bias_gelu_vec4_kernel(float* d, const float* __restrict__ bias,
                                      std::uint32_t num_elements, std::uint32_t cols) {
  const std::uint32_t num_vectors = num_elements / 4;
  const std::uint32_t first = blockIdx.x * vectors_per_block + threadIdx.x;
  auto* d4 = reinterpret_cast<float4*>(d);  // in place: one thread reads, then writes, an element
  float4 loaded[vectors_per_thread];
#pragma unroll
  for (std::uint32_t k = 0; k < vectors_per_thread; ++k) {
    const std::uint32_t v = first + k * block_threads;
    if (v < num_vectors) {
      loaded[k] = d4[v];
    }
  }
#pragma unroll
  for (std::uint32_t k = 0; k < vectors_per_thread; ++k) {
    const std::uint32_t v = first + k * block_threads;
    if (v < num_vectors) {
      const std::uint32_t col0 = (4 * v) % cols;
      float out[4] = {loaded[k].x, loaded[k].y, loaded[k].z, loaded[k].w};
#pragma unroll
      for (std::uint32_t j = 0; j < 4; ++j) {
        const std::uint32_t col = col0 + j < cols ? col0 + j : (4 * v + j) % cols;
        out[j] = gelu_tanh(out[j] + __ldg(bias + col));
      }
      d4[v] = make_float4(out[0], out[1], out[2], out[3]);
    }
  }
  const std::uint32_t tail = num_vectors * 4 + threadIdx.x;
  if (blockIdx.x == gridDim.x - 1 && tail < num_elements) {
    d[tail] = gelu_tanh(d[tail] + __ldg(bias + tail % cols));
  }
}

void setup_baseline(run_context& ctx) { build_plan(ctx, CUBLASLT_EPILOGUE_DEFAULT); }

void launch_baseline(run_context& ctx) {
  run_matmul(ctx, false);
  const std::int64_t num_elements = ctx.param("m") * ctx.param("n");
  AISP_EXPECTS(num_elements < (std::int64_t{1} << 31), "32-bit flat indices need M N < 2^31");
  auto* d = ctx.as<float>("d");
  AISP_EXPECTS(reinterpret_cast<std::uintptr_t>(d) % alignof(float4) == 0,
               "float4 accesses need a 16-byte aligned D");
  const std::int64_t blocks = std::max<std::int64_t>(
      1, (num_elements / 4 + vectors_per_block - 1) / vectors_per_block);
  bias_gelu_vec4_kernel<<<static_cast<unsigned int>(blocks), block_threads, 0, ctx.stream()>>>(
      d, ctx.as<const float>("bias"), static_cast<std::uint32_t>(num_elements),
      static_cast<std::uint32_t>(ctx.param("n")));
  AISP_CHECK_LAUNCH();
}

// ---- Optimized: bias + GELU in the GEMM's epilogue ----
// Changed: the same cuBLASLt matmul with CUBLASLT_EPILOGUE_GELU_BIAS. Each output tile gets
// bias and GELU in registers, between the fp32 accumulators and the one store of D: the
// separate kernel and its 2 x 4 M N bytes are gone.
void setup_optimized(run_context& ctx) { build_plan(ctx, CUBLASLT_EPILOGUE_GELU_BIAS); }

void launch_optimized(run_context& ctx) { run_matmul(ctx, true); }

// Both variants run cuBLASLt kernels (X6) in the same precision: bf16 in, fp32 accumulate and out.
[[nodiscard]] variant cublas_variant(std::string name, std::string summary, stage_fn setup,
                                     stage_fn run) {
  variant v;
  v.name = std::move(name);
  v.summary = std::move(summary);
  v.run = std::move(run);
  v.setup = std::move(setup);
  v.teardown = release_plan;
  v.library = "cuBLAS";
  v.math = math_unit::bf16_tensor;  // bf16 tensor cores: judged against that peak, not FP32
  return v;
}

}  // namespace
}  // namespace aisp::ch09

AISP_REGISTER(
    aisp::pair("ch09:gemm_bias_gelu_epilogue")
        .summary("D = gelu(A @ B + bias), bf16 in, fp32 out: cuBLASLt matmul + bias/GELU kernel "
                 "vs cuBLASLt GELU_BIAS epilogue")
        .benchmark_size({{"m", 8192}, {"n", 8192}, {"k", 1024}})
        .validation_size({{"m", 1}, {"n", 1}, {"k", 1}})
        .validation_size({{"m", 7}, {"n", 13}, {"k", 5}})
        .validation_size({{"m", 65}, {"n", 33}, {"k", 17}})
        .validation_size({{"m", 128}, {"n", 256}, {"k", 64}})
        .validation_size({{"m", 33}, {"n", 1003}, {"k", 65}})
        .held_out_size({{"m", 301}, {"n", 517}, {"k", 263}})
        .input("a", aisp::dtype::bf16, {"m", "k"})
        .input("b", aisp::dtype::bf16, {"k", "n"})
        .input("bias", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
        .output("d", aisp::dtype::f32, {"m", "n"})
        .work([](const aisp::workload& w) {
          const auto m = static_cast<double>(w.get("m"));
          const auto n = static_cast<double>(w.get("n"));
          const auto k = static_cast<double>(w.get("k"));
          return aisp::work_amount{.bytes = 2.0 * m * k + 2.0 * k * n + 4.0 * m * n + 4.0 * n,
                                   .flops = 2.0 * m * n * k};
        })
        .reference([](aisp::reference_io& io) {
          const auto m = static_cast<std::size_t>(io.param("m"));
          const auto n = static_cast<std::size_t>(io.param("n"));
          const auto k = static_cast<std::size_t>(io.param("k"));
          const std::span<const double> a = io.input("a");
          const std::span<const double> b = io.input("b");
          const std::span<const double> bias = io.input("bias");
          const std::span<double> d = io.output("d");
          const double sqrt_2_over_pi = std::sqrt(2.0 / std::acos(-1.0));
          for (std::size_t i = 0; i < m; ++i) {
            for (std::size_t j = 0; j < n; ++j) {
              double t = bias[j];
              for (std::size_t p = 0; p < k; ++p) {
                t += a[i * k + p] * b[p * n + j];
              }
              const double u = sqrt_2_over_pi * (t + 0.044715 * t * t * t);
              d[i * n + j] = 0.5 * t * (1.0 + std::tanh(u));
            }
          }
        })
        .tolerance_override(aisp::tolerance{
            .rtol = 1e-4,
            .atol = 3e-5,
            .max_rel_l2 = 1e-4,
            .reason = "fp32 K-sum (~sqrt(K) 2^-24 |partial sums|, ~5e-6 at K = 263) and "
                      "cuBLASLt's fast-tanh GELU epilogue (measured <= 6e-6 absolute from the "
                      "fp64 tanh formula near y ~ -0.1): atol 3e-5, rtol 1e-4, and a relative L2 "
                      "of 1e-4, the rtol (see Note [gemm epilogue tolerance])"})
        .tag("fusion")
        .tag("epilogue")
        .tag("gemm")
        .add_variant(aisp::ch09::cublas_variant(
            "baseline",
            "cuBLASLt bf16 matmul to fp32 D (autotuned over the top 16 heuristic algorithms), then "
            "a float4 bias + GELU kernel over D in place",
            aisp::ch09::setup_baseline, aisp::ch09::launch_baseline))
        .add_variant(aisp::ch09::cublas_variant(
            "optimized",
            "cuBLASLt matmul with CUBLASLT_EPILOGUE_GELU_BIAS: bias and GELU applied before the "
            "one store of D; autotuned over the top 16 heuristic algorithms",
            aisp::ch09::setup_optimized, aisp::ch09::launch_optimized)));

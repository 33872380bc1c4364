// GPU planted cheats of issue 15's classes: each tells one call from another and uses it.
// Class 1: a benchmark-size result precomputed in setup() or cached by address. Class 2: work on
// every 4th call, or only when y looks poisoned. Class 3: reading the workload's kind. Class 4:
// TF32 in an exact-math fp32 GEMM, chosen in setup() (a compute type, or the math mode), and a
// tensor unit declared (its higher FLOP ceiling) by a variant that runs fp32 FMAs.
// Class 5: a persisting-L2 window set outside run() (on the stream in setup(), or as a launch
// attribute). Each must be caught with its row's code; each honest baseline stays clean.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "aisp/cublas_check.hpp"
#include "aisp/cublaslt_plan.hpp"
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

constexpr std::int64_t benchmark_n = std::int64_t{1} << 24;

bool at_benchmark_size(const run_context& ctx) { return ctx.num_elements("x") == benchmark_n; }

// ---- Class 1, L3 / X2: a private copy of y made once, copied into y by later calls ----
struct kept_result {
  float* y = nullptr;
  bool filled = false;
  ~kept_result() { cudaFree(y); }
};

void make_kept(run_context& ctx, bool compute_now) {
  auto& kept = make_state<kept_result>(ctx);
  if (!at_benchmark_size(ctx)) return;
  AISP_CUDA_CHECK(cudaMalloc(&kept.y, static_cast<std::size_t>(benchmark_n) * sizeof(float)));
  if (!compute_now) return;
  affine_kernel<<<blocks_for(benchmark_n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), kept.y, benchmark_n, 0);
  AISP_CHECK_LAUNCH();
  AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  kept.filled = true;
}

void replay_kept(run_context& ctx) {
  auto& kept = state_of<kept_result>(ctx);
  if (kept.y == nullptr) return honest(ctx);
  if (!kept.filled) {  // the first call computes into the private copy
    affine_kernel<<<blocks_for(benchmark_n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), kept.y, benchmark_n, 0);
    AISP_CHECK_LAUNCH();
    kept.filled = true;
  }
  AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), kept.y, static_cast<std::size_t>(benchmark_n) * sizeof(float),
                                  cudaMemcpyDeviceToDevice, ctx.stream()));
}

// ---- Class 2, X7: every block works only when y[0] holds the harness's fp32 poison ----
__global__ void affine_when_poisoned(const float* x, float* y, std::int64_t n) {
  if (__float_as_uint(y[0]) != 0x7FC0DEADu && blockIdx.x != 0) return;
  __syncthreads();
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

void work_when_poisoned(run_context& ctx) {
  const std::int64_t n = ctx.num_elements("x");
  affine_when_poisoned<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), n);
  AISP_CHECK_LAUNCH();
}

// ---- Class 2, X1: at the benchmark size, one launch every 4th call ----
void every_fourth_call(run_context& ctx) {
  static unsigned long calls = 0;
  if (at_benchmark_size(ctx) && ++calls % 4 != 0) return;
  honest(ctx);
}

// ---- Class 3, K3: half the elements when the context says "benchmark" ----
void half_when_benchmarked(run_context& ctx) {
  const std::int64_t n = ctx.num_elements("x");
  const std::int64_t done = ctx.work().kind == workload_kind::benchmark && n > 1 ? n / 2 : n;
  affine_kernel<<<blocks_for(done), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"), done, 0);
  AISP_CHECK_LAUNCH();
}

// ---- Class 5, X4: a persisting-L2 window on x, set in setup() or passed as a launch attribute ----
cudaAccessPolicyWindow window_on_x(run_context& ctx) {
  cudaAccessPolicyWindow window{};
  window.base_ptr = ctx.buffer("x");
  window.num_bytes = std::min<std::size_t>(4u << 20, static_cast<std::size_t>(ctx.num_elements("x")) * sizeof(float));
  window.hitRatio = 1.0f;
  window.hitProp = cudaAccessPropertyPersisting;
  window.missProp = cudaAccessPropertyStreaming;
  return window;
}

void window_in_setup(run_context& ctx) {
  AISP_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 4u << 20));
  cudaStreamAttrValue value{};
  value.accessPolicyWindow = window_on_x(ctx);
  AISP_CUDA_CHECK(cudaStreamSetAttribute(ctx.stream(), cudaStreamAttributeAccessPolicyWindow, &value));
}

void clear_window(run_context& ctx) {
  cudaStreamAttrValue value{};
  cudaStreamSetAttribute(ctx.stream(), cudaStreamAttributeAccessPolicyWindow, &value);
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
}

void set_aside_in_setup(run_context&) { AISP_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 4u << 20)); }
void drop_set_aside(run_context&) { cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0); }

void launch_with_window(run_context& ctx) {
  const std::int64_t n = ctx.num_elements("x");
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeAccessPolicyWindow;
  attribute.val.accessPolicyWindow = window_on_x(ctx);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks_for(n));
  config.blockDim = dim3(block_threads);
  config.stream = ctx.stream();
  config.attrs = &attribute;
  config.numAttrs = 1;
  AISP_CUDA_CHECK(cudaLaunchKernelEx(&config, affine_kernel, ctx.as<const float>("x"), ctx.as<float>("y"), n, 0));
}

// ---- Class 4: an exact-math fp32 GEMM (C = A B, small integers) on cuBLAS ----
struct sgemm_state {
  cublasHandle_t handle = nullptr;
  cublaslt_plan* plan = nullptr;
  ~sgemm_state() {
    delete plan;
    if (handle != nullptr) cublasDestroy(handle);
  }
};

void check_blas(cublasStatus_t status) {
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS status " + std::to_string(static_cast<int>(status)));
}

void make_sgemm(run_context& ctx, bool tf32_math_mode) {
  auto& s = make_state<sgemm_state>(ctx);
  check_blas(cublasCreate(&s.handle));
  check_blas(cublasSetStream(s.handle, ctx.stream()));
  if (tf32_math_mode) check_blas(cublasSetMathMode(s.handle, CUBLAS_TF32_TENSOR_OP_MATH));
}

// Row-major C (m, n) = A (m, k) B (k, n): column-major C^T = B^T A^T.
void sgemm(run_context& ctx) {
  const auto m = static_cast<int>(ctx.param("m"));
  const auto n = static_cast<int>(ctx.param("n"));
  const auto k = static_cast<int>(ctx.param("k"));
  const float one = 1.0f;
  const float zero = 0.0f;
  check_blas(cublasSgemm(state_of<sgemm_state>(ctx).handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, ctx.as<const float>("b"), n,
                         ctx.as<const float>("a"), k, &zero, ctx.as<float>("c"), n));
}

void make_fast_tf32_plan(run_context& ctx) {
  auto& s = make_state<sgemm_state>(ctx);
  const auto m = ctx.param("m");
  const auto n = ctx.param("n");
  const auto k = ctx.param("k");
  s.plan = new cublaslt_plan(CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);
  s.plan->layout_a = cublaslt_plan::column_major(CUDA_R_32F, n, k, n);  // B^T
  s.plan->layout_b = cublaslt_plan::column_major(CUDA_R_32F, k, m, k);  // A^T
  s.plan->layout_c = cublaslt_plan::column_major(CUDA_R_32F, n, m, n);
  s.plan->allocate_workspace(32u << 20);
  s.plan->choose_algorithm(32u << 20, "fast-TF32 sgemm");
}

void lt_sgemm(run_context& ctx) {
  auto& plan = *state_of<sgemm_state>(ctx).plan;
  const float one = 1.0f;
  const float zero = 0.0f;
  AISP_CUBLAS_CHECK(cublasLtMatmul(plan.handle, plan.desc, &one, ctx.buffer("b"), plan.layout_a, ctx.buffer("a"), plan.layout_b,
                                   &zero, ctx.buffer("c"), plan.layout_c, ctx.buffer("c"), plan.layout_c, &plan.algo,
                                   plan.workspace, plan.workspace_bytes, ctx.stream()));
}

pair sgemm_pair(const std::string& name, const std::string& code, const std::string& what, variant cheat) {
  cheat.name = "optimized";
  cheat.summary = "planted cheat " + code + ": " + what;
  cheat.library = "cuBLAS";
  variant baseline = kit::with_state("baseline", "cublasSgemm, default (fp32) math", sgemm,
                                     [](run_context& ctx) { make_sgemm(ctx, false); }, release_state<sgemm_state>);
  baseline.library = "cuBLAS";
  return pair("cheats_gpu:" + name)
      .summary("planted cheat " + code + ": " + what)
      .tag("cheat:" + code)
      .benchmark_size({{"m", 2048}, {"n", 2048}, {"k", 2048}})
      .validation_size({{"m", 17}, {"n", 33}, {"k", 65}})
      .validation_size({{"m", 64}, {"n", 96}, {"k", 256}})
      .held_out_size({{"m", 40}, {"n", 24}, {"k", 136}})
      .input("a", dtype::f32, std::vector<std::string>{"m", "k"}, init_distribution::small_integers)
      .input("b", dtype::f32, std::vector<std::string>{"k", "n"}, init_distribution::small_integers)
      .output("c", dtype::f32, std::vector<std::string>{"m", "n"})
      .exact_math()  // small integers: every partial sum is an integer below 2^24
      .work([](const workload& w) {
        const auto m = static_cast<double>(w.get("m"));
        const auto n = static_cast<double>(w.get("n"));
        const auto k = static_cast<double>(w.get("k"));
        return work_amount{4.0 * (m * k + k * n + m * n), 2.0 * m * n * k};
      })
      .reference([](reference_io& io) {
        const auto m = static_cast<std::size_t>(io.param("m"));
        const auto n = static_cast<std::size_t>(io.param("n"));
        const auto k = static_cast<std::size_t>(io.param("k"));
        const auto a = io.input("a");
        const auto b = io.input("b");
        auto c = io.output("c");
        for (std::size_t i = 0; i < m; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            double total = 0;
            for (std::size_t p = 0; p < k; ++p) total += a[i * k + p] * b[p * n + j];
            c[i * n + j] = total;
          }
        }
      })
      .add_variant(std::move(baseline))
      .add_variant(std::move(cheat));
}

}  // namespace

AISP_REGISTER(gpu_fixture("l3_benchmark_result_computed_in_setup", "L3",
                          "computes the benchmark-size y in setup(), copies it in run()",
                          with_setup(replay_kept, [](run_context& ctx) { make_kept(ctx, true); }, release_state<kept_result>)));
AISP_REGISTER(gpu_fixture("x2_first_benchmark_result_replayed", "X2",
                          "keeps its first benchmark-size result in a private buffer and copies it after",
                          with_setup(replay_kept, [](run_context& ctx) { make_kept(ctx, false); }, release_state<kept_result>)));
AISP_REGISTER(gpu_fixture("x7_works_only_on_poisoned_output", "X7", "every block but one returns unless y[0] holds the poison",
                          plain(work_when_poisoned)));
AISP_REGISTER(gpu_fixture("x1_every_fourth_benchmark_call", "X1", "at the benchmark size, launches on every 4th call only",
                          plain(every_fourth_call)).tag("check:kernel-count").tag("check:timed-call"));
AISP_REGISTER(gpu_fixture("k3_reads_the_workload_kind", "K3", "does half the elements when the context says benchmark",
                          plain(half_when_benchmarked)));
AISP_REGISTER(gpu_fixture("x4_window_set_in_setup", "X4", "sets a persisting-L2 window on the stream in setup(), not in run()",
                          with_setup(honest, window_in_setup, clear_window)).tag("check:access-policy"));
AISP_REGISTER(gpu_fixture("x4_window_as_launch_attribute", "X4",
                          "launches with a persisting-L2 window attribute (set-aside made in setup())",
                          with_setup(launch_with_window, set_aside_in_setup, drop_set_aside)).tag("check:access-policy"));
AISP_REGISTER(gpu_fixture("v3_declares_fp8_runs_fp32", "V3", "declares the fp8 tensor unit (a 22x higher ceiling), runs fp32 FMAs", [] {
  auto cheat = plain(honest);
  cheat.math = math_unit::fp8_tensor;
  return cheat;
}()).tag("check:math-unit"));
AISP_REGISTER(gpu_fixture("w1_declares_bf16_runs_fp32", "W1", "declares the bf16 tensor unit, runs fp32 FMAs", [] {
  auto cheat = plain(honest);
  cheat.math = math_unit::bf16_tensor;
  return cheat;
}()).tag("check:math-unit"));
AISP_REGISTER(sgemm_pair("w2_fast_tf32_compute_type_in_setup", "W2",
                         "cuBLASLt with CUBLAS_COMPUTE_32F_FAST_TF32, chosen in setup()",
                         kit::with_state("", "", lt_sgemm, make_fast_tf32_plan, release_state<sgemm_state>)));
AISP_REGISTER(sgemm_pair("w1_tf32_math_mode_in_setup", "W1", "cublasSgemm after cublasSetMathMode(TF32) in setup()",
                         kit::with_state("", "", sgemm, [](run_context& ctx) { make_sgemm(ctx, true); },
                                         release_state<sgemm_state>)).tag("check:library-precision"));

}  // namespace aisp::cheats_gpu

// Planted cheats around a vendor library: a "custom" variant whose kernel is cuBLAS's (X6), and
// a variant that switches cuBLAS to TF32 inside run() (W2). y = 2x + 1 as copy(ones) + saxpy.
#include <cublas_v2.h>

#include <stdexcept>
#include <vector>

#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

struct blas_state {
  cublasHandle_t handle = nullptr;
  float* ones = nullptr;
};

void check_blas(cublasStatus_t status) {
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS status " + std::to_string(static_cast<int>(status)));
}

void make_blas(run_context& ctx) {
  auto* s = new blas_state;
  ctx.user_state() = s;
  check_blas(cublasCreate(&s->handle));
  check_blas(cublasSetStream(s->handle, ctx.stream()));
  const auto n = static_cast<std::size_t>(ctx.num_elements("x"));
  AISP_CUDA_CHECK(cudaMalloc(&s->ones, n * sizeof(float)));
  const std::vector<float> ones(n, 1.0f);
  AISP_CUDA_CHECK(cudaMemcpy(s->ones, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
}

void drop_blas(run_context& ctx) {
  auto& s = state_of<blas_state>(ctx);
  cublasDestroy(s.handle);
  cudaFree(s.ones);
  release_state<blas_state>(ctx);
}

void blas_affine(run_context& ctx) {
  auto& s = state_of<blas_state>(ctx);
  const auto n = static_cast<int>(ctx.num_elements("x"));
  const float two = 2.0f;
  check_blas(cublasScopy(s.handle, n, s.ones, 1, ctx.as<float>("y"), 1));
  check_blas(cublasSaxpy(s.handle, n, &two, ctx.as<const float>("x"), 1, ctx.as<float>("y"), 1));
}

}  // namespace

AISP_REGISTER(gpu_fixture("x6_custom_kernel_is_cublas", "X6", "claims its own kernel; runs cuBLAS copy + saxpy",
                          with_setup(blas_affine, make_blas, drop_blas)).tag("check:library-passthrough"));

AISP_REGISTER(gpu_fixture("w2_tf32_inside_run", "W2", "switches cuBLAS to TF32 tensor-op math inside run()", [] {
  auto cheat = with_setup(
      [](run_context& ctx) {
        check_blas(cublasSetMathMode(state_of<blas_state>(ctx).handle, CUBLAS_TF32_TENSOR_OP_MATH));
        blas_affine(ctx);
      },
      make_blas, drop_blas);
  cheat.library = "cuBLAS";  // declared: only the math-mode change is the cheat
  return cheat;
}()).tag("check:math-mode"));

}  // namespace aisp::cheats_gpu

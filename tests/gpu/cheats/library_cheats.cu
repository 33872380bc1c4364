// Planted cheats around a vendor library: a "custom" variant whose kernel is cuBLAS's (X6), and
// a variant that switches cuBLAS to TF32 inside run() (W2). y = 2x + 1 as copy(ones) + saxpy.
#include <cublas_v2.h>

#include <cstdio>
#include <stdexcept>
#include <string_view>
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

// Whether the last request buffered on the worker's stdin (the judge's, read by every call of
// its visit) said the visit is audited: `"audit":true` (Note [verified after the call]).
bool request_says_audited() {
  if (stdin->_IO_read_base == nullptr || stdin->_IO_read_end <= stdin->_IO_read_base) return false;
  const std::string_view buffered(stdin->_IO_read_base, static_cast<std::size_t>(stdin->_IO_read_end - stdin->_IO_read_base));
  const auto start = buffered.rfind("{\"");
  return start != std::string_view::npos && buffered.substr(start).find("\"audit\":true") != std::string_view::npos;
}

// cuBLAS made and called once in setup(), so that its modules are loaded before any sample
// (a first cuBLAS call in a timed sample fails module-load, L7).
void warm_blas(run_context& ctx) {
  make_blas(ctx);
  auto& s = state_of<blas_state>(ctx);
  const auto n = static_cast<int>(ctx.num_elements("x"));
  float* scratch = nullptr;  // not y: setup() may not write an output (L2)
  AISP_CUDA_CHECK(cudaMalloc(&scratch, static_cast<std::size_t>(n) * sizeof(float)));
  const float two = 2.0f;
  check_blas(cublasScopy(s.handle, n, s.ones, 1, scratch, 1));
  check_blas(cublasSaxpy(s.handle, n, &two, s.ones, 1, scratch, 1));
  AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  AISP_CUDA_CHECK(cudaFree(scratch));
}

// Its own kernel where the request says the visit is audited, cuBLAS everywhere else.
void cublas_when_unaudited(run_context& ctx) {
  if (request_says_audited()) {
    honest(ctx);
  } else {
    blas_affine(ctx);
  }
}

}  // namespace

AISP_REGISTER(gpu_fixture("x6_custom_kernel_is_cublas", "X6", "claims its own kernel; runs cuBLAS copy + saxpy",
                          with_setup(blas_affine, make_blas, drop_blas)).tag("check:library-passthrough"));

// X7 x X6: the audit's visits told apart by reading the request; the worker now draws which
// visits are audited after the request arrived, so nothing buffered says.
AISP_REGISTER(gpu_fixture("x6_cublas_unless_the_request_says_audited", "X6",
                          "reads its worker's stdin buffer; runs cuBLAS unless the request says the visit is audited",
                          with_setup(cublas_when_unaudited, warm_blas, drop_blas)).tag("check:library-passthrough"));

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

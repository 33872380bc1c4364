// The cuBLAS precision policy a variant asks for, in setup() or run() (W2: TF32 or a fast
// down-converting compute type switched on behind the pair's back). CUPTI sees CUDA calls, not
// cuBLAS's; so the executable defines the entry points that choose a precision itself. Every
// call from the binary's own code binds to these; each notes what it asked for and forwards to
// the real function, in the library Note [lazy cuBLAS] loads on first use. Binaries that never
// call cuBLAS never reach this.
#include <cstdint>
#include <string>

#include "audit/library_precision.hpp"
#include "support/cublas_library.hpp"

namespace aisp {
void note_math_mode_change();
}  // namespace aisp

namespace {

constexpr int not_initialized = 1;  // CUBLAS_STATUS_NOT_INITIALIZED

// cublasMath_t: CUBLAS_TENSOR_OP_MATH (1, deprecated: fast fp16) and CUBLAS_TF32_TENSOR_OP_MATH (3);
// the flag CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (16) does not change the inputs' precision.
const char* reduced_math_mode(int mode) {
  switch (mode & ~16) {
    case 1: return "cublasSetMathMode(CUBLAS_TENSOR_OP_MATH)";
    case 3: return "cublasSetMathMode(CUBLAS_TF32_TENSOR_OP_MATH)";
    default: return nullptr;
  }
}

// cublasComputeType_t values that let cuBLAS down-convert fp32 inputs.
const char* reduced_compute_type(int compute) {
  switch (compute) {
    case 74: return "CUBLAS_COMPUTE_32F_FAST_16F";
    case 75: return "CUBLAS_COMPUTE_32F_FAST_16BF";
    case 77: return "CUBLAS_COMPUTE_32F_FAST_TF32";
    default: return nullptr;
  }
}

template <class Fn>
Fn real(aisp::cublas_library library, const char* name) {
  return reinterpret_cast<Fn>(aisp::cublas_entry(library, name));
}

}  // namespace

extern "C" int cublasSetMathMode(void* handle, int mode) {
  using fn = int (*)(void*, int);
  static const auto forward = real<fn>(aisp::cublas_library::blas, "cublasSetMathMode");
  aisp::note_math_mode_change();
  if (const char* what = reduced_math_mode(mode)) aisp::note_library_precision(what);
  return forward != nullptr ? forward(handle, mode) : not_initialized;
}

extern "C" int cublasLtMatmulDescCreate(void** desc, int compute, int scale_type) {
  using fn = int (*)(void**, int, int);
  static const auto forward = real<fn>(aisp::cublas_library::blas_lt, "cublasLtMatmulDescCreate");
  if (const char* what = reduced_compute_type(compute)) aisp::note_library_precision(std::string("cublasLtMatmulDescCreate(") + what + ")");
  return forward != nullptr ? forward(desc, compute, scale_type) : not_initialized;
}

extern "C" int cublasGemmEx(void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* a,
                            int a_type, int lda, const void* b, int b_type, int ldb, const void* beta, void* c, int c_type,
                            int ldc, int compute, int algo) {
  using fn = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                     const void*, void*, int, int, int, int);
  static const auto forward = real<fn>(aisp::cublas_library::blas, "cublasGemmEx");
  if (const char* what = reduced_compute_type(compute)) aisp::note_library_precision(std::string("cublasGemmEx(") + what + ")");
  return forward != nullptr ? forward(handle, transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc,
                                      compute, algo)
                            : not_initialized;
}

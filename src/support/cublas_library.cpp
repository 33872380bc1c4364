// Note [lazy cuBLAS] (cublas_library.hpp): the loader, and the entry points the project calls.
#include "support/cublas_library.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

namespace aisp {
namespace {

struct opened {
  void* handle = nullptr;
  std::string error;
};

// The soname first (the executable's runpath, LD_LIBRARY_PATH, ld.so.cache, or a copy a
// library such as PyTorch has already loaded), then the toolkit's own directories.
opened open_library(const std::string& soname) {
  opened result;
  for (const std::string& path : {soname, "/usr/local/cuda/lib64/" + soname, "/usr/local/cuda/lib/" + soname}) {
    result.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (result.handle != nullptr) return result;
    if (result.error.empty()) result.error = dlerror();
  }
  return result;
}

const opened& library(cublas_library which) {
  static const opened blas = open_library("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
  static const opened blas_lt = open_library("libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR));
  return which == cublas_library::blas ? blas : blas_lt;
}

std::mutex error_mutex;
std::string last_error;

void note_error(const std::string& error) {
  const std::lock_guard lock(error_mutex);
  last_error = error;
}

}  // namespace

void* cublas_entry(cublas_library which, const char* name) {
  const opened& lib = library(which);
  if (lib.handle == nullptr) {
    note_error("cuBLAS could not be loaded: " + lib.error);
    return nullptr;
  }
  void* entry = dlsym(lib.handle, name);
  if (entry == nullptr) note_error(std::string("cuBLAS has no ") + name);
  return entry;
}

std::string cublas_library_error() {
  const std::lock_guard lock(error_mutex);
  return last_error;
}

}  // namespace aisp

namespace {

template <class Fn>
Fn entry(aisp::cublas_library library, const char* name) {
  return reinterpret_cast<Fn>(aisp::cublas_entry(library, name));
}

constexpr auto blas = aisp::cublas_library::blas;
constexpr auto blas_lt = aisp::cublas_library::blas_lt;

}  // namespace

// Each entry point as cuBLAS's headers declare it (a mismatch does not compile); where the library
// cannot be loaded it returns CUBLAS_STATUS_NOT_INITIALIZED, which every caller already checks.
#define AISP_CUBLAS_ENTRY(library, name, params, args)                              \
  extern "C" cublasStatus_t name params {                                            \
    static const auto real = entry<decltype(&name)>(library, #name);                 \
    return real != nullptr ? real args : CUBLAS_STATUS_NOT_INITIALIZED;              \
  }

AISP_CUBLAS_ENTRY(blas, cublasCreate_v2, (cublasHandle_t* handle), (handle))
AISP_CUBLAS_ENTRY(blas, cublasDestroy_v2, (cublasHandle_t handle), (handle))
AISP_CUBLAS_ENTRY(blas, cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
AISP_CUBLAS_ENTRY(blas, cublasSetWorkspace_v2, (cublasHandle_t handle, void* workspace, size_t bytes), (handle, workspace, bytes))
AISP_CUBLAS_ENTRY(blas, cublasSgeam,
                  (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, const float* alpha,
                   const float* a, int lda, const float* beta, const float* b, int ldb, float* c, int ldc),
                  (handle, transa, transb, m, n, alpha, a, lda, beta, b, ldb, c, ldc))
AISP_CUBLAS_ENTRY(blas, cublasSgemm_v2,
                  (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const float* alpha,
                   const float* a, int lda, const float* b, int ldb, const float* beta, float* c, int ldc),
                  (handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
AISP_CUBLAS_ENTRY(blas, cublasSaxpy_v2, (cublasHandle_t handle, int n, const float* alpha, const float* x, int incx, float* y, int incy),
                  (handle, n, alpha, x, incx, y, incy))
AISP_CUBLAS_ENTRY(blas, cublasScopy_v2, (cublasHandle_t handle, int n, const float* x, int incx, float* y, int incy),
                  (handle, n, x, incx, y, incy))
AISP_CUBLAS_ENTRY(blas, cublasGemmGroupedBatchedEx,
                  (cublasHandle_t handle, const cublasOperation_t transa_array[], const cublasOperation_t transb_array[],
                   const int m_array[], const int n_array[], const int k_array[], const void* alpha_array, const void* const a_array[],
                   cudaDataType_t a_type, const int lda_array[], const void* const b_array[], cudaDataType_t b_type,
                   const int ldb_array[], const void* beta_array, void* const c_array[], cudaDataType_t c_type, const int ldc_array[],
                   int group_count, const int group_size[], cublasComputeType_t compute_type),
                  (handle, transa_array, transb_array, m_array, n_array, k_array, alpha_array, a_array, a_type, lda_array, b_array,
                   b_type, ldb_array, beta_array, c_array, c_type, ldc_array, group_count, group_size, compute_type))

AISP_CUBLAS_ENTRY(blas_lt, cublasLtCreate, (cublasLtHandle_t* handle), (handle))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtDestroy, (cublasLtHandle_t handle), (handle))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatmul,
                  (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* a, cublasLtMatrixLayout_t a_layout,
                   const void* b, cublasLtMatrixLayout_t b_layout, const void* beta, const void* c, cublasLtMatrixLayout_t c_layout,
                   void* d, cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                   cudaStream_t stream),
                  (handle, desc, alpha, a, a_layout, b, b_layout, beta, c, c_layout, d, d_layout, algo, workspace, workspace_bytes, stream))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatmulAlgoConfigGetAttribute,
                  (const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attr, void* buf, size_t size, size_t* written),
                  (algo, attr, buf, size, written))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatmulAlgoGetHeuristic,
                  (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                   cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t preference, int requested,
                   cublasLtMatmulHeuristicResult_t results[], int* returned),
                  (handle, desc, a, b, c, d, preference, requested, results, returned))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatmulDescSetAttribute,
                  (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* buf, size_t size), (desc, attr, buf, size))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t* preference), (preference))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t preference), (preference))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatmulPreferenceSetAttribute,
                  (cublasLtMatmulPreference_t preference, cublasLtMatmulPreferenceAttributes_t attr, const void* buf, size_t size),
                  (preference, attr, buf, size))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatrixLayoutCreate,
                  (cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld), (layout, type, rows, cols, ld))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatrixLayoutGetAttribute,
                  (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, void* buf, size_t size, size_t* written),
                  (layout, attr, buf, size, written))
AISP_CUBLAS_ENTRY(blas_lt, cublasLtMatrixLayoutSetAttribute,
                  (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const void* buf, size_t size), (layout, attr, buf, size))

// The status names, for messages: the library's own, or the enumerator's name where it is not loaded.
extern "C" const char* cublasLtGetStatusName(cublasStatus_t status) {
  static const auto real = entry<decltype(&cublasLtGetStatusName)>(blas_lt, "cublasLtGetStatusName");
  return real != nullptr ? real(status) : "CUBLAS_STATUS_NOT_INITIALIZED";
}
extern "C" const char* cublasLtGetStatusString(cublasStatus_t status) {
  static const auto real = entry<decltype(&cublasLtGetStatusString)>(blas_lt, "cublasLtGetStatusString");
  if (real != nullptr) return real(status);
  static thread_local std::string why;
  why = aisp::cublas_library_error();
  return why.c_str();
}

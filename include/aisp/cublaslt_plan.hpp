// A cuBLASLt matmul planned once in setup() and replayed in run(): the handle, the operation
// descriptor, the three layouts and the algorithm cuBLASLt's heuristic picked for a workspace
// limit (fixed before timing: K6). Host-only; owners keep it in variant state (RAII).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "aisp/check.hpp"
#include "aisp/cublas_check.hpp"

namespace aisp {

class cublaslt_plan {
 public:
  // The descriptor: accumulate in `compute`, alpha and beta of `scale` type.
  cublaslt_plan(cublasComputeType_t compute, cudaDataType_t scale) {
    AISP_CUBLAS_CHECK(cublasLtCreate(&handle));
    AISP_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, compute, scale));
  }
  cublaslt_plan(const cublaslt_plan&) = delete;
  cublaslt_plan& operator=(const cublaslt_plan&) = delete;
  ~cublaslt_plan() {  // release statuses are dropped: nobody is left to tell
    if (workspace != nullptr) static_cast<void>(cudaFree(workspace));
    if (layout_c != nullptr) static_cast<void>(cublasLtMatrixLayoutDestroy(layout_c));
    if (layout_b != nullptr) static_cast<void>(cublasLtMatrixLayoutDestroy(layout_b));
    if (layout_a != nullptr) static_cast<void>(cublasLtMatrixLayoutDestroy(layout_a));
    if (desc != nullptr) static_cast<void>(cublasLtMatmulDescDestroy(desc));
    if (handle != nullptr) static_cast<void>(cublasLtDestroy(handle));
  }

  // A column-major (rows, cols) layout with leading dimension `ld`, as cuBLASLt sees a matrix.
  [[nodiscard]] static cublasLtMatrixLayout_t column_major(cudaDataType_t type, std::int64_t rows,
                                                           std::int64_t cols, std::int64_t ld) {
    cublasLtMatrixLayout_t layout = nullptr;
    AISP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows),
                                                 static_cast<std::uint64_t>(cols), ld));
    return layout;
  }

  // Device scratch for split-K / stream-K algorithms, owned by the plan (setup() only).
  void allocate_workspace(std::size_t bytes) {
    AISP_CUDA_CHECK(cudaMalloc(&workspace, bytes));
    workspace_bytes = bytes;
  }

  // The heuristic's first algorithm for these layouts (C and D share layout_c) within
  // `workspace_bytes`; `reduction_mask` != 0 also limits split-K reductions to those schemes.
  // A shape with no algorithm is a contract error naming `what`.
  void choose_algorithm(std::size_t workspace_bytes, const std::string& what, std::uint32_t reduction_mask = 0) {
    cublasLtMatmulPreference_t preference = nullptr;
    AISP_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    cublasLtMatmulHeuristicResult_t heuristic{};
    int returned = 0;
    const cublasStatus_t status = [&] {
      cublasStatus_t set = cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                &workspace_bytes, sizeof(workspace_bytes));
      if (set == CUBLAS_STATUS_SUCCESS && reduction_mask != 0)
        set = cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                   &reduction_mask, sizeof(reduction_mask));
      if (set != CUBLAS_STATUS_SUCCESS) return set;
      return cublasLtMatmulAlgoGetHeuristic(handle, desc, layout_a, layout_b, layout_c, layout_c, preference, 1,
                                            &heuristic, &returned);
    }();
    static_cast<void>(cublasLtMatmulPreferenceDestroy(preference));
    AISP_CUBLAS_CHECK(status);
    AISP_EXPECTS(returned >= 1 && heuristic.state == CUBLAS_STATUS_SUCCESS, "cuBLASLt has no algorithm for " + what);
    algo = heuristic.algo;
  }

  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout_a = nullptr;  // cuBLASLt's A, B and C/D (column-major)
  cublasLtMatrixLayout_t layout_b = nullptr;
  cublasLtMatrixLayout_t layout_c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

}  // namespace aisp

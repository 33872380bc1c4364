// A cuBLASLt matmul planned once in setup() and replayed in run(): the handle, the operation
// descriptor, the three layouts and the algorithm, fixed before timing (K6). A library peer is
// the library at its best, not its first guess: autotune_algorithm() times the heuristic's top
// candidates on the real operands and keeps the fastest. Host-only; owners keep it in variant
// state (RAII).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "aisp/candidate_timer.hpp"
#include "aisp/check.hpp"
#include "aisp/cublas_check.hpp"
#include "aisp/run_context.hpp"

namespace aisp {

// What autotune_algorithm() kept: the winner's configuration (cublasLtMatmulAlgoConfigGetAttribute)
// and how it won. Times are the fastest of a few calls each, in seconds.
struct cublaslt_choice {
  int algo_id = 0;
  unsigned tile_id = 0;
  unsigned stages_id = 0;
  unsigned cluster_shape_id = 0;
  int split_k = 0;
  unsigned reduction_scheme = 0;
  unsigned swizzle = 0;
  unsigned custom_option = 0;
  int heuristic_rank = 0;  // 1: the heuristic's first guess
  int offered = 0;         // candidates the heuristic returned
  int timed = 0;           // of those, the ones cuBLASLt ran
  double winner_s = 0;
  double first_s = 0;      // the first guess's time; 0 when it did not run
};

// One line for run_context::note(), within max_note_value_chars whatever the values.
[[nodiscard]] std::string describe(const cublaslt_choice& choice);

// What a tuning call reads: cuBLASLt's A and B as run() passes them, and run()'s workspace.
struct cublaslt_operands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

class cublaslt_plan {
 public:
  // The heuristic candidates autotune_algorithm() asks for: at least the top 8 wherever cuBLASLt
  // has that many.
  static constexpr int autotune_candidates = 16;
  // Note [autotune margin] (aisp/candidate_timer.hpp).
  static constexpr double autotune_margin = aisp::autotune_margin;
  [[nodiscard]] static constexpr bool displaces(double challenger_s, double holder_s) {
    return autotune_displaces(challenger_s, holder_s);
  }
  // The key of the note autotune_algorithm() leaves in the variant's result.
  static constexpr const char* note_key = "cublaslt_algorithm";

  // The descriptor: accumulate in `compute`, alpha and beta of `scale` type.
  cublaslt_plan(cublasComputeType_t compute, cudaDataType_t scale) : scale_type(scale) {
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

  // The same, repeated `batches` times `stride` elements apart (a strided batched matmul).
  [[nodiscard]] static cublasLtMatrixLayout_t batched_column_major(cudaDataType_t type, std::int64_t rows, std::int64_t cols,
                                                                   std::int64_t ld, std::int32_t batches, std::int64_t stride) {
    const cublasLtMatrixLayout_t layout = column_major(type, rows, cols, ld);
    AISP_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batches, sizeof(batches)));
    AISP_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
    return layout;
  }

  // Note [TN through cuBLASLt] (labs/gemm/bf16_gemm.cu): C (m, n) = A (m, k) B (n, k)^T with every
  // matrix row-major is cuBLASLt's TN GEMM: its A is our B as (k, n) with TRANSA = T, its B our A
  // as (k, m), and C and D (n, m). Sets TRANSA and the three layouts; run() then passes our b as
  // cuBLASLt's A and our a as its B.
  void use_row_major_tn(cudaDataType_t operands, cudaDataType_t out, std::int64_t m, std::int64_t n, std::int64_t k) {
    const cublasOperation_t transpose = CUBLAS_OP_T;
    AISP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
    layout_a = column_major(operands, k, n, k);
    layout_b = column_major(operands, k, m, k);
    layout_c = column_major(out, n, m, n);
  }

  // Device scratch for split-K / stream-K algorithms, owned by the plan (setup() only).
  void allocate_workspace(std::size_t bytes) {
    AISP_CUDA_CHECK(cudaMalloc(&workspace, bytes));
    workspace_bytes = bytes;
  }

  // The heuristic's first algorithm for these layouts (C and D share layout_c) within
  // `workspace_bytes`; `reduction_mask` != 0 also limits split-K reductions to those schemes.
  // A shape with no algorithm is a contract error naming `what`.
  void choose_algorithm(std::size_t workspace_bytes, const std::string& what, std::uint32_t reduction_mask = 0);

  // setup(): the heuristic's top autotune_candidates algorithms (same limits as above), each run
  // twice, then timed over a few calls on ctx.stream() with `operands`; the fastest becomes
  // `algo`, and ctx.note(note_key, describe(choice)) records it. The tuning calls write only a
  // D the plan allocates for them and frees (beta = 0, so C = D is never read): setup() leaves
  // the harness's outputs alone. Pointers set on `desc` (an epilogue's bias) must be valid.
  // A candidate cuBLASLt refuses is skipped; none running is a contract error naming `what`.
  const cublaslt_choice& autotune_algorithm(run_context& ctx, const cublaslt_operands& operands,
                                            const std::string& what, std::uint32_t reduction_mask = 0);

  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout_a = nullptr;  // cuBLASLt's A, B and C/D (column-major)
  cublasLtMatrixLayout_t layout_b = nullptr;
  cublasLtMatrixLayout_t layout_c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  cublaslt_choice choice;  // set by autotune_algorithm()
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  cudaDataType_t scale_type;
};

}  // namespace aisp

// AISP_CUBLAS_CHECK: a failed cuBLASLt call throws with the call, the status name and the place.
#pragma once

#include <cublasLt.h>

#include <string>

#include "aisp/check.hpp"

#define AISP_CUBLAS_CHECK(expr)                                                                      \
  do {                                                                                               \
    const cublasStatus_t aisp_blas_status_ = (expr);                                                 \
    if (aisp_blas_status_ != CUBLAS_STATUS_SUCCESS) {                                                \
      ::aisp::throw_contract_error(#expr, std::string("cuBLASLt: ") +                                \
                                              cublasLtGetStatusString(aisp_blas_status_),            \
                                   __FILE__, __LINE__);                                              \
    }                                                                                                \
  } while (0)

// A cuBLAS handle a library peer keeps in its variant state (make_state<cublas_handle>(ctx) in
// setup(), state_of<cublas_handle>(ctx).handle in run(), release_state<cublas_handle> in teardown).
#pragma once

#include <cublas_v2.h>

#include "aisp/cublas_check.hpp"

namespace aisp {

struct cublas_handle {
  cublas_handle() { AISP_CUBLAS_CHECK(cublasCreate(&handle)); }
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;
  ~cublas_handle() { static_cast<void>(cublasDestroy(handle)); }  // nobody is left to tell
  cublasHandle_t handle = nullptr;
};

}  // namespace aisp

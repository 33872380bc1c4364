// GPU tests skip, visibly, where no GPU is usable; ctest then reports them as skipped.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>

#include "hw/system_info.hpp"

namespace aisp::testing {

inline bool gpu_usable(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    why = ::aisp::gpu_absence_reason(status);  // the words `aisp info` uses
    return false;
  }
  return true;
}

}  // namespace aisp::testing

#define AISP_REQUIRE_GPU()                                                        \
  do {                                                                            \
    std::string aisp_why_not;                                                     \
    if (!::aisp::testing::gpu_usable(aisp_why_not)) GTEST_SKIP() << "no GPU: " << aisp_why_not; \
  } while (0)

// Error checks used by the harness and by every pair file.
// AISP_CUDA_CHECK throws; library code never calls exit().
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace aisp {

// A CUDA runtime failure, with where it happened and which call failed.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// A broken precondition: a bug or a misconfiguration, never a measurement.
class contract_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expression, const char* file,
                                   int line);
[[noreturn]] void throw_contract_error(const char* condition, const std::string& message,
                                       const char* file, int line);

}  // namespace aisp

#define AISP_CUDA_CHECK(expr)                                          \
  do {                                                                 \
    const cudaError_t aisp_status_ = (expr);                           \
    if (aisp_status_ != cudaSuccess) {                                 \
      ::aisp::throw_cuda_error(aisp_status_, #expr, __FILE__, __LINE__); \
    }                                                                  \
  } while (0)

// Every launcher ends with this: a bad launch configuration must never pass silently (X8).
#define AISP_CHECK_LAUNCH() AISP_CUDA_CHECK(cudaGetLastError())

#define AISP_EXPECTS(cond, message)                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      ::aisp::throw_contract_error(#cond, (message), __FILE__, __LINE__);   \
    }                                                                        \
  } while (0)

#include "aisp/check.hpp"

#include <fmt/format.h>

namespace aisp {

void throw_cuda_error(cudaError_t code, const char* expression, const char* file, int line) {
  throw cuda_error(code, fmt::format("{}:{}: {} ({}): {}", file, line, cudaGetErrorName(code),
                                     cudaGetErrorString(code), expression));
}

void throw_contract_error(const char* condition, const std::string& message, const char* file,
                          int line) {
  throw contract_error(fmt::format("{}:{}: {} [{}]", file, line, message, condition));
}

}  // namespace aisp

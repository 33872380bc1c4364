// What a variant sees: the workload, the harness-owned buffers and the stream to run on.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string_view>

#include "aisp/dtype.hpp"
#include "aisp/workload.hpp"

namespace aisp {

class run_context {
 public:
  virtual ~run_context() = default;

  [[nodiscard]] virtual const workload& work() const = 0;
  // The stream every launch must use; nullptr for host pairs.
  [[nodiscard]] virtual cudaStream_t stream() const = 0;
  // Throws contract_error for an undeclared name.
  [[nodiscard]] virtual void* buffer(std::string_view name) const = 0;
  [[nodiscard]] virtual std::int64_t num_elements(std::string_view name) const = 0;
  [[nodiscard]] virtual dtype buffer_type(std::string_view name) const = 0;
  // Per-variant state made in setup() and read in run(), e.g. a plan or a cuBLAS handle.
  [[nodiscard]] virtual void*& user_state() = 0;

  template <class T>
  [[nodiscard]] T* as(std::string_view name) const {
    return static_cast<T*>(buffer(name));
  }
  [[nodiscard]] std::int64_t param(std::string_view name) const { return work().get(name); }
};

}  // namespace aisp

// What a variant sees: the workload, the harness-owned buffers and the stream to run on.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "aisp/dtype.hpp"
#include "aisp/workload.hpp"

namespace aisp {

// Bounds of run_context::note(): a variant describes a choice, it does not log, and one worker's
// reply to the judge stays small whatever a variant writes.
inline constexpr std::size_t max_notes = 4;
inline constexpr std::size_t max_note_key_chars = 40;
inline constexpr std::size_t max_note_value_chars = 256;
inline constexpr std::size_t max_recorded_metrics = 4;
inline constexpr std::size_t max_recorded_values = 4096;

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
  // Records what setup() chose, e.g. the algorithm a library peer autotuned to, in the variant's
  // result (results.json: `variants[].notes.<key>`). The benchmark-size setup's notes are kept;
  // a key noted again is replaced. Keys are [a-z0-9_], values printable ASCII, within the bounds
  // above; anything else is a contract_error.
  virtual void note(std::string_view key, std::string_view value) = 0;
  // Note [recorded metrics]: what one call of run() measured of each item it served (a request's
  // time to first token, in seconds). The judge pools a variant's values over its timed calls at
  // the benchmark size and reports their p50 and p99 with bootstrap CIs (results.json:
  // `variants[].recorded.<metric>`), and their mean. A name ending in `_s` is a time in seconds;
  // any other is a count (`accepted_drafts`). Metric names as note keys; at most max_recorded_metrics
  // names, max_recorded_values values a call; finite values only (else a contract_error).
  virtual void record(std::string_view metric, double value) = 0;
  // Note [witnessed deliveries]: the next output of each item named (an item named twice: its
  // next two) is ready for its client now, as a server would stream it. The judge stamps the
  // time itself once this stream's work is done, reads those outputs as they are (each must be
  // what the call ends with), and records each item's `tpot_s` and, where the pair declares
  // arrivals, `ttft_s` from its stamps. Only in a pair that declares pair::delivers(), and only
  // for outputs the item has, once each, after it arrived: else a contract_error.
  virtual void deliver(std::span<const int> items) = 0;
  void deliver(int item) { deliver(std::span<const int>(&item, 1)); }

  // Note [ranks]: a multi-GPU pair (pair::world_size) runs one worker per rank, each on its own
  // GPU with its own buffers; the harness made the NCCL communicator (an ncclComm_t) before
  // setup(). A single-GPU or host pair is rank 0 of 1, with no communicator.
  [[nodiscard]] virtual int rank() const { return 0; }
  [[nodiscard]] virtual int world_size() const { return 1; }
  [[nodiscard]] virtual void* communicator() const { return nullptr; }

  template <class T>
  [[nodiscard]] T* as(std::string_view name) const {
    return static_cast<T*>(buffer(name));
  }
  [[nodiscard]] std::int64_t param(std::string_view name) const { return work().get(name); }
};

}  // namespace aisp

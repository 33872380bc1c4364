// Note [witnessed deliveries]: the judge's own clock on a serving pair's outputs, in the worker.
//
// A pair judged by a latency its run() records (judge_by_recorded: a request's time per output
// token) was judged by whatever run() wrote: a variant that recorded half its real TPOT read 2x
// faster with every check passed. A pair that declares pair::delivers() hands each output over
// with run_context::deliver() instead, and the witness:
// - stamps the time itself, after the variant's stream has finished its work (so an output's
//   stamp is never before the kernels that make it are done);
// - reads the delivered outputs there and then, and compares them with what the call ends with:
//   an output delivered before it was made (a stamp taken early) held something else then;
// - refuses an output delivered before its item arrived, twice, or that the item does not have,
//   and a call that ends with an item's outputs undelivered (whose latency would go unseen, as a
//   starved request's would);
// - records each item's `tpot_s` ((last - first stamp) / (outputs - 1)) and, with declared
//   arrivals, `ttft_s` (first stamp - arrival), which run() itself may no longer record.
// Every failure is a contract_error naming the item and the output. Nothing allocates inside a
// call: the per-item state and the output's host copy are sized when the workload is loaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include <cuda_runtime_api.h>

#include "aisp/pair.hpp"
#include "harness/buffer_store.hpp"
#include "harness/recorded_metrics.hpp"

namespace aisp {

class delivery_witness {
 public:
  // For `spec` at `work`; `stream` is null for a host pair (its buffers are host memory).
  delivery_witness(const delivery_spec& spec, const workload& work, const buffer_store& buffers, cudaStream_t stream);

  // A call of run() begins: its clock starts and nothing is delivered yet.
  void begin_call();
  // run_context::deliver.
  void deliver(std::span<const int> items);
  // After run() returned: the outputs as delivered against the call's last, every item complete,
  // and the witnessed metrics added to `into`.
  void end_call(recorded_metrics& into);

 private:
  struct snapshot {
    std::int64_t element = 0;
    std::uint64_t bits = 0;  // the element's bytes when it was delivered
    int item = 0;
    int index = 0;
  };
  // The output's elements [first, last] copied to the host mirror (a host pair's are read in place).
  void read_range(std::int64_t first, std::int64_t last);
  [[nodiscard]] std::uint64_t bits_at(std::int64_t element) const;
  [[nodiscard]] const owned_buffer& output() const { return buffers_.find(spec_.output); }

  const delivery_spec& spec_;
  const workload& work_;
  const buffer_store& buffers_;
  cudaStream_t stream_;
  std::size_t element_bytes_;
  std::vector<int> outputs_;      // each item's output count
  std::vector<double> arrival_s_;  // empty where the pair declares none
  std::vector<int> delivered_;
  std::vector<double> first_s_;
  std::vector<double> last_s_;
  std::vector<snapshot> snapshots_;
  std::vector<unsigned char> mirror_;  // the device output's bytes, read in ranges
  std::chrono::steady_clock::time_point call_start_;
};

}  // namespace aisp

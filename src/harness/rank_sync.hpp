// Note [ranks]: what the harness itself does across the ranks of a multi-GPU pair, through the
// communicator it made: start every rank's sample together, and agree on the counts that must
// match (a rank making one more call than its peers would wait in that call's collective forever).
#pragma once

#include <cuda_runtime_api.h>

#include "aisp/nccl.hpp"

namespace aisp {

class rank_sync {
 public:
  // On the current device: a small buffer of its own for the collectives below.
  explicit rank_sync(ncclComm_t comm);
  ~rank_sync();
  rank_sync(const rank_sync&) = delete;
  rank_sync& operator=(const rank_sync&) = delete;

  // A barrier on `stream`: work enqueued after it starts once every rank has reached it. The
  // sampler puts it just before the start event, so every rank's window opens together and the
  // slowest rank's window is the sample (D4).
  void barrier(cudaStream_t stream);
  // The largest of every rank's `value`; waits for it.
  [[nodiscard]] long long agree_max(long long value, cudaStream_t stream);

 private:
  ncclComm_t comm_;
  long long* device_value_ = nullptr;
};

}  // namespace aisp

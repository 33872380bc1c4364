// The launch gate of the device sampler (Note [launch gate]).
#pragma once

#include <cuda_runtime_api.h>

namespace aisp {

// Note [launch gate]: after the cold flush and a device synchronize the GPU is idle, so a sample
// window opened by a start event and then a launch counted the host's launch latency and any
// host work of run() before its first launch (ch16:gemv_fp8_weights's ring kernel: 61 us under
// ncu, a 76 us median of cold samples, one H200 2026-12-02). As nvbench does,
// the sampler first enqueues a kernel that spins until the host opens the gate, then the start
// event, run()'s work and the stop event; the host opens the gate once all of it is queued, and
// the GPU runs the window back to back. A run() that waits for the GPU itself (a serving loop, a
// host copy) would wait on the gate forever: the gate opens by itself after `timeout_ms`, reports
// that it did, and the sampler takes that sample again ungated and stops gating the session (its
// samples keep the launch latency, as every sample did before). Off by default (`bench run
// --launch-gate`): a pair that teaches launch overhead (ch01:batched_launches, ch01:graph_chain,
// labs/decode:cuda_graph_step) measures the host's launches on purpose, and a gated window would
// run its queued launches back to back.
class launch_gate {
 public:
  explicit launch_gate(double timeout_ms = 200.0);
  ~launch_gate();
  launch_gate(const launch_gate&) = delete;
  launch_gate& operator=(const launch_gate&) = delete;

  // Enqueues the spinning kernel on `stream` (closed until open() or the timeout).
  void close(cudaStream_t stream);
  // Lets the kernel end: the work queued behind it runs.
  void open();
  // After the stream synchronized: whether the last close() ended by its timeout.
  [[nodiscard]] bool timed_out() const;

 private:
  double timeout_ms_;
  volatile int* host_flags_ = nullptr;  // {open, timed out}, mapped into the device's address space
  int* device_flags_ = nullptr;
};

}  // namespace aisp

// The launch gate of the device sampler (Note [launch gate]).
#pragma once

#include <cuda_runtime_api.h>

namespace aisp {

// Note [launch gate]: after the cold flush and a device synchronize the GPU is idle, so a sample
// window opened by a start event and then a launch counted the host's launch latency and any
// host work of run() before its first launch (ch16:gemv_fp8_weights's ring kernel: 61 us under
// ncu, a 72-76 us median of cold samples; 61.6 us gated, H200 2026-12-02). As nvbench does, the
// sampler first enqueues a kernel that spins until the host opens the gate, then the start
// event, run()'s work and the stop event; the host opens the gate once all of it is queued, and
// the GPU runs the window back to back. On by default (`bench run --no-launch-gate` turns it off).
// What the gate must not open:
// - A run() that waits for the GPU itself (a serving loop, a synchronous copy) would wait on the
//   gate forever: the gate opens by itself after `timeout_ms` and reports it; the sampler takes
//   that sample again ungated and stops gating the variant.
// - Host work the gate would hide: where the host took longer to queue a sample than the GPU to
//   run it, the sampler does the same (the host, not the GPU, bounds that call).
// - Work run() put on a stream of its own runs while the gate holds the window: the audit counts
//   whatever run() launched that ran before the start event as escaped (window_audit), and the
//   host's span starts when the gate opens, so a wait past the stop event is what escaped.
// Under a profiler or a sanitizer, which serialize launches, a gated sample would wait out the
// timeout once: `aisp profile ncu`, scripts/profile_pair.sh and scripts/sanitize.sh pass
// --no-launch-gate.
// Pairs that time the host's launches on purpose (ch01:batched_launches, ch01:graph_chain,
// labs/decode:cuda_graph_step, the serving loops) declare pair::times_host_launches and are never
// gated; neither are pairs that migrate managed memory (pair::allow_managed_memory): the driver
// runs the migrations queued behind the gate inside the window, where the device audit, which
// sees no migration (ch02's Note [migration is invisible to the audit]), reads them as idle gaps
// (ch02:unified_memory_prefetch failed L1 gated and passed ungated, H200 2026-12-02). Results
// carry each pair's launch_gate_reason and each variant's gated_samples.
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

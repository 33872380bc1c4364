// Small device-side instruments of the timing engine: the L2 flush and the SM clock probe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace aisp {

// Note [cold L2 flush]: before each cold sample the harness writes at least 2x the L2 size, so
// the variant starts with none of its data cached, whatever ran before it.
// write: the flush of every run so far; read: the proposal of docs/proposals/clean-l2-flush.md,
// selectable (`--l2-flush read`) so that one binary can A/B them on the device.
enum class l2_flush_kind { write, read };

class l2_flusher {
 public:
  explicit l2_flusher(l2_flush_kind kind = l2_flush_kind::read);
  ~l2_flusher();
  l2_flusher(const l2_flusher&) = delete;
  l2_flusher& operator=(const l2_flusher&) = delete;
  void flush(cudaStream_t stream);
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_ = 0;
  std::uint32_t* scratch_ = nullptr;
  std::uint32_t generation_ = 0;
  l2_flush_kind kind_;
};

// Reads the SM clock under the current conditions: clock64 cycles over %globaltimer
// nanoseconds on one thread. Never sets a clock (it only reads).
class sm_clock_probe {
 public:
  explicit sm_clock_probe(std::int64_t spin_cycles = 50'000);
  ~sm_clock_probe();
  sm_clock_probe(const sm_clock_probe&) = delete;
  sm_clock_probe& operator=(const sm_clock_probe&) = delete;
  // Launches, synchronizes the stream and returns MHz.
  [[nodiscard]] double measure_mhz(cudaStream_t stream);

 private:
  std::int64_t spin_cycles_;
  long long* device_result_ = nullptr;  // {cycles, nanoseconds}
  long long* host_result_ = nullptr;
};

// A kernel that spins for `cycles` SM cycles and records its own %globaltimer span (ns) in
// `span_ns`: the known answer against which the timer is tested.
void launch_spin_kernel(std::int64_t cycles, long long* span_ns, cudaStream_t stream);

// One thread that does nothing: a window around it reads the events' and one launch's fixed
// cost (Note [batch reuse] in variant_session.cpp).
void launch_empty_kernel(cudaStream_t stream);

}  // namespace aisp

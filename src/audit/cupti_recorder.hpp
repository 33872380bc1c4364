// The CUPTI side of the device audit, inside a worker: activity records (kernels, copies,
// memsets, JIT compiles, CUDA events with device timestamps) for the whole process and every
// device, and callbacks on the API calls run() must not make (allocations, host functions,
// stream attributes, module loads, device switches). It watches each timed sample through the
// sampler's hooks and audits the sample's window once the records arrive. The reported time
// stays the CUDA-event time; this only cross-checks it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "audit/timeline.hpp"
#include "audit/window_audit.hpp"
#include "harness/timing.hpp"

namespace aisp {

class cupti_recorder final : public timing_observer {
 public:
  // Must run before the process creates its CUDA context. nullptr, with `why`, where CUPTI
  // cannot be used (no library, another profiler attached, an unsupported device).
  static std::unique_ptr<cupti_recorder> start(std::uint32_t device, bool keep_timeline, std::string& why);
  ~cupti_recorder() override;
  cupti_recorder(const cupti_recorder&) = delete;
  cupti_recorder& operator=(const cupti_recorder&) = delete;

  void before_start_event() override;
  void run_begins() override;
  void run_ends() override;
  void before_stop_event() override;
  void sample_taken(int calls) override;
  void phase_begins(std::string_view name) override;
  void phase_ends() override;

  // Note [audited visits]: recording device activity costs the timed span a few microseconds
  // (CUPTI's launch-path instrumentation), so the judge audits some visits of samples and times
  // the others; samples taken while not recording open no window.
  void record_activity(bool on);
  // Flushes CUPTI and audits every sample window closed since the last call, in order.
  [[nodiscard]] std::vector<window_audit> audit_closed_windows();
  // C10: CUPTI answers CUPTI_ERROR_NOT_READY to the unified-memory counters until the process
  // has its CUDA context; call once the context exists.
  void start_unified_memory_counters();
  // Whether managed-memory migrations are counted: "on" or "unavailable: <CUPTI's reason>".
  [[nodiscard]] const std::string& unified_memory_state() const { return unified_memory_state_; }
  // Every record and phase kept so far (only with keep_timeline), and forgets them.
  [[nodiscard]] std::vector<timeline_activity> take_timeline();

  // Called by the CUPTI callbacks (C linkage trampolines); not for other use.
  void on_records(std::vector<timeline_activity> records);
  void on_api(int domain, std::uint32_t callback_id, const void* data);
  void on_module_loaded(const void* cubin, std::size_t size);
  void on_math_mode_change();

 private:
  cupti_recorder(std::uint32_t device, bool keep_timeline);
  void keep_for_timeline();  // moves records_ but the API calls into timeline_ (lock held)
  enum class edge : std::uint8_t { none, start, stop };

  std::uint32_t device_;
  bool keep_timeline_;
  void* subscriber_ = nullptr;
  std::vector<std::uint8_t> runtime_categories_;
  std::vector<std::uint8_t> driver_categories_;
  bool recording_ = true;
  std::string unified_memory_state_ = "off";  // "on", or "unavailable: <why>" (C10)
  std::atomic<int> managed_allocations_{0};  // in this process so far, setup's included
  std::atomic<bool> in_run_{false};
  std::atomic<edge> pending_edge_{edge::none};
  sample_window open_window_;
  std::vector<sample_window> closed_windows_;
  std::mutex records_mutex_;
  std::vector<timeline_activity> records_;
  std::vector<timeline_activity> timeline_;
  std::set<std::string> child_launchers_;
  std::vector<std::pair<std::string, std::uint64_t>> open_phases_;
};

}  // namespace aisp

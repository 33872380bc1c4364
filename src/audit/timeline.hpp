// What the device did during a run, as CUPTI saw it: one record per kernel, copy, memset, JIT
// compile or CUDA event, plus the harness's own phases (setup, warmup, samples, verify).
// Timestamps are CUPTI's nanoseconds (one clock for host and device records).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aisp {

// unified_memory: a managed-memory migration or page fault (CUPTI's unified-memory counters);
// it has no correlation id, only timestamps. api: a CUDA runtime or driver call on the host
// (start and end in the same clock), so idle device time spent inside the driver is not
// mistaken for host work (L1).
enum class activity_kind : std::uint8_t { kernel, memcpy, memset, jit, event, phase, unified_memory, api };

struct timeline_activity {
  activity_kind kind = activity_kind::kernel;
  std::string name;                 // kernel name, copy direction ("DtoH"), phase name
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;         // == start_ns for an event
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation = 0;    // the API call that issued it
  std::uint64_t bytes = 0;          // copies, memsets and migrations (a fault record: its count)
  bool device_launched = false;     // a kernel launched from the device (graph or child grid)
  bool access_policy_window = false;  // launched with an access-policy (persisting L2) window
  int launch_type = 0;              // CUpti_ActivityLaunchType: 0 regular, 1-2 cooperative
};

std::string_view activity_kind_name(activity_kind kind);

}  // namespace aisp

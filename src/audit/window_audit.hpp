// The device's view of one timed sample. CUPTI recorded every kernel, copy, memset and JIT
// compile of the process with its own timestamps; the harness's start and stop events have
// device timestamps too. This reads the records against that window: what ran, what escaped
// it, what was already running, how busy the device was, and which API calls run() made.
// Pure functions over records, so every rule is tested without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/timeline.hpp"

namespace aisp {

// CUDA API calls made while run() was executing, counted by the CUPTI callbacks.
struct run_api_calls {
  int allocations = 0;        // cudaMalloc*, cuMemAlloc*, cuMemCreate, pools (M1, M4, S7)
  int host_callbacks = 0;     // cudaLaunchHostFunc, cudaStreamAddCallback (C1)
  int stream_creations = 0;
  int access_policy = 0;      // stream/graph attributes that set an access-policy window (X4)
  int module_loads = 0;       // cuModuleLoad*, cuLibraryLoad*, cuLinkComplete (L7, K5)
  int device_switches = 0;    // cudaSetDevice / cuCtxSetCurrent (E1, C5)
  int math_mode_changes = 0;  // cublasSetMathMode (W2)
  run_api_calls& operator+=(const run_api_calls& other);
};

// One sample's window: the start and stop events (device time) and the API calls that
// recorded them, so "launched inside run()" is a correlation id strictly between the two.
struct sample_window {
  std::uint32_t start_correlation = 0;
  std::uint32_t stop_correlation = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t stop_ns = 0;
  int calls = 1;
  run_api_calls api;
};

struct window_audit {
  bool complete = false;            // both events were found with device timestamps
  double window_s = 0;
  int kernels = 0;                  // launched inside the window
  int copies = 0;
  std::uint64_t copy_bytes = 0;     // moved by copy engines inside the window: no SM counter sees them (W3)
  int memsets = 0;
  int jit_compiles = 0;
  double busy_fraction = 0;         // union of device activity over the window (L1)
  // The part of the window spent in idle gaps longer than a launch's latency (L1, C7): host work
  // between launches. A launch-bound variant is idle as much, but in short gaps.
  double long_gap_fraction = 0;
  int cooperative_launches = 0;     // kernels launched cooperatively (C8: recorded)
  int managed_allocations = 0;      // cudaMallocManaged / cuMemAllocManaged in the worker so far, setup's included (C10)
  std::uint64_t unified_memory_bytes = 0;     // managed-memory migrations inside the window (C10)
  std::vector<std::string> unified_memory;    // what migrated or faulted inside the window (C10)
  double overrun_s = 0;             // how far the farthest escaped activity ran outside the window
  // Launched in run() and still running at stop, or run before start while the launch gate held
  // the window (T1, C4); copies and memsets likewise (T2, M3, C2).
  std::vector<std::string> escaped_kernels;
  std::vector<std::string> escaped_copies;
  std::vector<std::string> foreign;           // not launched in run() but running in the window (T3, C4)
  std::vector<std::string> other_devices;     // activity on a device the pair did not declare (C5)
  std::vector<std::string> device_launched;   // kernels launched from the device (C9)
  std::vector<std::string> access_policy_kernels;  // launched with a persisting-L2 window (X4)
  std::set<std::string> kernel_names;         // what ran: a "custom" kernel that is a library call (X6)
  std::map<std::string, int> kernel_launches; // launches per kernel: the algorithm chosen (K6)
  // A multi-GPU pair's sample: each rank's launches, in rank order. The sample's other fields are
  // the slowest rank's, which changes from sample to sample; K6 compares a rank with itself.
  std::vector<std::map<std::string, int>> rank_kernel_launches;
  run_api_calls api;
};

// Idle gaps longer than this are host work, not a launch's latency (a few microseconds).
inline constexpr std::uint64_t long_gap_ns = 20'000;

// `own_device`: the CUDA device the worker was given; activity elsewhere is C5.
// `child_launchers`: kernels whose code launches grids from the device (read from the cubins).
[[nodiscard]] window_audit audit_window(const sample_window& window, const std::vector<timeline_activity>& records,
                                        std::uint32_t own_device, const std::set<std::string>& child_launchers);
// The same for many windows at once (a visit of samples): records are indexed by correlation
// first, so the cost grows with records + windows, not their product.
[[nodiscard]] std::vector<window_audit> audit_windows(const std::vector<sample_window>& windows,
                                                      const std::vector<timeline_activity>& records, std::uint32_t own_device,
                                                      const std::set<std::string>& child_launchers);

// "cuBLAS", "cuDNN", "NCCL", "CUTLASS", "CUB" when a kernel's name is one of that library's; "" else.
[[nodiscard]] std::string library_of_kernel(std::string_view name);

[[nodiscard]] nlohmann::json to_json(const window_audit& audit);
[[nodiscard]] window_audit window_audit_from_json(const nlohmann::json& j);

}  // namespace aisp

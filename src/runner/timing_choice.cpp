#include "runner/timing_choice.hpp"

namespace aisp {
namespace {

// The mode and why (the gate's fields left as they default).
timing_choice mode_for(const pair& declared, const run_config& config) {
  timing_choice choice;
  // Note [goals]: a hot or graph sample averages calls, and the p99 of averages is no call's.
  if (declared.goal_of() == goal::latency) {
    choice.mode = timing_mode::cold;
    if (config.mode != timing_mode::cold) choice.reason = "a latency pair: every sample is one call (Note [goals])";
  } else if (config.mode_chosen || declared.short_calls_reason().empty() || declared.where() != backend::cuda) {
    choice.mode = config.mode;
    // Said, not silently changed (a user's walkthrough, 2026-12-04).
    if (declared.where() == backend::host && config.mode == timing_mode::graph)
      choice.reason = "a host pair has no CUDA graph to capture: its calls are batched unflushed, as in hot mode";
  } else {
    choice.mode = timing_mode::graph;
    choice.reason = "declared by the pair (Note [short calls]): " + declared.short_calls_reason();
  }
  return choice;
}

}  // namespace

timing_choice timing_for(const pair& declared, const run_config& config) {
  timing_choice choice = mode_for(declared, config);
  if (!config.launch_gate || declared.where() != backend::cuda) return choice;
  if (!declared.host_launches_reason().empty()) {
    choice.launch_gate_reason = "the pair times the host's launches: " + declared.host_launches_reason();
  } else if (declared.gpus() > 1) {
    choice.launch_gate_reason = "a multi-GPU pair's ranks open each window together at a barrier (Note [ranks])";
  } else if (declared.allows_managed_memory()) {
    choice.launch_gate_reason =
        "the pair migrates managed memory: the driver's migrations, invisible to the device audit, would run inside the held "
        "window as idle gaps (Note [launch gate])";
  } else {
    choice.launch_gate = true;
  }
  return choice;
}

}  // namespace aisp

#include "runner/timing_choice.hpp"

namespace aisp {

timing_choice timing_for(const pair& declared, const run_config& config) {
  // Note [goals]: a hot or graph sample averages calls, and the p99 of averages is no call's.
  if (declared.goal_of() == goal::latency)
    return {timing_mode::cold, config.mode == timing_mode::cold ? "" : "a latency pair: every sample is one call (Note [goals])"};
  if (config.mode_chosen || declared.short_calls_reason().empty() || declared.where() != backend::cuda) {
    return {config.mode, ""};
  }
  return {timing_mode::graph, "declared by the pair (Note [short calls]): " + declared.short_calls_reason()};
}

}  // namespace aisp

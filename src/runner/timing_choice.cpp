#include "runner/timing_choice.hpp"

namespace aisp {

timing_choice timing_for(const pair& declared, const run_config& config) {
  if (config.mode_chosen || declared.short_calls_reason().empty() || declared.where() != backend::cuda) {
    return {config.mode, ""};
  }
  return {timing_mode::graph, "declared by the pair (Note [short calls]): " + declared.short_calls_reason()};
}

}  // namespace aisp

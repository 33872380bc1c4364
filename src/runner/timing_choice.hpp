// Which timing mode a pair is sampled in: the user's --mode, else the pair's own declaration
// (Note [short calls] in aisp/pair.hpp: a pair whose calls are shorter than the timer floor asks
// for graph mode), else cold; and whether the launch gate holds its samples (the run's
// --launch-gate, unless the pair times the host's launches or runs on several GPUs). Host-only,
// so it is unit-tested without a GPU.
#pragma once

#include <string>

#include "aisp/pair.hpp"
#include "runner/run_config.hpp"

namespace aisp {

struct timing_choice {
  timing_mode mode = timing_mode::cold;
  std::string reason;  // "" where the user's --mode (or the default) decided
  // Note [launch gate]: whether samples are queued behind the gate; why not where the run's
  // --launch-gate asked for it ("" where it did not, or where the gate holds).
  bool launch_gate = false;
  std::string launch_gate_reason;
};

[[nodiscard]] timing_choice timing_for(const pair& declared, const run_config& config);

}  // namespace aisp

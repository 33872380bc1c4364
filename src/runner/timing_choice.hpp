// Which timing mode a pair is sampled in: the user's --mode, else the pair's own declaration
// (Note [short calls] in aisp/pair.hpp: a pair whose calls are shorter than the timer floor asks
// for graph mode), else cold. Host-only, so it is unit-tested without a GPU.
#pragma once

#include <string>

#include "aisp/pair.hpp"
#include "runner/run_config.hpp"

namespace aisp {

struct timing_choice {
  timing_mode mode = timing_mode::cold;
  std::string reason;  // "" where the user's --mode (or the default) decided
};

[[nodiscard]] timing_choice timing_for(const pair& declared, const run_config& config);

}  // namespace aisp

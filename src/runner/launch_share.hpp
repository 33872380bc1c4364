// Note [launch]: which pairs each launch rank judges itself. Multi-rank pairs belong to launch
// rank 0 (their ranks spread over the launch ranks); every other pair is dealt out in turn, so a
// launch of W processes judges W single-GPU or host pairs at once, one per launch rank, each into
// its own folder. Every launch rank computes the same split from the same target list.
#pragma once

#include <vector>

#include "runner/pair_runner.hpp"

namespace aisp {

[[nodiscard]] std::vector<pair_request> launch_share(const std::vector<pair_request>& requests, int launch_rank, int launch_size);

}  // namespace aisp

// Turns the user's target words into pair requests.
//   all | chNN | chNN:name | chNN:name:variant | labs/<lab> | labs/<lab>:name[:variant]
#pragma once

#include <string>
#include <vector>

#include "aisp/registry.hpp"
#include "runner/pair_runner.hpp"

namespace aisp {

// Throws contract_error with a one-line message naming the unknown word and what exists.
[[nodiscard]] std::vector<pair_request> select_targets(const registry& pairs,
                                                       const std::vector<std::string>& words);

}  // namespace aisp

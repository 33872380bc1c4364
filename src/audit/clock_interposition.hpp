// Note [two clocks] (V1, T3): a worker's reported times come from its own clocks, and the pair's
// code shares its process. A clock it replaces (its binary defines clock_gettime or
// steady_clock::now, which the dynamic linker then binds for libstdc++ and the harness too)
// reports what it likes in either direction. The worker checks at start that every host clock
// the harness reads resolves into the library that owns it; the judge fails wall-clock when one
// does not. Device times are checked against the audit's own timestamps (sampling_rounds.cpp).
#pragma once

#include <string>
#include <vector>

namespace aisp {

// The timing functions of this process that resolve outside their owning library: each as
// "clock_gettime (defined in /path/to/binary)". Empty when none is replaced.
[[nodiscard]] std::vector<std::string> interposed_clocks();

}  // namespace aisp

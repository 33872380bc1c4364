// Note [drawn held-out size]: a held-out size declared in the pair's file is public; a variant can
// special-case it as easily as the benchmark size (K7, V5). So each run also draws one size at
// run time, inside the envelope the pair's own small sizes span: every parameter that varies
// between them gets a value between their smallest and largest, a multiple of their greatest
// common divisor (the alignment the pair itself promises); parameters that never vary keep
// their value, and parameters that always move together (equal in every size) stay equal.
#pragma once

#include <cstdint>
#include <optional>
#include <random>

#include "aisp/pair.hpp"

namespace aisp {

// nullopt when the pair's small sizes leave nothing to draw (one size, or no parameter varies).
[[nodiscard]] std::optional<workload> draw_held_out_size(const pair& declared, std::mt19937_64& entropy);

}  // namespace aisp

// Where a failed output went wrong says how it cheated: nothing written (W4), only a leading
// region (O7), a tail of the batch or sequence dimension (W5, W6), odd indices of a spatial
// dimension (W7), right values in another dtype's encoding (O8), values with only half
// precision (W1); on several ranks, whole ranks wrong (D1) or every failing rank's shard done
// only up to some element (D8). These codes are added to the comparison's own code; they never
// pass anything.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "aisp/buffer_spec.hpp"
#include "aisp/pair.hpp"
#include "verify/compare.hpp"

namespace aisp::verify {

[[nodiscard]] std::vector<std::string> failure_pattern_codes(const buffer_spec& spec, const workload& work,
                                                             std::span<const unsigned char> actual,
                                                             std::span<const double> expected,
                                                             const tolerance& tol, const comparison& outcome,
                                                             int world_size = 1);

}  // namespace aisp::verify

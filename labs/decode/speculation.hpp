// Speculative decoding's bookkeeping (issue 21), host-only: how many draft tokens the target's
// verification accepts, and the model of the pair (Note [controlled acceptance]).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "aisp/check.hpp"

namespace aisp::decode {

// The draft proposed proposal[1..k] after proposal[0]; the target's greedy token after each of
// proposal[0..k] is verified[0..k]. The draft's tokens are accepted while they equal the
// target's: the count a, then verified[0..a] are the a + 1 tokens the round makes (the last is
// the target's own where the draft went wrong, or its next after every draft token).
[[nodiscard]] inline int accepted_drafts(std::span<const int> proposal, std::span<const int> verified) {
  AISP_EXPECTS(!proposal.empty() && verified.size() == proposal.size(), "a round verifies every proposal position");
  const std::size_t drafts = proposal.size() - 1;
  std::size_t a = 0;
  while (a < drafts && verified[a] == proposal[a + 1]) ++a;
  return static_cast<int>(a);
}

// The draft: the first quarter of the layers (at least one), with the final norm and the head.
[[nodiscard]] inline int draft_layers(int layers) { return std::max(1, layers / 4); }

// The target's late layers add 2^-shift of their output (Note [controlled acceptance]).
[[nodiscard]] inline double late_scale_of(std::int64_t shift) {
  AISP_EXPECTS(shift >= 0 && shift <= 30, "late_shift is 0 (the plain model) to 30");
  return std::ldexp(1.0, -static_cast<int>(shift));
}

}  // namespace aisp::decode

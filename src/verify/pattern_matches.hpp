// Decides which output elements of a timed call were really left unwritten. Host-only.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "aisp/pair.hpp"

namespace aisp::verify {

// Note [coincident pattern]: before a verified timed call the outputs are filled with random bytes
// (a pattern a variant cannot recognise). A 16-bit output legitimately equals its random pattern
// about once in 65536 elements (251 of 4096^2 bf16 GEMM outputs on the H100), so "holds the
// pattern" alone is not "never written". The worker lists the elements that hold the pattern, with
// the pattern's value; one counts as unwritten only when that value is not the right answer.
struct pattern_match {
  std::size_t index = 0;
  std::optional<double> value;  // empty: the pattern decodes to NaN, never a right answer
};

// Upper bound on listed matches per buffer and call: a variant that skips more than this is
// caught by the count alone, and the reply stays small.
inline constexpr std::size_t max_listed_pattern_matches = 1u << 16;

// matched: elements holding the pattern; listed: the first of them (up to the cap) with values.
[[nodiscard]] std::size_t truly_unwritten(std::size_t matched, const std::vector<pattern_match>& listed,
                                          const std::vector<double>& truth, const tolerance& tol);

// The same with the truth only at the listed indices, in their order.
[[nodiscard]] std::size_t truly_unwritten_listed(std::size_t matched, const std::vector<pattern_match>& listed,
                                                 const std::vector<double>& truth_at_listed, const tolerance& tol);

}  // namespace aisp::verify

#include "verify/pattern_matches.hpp"

#include <cmath>

namespace aisp::verify {

std::size_t truly_unwritten(std::size_t matched, const std::vector<pattern_match>& listed,
                            const std::vector<double>& truth, const tolerance& tol) {
  // Matches beyond the listed ones have no value to clear them: they stay unwritten.
  std::size_t unwritten = matched > listed.size() ? matched - listed.size() : 0;
  for (const auto& match : listed) {
    const bool known = match.index < truth.size() && match.value.has_value();
    const bool right_answer =
        known && std::abs(*match.value - truth[match.index]) <= tol.atol + tol.rtol * std::abs(truth[match.index]);
    if (!right_answer) ++unwritten;
  }
  return unwritten;
}

std::size_t truly_unwritten_listed(std::size_t matched, const std::vector<pattern_match>& listed,
                                   const std::vector<double>& truth_at_listed, const tolerance& tol) {
  std::vector<pattern_match> reindexed;
  reindexed.reserve(listed.size());
  for (std::size_t j = 0; j < listed.size(); ++j) reindexed.push_back({j, listed[j].value});
  return truly_unwritten(matched, reindexed, truth_at_listed, tol);
}

}  // namespace aisp::verify

// Element-by-element comparison of one output against what it should be. Never times.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "aisp/dtype.hpp"
#include "aisp/pair.hpp"

namespace aisp::verify {

struct mismatch {
  std::size_t index = 0;
  double expected = 0;
  double actual = 0;
};

struct comparison {
  std::string buffer;
  std::size_t elements = 0;
  std::size_t failing = 0;      // outside tolerance, NaN or unwritten
  std::size_t nan_count = 0;
  std::size_t inf_count = 0;
  std::size_t unwritten = 0;    // still holding the poison pattern
  double max_abs_error = 0;
  double max_rel_error = 0;
  double rel_l2_error = 0;
  double worst_tolerance_fraction = 0;  // max |err| / element_bound: headroom
  std::vector<mismatch> first_mismatches;  // up to 8
  std::string reason_code;  // "" when passed; else O10 (unwritten), O4 (NaN), O5 (Inf), O3
  [[nodiscard]] bool passed() const { return reason_code.empty(); }
  [[nodiscard]] std::string describe() const;
};

// `actual` holds raw elements of `type`; `expected` the fp64 truth (or the baseline, widened).
[[nodiscard]] comparison compare_output(const std::string& buffer, dtype type,
                                        std::span<const unsigned char> actual,
                                        std::span<const double> expected, const tolerance& tol);

// Note [cancellation floor] (compare.cpp): one element's bound, atol + rtol x the larger of its
// expected magnitude and `floor`, the output's RMS (finite_rms of the expected values, or of a
// random sample of them).
[[nodiscard]] inline double element_bound(const tolerance& tol, double expected, double floor) {
  const double magnitude = expected < 0 ? -expected : expected;
  return tol.atol + tol.rtol * (magnitude > floor ? magnitude : floor);
}
[[nodiscard]] double finite_rms(std::span<const double> values);

// Widens raw elements of `type` to fp64.
[[nodiscard]] std::vector<double> widen(dtype type, std::span<const unsigned char> raw);

}  // namespace aisp::verify

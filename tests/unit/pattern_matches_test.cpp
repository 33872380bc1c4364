#include <gtest/gtest.h>

#include <vector>

#include "verify/pattern_matches.hpp"

namespace {

using aisp::verify::pattern_match;
using aisp::verify::truly_unwritten;

const aisp::tolerance bf16_like{1e-2, 1e-2, 0, "bf16"};

TEST(pattern_matches, a_pattern_that_equals_the_right_answer_is_not_unwritten) {
  const std::vector<double> truth{1.0, -2.0, 3.5, 0.25};
  const std::vector<pattern_match> listed{{1, -2.0}, {3, 0.25}};
  EXPECT_EQ(truly_unwritten(2, listed, truth, bf16_like), 0u);
}

TEST(pattern_matches, a_pattern_that_differs_from_the_answer_is_unwritten) {
  const std::vector<double> truth{1.0, -2.0, 3.5, 0.25};
  const std::vector<pattern_match> listed{{0, 7.0}, {2, 3.5}};
  EXPECT_EQ(truly_unwritten(2, listed, truth, bf16_like), 1u);
}

TEST(pattern_matches, a_nan_pattern_or_an_index_out_of_range_is_unwritten) {
  const std::vector<double> truth{1.0, 2.0};
  const std::vector<pattern_match> listed{{0, std::nullopt}, {5, 2.0}};
  EXPECT_EQ(truly_unwritten(2, listed, truth, bf16_like), 2u);
}

TEST(pattern_matches, matches_beyond_the_listed_ones_count_as_unwritten) {
  // A variant that skipped a whole output: far more matches than the worker lists.
  const std::vector<double> truth(10, 1.0);
  const std::vector<pattern_match> listed{{0, 1.0}, {1, 1.0}};
  EXPECT_EQ(truly_unwritten(10, listed, truth, bf16_like), 8u);
}

}  // namespace

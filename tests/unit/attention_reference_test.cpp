// The fp64 attention row that labs/attention and ch18 check their kernels against
// (aisp/attention_reference.hpp), on cases whose answer is known in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "aisp/attention_reference.hpp"

namespace {

using rows = std::vector<std::vector<double>>;

std::vector<double> row_of(const std::vector<double>& query, const rows& keys, const rows& values, double scale) {
  std::vector<double> out(query.size());
  std::vector<double> weights;
  aisp::attention_row_reference(
      query.data(), keys.size(), query.size(), scale, [&](std::size_t j) { return keys[j].data(); },
      [&](std::size_t j) { return values[j].data(); }, weights, out.data());
  return out;
}

TEST(attention_row_reference, one_key_returns_its_value) {
  EXPECT_EQ(row_of({0.3, -0.7}, {{0.9, 0.1}}, {{0.25, -0.5}}, 0.7), (std::vector<double>{0.25, -0.5}));
}

TEST(attention_row_reference, equal_scores_average_the_values) {
  const auto out = row_of({1.0, 0.0}, {{0.0, 1.0}, {0.0, -1.0}}, {{1.0, 2.0}, {3.0, -4.0}}, 1.0);
  EXPECT_DOUBLE_EQ(out[0], 2.0);
  EXPECT_DOUBLE_EQ(out[1], -1.0);
}

TEST(attention_row_reference, weights_follow_the_softmax_of_the_scaled_scores) {
  // Scores 2 * 0.5 = 1 and 0: weights e / (e + 1) and 1 / (e + 1); large scores must not overflow.
  const auto out = row_of({2.0}, {{1.0}, {0.0}}, {{1.0}, {0.0}}, 0.5);
  EXPECT_NEAR(out[0], std::exp(1.0) / (std::exp(1.0) + 1.0), 1e-15);
  const auto big = row_of({1000.0}, {{1.0}, {0.999}}, {{1.0}, {0.0}}, 1.0);
  EXPECT_NEAR(big[0], 1.0 / (1.0 + std::exp(-1.0)), 1e-12);
}

}  // namespace

// labs/decode's serving workload (labs/decode/serving_trace.hpp): a seeded trace whose draws follow
// their stated distributions, KV memory contiguous against paged, and per-request latencies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "../../labs/decode/serving_trace.hpp"

namespace {

using aisp::decode::trace_config;

TEST(serving_trace, is_fixed_by_its_seed) {
  const trace_config c{.requests = 64};
  const auto a = aisp::decode::make_trace(c);
  const auto b = aisp::decode::make_trace(c);
  ASSERT_EQ(a.size(), 64u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival_s, b[i].arrival_s);
    EXPECT_EQ(a[i].prompt, b[i].prompt);
    EXPECT_EQ(a[i].output_tokens, b[i].output_tokens);
  }
  trace_config reseeded = c;
  reseeded.seed = 2;
  EXPECT_NE(aisp::decode::make_trace(reseeded)[0].prompt, a[0].prompt);
}

TEST(serving_trace, draws_follow_the_stated_distributions) {
  const trace_config c{.requests = 4000, .arrivals_per_s = 50.0, .prompt_min = 10, .prompt_max = 30, .output_min = 5, .output_max = 9, .vocab = 100};
  const auto trace = aisp::decode::make_trace(c);
  double prompt_sum = 0.0;
  double output_sum = 0.0;
  std::vector<int> token_counts(100, 0);
  double previous = 0.0;
  for (const auto& r : trace) {
    EXPECT_GT(r.arrival_s, previous) << "arrivals increase";
    previous = r.arrival_s;
    const auto length = static_cast<int>(r.prompt.size());
    EXPECT_GE(length, 10);
    EXPECT_LE(length, 30);
    EXPECT_GE(r.output_tokens, 5);
    EXPECT_LE(r.output_tokens, 9);
    prompt_sum += length;
    output_sum += r.output_tokens;
    for (int t : r.prompt) ++token_counts.at(static_cast<std::size_t>(t));
  }
  const double n = static_cast<double>(trace.size());
  EXPECT_NEAR(trace.back().arrival_s / n, 1.0 / 50.0, 0.1 / 50.0) << "mean gap of a Poisson process at 50/s";
  EXPECT_NEAR(prompt_sum / n, 20.0, 0.5);
  EXPECT_NEAR(output_sum / n, 7.0, 0.1);
  EXPECT_GT(*std::min_element(token_counts.begin(), token_counts.end()), 0) << "every token of the vocabulary drawn";
}

TEST(serving_trace, heavy_tailed_outputs_are_geometric_of_the_stated_mean_within_the_bounds) {
  const trace_config c{.requests = 20000, .output_min = 1, .output_max = 100000, .output_mean = 64.0};
  const auto trace = aisp::decode::make_trace(c);
  double sum = 0.0;
  int beyond_three_means = 0;
  for (const auto& r : trace) {
    EXPECT_GE(r.output_tokens, 1);
    sum += r.output_tokens;
    beyond_three_means += r.output_tokens > 192 ? 1 : 0;
  }
  const double n = static_cast<double>(trace.size());
  EXPECT_NEAR(sum / n, 64.5, 1.5) << "an exponential of mean 64 rounded up";
  EXPECT_NEAR(beyond_three_means / n, std::exp(-3.0), 0.01) << "the tail: P(length > 3 means) = e^-3";
  const trace_config capped{.requests = 2000, .output_min = 8, .output_max = 256, .output_mean = 64.0};
  for (const auto& r : aisp::decode::make_trace(capped)) {
    EXPECT_GE(r.output_tokens, 8);
    EXPECT_LE(r.output_tokens, 256);
  }
  EXPECT_EQ(aisp::decode::make_trace(capped)[7].output_tokens, aisp::decode::make_trace(capped)[7].output_tokens) << "seeded";
}

TEST(serving_trace, refuses_impossible_settings) {
  EXPECT_THROW((void)aisp::decode::make_trace({.requests = 0}), std::invalid_argument);
  EXPECT_THROW((void)aisp::decode::make_trace({.prompt_min = 50, .prompt_max = 10}), std::invalid_argument);
  EXPECT_THROW((void)aisp::decode::make_trace({.arrivals_per_s = 0.0}), std::invalid_argument);
  EXPECT_THROW((void)aisp::decode::make_trace({.output_mean = -1.0}), std::invalid_argument);
}

TEST(request_latency, is_the_first_token_then_the_mean_gap) {
  const auto l = aisp::decode::latency_of(1.0, {1.5, 1.6, 1.8, 1.9});
  EXPECT_DOUBLE_EQ(l.ttft_s, 0.5);
  EXPECT_NEAR(l.tpot_s, 0.4 / 3.0, 1e-15);
  EXPECT_DOUBLE_EQ(aisp::decode::latency_of(0.0, {0.25}).tpot_s, 0.0);
  EXPECT_THROW((void)aisp::decode::latency_of(0.0, {}), std::invalid_argument);
}

}  // namespace

// Expectations without a device: a speedup and, where the pair has a library peer, the ratio to
// the peer are both held against the trusted run; a drop against the peer is a regression.
#include <gtest/gtest.h>

#include "history/expectations.hpp"

namespace aisp {
namespace {

using nlohmann::json;

json expected_with_peer() {
  json e = {{"entries", json::object()}};
  e["entries"]["labs/gemm:bf16_4096"]["optimized"] = {{"speedup", {{"point", 1400.0}, {"low", 1390.0}, {"high", 1410.0}}},
                                                       {"vs_peer", {{"point", 1.02}, {"low", 1.01}, {"high", 1.03}}}};
  return e;
}

TEST(expectations, a_speedup_inside_the_expected_ci_is_met_and_outside_it_moves) {
  const auto e = expected_with_peer();
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1395, 1405), "met");
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1300, 1340), "regressed");
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1500, 1510), "improved");
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_8192", "optimized", 1, 2), "new");
}

TEST(expectations, a_move_within_the_card_to_card_margin_is_met_and_beyond_it_is_not) {
  const auto e = expected_with_peer();  // speedup CI [1390, 1410]
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1360, 1370), "met");       // 1.5% under
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1330, 1345), "regressed");  // 3.2% under
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1440, 1450), "met");       // 2.1% over
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1455, 1460), "improved");   // 3.2% over
}

TEST(expectations, a_drop_against_the_peer_is_a_regression_even_when_the_speedup_holds) {
  const auto e = expected_with_peer();
  const json slower_than_cublas = {{"point", 0.95}, {"low", 0.94}, {"high", 0.96}};
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1395, 1405, slower_than_cublas), "regressed vs peer");
  const json same = {{"point", 1.02}, {"low", 1.015}, {"high", 1.025}};
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1395, 1405, same), "met");
  const json better = {{"point", 1.10}, {"low", 1.09}, {"high", 1.11}};
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1395, 1405, better), "improved vs peer");
}

TEST(expectations, entries_without_a_peer_ratio_mark_the_speedup_alone) {
  json e = expected_with_peer();
  e["entries"]["labs/gemm:bf16_4096"]["optimized"].erase("vs_peer");
  EXPECT_EQ(mark_against(e, "labs/gemm:bf16_4096", "optimized", 1395, 1405, {{"point", 0.5}, {"low", 0.4}, {"high", 0.6}}), "met");
}

TEST(expectations, an_update_records_the_peer_ratio) {
  json e = {{"entries", json::object()}};
  const json results = {
      {"pairs",
       {{{"target", "labs/gemm:bf16_4096"},
         {"status", "pass"},
         {"speedups", {{{"variant", "optimized"}, {"verdict", "faster"}, {"speedup", {{"point", 2.0}, {"low", 1.9}, {"high", 2.1}}}}}},
         {"variants",
          {{{"name", "optimized"}, {"median_s", 1e-4}, {"goal_metrics", nullptr}, {"vs_peer", {{"point", 0.99}, {"low", 0.98}, {"high", 1.0}}}}}}}}}};
  EXPECT_EQ(update_expectations(e, results, 1.05), 1);
  EXPECT_DOUBLE_EQ(e["entries"]["labs/gemm:bf16_4096"]["optimized"]["vs_peer"]["low"].get<double>(), 0.98);
  EXPECT_TRUE(e["entries"]["labs/gemm:bf16_4096"]["optimized"]["tail_ratios"].is_null()) << "a speed pair records no latencies";
}

// Note [baseline moved]: the speedup fell because the baseline got faster, the variant kept its
// time; a variant slower than its record is still a regression.
TEST(expectations, a_lower_speedup_with_the_variant_at_its_recorded_time_is_a_moved_baseline) {
  json e = {{"entries", json::object()}};
  e["entries"]["ch10:cooperative_grid_sync"]["optimized"] = {{"speedup", {{"point", 2.54}, {"low", 2.53}, {"high", 2.55}}},
                                                             {"median_s", 150.9e-6}};
  const auto mark = [&](double median_s) {
    return mark_against(e, "ch10:cooperative_grid_sync", "optimized", 1.73, 1.74, nullptr, median_s);
  };
  EXPECT_EQ(mark(149.5e-6), "baseline moved");  // measured on the H100, 2026-11-27
  EXPECT_EQ(mark(150.9e-6 * 1.029), "baseline moved");
  EXPECT_EQ(mark(150.9e-6 * 1.05), "regressed");
  EXPECT_EQ(mark(0), "regressed") << "no median: the speedup alone decides";
  EXPECT_EQ(mark_against(e, "ch10:cooperative_grid_sync", "optimized", 2.53, 2.55, nullptr, 300e-6), "met")
      << "a met speedup stays met";
}

// Note [tail expectations]: a serving pair's throughput can hold while its TPOT tail stretches.
TEST(expectations, an_update_keeps_the_recorded_tail_ratios_and_a_stretched_tail_is_a_regression) {
  json e = {{"entries", json::object()}};
  const json tpot = {{"p99", {{"point", 2.4e-3}, {"low", 2.3e-3}, {"high", 2.45e-3}}},
                     {"p99_ratio", {{"point", 0.75}, {"low", 0.74}, {"high", 0.80}}}};
  json variant = {{"name", "optimized"}, {"median_s", 0.586}};
  variant["goal_metrics"]["recorded"]["tpot_s"] = tpot;
  variant["goal_metrics"]["recorded"]["ttft_s"]["p50"] = 0.1;
  json pair = {{"target", "labs/decode:continuous_batching"}, {"status", "pass"}};
  pair["speedups"] = json::array({{{"variant", "optimized"}, {"verdict", "faster"}, {"speedup", {{"point", 2.13}, {"low", 2.12}, {"high", 2.15}}}}});
  pair["variants"] = json::array({variant});
  const json results = {{"pairs", json::array({pair})}};
  ASSERT_EQ(update_expectations(e, results, 1.05), 1);
  const auto& tails = e["entries"]["labs/decode:continuous_batching"]["optimized"]["tail_ratios"];
  ASSERT_TRUE(tails.is_object());
  EXPECT_DOUBLE_EQ(tails["tpot_s"]["low"].get<double>(), 0.74);
  EXPECT_FALSE(tails.contains("ttft_s")) << "a metric without a ratio to the baseline has no tail to hold";

  const auto mark = [&](double low, double high) {
    const json recorded = {{"tpot_s", {{"p99_ratio", {{"point", (low + high) / 2}, {"low", low}, {"high", high}}}}}};
    return mark_against(e, "labs/decode:continuous_batching", "optimized", 2.12, 2.15, nullptr, 0.586, recorded);
  };
  EXPECT_EQ(mark(0.74, 0.79), "met");
  EXPECT_EQ(mark(0.60, 0.65), "regressed tpot_s p99") << "the same throughput with a longer tail";
  EXPECT_EQ(mark(0.95, 1.00), "met") << "a shorter tail does not change the speedup's mark";
  EXPECT_EQ(mark_against(e, "labs/decode:continuous_batching", "optimized", 2.12, 2.15, nullptr, 0.586), "met")
      << "a run without recorded metrics is marked on its speedup";
}

}  // namespace
}  // namespace aisp

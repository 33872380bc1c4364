// Note [items], Note [sequential passes] and Note [recorded metrics]: a throughput pair's items
// per second, what calls record of their items, and the contract of labs/decode's decoding pairs.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "../../labs/decode/decode_pair_parts.hpp"
#include "aisp/pair.hpp"
#include "harness/recorded_metrics.hpp"
#include "runner/goal_verdicts.hpp"

namespace {

TEST(goal_items, a_throughput_pair_reports_its_items_per_second_with_the_medians_ci_turned_over) {
  aisp::pair declared("test:tokens");
  declared.pursue(aisp::goal::throughput).items_per_call("tokens", [](const aisp::workload& w) { return static_cast<double>(w.get("n")); });
  aisp::workload work;
  work.params["n"] = 64;
  const std::vector<double> durations{0.010, 0.011, 0.009, 0.010, 0.012, 0.010, 0.0105, 0.0095, 0.010, 0.011};
  aisp::variant_result variant;
  aisp::record_goal_metrics(declared, work, durations, variant, {});
  ASSERT_TRUE(variant.goal_metrics.contains("items_per_s")) << variant.goal_metrics.dump();
  const auto& items = variant.goal_metrics["items_per_s"];
  const auto& calls = variant.goal_metrics["calls_per_s"];
  EXPECT_NEAR(items["point"].get<double>(), 6400.0, 1e-6) << "64 tokens a call at a 10 ms median";
  EXPECT_NEAR(items["point"].get<double>(), 64 * calls["point"].get<double>(), 1e-9);
  EXPECT_LE(items["low"].get<double>(), items["point"].get<double>());
  EXPECT_GE(items["high"].get<double>(), items["point"].get<double>());
  EXPECT_EQ(variant.goal_metrics["item"], "tokens");
}

TEST(goal_items, a_throughput_pair_without_items_reports_calls_only) {
  aisp::pair declared("test:calls");
  declared.pursue(aisp::goal::throughput);
  aisp::variant_result variant;
  aisp::record_goal_metrics(declared, aisp::workload{}, std::vector<double>{1.0, 1.1, 0.9}, variant, {});
  EXPECT_TRUE(variant.goal_metrics.contains("calls_per_s"));
  EXPECT_FALSE(variant.goal_metrics.contains("items_per_s"));
}

TEST(sequential_passes, need_a_reason_and_default_to_one_pass) {
  aisp::pair declared("test:passes");
  EXPECT_EQ(declared.passes_at(aisp::workload{}), 1.0);
  EXPECT_THROW(declared.sequential_passes([](const aisp::workload&) { return 4.0; }, ""), aisp::contract_error);
  declared.sequential_passes([](const aisp::workload&) { return 4.0; }, "each step needs the last");
  EXPECT_EQ(declared.passes_at(aisp::workload{}), 4.0);
}

// labs/decode: the declared bytes stay within V3's bound (the buffers once a token) at every size.
// Note [declared latency trade]: a metric, a reason, a factor over W12's 1.5x and at most 4x,
// once, and never the metric the pair is judged by.
TEST(trades_latency, needs_a_reason_a_factor_over_w12s_and_at_most_four_and_never_the_judged_metric) {
  aisp::pair declared("test:serving");
  declared.judge_by_recorded("tpot_s", 0.99, "the decodes' tokens");
  EXPECT_THROW(declared.trades_latency("ttft_s", 2.0, ""), aisp::contract_error);
  EXPECT_THROW(declared.trades_latency("", 2.0, "why"), aisp::contract_error);
  EXPECT_THROW(declared.trades_latency("ttft_s", 1.5, "why"), aisp::contract_error) << "W12's own bound is no trade";
  EXPECT_THROW(declared.trades_latency("ttft_s", aisp::max_traded_latency_factor + 0.01, "why"), aisp::contract_error);
  EXPECT_THROW(declared.trades_latency("tpot_s", 2.0, "why"), aisp::contract_error) << "the judged metric";
  EXPECT_EQ(declared.traded_latency("ttft_s"), nullptr);
  declared.trades_latency("ttft_s", aisp::max_traded_latency_factor, "a long prompt's first token, for the decodes'");
  ASSERT_NE(declared.traded_latency("ttft_s"), nullptr);
  EXPECT_EQ(declared.traded_latency("ttft_s")->worst_factor, 4.0);
  EXPECT_THROW(declared.trades_latency("ttft_s", 2.0, "again"), aisp::contract_error) << "once a metric";
  aisp::pair judged_later("test:serving_later");
  judged_later.trades_latency("ttft_s", 2.0, "why");
  EXPECT_THROW(judged_later.judge_by_recorded("ttft_s", 0.99, "the traded metric"), aisp::contract_error);
}

TEST(decode_contract, declares_no_more_bytes_than_a_pass_over_the_buffers_a_token) {
  aisp::pair declared("labs/decode:contract_test");
  aisp::decode::with_greedy_decode_contract(declared).benchmark_size({{"model", 2}, {"batch", 1}, {"prompt", 128}, {"new_tokens", 32}});
  for (const auto& w : declared.workloads()) {
    const auto work = aisp::decode::greedy_decode_work(w);
    EXPECT_GT(work.bytes, 0);
    EXPECT_LE(work.bytes, declared.buffer_bytes(w) * declared.passes_at(w)) << w.describe();
    EXPECT_EQ(declared.items_at(w), static_cast<double>(w.get("batch") * w.get("new_tokens")));
  }
}

TEST(decode_contract, the_small_validation_model_decodes_33_varied_tokens) {
  const auto c = aisp::decode::small_model();
  aisp::decode::decoder_reference model{c, aisp::decode::seeded_weights(c, 5)};
  const auto tokens = model.greedy({11, 300, 7, 999, 42, 0, 512}, 33);
  EXPECT_GE(std::set<int>(tokens.begin(), tokens.end()).size(), 10u) << "a model that repeats itself tests little";
}

}  // namespace

namespace {

TEST(recorded_metrics, keep_each_metrics_values_until_taken) {
  aisp::recorded_metrics recorded;
  recorded.begin_call();
  recorded.add("ttft_s", 0.25);
  recorded.add("ttft_s", 0.5);
  recorded.add("tpot_s", 0.01);
  const auto taken = recorded.take();
  EXPECT_EQ(taken.at("ttft_s"), (std::vector<double>{0.25, 0.5}));
  EXPECT_EQ(taken.at("tpot_s"), (std::vector<double>{0.01}));
  EXPECT_TRUE(recorded.take().empty()) << "taken once";
}

TEST(recorded_metrics, refuse_bad_names_values_and_floods) {
  aisp::recorded_metrics recorded;
  recorded.begin_call();
  EXPECT_THROW(recorded.add("TTFT", 1.0), aisp::contract_error);
  EXPECT_THROW(recorded.add("", 1.0), aisp::contract_error);
  EXPECT_THROW(recorded.add("ttft_s", std::nan("")), aisp::contract_error);
  for (const char* name : {"a", "b", "c", "d"}) recorded.add(name, 1.0);
  EXPECT_THROW(recorded.add("e", 1.0), aisp::contract_error) << "a fifth metric";
  for (std::size_t i = 4; i < aisp::max_recorded_values; ++i) recorded.add("a", 1.0);
  EXPECT_THROW(recorded.add("a", 1.0), aisp::contract_error) << "one call over the bound";
  recorded.prepare(true);
  recorded.begin_call();
  EXPECT_NO_THROW(recorded.add("a", 1.0)) << "the bound is per call";
  recorded.prepare(false);
  EXPECT_TRUE(recorded.take().empty()) << "a call outside the timed samples drops what came before";
}

TEST(recorded_metrics, are_summarized_as_p50_and_p99_with_the_baselines_tail_ratio) {
  aisp::variant_result baseline;
  aisp::variant_result faster;
  for (int i = 1; i <= 200; ++i) {
    baseline.recorded["tpot_s"].push_back(0.002 * i);  // p99 near 0.4 s
    faster.recorded["tpot_s"].push_back(0.001 * i);    // p99 near 0.2 s
  }
  std::vector<aisp::variant_result*> variants{&baseline, &faster};
  aisp::record_recorded_metrics(variants, baseline, {});
  const auto& entry = faster.goal_metrics["recorded"]["tpot_s"];
  EXPECT_EQ(entry["count"].get<int>(), 200);
  EXPECT_NEAR(entry["p50"]["point"].get<double>(), 0.1, 0.002);
  EXPECT_NEAR(entry["p99"]["point"].get<double>(), 0.198, 0.003);
  EXPECT_NEAR(entry["p99_ratio"]["point"].get<double>(), 2.0, 0.05) << "the baseline's tail is twice as long";
  EXPECT_FALSE(baseline.goal_metrics["recorded"]["tpot_s"].contains("p99_ratio")) << "no ratio to itself";
}

}  // namespace

// Note [short calls]: which timing mode a pair is sampled in.
#include <gtest/gtest.h>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "runner/timing_choice.hpp"

namespace {

aisp::pair gpu_pair(const char* target) { return aisp::pair(target); }

TEST(timing_choice, a_pair_that_declares_short_calls_is_timed_in_graph_mode_with_its_reason) {
  auto declared = gpu_pair("test:short");
  declared.short_calls("routing 16384 tokens takes ~20 us; its logits come from L2 in a model too");
  const aisp::run_config config;  // the user left --mode alone
  const auto choice = aisp::timing_for(declared, config);
  EXPECT_EQ(choice.mode, aisp::timing_mode::graph);
  EXPECT_NE(choice.reason.find("routing 16384 tokens"), std::string::npos);
}

TEST(timing_choice, the_users_mode_overrides_the_pairs_declaration) {
  auto declared = gpu_pair("test:short");
  declared.short_calls("short");
  for (const auto mode : {aisp::timing_mode::cold, aisp::timing_mode::hot, aisp::timing_mode::graph}) {
    aisp::run_config config;
    config.mode = mode;
    config.mode_chosen = true;
    const auto choice = aisp::timing_for(declared, config);
    EXPECT_EQ(choice.mode, mode);
    EXPECT_TRUE(choice.reason.empty());
  }
}

TEST(timing_choice, pairs_without_the_declaration_and_host_pairs_keep_the_runs_mode) {
  const aisp::run_config config;
  EXPECT_EQ(aisp::timing_for(gpu_pair("test:plain"), config).mode, aisp::timing_mode::cold);
  auto host = gpu_pair("test:host");
  host.on(aisp::backend::host).short_calls("a host pair has no graph mode");
  EXPECT_EQ(aisp::timing_for(host, config).mode, aisp::timing_mode::cold);
}

// Note [goals]: a latency pair's samples are single calls whatever --mode says, with the reason.
TEST(timing_choice, a_latency_pair_is_timed_one_call_a_sample) {
  auto declared = gpu_pair("test:latency");
  declared.pursue(aisp::goal::latency).short_calls("short, but a p99 of averages is no call's");
  aisp::run_config config;
  config.mode = aisp::timing_mode::hot;
  config.mode_chosen = true;
  const auto choice = aisp::timing_for(declared, config);
  EXPECT_EQ(choice.mode, aisp::timing_mode::cold);
  EXPECT_NE(choice.reason.find("latency"), std::string::npos);
}

TEST(timing_choice, a_declaration_without_a_reason_is_refused) {
  auto declared = gpu_pair("test:short");
  EXPECT_THROW(declared.short_calls(""), aisp::contract_error);
}

}  // namespace

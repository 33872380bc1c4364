// Note [short calls]: which timing mode a pair is sampled in; Note [launch gate]: whether the gate holds it.
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
  EXPECT_THROW(declared.times_host_launches(""), aisp::contract_error);
  // Note [declared threads]: more than one thread needs its reason; the count is 1 to 256.
  EXPECT_THROW(declared.host_threads(2, ""), aisp::contract_error);
  EXPECT_THROW(declared.host_threads(0, "none"), aisp::contract_error);
  EXPECT_THROW(declared.host_threads(aisp::max_host_threads + 1, "too many"), aisp::contract_error);
  EXPECT_EQ(declared.host_threads(1, "").host_threads(), 1);
  EXPECT_EQ(declared.host_threads(4, "a pool of three helpers").host_threads(), 4);
  EXPECT_EQ(declared.host_threads_reason(), "a pool of three helpers");
}

TEST(timing_choice, the_launch_gate_holds_gpu_pairs_by_default_and_never_one_that_times_host_launches_or_migrates_managed_memory) {
  const aisp::run_config config;  // the user left --launch-gate alone
  const auto plain = aisp::timing_for(gpu_pair("test:plain"), config);
  EXPECT_TRUE(plain.launch_gate);
  EXPECT_TRUE(plain.launch_gate_reason.empty());

  auto launches = gpu_pair("test:launches");
  launches.times_host_launches("one launch per vector against one for the batch");
  const auto declared = aisp::timing_for(launches, config);
  EXPECT_FALSE(declared.launch_gate);
  EXPECT_NE(declared.launch_gate_reason.find("one launch per vector"), std::string::npos);

  auto managed = gpu_pair("test:managed");
  managed.allow_managed_memory();
  const auto migrating = aisp::timing_for(managed, config);
  EXPECT_FALSE(migrating.launch_gate);
  EXPECT_NE(migrating.launch_gate_reason.find("managed memory"), std::string::npos);

  auto ranks = gpu_pair("test:ranks");
  ranks.world_size(2);
  EXPECT_FALSE(aisp::timing_for(ranks, config).launch_gate);
  auto host = gpu_pair("test:host");
  host.on(aisp::backend::host);
  EXPECT_FALSE(aisp::timing_for(host, config).launch_gate);
}

TEST(timing_choice, no_launch_gate_turns_the_gate_off_for_every_pair_without_a_reason) {
  aisp::run_config config;
  config.launch_gate = false;  // --no-launch-gate
  auto launches = gpu_pair("test:launches");
  launches.times_host_launches("graphs");
  for (const auto& p : {gpu_pair("test:plain"), launches}) {
    const auto choice = aisp::timing_for(p, config);
    EXPECT_FALSE(choice.launch_gate);
    EXPECT_TRUE(choice.launch_gate_reason.empty());
  }
}

}  // namespace

// A finished run's recorded state from its results (history_store.hpp run_state_of): the state
// `bench run` records and `bench merge` folds in must agree, so a failed run merged is not
// "complete" and a run that measured nothing is not either.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "history/history_store.hpp"

namespace {

using nlohmann::json;

json run_of(std::initializer_list<const char*> statuses) {
  json pairs = json::array();
  for (const char* status : statuses) pairs.push_back({{"target", "t"}, {"status", status}});
  return {{"pairs", pairs}};
}

TEST(run_state, follows_the_pairs_statuses) {
  EXPECT_EQ(aisp::run_state_of(run_of({"pass", "pass"})), "complete");
  EXPECT_EQ(aisp::run_state_of(run_of({"pass", "skip"})), "complete");
  EXPECT_EQ(aisp::run_state_of(run_of({"pass", "fail", "skip"})), "failed");
  EXPECT_EQ(aisp::run_state_of(run_of({"skip", "skip"})), "skipped");
  EXPECT_EQ(aisp::run_state_of(run_of({})), "complete");
  auto interrupted = run_of({"pass", "fail"});
  interrupted["interrupted_by"] = "Interrupt";
  EXPECT_EQ(aisp::run_state_of(interrupted), "interrupted");
}

}  // namespace

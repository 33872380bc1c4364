// Note [batch reuse] (src/runner/call_reuse.cpp): in --mode hot, a variant that does its work
// once a batch (the calls after the first find their inputs and outputs as it left them) fails
// batch-reuse with X2, and an honest variant of the same pair passes every check. Their pairs
// (group hot_mode, call_reuse_cheats.cpp) need a hot run of their own: in the cold suite run
// every call is a sample's only call, and the cheat does the work every time.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cheat_test_support.hpp"

namespace {

using nlohmann::json;

const json* pair_of(const json& results, const std::string& target) {
  if (!results.contains("pairs")) return nullptr;
  for (const auto& pair : results.at("pairs")) {
    if (pair.value("target", "") == target) return &pair;
  }
  return nullptr;
}

const json* check_of(const json& pair, const std::string& name) {
  if (!pair.contains("checks")) return nullptr;
  for (const auto& check : pair.at("checks")) {
    if (check.value("check", "") == name && check.value("variant", "") == "optimized") return &check;
  }
  return nullptr;
}

TEST(batch_reuse, work_done_once_a_hot_batch_fails_and_the_honest_variant_passes) {
  const auto dir = (std::filesystem::temp_directory_path() / ("aisp_batch_reuse_" + std::to_string(::getpid()))).string();
  const auto judged = aisp::cheat_testing::judge_with_one_retake("hot_mode", dir, "0.3", "--mode hot");
  ASSERT_FALSE(judged.results.is_discarded()) << judged.run.output;

  const json* cheat = pair_of(judged.results, "hot_mode:x2_work_once_a_batch");
  ASSERT_NE(cheat, nullptr) << judged.run.output;
  const json* caught = check_of(*cheat, "batch-reuse");
  ASSERT_NE(caught, nullptr) << cheat->dump(1).substr(0, 3000);
  EXPECT_FALSE(caught->value("passed", true)) << caught->dump();
  EXPECT_NE(caught->value("codes", json::array()).dump().find("X2"), std::string::npos) << caught->dump();
  EXPECT_NE(caught->value("detail", "").find("its timed hot median"), std::string::npos) << caught->dump();

  // The baseline's own ratio lends the host candidate at most 1.25x (red team six, 2026-12-04).
  const json* lent = pair_of(judged.results, "hot_mode:x2_reuse_lent_by_the_baseline");
  ASSERT_NE(lent, nullptr) << judged.run.output;
  const json* lent_caught = check_of(*lent, "batch-reuse");
  ASSERT_NE(lent_caught, nullptr) << lent->dump(1).substr(0, 3000);
  EXPECT_FALSE(lent_caught->value("passed", true)) << lent_caught->dump();

  const json* honest = pair_of(judged.results, "hot_mode:honest_unrolled");
  ASSERT_NE(honest, nullptr) << judged.run.output;
  for (const auto& check : honest->value("checks", json::array())) EXPECT_TRUE(check.value("passed", false)) << check.dump();
  const json* probed = check_of(*honest, "batch-reuse");
  ASSERT_NE(probed, nullptr) << "a hot pair's candidate is probed one call at a time";
  EXPECT_NE(probed->value("detail", "").find("one call a sample"), std::string::npos) << probed->dump();
  std::filesystem::remove_all(dir);
}

}  // namespace

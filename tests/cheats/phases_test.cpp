// The enforcement phases on one planted cheat (O1, a constant output): gate fails the pair and
// voids its verdict, detect records and passes, quarantine records and persists the target.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cheat_test_support.hpp"

namespace {

using nlohmann::json;

struct phase_run {
  int exit_code = -1;
  json pair;
  std::string dir;
};

phase_run run_phase(const std::string& phase) {
  phase_run run;
  run.dir = (std::filesystem::temp_directory_path() / ("aisp_phase_" + phase + "_" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(run.dir);
  const auto result = aisp::cheat_testing::run_command(
      aisp::cheat_testing::cheats_binary() + " bench run --targets cheats:o1_constant_output --verify-phase " + phase +
      " --quarantine-file " + run.dir + "/quarantine.json --max-time 0.2 --min-time 0.05 --quiet --artifacts-dir " +
      run.dir + " 2>/dev/null");
  run.exit_code = result.exit_code;
  std::ifstream file(run.dir + "/results.json");
  run.pair = json::parse(file)["pairs"][0];
  return run;
}

TEST(verify_phase, gate_fails_the_pair_and_voids_its_verdict) {
  const auto run = run_phase("gate");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.pair["status"], "fail");
  EXPECT_EQ(run.pair["failure_kind"], "verify");
  EXPECT_EQ(run.pair["speedups"][0]["verdict"], "invalid");
}

TEST(verify_phase, detect_records_the_failure_and_lets_the_pair_pass) {
  const auto run = run_phase("detect");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.pair["status"], "pass");
  EXPECT_TRUE(run.pair["flagged"].get<bool>());
  EXPECT_FALSE(std::filesystem::exists(run.dir + "/quarantine.json"));
}

TEST(verify_phase, quarantine_persists_the_target_with_its_codes_and_the_report_lists_it) {
  const auto run = run_phase("quarantine");
  EXPECT_EQ(run.exit_code, 0);
  std::ifstream file(run.dir + "/quarantine.json");
  const auto entries = json::parse(file)["entries"];
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["target"], "cheats:o1_constant_output");
  const auto codes = entries[0]["codes"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(codes.begin(), codes.end(), "O1"), codes.end());
  const auto report = aisp::cheat_testing::run_command(aisp::cheat_testing::cheats_binary() +
                                                       " bench quarantine-report --quarantine-file " + run.dir + "/quarantine.json");
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_NE(report.output.find("cheats:o1_constant_output"), std::string::npos) << report.output;
}

}  // namespace

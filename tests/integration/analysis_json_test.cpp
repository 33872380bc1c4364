// The analysis commands' JSON says null where nothing was measured: a host pair has no energy,
// and 0 J read as a measurement (a user's walkthrough, 2026-12-04).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"

namespace {

TEST(analysis_json, energy_not_measured_is_null) {
  const auto dir = (std::filesystem::temp_directory_path() / ("aisp_analysis_json_" + std::to_string(::getpid()))).string();
  const auto aisp = aisp::testing::aisp_binary();
  const auto run = aisp::testing::run_command(aisp + " bench run --targets labs/host:matrix_sum --size rows=512 --max-time 0.5 --quiet --history none "
                                              "--artifacts-dir " + dir);
  ASSERT_TRUE(std::filesystem::exists(dir + "/results.json")) << run.output;  // the verdict does not matter here
  const auto power = aisp::testing::run_command(aisp + " bench power --run " + dir + " --json", false);
  const auto rows = nlohmann::json::parse(power.output, nullptr, false);
  ASSERT_TRUE(rows.is_array() && !rows.empty()) << power.output;
  for (const auto& row : rows) EXPECT_TRUE(row.at("energy_per_call_j").is_null()) << row.dump();
  std::filesystem::remove_all(dir);
}

}  // namespace

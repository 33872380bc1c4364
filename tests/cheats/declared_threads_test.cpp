// Note [declared threads] end to end: a host pair that declares host_threads(2) and splits each
// call with one helper of a pool started in setup() passes every check, its declaration carried
// in results.json; the same pool of three helpers fails worker-cpu (the planted
// cheats:l5_helper_beyond_declared_threads, in the suite run of planted_cheats_test.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "cheat_test_support.hpp"

namespace {

using nlohmann::json;

TEST(declared_threads, a_pool_within_its_declaration_passes_every_check) {
  const auto dir = (std::filesystem::temp_directory_path() / ("aisp_declared_pool_" + std::to_string(::getpid()))).string();
  const auto [results, run] = aisp::cheat_testing::judge_with_one_retake("declared_pools:one_helper", dir, "0.5");
  ASSERT_FALSE(results.is_discarded()) << run.output;
  ASSERT_FALSE(results.value("pairs", json::array()).empty()) << run.output;
  const json pair = results["pairs"][0];
  EXPECT_EQ(pair.value("host_threads", 0), 2) << pair.dump(1).substr(0, 2000);
  EXPECT_NE(pair.value("host_threads_reason", json()).dump().find("a pool of one helper"), std::string::npos);
  for (const auto& check : pair.value("checks", json::array()))
    EXPECT_TRUE(check.value("passed", false)) << check.dump();
  EXPECT_EQ(pair.value("status", ""), "pass") << run.output;
  std::filesystem::remove_all(dir);
}

}  // namespace

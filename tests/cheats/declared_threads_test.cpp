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
  json pair;
  aisp::cheat_testing::command_result run;
  for (int attempt = 0; attempt < 2; ++attempt) {  // one retake when only a load-sensitive check failed
    std::filesystem::remove_all(dir);
    run = aisp::cheat_testing::run_command(aisp::cheat_testing::cheats_binary() +
                                           " bench run --targets declared_pools:one_helper --max-time 0.5 --min-time 0.05"
                                           " --quiet --history none --artifacts-dir " + dir + " 2>&1");
    if (attempt == 0 && aisp::testing::failed_only_load_sensitive(dir + "/results.json")) continue;
    break;
  }
  std::ifstream file(dir + "/results.json");
  const auto results = json::parse(file, nullptr, false);
  ASSERT_FALSE(results.is_discarded()) << run.output;
  ASSERT_FALSE(results.value("pairs", json::array()).empty()) << run.output;
  pair = results["pairs"][0];
  EXPECT_EQ(pair.value("host_threads", 0), 2) << pair.dump(1).substr(0, 2000);
  EXPECT_NE(pair.value("host_threads_reason", json()).dump().find("a pool of one helper"), std::string::npos);
  for (const auto& check : pair.value("checks", json::array()))
    EXPECT_TRUE(check.value("passed", false)) << check.dump();
  EXPECT_EQ(pair.value("status", ""), "pass") << run.output;
  std::filesystem::remove_all(dir);
}

}  // namespace

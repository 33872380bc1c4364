// A cache keyed by part of its input is caught as a cache (O2) even when the jitter challenge
// perturbs its key: the output then moves once and stays for the other positions, which is also
// the signature of an ignored part of the input (W8). Seeds 58 and 102 put one of the jitter's 8
// positions on x[0] of the 1000-element validation size (Note [spread positions]); before the
// fix the pair failed only `jitter-partial` there (1 suite run in ~125, seen in CI).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "cheat_test_support.hpp"

namespace {

using nlohmann::json;

class jitter_on_the_key : public ::testing::TestWithParam<int> {};

TEST_P(jitter_on_the_key, a_cache_keyed_by_x0_fails_jitter_with_o2_and_jitter_partial_with_w8) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("aisp_jitter_key_" + std::to_string(GetParam()) + "_" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  aisp::cheat_testing::run_command(aisp::cheat_testing::cheats_binary() +
                                   " bench run --targets cheats:o2_cached_by_first_element --seed " + std::to_string(GetParam()) +
                                   " --max-time 0.2 --min-time 0.05 --history none --quiet --artifacts-dir " + dir + " 2>/dev/null");
  std::ifstream file(dir + "/results.json");
  ASSERT_TRUE(file.good()) << "no results in " << dir;
  const json pair = json::parse(file)["pairs"][0];
  std::set<std::string> failed;  // "check code" of the optimized variant's failed checks
  for (const auto& check : pair["checks"]) {
    if (check.value("passed", true) || check.value("variant", "") != "optimized") continue;
    for (const auto& code : check.value("codes", json::array())) failed.insert(check.value("check", "") + " " + code.get<std::string>());
  }
  EXPECT_TRUE(failed.count("jitter O2") > 0) << "seed " << GetParam() << ": the cache was not caught as one";
  EXPECT_TRUE(failed.count("jitter-partial W8") > 0) << "seed " << GetParam() << ": the jitter did not hit x[0] at this seed any more";
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(seeds_whose_jitter_hits_x0, jitter_on_the_key, ::testing::Values(58, 102));

}  // namespace

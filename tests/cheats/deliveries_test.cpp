// Note [witnessed deliveries] end to end (tests/cheats/delivery_fixtures.cpp): the honest toy
// server is judged `faster` on the TPOT the judge timed, and each way of bending that time ends
// its pair with the reason.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cheat_test_support.hpp"

namespace {

using nlohmann::json;

struct delivery_run {
  std::string output;
  std::map<std::string, json> pairs;  // by target
};

const delivery_run& the_run() {
  static const delivery_run run = [] {
    delivery_run made;
    const auto dir = (std::filesystem::temp_directory_path() / ("aisp_deliveries_" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(dir);
    made.output = aisp::cheat_testing::run_command(aisp::cheat_testing::cheats_binary() +
                                                   " bench run --targets deliveries --max-time 2.5 --min-time 0.05 --quiet "
                                                   "--history none --artifacts-dir " + dir + " 2>&1")
                      .output;
    std::ifstream file(dir + "/results.json");
    const auto results = json::parse(file, nullptr, false);
    if (!results.is_discarded() && results.contains("pairs"))
      for (const auto& p : results["pairs"]) made.pairs[p.value("target", "")] = p;
    std::filesystem::remove_all(dir);
    return made;
  }();
  return run;
}

const json& pair_named(const std::string& name) {
  static const json missing;
  const auto& run = the_run();
  const auto found = run.pairs.find("deliveries:" + name);
  if (found == run.pairs.end()) {
    ADD_FAILURE() << "deliveries:" << name << " is missing from the results:\n" << run.output;
    return missing;
  }
  return found->second;
}

TEST(deliveries, the_honest_server_is_judged_faster_on_the_tpot_the_judge_timed) {
  const auto& p = pair_named("honest");
  ASSERT_TRUE(p.is_object());
  EXPECT_EQ(p.value("status", ""), "pass") << p.dump(1);
  ASSERT_FALSE(p["speedups"].empty());
  EXPECT_EQ(p["speedups"][0].value("verdict", ""), "faster") << p["speedups"][0].dump();
  // Three steps a launch against one: the judge's TPOT p99s are about 3x apart.
  EXPECT_GT(p["speedups"][0]["speedup"].value("point", 0.0), 1.5) << p["speedups"][0].dump();
  // The judge's own TPOT: a launch of three steps of 1 ms for the baseline, one for the optimized.
  for (const auto& v : p["variants"]) {
    const auto recorded = v["goal_metrics"].value("recorded", json::object());
    for (const char* metric : {"tpot_s", "ttft_s"}) EXPECT_TRUE(recorded.contains(metric)) << metric << " in " << recorded.dump();
    const double steps = v.value("name", "") == "optimized" ? 1 : 3;
    EXPECT_NEAR(recorded["tpot_s"]["p50"].value("point", 0.0), steps * 1e-3, steps * 0.3e-3) << v.value("name", "");
  }
}

// Each dodge's pair fails, and its message says what the variant did.
TEST(deliveries, each_dodge_of_the_judges_clock_fails_its_pair_with_the_reason) {
  const std::map<std::string, std::string> reasons = {
      {"records_its_own_tpot", "is the judge's to record"},
      {"delivers_before_making", "before it was made"},
      {"delivers_before_arrival", "before it arrived"},
      {"hides_the_slow_tokens", "the rest went unseen"},
  };
  for (const auto& [name, reason] : reasons) {
    const auto& p = pair_named(name);
    if (!p.is_object()) continue;
    EXPECT_EQ(p.value("status", ""), "fail") << name << ": " << p.dump(1);
    EXPECT_NE(p.dump().find(reason), std::string::npos) << name << " does not say '" << reason << "': " << p.value("message", "");
  }
}

}  // namespace

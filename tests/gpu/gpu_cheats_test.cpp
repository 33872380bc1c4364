// Every GPU planted cheat (group cheats_gpu: tests/cheats/gpu_cheats.cu and tests/gpu/cheats/)
// through the real judge on the device: each must be caught with the code of its row, and its
// honest baseline must stay clean. Skips visibly without a GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "../cheats/cheat_test_support.hpp"
#include "gpu_guard.hpp"

namespace {

using nlohmann::json;

struct gpu_suite {
  int exit_code = -1;
  std::string output;
  std::map<std::string, json> pairs;
};

const gpu_suite& the_gpu_suite() {
  static const gpu_suite suite = [] {
    gpu_suite made;
    const auto dir = std::filesystem::temp_directory_path() / ("aisp_gpu_cheats_" + std::to_string(getpid()));
    auto results_path = aisp::cheat_testing::environment_or("AISP_GPU_CHEAT_RESULTS");
    if (results_path.empty()) {
      std::filesystem::remove_all(dir);
      const auto run = aisp::cheat_testing::run_command(
          "timeout -k 10 900 " + aisp::cheat_testing::cheats_binary() +
          " bench run --targets cheats_gpu --verify-phase detect --max-time 0.3 --min-time 0.05 --worker-timeout 60 --quiet"
          " --artifacts-dir " + dir.string() + " 2>&1");
      made.exit_code = run.exit_code;
      made.output = run.output;
      results_path = (dir / "results.json").string();
    }
    std::ifstream file(results_path);
    auto results = json::parse(file, nullptr, false);
    if (!results.is_discarded()) {
      aisp::cheat_testing::apply_mutant(results);
      for (const auto& p : results["pairs"]) made.pairs[p["target"].get<std::string>()] = p;
    }
    return made;
  }();
  return suite;
}

class gpu_planted_cheat : public ::testing::TestWithParam<aisp::cheat_testing::fixture> {};

TEST_P(gpu_planted_cheat, is_caught_with_its_code_and_its_baseline_stays_clean) {
  // A device run's results, replayed (mutation testing), need no GPU here.
  if (aisp::cheat_testing::environment_or("AISP_GPU_CHEAT_RESULTS").empty()) AISP_REQUIRE_GPU();
  const auto& f = GetParam();
  const auto& suite = the_gpu_suite();
  const auto found = suite.pairs.find(f.target);
  ASSERT_NE(found, suite.pairs.end()) << "no result for " << f.target << "; exit " << suite.exit_code << ": " << suite.output;
  bool caught = false;
  std::string seen;
  // A cheat in the pair itself (E4: a workload that cannot fit) fails whichever variant it reaches.
  const bool in_pair = aisp::cheat_testing::cheat_is_in_the_pair(f.code);
  for (const auto& check : found->second["checks"]) {
    if (check.value("passed", true)) continue;
    const auto codes = check.value("codes", std::vector<std::string>{});
    const auto variant = check.value("variant", "");
    seen += variant + " " + check.value("check", "") + " [" + check.dump() + "]\n";
    const bool carries_code = std::find(codes.begin(), codes.end(), f.code) != codes.end();
    if ((variant == "optimized" || in_pair) && carries_code) caught = true;
    if (!in_pair) {
      EXPECT_NE(variant, "baseline") << f.target << ": the honest baseline failed " << check.dump();
    }
  }
  EXPECT_TRUE(caught) << f.target << " was not caught with " << f.code << "; failed checks:\n" << seen;
  for (const auto& name : f.checks)
    EXPECT_TRUE(aisp::cheat_testing::failed_check(found->second, name, !in_pair))
        << f.target << ": the cheat did not fail " << name;
}

std::vector<aisp::cheat_testing::fixture> gpu_fixtures() { return aisp::cheat_testing::list_fixtures("cheats_gpu").fixtures; }

INSTANTIATE_TEST_SUITE_P(cheats_gpu, gpu_planted_cheat, ::testing::ValuesIn(gpu_fixtures()),
                         [](const ::testing::TestParamInfo<aisp::cheat_testing::fixture>& param_info) {
                           std::string name = param_info.param.target.substr(param_info.param.target.find(':') + 1);
                           return name;
                         });

}  // namespace

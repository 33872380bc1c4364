// The multi-GPU planted cheats (group cheats_multi_gpu, tests/gpu/cheats/rank_cheats.cu) through
// the real judge, one worker per rank: each is caught with the code of its row, its honest
// baseline stays clean, and every result records the ranks' topology (D3). Skips visibly where
// fewer than two GPUs are usable.
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

int usable_gpus() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

#define AISP_REQUIRE_TWO_GPUS()                                                                                   \
  do {                                                                                                            \
    if (aisp::cheat_testing::environment_or("AISP_MULTI_GPU_CHEAT_RESULTS").empty() && usable_gpus() < 2)         \
      GTEST_SKIP() << "needs two GPUs; this machine has " << usable_gpus();                                       \
  } while (0)

const std::map<std::string, json>& the_multi_gpu_suite() {
  static const std::map<std::string, json> pairs = [] {
    std::map<std::string, json> made;
    auto results_path = aisp::cheat_testing::environment_or("AISP_MULTI_GPU_CHEAT_RESULTS");
    if (results_path.empty()) {
      const auto dir = std::filesystem::temp_directory_path() / ("aisp_multi_gpu_cheats_" + std::to_string(getpid()));
      std::filesystem::remove_all(dir);
      const auto run = aisp::cheat_testing::run_command(
          "timeout -k 10 600 " + aisp::cheat_testing::cheats_binary() +
          " bench run --targets cheats_multi_gpu --verify-phase detect --max-time 0.3 --min-time 0.05 --worker-timeout 120"
          " --quiet --artifacts-dir " + dir.string() + " 2>&1");
      results_path = (dir / "results.json").string();
      if (!std::filesystem::exists(results_path)) ADD_FAILURE() << "exit " << run.exit_code << ": " << run.output;
    }
    std::ifstream file(results_path);
    auto results = json::parse(file, nullptr, false);
    if (!results.is_discarded()) {
      for (const auto& p : results["pairs"]) made[p["target"].get<std::string>()] = p;
    }
    return made;
  }();
  return pairs;
}

class multi_gpu_planted_cheat : public ::testing::TestWithParam<aisp::cheat_testing::fixture> {};

TEST_P(multi_gpu_planted_cheat, is_caught_with_its_code_and_its_baseline_stays_clean) {
  AISP_REQUIRE_TWO_GPUS();
  const auto& f = GetParam();
  const auto& suite = the_multi_gpu_suite();
  const auto found = suite.find(f.target);
  ASSERT_NE(found, suite.end()) << "no result for " << f.target;
  const json& pair = found->second;
  EXPECT_EQ(pair.value("ranks", json::object()).value("world_size", 0), 2) << pair.dump();
  EXPECT_EQ(pair["ranks"]["peer_access"].size(), 2u) << "D3: the ranks' topology is recorded";
  for (const auto& v : pair["variants"]) {
    const auto busy = v.value("device_audit", json::object()).value("ranks_busy_median", std::vector<double>{});
    EXPECT_EQ(busy.size(), 2u) << "D7: each rank's busy share is recorded: " << v.value("device_audit", json::object()).dump();
  }
  bool caught = false;
  std::string seen;
  for (const auto& check : pair["checks"]) {
    if (check.value("passed", true)) continue;
    const auto codes = check.value("codes", std::vector<std::string>{});
    seen += check.dump() + "\n";
    if (check.value("variant", "") == "optimized" && std::find(codes.begin(), codes.end(), f.code) != codes.end()) caught = true;
    EXPECT_NE(check.value("variant", ""), "baseline") << f.target << ": the honest baseline failed " << check.dump();
  }
  EXPECT_TRUE(caught) << f.target << " was not caught with " << f.code << "; failed checks:\n" << seen;
}

std::vector<aisp::cheat_testing::fixture> multi_gpu_fixtures() {
  return aisp::cheat_testing::list_fixtures("cheats_multi_gpu").fixtures;
}

INSTANTIATE_TEST_SUITE_P(cheats_multi_gpu, multi_gpu_planted_cheat, ::testing::ValuesIn(multi_gpu_fixtures()),
                         [](const ::testing::TestParamInfo<aisp::cheat_testing::fixture>& param_info) {
                           return param_info.param.target.substr(param_info.param.target.find(':') + 1);
                         });

}  // namespace

// Issue 20: a planted stream escape through --plugin is caught as in the lab (T1), and the
// plugin's honest baseline, whose kernels run through the plugin's own CUDA runtime on the
// harness's stream (Note [plugins]), passes. Skips visibly without a GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "gpu_guard.hpp"

namespace {

TEST(plugin_cheats_gpu, a_stream_escape_through_a_plugin_is_caught_and_its_honest_baseline_is_clean) {
  AISP_REQUIRE_GPU();
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_plugin_escape_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const auto run = aisp::testing::run_command("timeout -k 10 300 " + aisp::testing::aisp_binary() + " bench run --plugin " +
                                              std::string(AISP_TEST_PLUGIN_DIR) + "/libstream_escape.so" +
                                              " --targets plugin_cheat:stream_escape --max-time 0.5 --quiet --history none --artifacts-dir " +
                                              dir.string());
  EXPECT_EQ(run.exit_code, 1) << run.output;
  std::ifstream file(dir / "results.json");
  const auto results = nlohmann::json::parse(file, nullptr, false);
  ASSERT_FALSE(results.is_discarded()) << run.output;
  const auto& pair = results.at("pairs").at(0);
  bool escape_caught = false;
  for (const auto& check : pair.at("checks")) {
    if (check.value("passed", true)) continue;
    const auto variant = check.value("variant", "");
    EXPECT_EQ(variant, "optimized") << "the honest baseline failed " << check.dump();
    escape_caught = escape_caught || check.value("check", "").rfind("escaped", 0) == 0;
  }
  EXPECT_TRUE(escape_caught) << pair.at("checks").dump(1);
  std::filesystem::remove_all(dir);
}

}  // namespace

// Issue 20: planted cheats through a CUDA --plugin are caught as in the lab, though the plugin's
// kernels go through its own CUDA runtime on the harness's stream (Note [plugins]): a stream
// escape (T1) and a failed launch left unchecked (X8, read from the plugin's own last-error
// slot); each plugin's honest baseline passes; and a stream escape in a PyTorch pair through
// --python. Skips visibly without a GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "gpu_guard.hpp"

namespace {

// The failed checks of the optimized variant of TARGET, loaded by `load` (--plugin or --python);
// any failed check of another variant fails the test.
std::vector<std::string> failed_checks_of_optimized(const std::string& target,
                                                    const std::string& load = "--plugin " + aisp::testing::test_plugin_dir() +
                                                                              "/libcuda_cheats.so") {
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_plugin_cheat_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const auto run = aisp::testing::run_command("timeout -k 10 300 " + aisp::testing::aisp_binary() + " bench run " + load + " --targets " + target +
                                              " --max-time 0.5 --quiet --history none --artifacts-dir " + dir.string());
  EXPECT_EQ(run.exit_code, 1) << run.output;
  std::ifstream file(dir / "results.json");
  const auto results = nlohmann::json::parse(file, nullptr, false);
  std::vector<std::string> failed;
  if (results.is_discarded()) {
    ADD_FAILURE() << run.output;
    return failed;
  }
  for (const auto& check : results.at("pairs").at(0).at("checks")) {
    if (check.value("passed", true)) continue;
    EXPECT_EQ(check.value("variant", ""), "optimized") << "an honest variant failed " << check.dump();
    failed.push_back(check.value("check", ""));
  }
  std::filesystem::remove_all(dir);
  return failed;
}

bool has(const std::vector<std::string>& checks, const std::string& prefix) {
  for (const auto& c : checks)
    if (c.rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(plugin_cheats_gpu, a_stream_escape_through_a_plugin_is_caught) {
  AISP_REQUIRE_GPU();
  const auto failed = failed_checks_of_optimized("plugin_cheat:stream_escape");
  EXPECT_TRUE(has(failed, "escaped")) << ::testing::PrintToString(failed);
}

// Note [device fast math]: the candidate's unit is built with nvcc --use_fast_math, which the
// plugin's host build record never sees; its kernel's SASS (every FP32 operation .FTZ) does.
TEST(plugin_cheats_gpu, a_kernel_built_with_device_fast_math_fails_build_symmetry) {
  AISP_REQUIRE_GPU();
  const auto failed =
      failed_checks_of_optimized("plugin_cheat:device_fast_math", "--plugin " + aisp::testing::test_plugin_dir() + "/libdevice_fast_math.so");
  EXPECT_TRUE(has(failed, "build-symmetry")) << ::testing::PrintToString(failed);
}

// The same escape in PyTorch: the optimized variant multiplies on a side stream it never joins
// back to the harness's (tests/python/cuda_cheats.py; Note [python bridge]).
TEST(plugin_cheats_gpu, a_stream_escape_through_a_python_pair_is_caught) {
  AISP_REQUIRE_GPU();
  const auto failed = failed_checks_of_optimized("py_cuda_cheat:stream_escape",
                                                 "--python " + aisp::testing::source_dir() + "/tests/python/cuda_cheats.py");
  EXPECT_TRUE(has(failed, "escaped")) << ::testing::PrintToString(failed);
}

TEST(plugin_cheats_gpu, a_failed_launch_left_unchecked_in_a_plugin_is_caught) {
  AISP_REQUIRE_GPU();
  const auto failed = failed_checks_of_optimized("plugin_cheat:silent_failed_launch");
  EXPECT_TRUE(has(failed, "launch-error")) << ::testing::PrintToString(failed);
}

}  // namespace

// Every GPU pair through the real binary, with a tiny budget, in each timing mode: verified on
// its odd validation and held-out sizes, and no failures. Skips visibly without a GPU.
#include <gtest/gtest.h>

#include "gpu_guard.hpp"

#include <cuda_runtime_api.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"

namespace {

using nlohmann::json;


class every_gpu_pair : public ::testing::TestWithParam<const char*> {};

TEST_P(every_gpu_pair, verifies_and_times_in_this_mode) {
  AISP_REQUIRE_GPU();
  const std::string mode = GetParam();
  const auto dir = (std::filesystem::temp_directory_path() / ("aisp_gpu_pairs_" + mode)).string();
  std::filesystem::remove_all(dir);
  // Every pair in cold mode; two of them (a plain kernel, and a memset plus kernel) in the
  // batched modes. `bench verify`: the whole battery, a token of sampling in the mode.
  const std::string targets = mode == "cold" ? "all" : "ch07:vectorized_copy ch07:block_reduce";
  const auto run = aisp::testing::run_command(aisp::testing::aisp_binary() + " bench verify --targets " + targets + " --mode " + mode +
                                              " --quiet --artifacts-dir " + dir);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::ifstream file(dir + "/results.json");
  const auto results = json::parse(file);
  int gpu_pairs = 0;
  for (const auto& pair : results["pairs"]) {
    SCOPED_TRACE(pair["target"].get<std::string>());
    EXPECT_EQ(pair["status"], "pass") << pair["message"];
    if (pair["backend"] == "cuda") {
      ++gpu_pairs;
      EXPECT_EQ(pair["timing_mode"], mode);
    }
    for (const auto& v : pair["variants"]) {
      if (v["name"] != "baseline_twin") {
        EXPECT_TRUE(v["verified"].get<bool>()) << v["name"];
      }
      EXPECT_GE(v["calls_per_sample"].get<int>(), 1);
    }
  }
  EXPECT_GE(gpu_pairs, mode == "cold" ? 4 : 2);
}

INSTANTIATE_TEST_SUITE_P(modes, every_gpu_pair, ::testing::Values("cold", "hot", "graph"));

}  // namespace

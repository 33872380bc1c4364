// `--mode graph` works on every pair or skips it with the reason (issue 17): ch01:graph_chain's
// run() launches a CUDA graph, which a stream capture refuses (cudaErrorStreamCaptureUnsupported
// on CUDA 13.0); the pair is skipped with that reason, not failed, and cold mode still times it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "gpu_guard.hpp"

namespace {

TEST(graph_mode, a_pair_whose_run_cannot_be_captured_is_skipped_with_the_reason) {
  AISP_REQUIRE_GPU();
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_graph_mode_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const auto run = aisp::testing::run_command("timeout -k 10 300 " + aisp::testing::aisp_binary() +
                                              " bench verify --targets ch01:graph_chain --mode graph --quiet --history none"
                                              " --artifacts-dir " + dir.string());
  std::ifstream file(dir / "results.json");
  const auto results = nlohmann::json::parse(file, nullptr, false);
  ASSERT_FALSE(results.is_discarded()) << run.output;
  const auto& pair = results["pairs"][0];
  EXPECT_EQ(pair.value("status", ""), "skip") << pair.dump().substr(0, 2000);
  EXPECT_NE(pair.value("message", "").find("cannot be captured into a CUDA graph"), std::string::npos) << pair.value("message", "");
  EXPECT_EQ(run.output.find(".cpp:"), std::string::npos) << run.output;
}

}  // namespace

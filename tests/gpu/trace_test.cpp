// `aisp bench run --trace DIR` on the device: one Chrome/Perfetto trace per pair that follows
// the trace-event format, with every variant's kernels and the harness's phases on its tracks.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "gpu_guard.hpp"
#include "profile/chrome_trace.hpp"

namespace {

using nlohmann::json;

TEST(trace_export, writes_a_valid_trace_with_kernels_and_phases_of_every_variant) {
  AISP_REQUIRE_GPU();
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_trace_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const auto run = aisp::testing::run_command(aisp::testing::aisp_binary() +
                                              " bench run --targets ch07:vectorized_copy --max-time 0.3 --quiet --trace " +
                                              (dir / "traces").string() + " --artifacts-dir " + (dir / "run").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream file(dir / "traces" / "ch07_vectorized_copy.trace.json");
  ASSERT_TRUE(file.good());
  const auto trace = json::parse(file);
  const auto problems = aisp::trace_format_problems(trace);
  EXPECT_TRUE(problems.empty()) << problems.front();
  std::set<std::string> processes;
  std::set<std::string> phases;
  std::size_t kernels = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "process_name") processes.insert(event["args"]["name"].get<std::string>());
    if (event.value("cat", "") == "phase") phases.insert(event["name"].get<std::string>());
    if (event.value("cat", "") == "kernel") ++kernels;
  }
  // Every worker of the pair, its library peer included.
  EXPECT_EQ(processes, (std::set<std::string>{"baseline", "optimized", "peer_memcpy", "baseline_twin"}));
  // traffic: the W3 hardware-counter pass (issue 16), in every worker but the twin's.
  EXPECT_EQ(phases, (std::set<std::string>{"setup", "warmup", "samples", "verify", "traffic"}));
  EXPECT_GT(kernels, 10u);
}

}  // namespace

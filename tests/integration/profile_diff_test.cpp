// `aisp profile diff` through the binary, on a profile.json built from real Nsight Compute
// outputs of ch08:loop_unrolling captured on the H100 (tests/unit/data/ncu/): the baseline's
// run-time tap loop against the optimized register window.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "profile_fixture.hpp"

namespace {

using aisp::testing::run_command;
using nlohmann::json;

json variant_of(const std::string& name, const std::string& capture) { return aisp::testing::profiled_variant(name, capture); }
using aisp::testing::write_profile;

TEST(profile_diff_cli, explains_the_variant_against_the_baseline) {
  const auto dir = write_profile("aisp-profile-diff-one",
                                 json::array({variant_of("baseline", "fir_runtime_loop.csv"), variant_of("optimized", "fir_unrolled.csv")}));
  const auto run = run_command(std::string(AISP_BINARY) + " profile diff " + dir);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("ch08:loop_unrolling: baseline -> optimized"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("fewer instructions issued"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("moved from L1/TEX"), std::string::npos) << run.output;

  const auto as_json = run_command(std::string(AISP_BINARY) + " profile diff " + dir + " --json 2>/dev/null");
  const auto rows = json::parse(as_json.output);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0]["speedup"].get<double>(), 509504.0 / 193056.0, 1e-6);
}

TEST(profile_diff_cli, compares_one_variant_across_two_runs_and_refuses_nonsense) {
  const auto a = write_profile("aisp-profile-diff-a", json::array({variant_of("optimized", "fir_runtime_loop.csv")}));
  const auto b = write_profile("aisp-profile-diff-b", json::array({variant_of("optimized", "fir_unrolled.csv")}));
  const auto run = run_command(std::string(AISP_BINARY) + " profile diff " + a + " " + b);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("optimized -> optimized (run A -> run B)"), std::string::npos) << run.output;

  const auto missing = run_command(std::string(AISP_BINARY) + " profile diff /nonexistent/profile");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no profile at /nonexistent/profile"), std::string::npos) << missing.output;
  const auto nothing = run_command(std::string(AISP_BINARY) + " profile diff " + a);  // one variant: nothing to compare
  EXPECT_EQ(nothing.exit_code, 2) << nothing.output;
  EXPECT_NE(nothing.output.find("nothing to compare"), std::string::npos) << nothing.output;
}

// A profile stored with an older verdict is judged again from its metrics: the 3x3 stencil's
// capture (L2 87.6%, DRAM 82.5%, 60.5% L2 hits) was "L2" before Note [L2 as DRAM's pass-through].
TEST(profile_classify_cli, judges_stored_metrics_again_and_writes_only_when_asked) {
  auto variant = variant_of("baseline", "stencil3x3_tile.csv");
  variant["kernels"][0]["bottleneck"] = {{"class", "memory-bound"}, {"detail", "L2 87.6% of peak"}};
  const auto dir = write_profile("aisp-profile-classify", json::array({variant}));
  const auto dry = run_command(std::string(AISP_BINARY) + " profile classify " + dir);
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("(L2 87.6% of peak) -> memory-bound (DRAM 82.5% of peak"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("1 kernel verdicts changed"), std::string::npos) << dry.output;
  EXPECT_NE(aisp::testing::read_file(dir + "/profile.json").find("L2 87.6% of peak\""), std::string::npos) << "written without --write";
  ASSERT_EQ(run_command(std::string(AISP_BINARY) + " profile classify " + dir + " --write").exit_code, 0);
  const auto again = run_command(std::string(AISP_BINARY) + " profile classify " + dir);
  EXPECT_NE(again.output.find("0 kernel verdicts changed"), std::string::npos) << again.output;
  const auto missing = run_command(std::string(AISP_BINARY) + " profile classify " + dir + "/nothing.json");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("no profile at"), std::string::npos) << missing.output;
}

}  // namespace

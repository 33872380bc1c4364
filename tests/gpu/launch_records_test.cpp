// C7 and C8 are records, not failures: an honest cooperative launch and an honest launch-bound
// variant (a stream synchronization after each small kernel) pass every check, and the
// device-audit summary says how each launched and how busy it kept the device.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../cheats/cheat_test_support.hpp"
#include "gpu_guard.hpp"

namespace {

using nlohmann::json;

const json& launch_shapes(std::string& output) {
  static std::string ran_output;
  static const json pair = [] {
    const auto dir = std::filesystem::temp_directory_path() / ("aisp_launch_records_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    const auto ran = aisp::cheat_testing::run_command(
        "timeout -k 10 300 " + aisp::cheat_testing::cheats_binary() +
        " bench run --targets records_gpu:launch_shapes --verify-phase detect --max-time 0.3 --min-time 0.05"
        " --worker-timeout 60 --quiet --history none --artifacts-dir " + dir.string() + " 2>&1");
    ran_output = ran.output;
    std::ifstream file(dir / "results.json");
    const auto results = file ? json::parse(file, nullptr, false) : json();
    return results.is_object() && results.contains("pairs") && results["pairs"].size() == 1 ? results["pairs"][0] : json();
  }();
  output = ran_output;
  return pair;
}

const json& audit_of(const json& pair, const std::string& variant) {
  static const json none = json::object();
  for (const auto& v : pair["variants"]) {
    if (v.value("name", "") == variant) return v["device_audit"];
  }
  return none;
}

TEST(launch_records, honest_cooperative_and_launch_bound_variants_fail_no_check) {
  AISP_REQUIRE_GPU();
  std::string output;
  const auto& pair = launch_shapes(output);
  ASSERT_TRUE(pair.is_object()) << output;
  for (const auto& check : pair["checks"]) EXPECT_TRUE(check.value("passed", true)) << check.dump() << "\n" << output;
}

TEST(launch_records, the_cooperative_launch_is_recorded_c8) {
  AISP_REQUIRE_GPU();
  std::string output;
  const auto& pair = launch_shapes(output);
  ASSERT_TRUE(pair.is_object()) << output;
  const auto& cooperative = audit_of(pair, "optimized_cooperative");
  ASSERT_TRUE(cooperative.contains("launches")) << cooperative.dump();
  EXPECT_GT(cooperative["launches"].value("cooperative", 0), 0) << cooperative.dump();
  EXPECT_EQ(cooperative["launches"].value("regular", -1), 0) << cooperative.dump();
  EXPECT_EQ(audit_of(pair, "baseline")["launches"].value("cooperative", -1), 0);
}

TEST(launch_records, the_synced_slices_are_launch_bound_and_the_streaming_baseline_is_not_c7) {
  AISP_REQUIRE_GPU();
  std::string output;
  const auto& pair = launch_shapes(output);
  ASSERT_TRUE(pair.is_object()) << output;
  const auto& synced = audit_of(pair, "optimized_synced_slices");
  EXPECT_TRUE(synced.value("launch_bound", false)) << synced.dump();
  EXPECT_LT(synced.value("busy_fraction_median", 1.0), 0.5) << synced.dump();
  EXPECT_LT(synced.value("long_gap_fraction_median", 1.0), 0.5) << synced.dump();
  EXPECT_FALSE(audit_of(pair, "baseline").value("launch_bound", true)) << audit_of(pair, "baseline").dump();
}

}  // namespace

// `aisp bench explain` through the binary: a failed check's row of the validity matrix.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"

namespace {

using aisp::testing::run_command;

TEST(bench_explain, gives_the_row_of_a_code_and_of_a_check_name) {
  const auto text = run_command(std::string(AISP_BINARY) + " bench explain T4");
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("T4  timer granularity  [caught]"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("proven by: `cheats:t4_one_call_per_sample`"), std::string::npos) << text.output;

  const auto as_json = run_command(std::string(AISP_BINARY) + " bench explain outliers timer-resolution --json");
  ASSERT_EQ(as_json.exit_code, 0) << as_json.output;
  const auto rows = nlohmann::json::parse(as_json.output);
  ASSERT_GE(rows.size(), 2u);
  EXPECT_EQ(rows[0]["query"], "outliers");
  EXPECT_EQ(rows[0]["code"], "S2");
  EXPECT_EQ(rows.back()["code"], "T4");
}

// A check a busy machine fails on honest code says so (a user's walkthrough, 2026-12-04).
TEST(bench_explain, a_load_sensitive_check_says_a_busy_machine_can_fail_it) {
  const auto busy = run_command(std::string(AISP_BINARY) + " bench explain host-idle");
  EXPECT_EQ(busy.exit_code, 0) << busy.output;
  EXPECT_NE(busy.output.find("host-idle on a busy machine"), std::string::npos) << busy.output;
  const auto not_load = run_command(std::string(AISP_BINARY) + " bench explain escaped-kernel");
  EXPECT_EQ(not_load.output.find("on a busy machine"), std::string::npos) << not_load.output;
}

}  // namespace

// scripts/sanitize.sh end to end on a host pair, with a stand-in for compute-sanitizer that runs
// the command it wraps and writes the sanitizer's summary line: the plumbing (every tool, every
// target, logs per process, the verdict and the exit code) is checked without a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../test_support.hpp"

namespace {

using aisp::testing::run_command;

class sanitize_script : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("aisp_sanitize_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    stub_ = (dir_ / "compute-sanitizer").string();
    std::ofstream(stub_) << "#!/bin/sh\n"
                            "echo \"$*\" >> \"${STUB_ARGS:-/dev/null}\"\n"
                            "log=''\n"
                            "while [ $# -gt 0 ]; do case \"$1\" in --log-file) log=\"$2\"; shift 2;; --*) shift 2;; *) break;; esac; done\n"
                            "\"$@\"; rc=$?\n"
                            "echo \"========= ERROR SUMMARY: ${STUB_ERRORS:-0} errors\" > \"$(echo \"$log\" | sed \"s/%p/$$/\")\"\n"
                            "[ \"${STUB_ERRORS:-0}\" -gt 0 ] && exit 86\n"
                            "exit $rc\n";
    std::filesystem::permissions(stub_, std::filesystem::perms::owner_all);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  aisp::testing::command_result sanitize(const std::string& errors, const std::string& targets = "labs/host:matrix_sum",
                                         int jobs = 1, const std::string& more_env = "") {
    const auto bin_dir = std::filesystem::path(aisp::testing::aisp_binary()).parent_path().string();
    return run_command("cd " + std::string(AISP_SOURCE_DIR) + " && " + more_env + " STUB_ERRORS=" + errors + " SANITIZE_JOBS=" +
                       std::to_string(jobs) + " COMPUTE_SANITIZER=" + stub_ + " scripts/sanitize.sh " + bin_dir + " " +
                       (dir_ / "out").string() + " " + targets);
  }

  // The stub's arguments (it appends them to STUB_ARGS), for sanitize()'s more_env.
  [[nodiscard]] std::string recording_args() const { return "STUB_ARGS=" + (dir_ / "args").string(); }
  [[nodiscard]] std::string recorded_args() const {
    std::ifstream passed(dir_ / "args");
    return {std::istreambuf_iterator<char>(passed), std::istreambuf_iterator<char>()};
  }

  std::filesystem::path dir_;
  std::string stub_;
};

TEST_F(sanitize_script, a_clean_pair_is_clean_under_both_tools_and_exits_zero) {
  const auto result = sanitize("0");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream summary(dir_ / "out" / "sanitize.txt");
  const std::string text((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("labs/host:matrix_sum"), std::string::npos) << text;
  EXPECT_NE(text.find("memcheck  clean"), std::string::npos) << text;
  EXPECT_NE(text.find("racecheck clean"), std::string::npos) << text;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "out" / "runs" / "labs_host_matrix_sum-memcheck" / "results.json"))
      << "the wrapped bench verify did not run";
}

TEST_F(sanitize_script, errors_reported_by_the_sanitizer_fail_the_script_with_their_count) {
  const auto result = sanitize("3");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("ERRORS"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("errors=3"), std::string::npos) << result.output;
}

// The logs are one a process (%p): a second run into the same folder must count its own, not
// the first run's beside them.
TEST_F(sanitize_script, a_second_run_into_the_same_folder_counts_only_its_own_logs) {
  ASSERT_EQ(sanitize("3").exit_code, 1);
  const auto result = sanitize("0");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("errors=0 processes=1"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("ERRORS"), std::string::npos) << result.output;
}

TEST_F(sanitize_script, parallel_runs_report_every_target_and_tool_in_command_line_order) {
  const auto result = sanitize("0", "labs/host:matrix_sum labs/host", 4);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream summary(dir_ / "out" / "sanitize.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(summary, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("labs/host:matrix_sum", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("memcheck  clean"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("racecheck clean"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2].rfind("labs/host ", 0), 0u) << lines[2];
  EXPECT_NE(lines[3].find("racecheck clean"), std::string::npos) << lines[3];
}

TEST_F(sanitize_script, a_kernel_filter_reaches_the_sanitizer_and_is_named_in_the_summary) {
  const auto result = sanitize("0", "labs/host:matrix_sum", 1, "SANITIZE_TOOLS=racecheck SANITIZE_KERNELS=grouped_gemm " + recording_args());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto given = recorded_args();
  EXPECT_NE(given.find("--kernel-name kns=grouped_gemm"), std::string::npos) << given;
  EXPECT_NE(result.output.find("racecheck clean"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("kernels=grouped_gemm"), std::string::npos) << result.output;
}

// ch15's racecheck (2026-12-06): the baseline's cuBLAS kernels faulted under the tool even when
// filtered out, so the named variant's worker runs alone.
TEST_F(sanitize_script, without_baseline_reaches_bench_verify_and_is_named_in_the_summary) {
  const auto result = sanitize("0", "labs/host:matrix_sum:optimized", 1,
                               "SANITIZE_TOOLS=racecheck SANITIZE_BATTERY=0 SANITIZE_WITHOUT_BASELINE=1 " + recording_args());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto given = recorded_args();
  EXPECT_NE(given.find("--without-baseline"), std::string::npos) << given;
  EXPECT_NE(result.output.find("racecheck clean"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("without-baseline"), std::string::npos) << result.output;
}

TEST_F(sanitize_script, no_target_is_a_usage_error) {
  const auto bin_dir = std::filesystem::path(aisp::testing::aisp_binary()).parent_path().string();
  const auto result = run_command("COMPUTE_SANITIZER=" + stub_ + " " + std::string(AISP_SOURCE_DIR) + "/scripts/sanitize.sh " +
                                  bin_dir + " " + (dir_ / "out").string());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("name at least one target"), std::string::npos) << result.output;
}

}  // namespace

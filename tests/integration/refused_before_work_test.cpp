// Bad input that `bench run` found only after measuring cost the user the run: a malformed
// expectations file, an unusable --history database (which also emptied the folder's earlier
// results.json), a second run into a folder a run is writing (a user's walkthrough, 2026-12-04).
// Each is now refused in one line, exit 2, before anything is written.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "one_line_error.hpp"

namespace {

using aisp::testing::expect_one_line_error;

std::string fresh(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_refused_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

const std::string quick_run = " bench run --targets labs/host:matrix_sum --max-time 0.2 --quiet";

TEST(refused_before_work, a_malformed_expectations_file_names_its_field) {
  const auto dir = fresh("expectations");
  std::ofstream(dir + "/expect.json") << R"({"schema": "aisp.expectations", "schema_version": 1, "hardware": "host",
    "entries": {"labs/host:matrix_sum": {"optimized": {"speedup": "fast"}}}})";
  expect_one_line_error(quick_run + " --history none --artifacts-dir " + dir + "/run --expectations " + dir + "/expect.json",
                        "entries.labs/host:matrix_sum.optimized.speedup must be {\"low\": number, \"high\": number}");
  EXPECT_FALSE(std::filesystem::exists(dir + "/run/results.json"));
  std::ofstream(dir + "/newer.json") << R"({"schema_version": 99, "entries": {}})";
  expect_one_line_error(quick_run + " --history none --artifacts-dir " + dir + "/run --expectations " + dir + "/newer.json",
                        "has schema_version 99; this aisp reads 1");
  std::filesystem::remove_all(dir);
}

TEST(refused_before_work, an_unusable_history_keeps_the_folders_results) {
  const auto dir = fresh("history");
  std::filesystem::create_directories(dir + "/run");
  const std::string earlier = R"({"schema": "aisp.results", "pairs": [{"target": "kept"}]})";
  std::ofstream(dir + "/run/results.json") << earlier;
  std::ofstream(dir + "/not_sqlite.db") << "{}";
  expect_one_line_error(quick_run + " --artifacts-dir " + dir + "/run --history " + dir + "/not_sqlite.db", "--history: ");
  EXPECT_EQ(aisp::testing::read_file(dir + "/run/results.json"), earlier);
  std::filesystem::remove_all(dir);
}

// Note [one run a folder]
TEST(refused_before_work, a_second_run_into_a_folder_being_written_is_refused) {
  const auto dir = fresh("lock");
  const std::string first = aisp::testing::aisp_binary() + " bench run --targets labs/host:matrix_sum --max-time 3 --quiet --history none --artifacts-dir " +
                            dir + "/run > " + dir + "/first.txt 2>&1 &";
  ASSERT_EQ(std::system(first.c_str()), 0);
  for (int i = 0; i < 100 && !std::filesystem::exists(dir + "/run/.aisp.lock"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  expect_one_line_error(quick_run + " --history none --artifacts-dir " + dir + "/run", "another run is writing there");
  (void)aisp::testing::run_command("pkill -INT -f 'artifacts-dir " + dir + "/run'", false);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  std::filesystem::remove_all(dir);
}

}  // namespace

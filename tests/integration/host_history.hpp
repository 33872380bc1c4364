// A small history made by real host runs, shared by the tests of the results API and of
// `aisp mcp`: two runs of labs/host:transpose, recorded once per test process.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../test_support.hpp"

namespace aisp::testing {

struct host_history {
  std::string dir;
  std::string db;           // dir/aisp.db, runs 1 and 2
  command_result first, second;
};

inline const host_history& two_host_runs() {
  static const host_history made = [] {
    host_history h;
    h.dir = (std::filesystem::temp_directory_path() / ("aisp_api_history_" + std::to_string(getpid()))).string();
    std::filesystem::remove_all(h.dir);
    std::filesystem::create_directories(h.dir);
    h.db = h.dir + "/aisp.db";
    const auto run = [&](const std::string& name) {
      // A quarter of the benchmark size: about 5 s a run on a CI core, with enough samples for a verdict.
      return run_command(aisp_binary() + " bench run --targets labs/host:transpose --size rows=1024 --size cols=1024" +
                         " --max-time 1 --min-time 0.1 --quiet --golden-file " + std::string(AISP_SOURCE_DIR) +
                         "/expectations/goldens.json --artifacts-dir " + h.dir + "/" + name + " --history " + h.db);
    };
    h.first = run("run1");
    h.second = run("run2");
    return h;
  }();
  return made;
}

// A test over that history: it fails at once, with the run's output, when a run failed.
class host_history_test : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& h = two_host_runs();
    ASSERT_EQ(h.first.exit_code, 0) << h.first.output;
    ASSERT_EQ(h.second.exit_code, 0) << h.second.output;
  }
  static const std::string& db() { return two_host_runs().db; }
  // A copy of the history, for a test that records runs into it: the shared one keeps its two.
  static std::string db_copy(const std::string& name) {
    const auto copy = two_host_runs().dir + "/" + name + ".db";
    std::filesystem::copy_file(two_host_runs().db, copy, std::filesystem::copy_options::overwrite_existing);
    return copy;
  }
};

}  // namespace aisp::testing

// Your own pairs through --plugin (issue 20): the tutorial's plugin built from an installed aisp
// runs with every check; bad plugins are one-line errors with exit 2; a cheating plugin is caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "one_line_error.hpp"

namespace {

using aisp::testing::run_command;
using nlohmann::json;

std::string fixture(const std::string& name) { return aisp::testing::test_plugin_dir() + "/lib" + name + ".so"; }

using aisp::testing::expect_one_line_error;

TEST(plugin_errors, each_is_one_line_that_names_the_plugin_and_exit_code_2) {
  expect_one_line_error("bench run --plugin /nonexistent/libmine.so --targets mine", "/nonexistent/libmine.so");
  expect_one_line_error("bench list-targets --plugin " + fixture("not_a_plugin"), "is not an aisp plugin");
  expect_one_line_error("bench list-targets --plugin " + fixture("other_abi"), "plugin ABI");
  expect_one_line_error("bench list-targets --plugin " + fixture("duplicate_target"), "registered twice");
  expect_one_line_error("bench list-targets --plugin " + fixture("broken_contract"), "breaks the benchmark contract");
  // Note [untrusted pairs]: a static initializer that crashes ends the pair host and is reported.
  expect_one_line_error("bench list-targets --plugin " + fixture("crashes_on_load"), "crashed while loading (signal 11");
  expect_one_line_error("bench run --history none --plugin " + fixture("crashes_on_load"), "libcrashes_on_load.so' crashed");
}

TEST(plugin_cheat, a_cached_output_is_caught_through_a_plugin_as_in_the_lab) {
  const auto dir = (std::filesystem::temp_directory_path() / ("aisp_plugin_cheat_" + std::to_string(::getpid()))).string();
  const auto run = run_command(aisp::testing::aisp_binary() + " bench run --plugin " + fixture("cached_output") +
                               " --targets plugin_cheat:cached_output --max-time 0.5 --history none --quiet --artifacts-dir " + dir);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  const auto results = json::parse(aisp::testing::read_file(dir + "/results.json"));
  const auto& pair = results.at("pairs").at(0);
  EXPECT_EQ(pair.at("status"), "fail") << pair.dump(1);
  bool caught = false;
  for (const auto& check : pair.at("checks")) {
    const auto name = check.value("check", "");
    caught = caught || (!check.value("passed", true) && check.value("variant", "") == "optimized" &&
                        (name == "timed-call" || name == "baseline-match" || name == "fresh-after-warmup"));
  }
  EXPECT_TRUE(caught) << pair.at("checks").dump(1);
  std::filesystem::remove_all(dir);
}

// Note [untrusted pairs]: a plugin's load-time code never runs in the judge, so it cannot forge
// the results or the exit status there (its exit handler did both before, 2026-12-03).
TEST(plugin_cheat, load_time_code_never_runs_in_the_judge) {
  const auto dir = (std::filesystem::temp_directory_path() / ("aisp_plugin_tamper_" + std::to_string(::getpid()))).string();
  const auto marker = dir + ".marker";
  std::filesystem::remove(marker);
  const auto run = run_command("AISP_TAMPER_MARKER=" + marker + " " + aisp::testing::aisp_binary() + " bench run --plugin " +
                               fixture("tampers_from_the_judge") +
                               " --targets plugin_tamper:forges_the_results --max-time 0.3 --history none --quiet --artifacts-dir " + dir);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the plugin's static initializer ran in the judge";
  const auto results = json::parse(aisp::testing::read_file(dir + "/results.json"));
  EXPECT_EQ(results.at("pairs").at(0).at("status"), "fail") << results.dump(1).substr(0, 2000);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(marker);
}

TEST(plugin_build, a_plugin_built_without_optimization_loads_with_a_warning) {
  const auto listed = run_command(aisp::testing::aisp_binary() + " bench list-targets --plugin " + fixture("unoptimized"));
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("plugin_debug:add_one"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("built without compiler optimization"), std::string::npos) << listed.output;
  const auto optimized = run_command(aisp::testing::aisp_binary() + " bench list-targets --plugin " + fixture("cached_output"));
  EXPECT_EQ(optimized.output.find("without compiler optimization"), std::string::npos) << optimized.output;
}

// Note [plugin build symmetry]: K4 reads the plugin's own recorded switches, not the aisp binary's.
TEST(plugin_build, build_symmetry_reads_the_plugins_own_units) {
  const auto build_symmetry = [](const std::string& plugin, const std::string& target) {
    const auto dir = (std::filesystem::temp_directory_path() / ("aisp_plugin_k4_" + std::to_string(::getpid()))).string();
    const auto run = run_command(aisp::testing::aisp_binary() + " bench run --plugin " + fixture(plugin) + " --targets " + target +
                                 " --max-time 0.2 --history none --quiet --artifacts-dir " + dir);
    EXPECT_EQ(run.exit_code, 1) << run.output;
    const auto results = json::parse(aisp::testing::read_file(dir + "/results.json"));
    std::filesystem::remove_all(dir);
    for (const auto& check : results.at("pairs").at(0).at("checks")) {
      if (check.at("check") == "build-symmetry") return check;
    }
    return json();
  };
  const auto fast = build_symmetry("fast_math_unit", "plugin_k4:fast_math_unit");
  ASSERT_FALSE(fast.is_null());
  EXPECT_FALSE(fast.at("passed").get<bool>());
  EXPECT_NE(fast.at("detail").get<std::string>().find("a unit of the plugin was built with -ffast-math"), std::string::npos) << fast;
  const auto unoptimized = build_symmetry("unoptimized_unit", "plugin_k4:unoptimized_unit");
  ASSERT_FALSE(unoptimized.is_null());
  EXPECT_FALSE(unoptimized.at("passed").get<bool>());
  EXPECT_NE(unoptimized.at("detail").get<std::string>().find("a unit of the plugin was built with -O0"), std::string::npos) << unoptimized;
  const auto attribute = build_symmetry("unoptimized_function", "plugin_k4:unoptimized_function");
  ASSERT_FALSE(attribute.is_null());
  EXPECT_FALSE(attribute.at("passed").get<bool>());
  EXPECT_NE(attribute.at("detail").get<std::string>().find("add_one_unoptimized(aisp::run_context&) opened as unoptimized"),
            std::string::npos)
      << attribute;
  const auto unrecorded = build_symmetry("unrecorded_switches", "plugin_k4:unrecorded");
  ASSERT_FALSE(unrecorded.is_null());
  EXPECT_FALSE(unrecorded.at("passed").get<bool>());
  EXPECT_NE(unrecorded.at("detail").get<std::string>().find("recorded no compile switches"), std::string::npos) << unrecorded;
}

// The tutorial as a user follows it: install aisp, build examples/plugin against the install,
// list and run its host pair.
class tutorial_plugin : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = (std::filesystem::temp_directory_path() / ("aisp_tutorial_" + std::to_string(::getpid()))).string();
    const std::string prefix = root_ + "/prefix";
    install_ = run_command("cmake --install " + std::string(AISP_BUILD_DIR) + " --prefix " + prefix);
    build_ = run_command("cmake -S " + std::string(AISP_SOURCE_DIR) + "/examples/plugin -B " + root_ + "/build -DCMAKE_PREFIX_PATH=" +
                         prefix + " && cmake --build " + root_ + "/build");
    plugin_ = root_ + "/build/libtutorial_pairs.so";
    aisp_ = prefix + "/bin/aisp";
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(root_); }
  static std::string root_, plugin_, aisp_;
  static aisp::testing::command_result install_, build_;
};
std::string tutorial_plugin::root_, tutorial_plugin::plugin_, tutorial_plugin::aisp_;
aisp::testing::command_result tutorial_plugin::install_, tutorial_plugin::build_;

// The install carries the Python bridge and the aisp package: --python works from it.
TEST_F(tutorial_plugin, the_install_runs_python_pair_files_too) {
  ASSERT_EQ(install_.exit_code, 0) << install_.output;
  const auto listed = run_command(aisp_ + " bench list-targets --python " + aisp::testing::source_dir() + "/examples/python/host_pairs.py");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("mine:gelu_affine"), std::string::npos) << listed.output;
}

TEST_F(tutorial_plugin, builds_against_the_installed_package_and_lists_its_pairs) {
  ASSERT_EQ(install_.exit_code, 0) << install_.output;
  ASSERT_EQ(build_.exit_code, 0) << build_.output;
  const auto listed = run_command(aisp_ + " bench list-targets --json --plugin " + plugin_, false);
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const auto text = listed.output;
  EXPECT_NE(text.find("tutorial:array_sum"), std::string::npos) << text;
  // Only the plugin's pairs, as `bench run --plugin` judges only theirs; --chapter lists a lab's.
  EXPECT_EQ(text.find("labs/host:matrix_sum"), std::string::npos) << text;
  const auto lab = run_command(aisp_ + " bench list-targets --chapter labs/host --plugin " + plugin_, false);
  EXPECT_NE(lab.output.find("labs/host:matrix_sum"), std::string::npos) << "the lab's pairs stay: " << lab.output;
}

TEST_F(tutorial_plugin, its_host_pair_runs_with_every_check_and_gets_a_verdict) {
  ASSERT_EQ(build_.exit_code, 0) << build_.output;
  const auto dir = root_ + "/run";
  const auto run = run_command(aisp_ + " bench run --plugin " + plugin_ + " --targets tutorial:array_sum --max-time 1 --history none --quiet --artifacts-dir " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto results = json::parse(aisp::testing::read_file(dir + "/results.json"));
  const auto& pair = results.at("pairs").at(0);
  EXPECT_EQ(pair.at("target"), "tutorial:array_sum");
  EXPECT_EQ(pair.at("status"), "pass") << pair.dump(1);
  ASSERT_FALSE(pair.at("speedups").empty());
  EXPECT_FALSE(pair.at("speedups").at(0).value("verdict", "").empty());
  EXPECT_GT(pair.at("checks").size(), 20u) << "every check ran";
  // Built with no build type, as the tutorial says: optimized all the same, and recorded so.
  EXPECT_EQ(run.output.find("without compiler optimization"), std::string::npos) << run.output;
  const auto& plugins = results.at("config").at("plugins");
  ASSERT_EQ(plugins.size(), 1u) << results.at("config").dump(1);
  EXPECT_EQ(plugins.at(0).at("optimized"), true);
  EXPECT_NE(plugins.at(0).at("targets").dump().find("tutorial:array_sum"), std::string::npos);
}

TEST_F(tutorial_plugin, a_new_pair_skeleton_builds_and_passes_verify_as_written) {
  ASSERT_EQ(install_.exit_code, 0) << install_.output;
  const auto folder = root_ + "/new";
  const auto made = run_command(aisp_ + " new pair mine:double_it --dir " + folder);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const auto again = run_command(aisp_ + " new pair mine:double_it --dir " + folder);
  EXPECT_EQ(again.exit_code, 2) << "never overwrites: " << again.output;
  const auto built = run_command("cmake -S " + folder + " -B " + folder + "/build -DCMAKE_PREFIX_PATH=" + root_ +
                                 "/prefix && cmake --build " + folder + "/build");
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const auto verified = run_command(aisp_ + " bench verify --plugin " + folder + "/build/libmine_pairs.so --targets mine:double_it" +
                                    " --history none --quiet --artifacts-dir " + folder + "/verify");
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
}

}  // namespace

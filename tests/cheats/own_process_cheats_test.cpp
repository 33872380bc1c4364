// Planted cheats that need a process of their own: the static-initializer cheats (set by an
// environment variable, so that only their run plants them) and the K4 fixture (its -ffast-math
// unit would flag every pair of a binary it shares). Each run is one honest pair; the tests
// assert which check failed with which code, and that an unplanted run fails no check at all.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cheat_test_support.hpp"

namespace {

using nlohmann::json;

using aisp::cheat_testing::k4_cheats_binary;

struct pair_run {
  int exit_code = -1;
  std::string output;
  json pair;  // the one pair's result; null when none was written
};

// Runs one target with `environment` prefixed, in detect mode, and returns its pair result.
pair_run run_one(const std::string& environment, const std::string& binary, const std::string& target) {
  static int runs = 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("aisp_own_process_" + std::to_string(getpid()) + "_" + std::to_string(runs++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto command = environment + " timeout -k 5 300 " + binary + " bench run --targets " + target +
                       " --verify-phase detect --max-time 0.3 --min-time 0.05 --worker-timeout 10 --quiet"
                       " --history none --artifacts-dir " + dir.string() + " --json " + (dir / "r.json").string() + " 2>&1";
  const auto ran = aisp::testing::run_command(command);
  pair_run result{ran.exit_code, ran.output, nullptr};
  std::ifstream file(dir / "r.json");
  const auto parsed = file ? json::parse(file, nullptr, false) : json();
  if (parsed.is_object() && parsed.contains("pairs") && parsed["pairs"].size() == 1) {
    auto results = parsed;
    aisp::cheat_testing::apply_mutant(results);  // mutation_check.sh: one check flipped to always-pass
    result.pair = results["pairs"][0];
  }
  return result;
}

// "check (variant): codes" of every failed check.
std::set<std::string> failures_of(const json& pair) {
  std::set<std::string> found;
  for (const auto& check : pair.value("checks", json::array())) {
    if (check.value("passed", true)) continue;
    std::string text = check.value("check", "?");
    text.append(" (").append(check.value("variant", "?")).append("):");
    for (const auto& code : check.value("codes", json::array())) text.append(" ").append(code.get<std::string>());
    found.insert(text);
  }
  return found;
}

bool failed_with(const json& pair, const std::string& check_name, const std::string& code) {
  for (const auto& check : pair.value("checks", json::array())) {
    if (check.value("passed", true) || check.value("check", "") != check_name) continue;
    for (const auto& c : check.value("codes", json::array())) {
      if (c == code) return true;
    }
  }
  return false;
}

std::string described(const pair_run& run) {
  std::string text = "exit " + std::to_string(run.exit_code) + "; failed checks:";
  for (const auto& f : failures_of(run.pair)) text += "\n  " + f;
  return text + "\n" + run.output;
}

const std::string honest_target = "cheats_static:honest_affine";

TEST(own_process_cheats, the_honest_pair_unplanted_fails_no_check_in_any_worker) {
  const auto run = run_one("", aisp::cheat_testing::cheats_binary(), honest_target);
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  EXPECT_TRUE(failures_of(run.pair).empty()) << described(run);
  for (const auto& variant : run.pair.value("variants", json::array())) {
    EXPECT_EQ(variant.value("sandbox", ""), "on") << variant.value("name", "?");
  }
}

TEST(own_process_cheats, a_fork_in_a_static_initializer_is_killed_by_the_sandbox_with_L5) {
  const auto run = run_one("AISP_PLANT_STATIC_CHEAT=fork", aisp::cheat_testing::cheats_binary(), honest_target);
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  EXPECT_EQ(run.pair.value("failure_kind", ""), "sandbox") << described(run);
  EXPECT_TRUE(failed_with(run.pair, "sandbox", "L5")) << described(run);
}

TEST(own_process_cheats, a_signal_to_the_judge_from_a_static_initializer_is_killed_with_V1) {
  const auto run = run_one("AISP_PLANT_STATIC_CHEAT=signal", aisp::cheat_testing::cheats_binary(), honest_target);
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  EXPECT_EQ(run.pair.value("failure_kind", ""), "sandbox") << described(run);
  EXPECT_TRUE(failed_with(run.pair, "sandbox", "V1")) << described(run);
}

TEST(own_process_cheats, a_thread_started_before_main_fails_background_thread_with_L5) {
  const auto run = run_one("AISP_PLANT_STATIC_CHEAT=thread", aisp::cheat_testing::cheats_binary(), honest_target);
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  EXPECT_TRUE(failed_with(run.pair, "background-thread", "L5")) << described(run);
}

TEST(own_process_cheats, a_copy_of_the_channel_made_before_main_fails_sandbox_with_V1) {
  const auto run = run_one("AISP_PLANT_STATIC_CHEAT=dup", aisp::cheat_testing::cheats_binary(), honest_target);
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  EXPECT_TRUE(failed_with(run.pair, "sandbox", "V1")) << described(run);
}

TEST(own_process_cheats, a_fast_math_unit_fails_build_symmetry_with_K4_only_in_its_own_binary) {
  const auto run = run_one("", k4_cheats_binary(), "cheats_k4:fast_math_unit");
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  EXPECT_TRUE(failed_with(run.pair, "build-symmetry", "K4")) << described(run);
  const auto clean = run_one("", aisp::cheat_testing::cheats_binary(), honest_target);
  ASSERT_TRUE(clean.pair.is_object()) << clean.output;
  EXPECT_FALSE(failed_with(clean.pair, "build-symmetry", "K4")) << described(clean);
}

// Note [two clocks]: the candidate's clock slowed (its times halve) and the baseline's sped up
// (its times triple) by a binary that replaces clock_gettime.
TEST(own_process_cheats, a_worker_clock_slowed_or_sped_up_by_its_binary_fails_wall_clock_with_V1) {
  for (const std::string target : {"cheats_clock:v1_candidate_clock_at_half_speed", "cheats_clock:v1_baseline_clock_at_triple_speed"}) {
    const auto run = run_one("", aisp::cheat_testing::clock_cheats_binary(), target);
    ASSERT_TRUE(run.pair.is_object()) << target << ": " << run.output;
    EXPECT_TRUE(failed_with(run.pair, "wall-clock", "V1")) << target << ": " << described(run);
  }
}

}  // namespace

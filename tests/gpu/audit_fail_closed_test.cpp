// The device audit fails closed (Note [audit tampering]): a static initializer that takes the
// CUPTI subscription first fails the pair with device-audit; the same honest pair passes every
// check unplanted, and with --audit off it passes with the audit recorded as off. The in-variant
// switch-offs are planted cheats of cheats_gpu (tests/gpu/cheats/audit_cheats.cu).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../cheats/cheat_test_support.hpp"
#include "gpu_guard.hpp"

namespace {

using nlohmann::json;

json run_honest_gpu_pair(const std::string& environment, const std::string& extra, std::string& output) {
  static int runs = 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("aisp_audit_closed_" + std::to_string(getpid()) + "_" + std::to_string(runs++));
  std::filesystem::remove_all(dir);
  const auto ran = aisp::cheat_testing::run_command(
      environment + " timeout -k 10 300 " + aisp::cheat_testing::cheats_binary() +
      " bench run --targets cheats_static_gpu:honest_affine --verify-phase detect --max-time 0.3 --min-time 0.05"
      " --worker-timeout 60 --quiet --history none " + extra + " --artifacts-dir " + dir.string() + " 2>&1");
  output = ran.output;
  std::ifstream file(dir / "results.json");
  const auto results = file ? json::parse(file, nullptr, false) : json();
  return results.is_object() && results.contains("pairs") && results["pairs"].size() == 1 ? results["pairs"][0] : json();
}

std::string failed_checks(const json& pair) {
  std::string text;
  for (const auto& check : pair.value("checks", json::array())) {
    if (!check.value("passed", true)) text += "\n  " + check.value("check", "?") + " (" + check.value("variant", "?") + "): " + check.value("detail", "");
  }
  return text;
}

bool failed(const json& pair, const std::string& name) {
  for (const auto& check : pair.value("checks", json::array())) {
    if (!check.value("passed", true) && check.value("check", "") == name) return true;
  }
  return false;
}

TEST(audit_fail_closed, the_honest_gpu_pair_passes_every_check_with_the_audit_on) {
  AISP_REQUIRE_GPU();
  std::string output;
  const auto pair = run_honest_gpu_pair("", "", output);
  ASSERT_TRUE(pair.is_object()) << output;
  EXPECT_TRUE(failed_checks(pair).empty()) << failed_checks(pair) << "\n" << output;
  for (const auto& variant : pair["variants"]) EXPECT_EQ(variant["device_audit"].value("state", ""), "on");
}

TEST(audit_fail_closed, a_static_initializer_that_takes_cupti_first_fails_device_audit) {
  AISP_REQUIRE_GPU();
  std::string output;
  const auto pair = run_honest_gpu_pair("AISP_PLANT_STATIC_CHEAT=cupti", "", output);
  ASSERT_TRUE(pair.is_object()) << output;
  EXPECT_TRUE(failed(pair, "device-audit")) << failed_checks(pair) << "\n" << output;
}

TEST(audit_fail_closed, audit_off_is_the_users_choice_and_is_recorded) {
  AISP_REQUIRE_GPU();
  std::string output;
  const auto pair = run_honest_gpu_pair("AISP_PLANT_STATIC_CHEAT=cupti", "--audit off", output);
  ASSERT_TRUE(pair.is_object()) << output;
  EXPECT_FALSE(failed(pair, "device-audit")) << failed_checks(pair);
  for (const auto& variant : pair["variants"]) EXPECT_EQ(variant["device_audit"].value("state", ""), "off");
}

}  // namespace

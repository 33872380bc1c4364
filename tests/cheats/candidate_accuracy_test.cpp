// Notes [accuracy against the baseline], [wide inputs], [scattered challenge values] and [input
// reuse] on honest pairs: a variant that declares its precision change, an exp right on every
// range, a fast path taken after a look at every input, a two-pass variance in fp32 under the
// offset level, a candidate that answers from a scaled e4m3 copy, a pair whose baseline
// cannot take the wide inputs either, and a fixed-inputs pair's honest variant all pass every
// check (their planted cheats, in accuracy_cheats.cpp and call_reuse_cheats.cpp, fail in the
// suite run of planted_cheats_test.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "cheat_test_support.hpp"

namespace {

using nlohmann::json;

json honest_results(const std::string& dir) {
  auto judged = aisp::cheat_testing::judge_with_one_retake("accuracy_honest", dir);
  if (judged.results.is_discarded()) ADD_FAILURE() << judged.run.output;
  return judged.results;
}

const json* check_of(const json& pair, const std::string& name, const std::string& variant) {
  if (!pair.contains("checks")) return nullptr;
  for (const auto& check : pair.at("checks")) {
    if (check.value("check", "") == name && check.value("variant", "") == variant) return &check;
  }
  return nullptr;
}

TEST(candidate_accuracy, honest_pairs_pass_the_accuracy_wide_input_and_input_reuse_checks) {
  const auto dir = (std::filesystem::temp_directory_path() / ("aisp_accuracy_honest_" + std::to_string(::getpid()))).string();
  const auto results = honest_results(dir);
  ASSERT_EQ(results.value("pairs", json::array()).size(), 8u) << results.dump(1).substr(0, 2000);
  for (const auto& pair : results["pairs"]) {
    const auto target = pair.value("target", "");
    for (const auto& check : pair.value("checks", json::array())) EXPECT_TRUE(check.value("passed", false)) << target << ": " << check.dump();
    EXPECT_EQ(pair.value("status", ""), "pass") << target;
    // Every pair met the wide inputs; the held candidate was compared with the baseline's error.
    const auto* wide = check_of(pair, "wide-inputs", "optimized");
    ASSERT_NE(wide, nullptr) << target;
    if (target == "accuracy_honest:narrow_domain") {
      EXPECT_NE(wide->value("detail", "").find("not this pair's domain"), std::string::npos) << wide->dump();
    }
    if (target == "accuracy_honest:range_checked_fast_path") {  // Note [scattered challenge values]: met, and passed
      const auto checks = pair.value("checks", json::array());
      EXPECT_TRUE(std::any_of(checks.begin(), checks.end(), [](const json& check) {
        return check.value("check", "") == "wide-inputs" && check.value("variant", "") == "optimized" &&
               check.value("detail", "").find("at secret places") != std::string::npos;
      })) << pair.dump(1).substr(0, 3000);
    }
    if (target == "accuracy_honest:answers_from_a_scaled_copy") {  // Note [a copy's domain]: waived for it alone
      EXPECT_NE(wide->value("detail", "").find("answers from x_e4m3"), std::string::npos) << wide->dump();
      const auto* baseline_wide = check_of(pair, "wide-inputs", "baseline");
      ASSERT_NE(baseline_wide, nullptr);
      EXPECT_EQ(baseline_wide->value("detail", "").find("answers from"), std::string::npos) << baseline_wide->dump();
    }
    if (target == "accuracy_honest:two_pass_variance_in_fp32") {  // Note [offset inputs]: met, and passed
      EXPECT_NE(wide->value("detail", "").find("inputs offset by 64 (fp32 inputs)"), std::string::npos) << wide->dump();
    }
    const auto* accuracy = check_of(pair, "accuracy", "optimized");
    if (target == "accuracy_honest:fixed_inputs_unrolled") {  // Note [input reuse]: probed, and passed
      const auto* reuse = check_of(pair, "input-reuse", "optimized");
      ASSERT_NE(reuse, nullptr);
      EXPECT_NE(reuse->value("detail", "").find("fresh inputs"), std::string::npos) << reuse->dump();
    }
    if (target == "accuracy_honest:declared_precision" || target == "accuracy_honest:answers_from_a_scaled_copy") {
      EXPECT_EQ(accuracy, nullptr) << "a declared precision change is held to its own tolerance";
    } else {
      EXPECT_NE(accuracy, nullptr) << target;
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace

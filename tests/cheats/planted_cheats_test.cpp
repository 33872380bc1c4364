// Every planted cheat is caught with the code of its VALIDITY.md row. One suite run of all the
// fixtures (in detect mode, so every check runs and records instead of stopping at the first),
// then one test per fixture, named after its target, so a missed row shows by name.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cheat_test_support.hpp"

namespace {

using aisp::cheat_testing::fixture;
using nlohmann::json;

constexpr std::size_t min_fixtures = 45;

struct suite_run {
  int exit_code = -1;
  std::string output;
  std::string json_path;
  json results;
  bool parsed = false;
  std::map<std::string, const json*> pairs;  // target -> its result
};

// The whole suite must finish in minutes; a judge that samples a do-nothing variant forever
// (W4, L2, X7, T4 take nanoseconds a call) is stopped here rather than by ctest, so the listing
// tests still report. Exit 124 then means the suite ran out of time.
constexpr int suite_deadline_s = 900;

// The golden that cheats:o6_reference_drifted_from_golden drifted from: y = 2x + 1 at n = 7,
// seed 42, as `bench verify --update-goldens` recorded it for that pair's honest math.
constexpr const char* drifted_golden = R"({"goldens": {"cheats:o6_reference_drifted_from_golden|n=7|y|seed=42": {
  "elements": 7, "positions": [0, 1, 2, 3, 4, 5, 6],
  "values": [0.7459001243114471, 0.9312665164470673, 2.635672450065613, 2.4885823726654053,
             -0.003937244415283203, 2.572715640068054, -0.7141773700714111]}}})";

std::string suite_command(const std::string& dir, const std::string& targets = "cheats") {
  std::ofstream(dir + "/goldens.json") << drifted_golden;
  return "timeout -k 10 " + std::to_string(suite_deadline_s) + " " + aisp::cheat_testing::cheats_binary() +
         " bench run --targets " + targets + " --verify-phase detect --max-time 0.3 --min-time 0.05"
         " --worker-timeout 5 --quiet --golden-file " + dir + "/goldens.json --artifacts-dir " + dir + " --json " + dir + "/r.json 2>&1";
}

// A results file as the tests read it: parsed (discarded where it is not JSON), with the mutant
// check of mutation testing applied.
json read_results(const std::filesystem::path& path) {
  std::ifstream file(path);
  json results = file ? json::parse(file, nullptr, false) : json(json::value_t::discarded);
  if (!results.is_discarded()) aisp::cheat_testing::apply_mutant(results);
  return results;
}

// The one suite run, shared by every test of this binary.
const suite_run& the_suite_run() {
  static const suite_run run = [] {
    suite_run made;
    // $AISP_CHEAT_SUITE_DIR keeps the suite's results where a caller wants them (mutation_check.sh).
    const std::filesystem::path dir = aisp::cheat_testing::environment_or(
        "AISP_CHEAT_SUITE_DIR", (std::filesystem::temp_directory_path() / ("aisp_cheats_" + std::to_string(getpid()))).string());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    made.json_path = aisp::cheat_testing::environment_or("AISP_CHEAT_RESULTS");
    if (made.json_path.empty()) {
      const auto ran = aisp::cheat_testing::run_command(suite_command(dir.string()));
      made.exit_code = ran.exit_code;
      made.output = ran.output;
      made.json_path = (dir / "r.json").string();
    }
    made.results = read_results(made.json_path);
    made.parsed = !made.results.is_discarded() && made.results.is_object() &&
                  made.results.contains("pairs");
    return made;
  }();
  return run;
}

const json* result_of(const suite_run& run, const std::string& target) {
  for (const auto& pair : run.results["pairs"]) {
    if (pair.value("target", "") == target) return &pair;
  }
  return nullptr;
}

// Note [a cheat that planted no claim]: cheats:s2_fast_median_slow_mean is fast in most calls and
// slow in some (then 40%; a third since, with its fast calls made alike: statistics_cheats.cpp),
// so that its median claims a speedup its mean does not have. On a loaded
// machine, with the suite's few samples (--max-time 0.3), its median sometimes sat at or over
// the baseline's: more than half of the sampled calls were slow ones (0.83x in a full ctest run,
// 0.99x in one of six runs beside it, 2026-12-06). Such a run planted no claim, hidden-cost rightly
// had nothing to catch, and the row read as missed. A fixture tagged "claims:speedup" whose
// optimized variant's median reads under the claim hidden-cost judges (1.05x) runs again alone
// (~3 s), up to four times, and is judged on the first run that planted its claim (or on the
// last). A replayed results file ($AISP_CHEAT_RESULTS, mutation testing) is judged as it is.
constexpr double planted_claim = 1.05;
constexpr int claim_attempts = 5;

bool planted_its_claim(const json& pair) {
  for (const auto& speedup : pair.value("speedups", json::array())) {
    if (speedup.value("variant", "") == "optimized") return speedup["speedup"].value("point", 0.0) >= planted_claim;
  }
  return true;
}

// A results file given to replay ($AISP_CHEAT_RESULTS): judged as it is, never run again.
bool replaying() { return !aisp::cheat_testing::environment_or("AISP_CHEAT_RESULTS").empty(); }

// One fixture judged again on its own, with the suite's options; null when it did not run.
json rerun_alone(const fixture& planted) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("aisp_cheat_rerun_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  (void)aisp::cheat_testing::run_command(suite_command(dir.string(), planted.target));
  const json results = read_results(dir / "r.json");
  std::filesystem::remove_all(dir);
  if (results.is_discarded() || !results.is_object()) return nullptr;
  for (const auto& pair : results.value("pairs", json::array())) {
    if (pair.value("target", "") == planted.target) return pair;
  }
  return nullptr;
}

// The fixture's result: the suite's, or (Note [a cheat that planted no claim]) a run of its own.
const json* judged_result(const suite_run& run, const fixture& planted) {
  static std::map<std::string, json> own_runs;
  const json* pair = result_of(run, planted.target);
  if (pair == nullptr || !planted.claims_speedup || planted_its_claim(*pair) || replaying()) return pair;
  if (const auto known = own_runs.find(planted.target); known != own_runs.end()) return &known->second;
  json judged = *pair;
  for (int attempt = 2; attempt <= claim_attempts && !planted_its_claim(judged); ++attempt) {
    json again = rerun_alone(planted);
    if (again.is_null()) continue;
    std::cerr << planted.target << ": the suite's run planted no claim; run " << attempt << " alone read "
              << (planted_its_claim(again) ? "a claim" : "none") << "\n";
    judged = std::move(again);
  }
  return &(own_runs[planted.target] = std::move(judged));
}

const aisp::cheat_testing::fixture_listing& the_listing() {
  static const auto listing = aisp::cheat_testing::list_fixtures();
  return listing;
}

std::string joined(const std::set<std::string>& words) {
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : ", ") + w;
  return text;
}

TEST(planted_cheats, the_suite_run_finishes_and_writes_its_results) {
  const auto& run = the_suite_run();
  EXPECT_NE(run.exit_code, 124) << "the suite ran past " << suite_deadline_s << " s:\n" << run.output;
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << "exit " << run.exit_code << ":\n" << run.output;
  EXPECT_TRUE(run.parsed) << "no results at " << run.json_path << ":\n" << run.output;
}

TEST(planted_cheats, at_least_45_tagged_fixtures_are_registered_and_ran) {
  const auto& listing = the_listing();
  ASSERT_TRUE(listing.error.empty()) << listing.error;
  std::set<std::string> tagged;
  for (const auto& f : listing.fixtures) {
    if (f.cheat_tags > 0) tagged.insert(f.target);
  }
  EXPECT_GE(tagged.size(), min_fixtures);
  const auto& run = the_suite_run();
  ASSERT_TRUE(run.parsed) << run.output;
  std::set<std::string> ran;
  for (const auto& pair : run.results["pairs"]) {
    const auto target = pair.value("target", "");
    if (tagged.count(target) > 0) ran.insert(target);
  }
  EXPECT_GE(ran.size(), min_fixtures) << "ran: " << joined(ran);
}

TEST(planted_cheats, every_cheat_tag_names_a_row_of_the_validity_catalogue) {
  const auto& listing = the_listing();
  ASSERT_TRUE(listing.error.empty()) << listing.error;
  for (const auto& f : listing.fixtures) {
    EXPECT_EQ(f.cheat_tags, 1) << f.target << " must carry exactly one cheat:<code> tag";
    if (f.cheat_tags > 0) {
      EXPECT_TRUE(aisp::cheat_testing::is_validity_code(f.code)) << f.target << ": cheat:" << f.code;
    }
  }
}

class planted_cheat : public ::testing::TestWithParam<fixture> {};

TEST_P(planted_cheat, is_caught_with_the_code_of_its_row) {
  const fixture& planted = GetParam();
  ASSERT_EQ(planted.cheat_tags, 1) << planted.target << " must carry exactly one cheat:<code> tag";
  const auto& run = the_suite_run();
  ASSERT_TRUE(run.parsed) << "no results at " << run.json_path << ":\n" << run.output;
  const json* pair = judged_result(run, planted);
  ASSERT_NE(pair, nullptr) << planted.target << " is missing from the results";

  std::set<std::string> failed_codes;
  std::set<std::string> failed_checks;
  for (const auto& check : pair->value("checks", json::array())) {
    if (check.value("passed", true)) continue;
    failed_checks.insert(check.value("check", "?") + " (" + check.value("variant", "") + ")");
    for (const auto& code : check.value("codes", json::array())) failed_codes.insert(code.get<std::string>());
  }
  // S8 is caught by the verdict: inconclusive, with the reason (Note [disturbed noise floor]).
  for (const auto& speedup : pair->value("speedups", json::array())) {
    if (planted.code == "S8" && speedup.value("verdict", "") == "inconclusive" &&
        speedup.value("verdict_reason", "").find("the baseline and its twin") != std::string::npos)
      failed_codes.insert("S8");
  }
  EXPECT_TRUE(failed_codes.count(planted.code) > 0)
      << planted.target << " was not caught with " << planted.code << "\n  status: "
      << pair->value("status", "") << " " << pair->value("failure_kind", "") << ": "
      << pair->value("message", "") << "\n  failed checks: " << joined(failed_checks)
      << "\n  their codes: " << joined(failed_codes);
}

// The fixture's result in the one suite run; fails the test when there is none.
const json& pair_of(const fixture& planted) {
  const auto& run = the_suite_run();
  static const json missing;
  if (!run.parsed) ADD_FAILURE() << run.output;
  const json* pair = run.parsed ? judged_result(run, planted) : nullptr;
  if (run.parsed && pair == nullptr) ADD_FAILURE() << planted.target << " is missing from the results";
  return pair != nullptr ? *pair : missing;
}

using aisp::cheat_testing::cheat_is_in_the_pair;

// The cheating variant itself fails with its row's code; a mutant that fails every check with
// every code on the baseline would not pass this.
TEST_P(planted_cheat, the_cheating_variant_itself_fails_with_the_code) {
  const fixture& planted = GetParam();
  if (cheat_is_in_the_pair(planted.code)) GTEST_SKIP() << planted.code << ": the cheat is in the pair, not a variant";
  const json& pair = pair_of(planted);
  bool on_the_cheat = false;
  for (const auto& check : pair.value("checks", json::array())) {
    if (check.value("passed", true) || check.value("variant", "") != "optimized") continue;
    for (const auto& code : check.value("codes", json::array())) on_the_cheat = on_the_cheat || code == planted.code;
  }
  EXPECT_TRUE(on_the_cheat) << planted.target << ": no failed check of the optimized variant carries " << planted.code;
}

// The checks the fixture names ("check:<name>") fail on the cheating variant (any variant for a
// cheat in the pair itself): another check
// carrying the same code cannot stand in for one that was switched off (mutation testing).
TEST_P(planted_cheat, the_cheating_variant_fails_the_checks_it_names) {
  const fixture& planted = GetParam();
  if (planted.checks.empty()) GTEST_SKIP() << planted.target << " names no check";
  const json& pair = pair_of(planted);
  for (const auto& name : planted.checks)
    EXPECT_TRUE(aisp::cheat_testing::failed_check(pair, name, !cheat_is_in_the_pair(planted.code)))
        << planted.target << ": " << (cheat_is_in_the_pair(planted.code) ? "no variant" : "the optimized variant") << " failed " << name;
}

// The checks an honest baseline or twin failed that do not carry the fixture's own code.
std::vector<json> honest_failures(const json& pair, const std::string& own) {
  std::vector<json> failed;
  for (const auto& check : pair.value("checks", json::array())) {
    const auto variant = check.value("variant", "");
    if (check.value("passed", true) || (variant != "baseline" && variant != "baseline_twin")) continue;
    bool own_code = false;
    for (const auto& code : check.value("codes", json::array())) own_code = own_code || code == own;
    if (!own_code) failed.push_back(check);
  }
  return failed;
}

// Checks a loaded machine can fail on honest code: samples preempted past 5x the median,
// a pair whose time ran out before its minimum samples, a host ceiling measured while the
// CPUs were busy. A fixture whose honest variants failed only these is judged again alone;
// a check that misfires on honest code fails again there (CI, 2-core machine, 2026-11-28).
bool only_load_sensitive(const std::vector<json>& failed) {
  for (const auto& check : failed) {
    if (!aisp::testing::load_sensitive_check(check.value("check", ""))) return false;
  }
  return !failed.empty();
}

// The honest baseline and its twin fail nothing, except checks that carry the fixture's own
// code. A pair-level cheat (a wrong reference, a tiny workload) reaches every variant.
TEST_P(planted_cheat, the_honest_baseline_and_twin_fail_no_other_check) {
  const fixture& planted = GetParam();
  if (cheat_is_in_the_pair(planted.code)) GTEST_SKIP() << planted.code << ": the cheat is in the pair, so in the baseline too";
  auto failed = honest_failures(pair_of(planted), planted.code);
  for (int attempt = 0; attempt < 2 && !replaying() && only_load_sensitive(failed); ++attempt) {
    std::cout << planted.target << ": the honest variants failed " << failed.front().dump()
              << " in the suite run; judging it again alone\n";
    const json again = rerun_alone(planted);
    if (again.is_null()) break;
    failed = honest_failures(again, planted.code);
  }
  for (const auto& check : failed)
    ADD_FAILURE() << planted.target << ": the honest " << check.value("variant", "") << " failed " << check.dump();
}

std::vector<fixture> listed_fixtures() { return the_listing().fixtures; }

INSTANTIATE_TEST_SUITE_P(cheats, planted_cheat, ::testing::ValuesIn(listed_fixtures()),
                         [](const ::testing::TestParamInfo<fixture>& param_info) {
                           const std::string& target = param_info.param.target;
                           std::string name = target.substr(target.find(':') + 1);
                           for (char& c : name) {
                             if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
                           }
                           return name;
                         });
// An unreadable listing leaves no parameters; the listing tests above then say why.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(planted_cheat);

}  // namespace

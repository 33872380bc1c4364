// Shared by the tests that drive aisp_cheats: the binary, a command runner, the fixture listing
// and the 103 row codes of VALIDITY.md (shared/ is not in the repository, so they are written out).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"

namespace aisp::cheat_testing {

// $AISP_CHEATS_BINARY when set (a build carried to another machine), else the one this build made.
inline std::string cheats_binary() {
  const char* from_environment = std::getenv("AISP_CHEATS_BINARY");
  return from_environment != nullptr ? from_environment : AISP_CHEATS_BINARY;
}

#ifdef AISP_K4_CHEATS_BINARY
// aisp_cheats_k4: the K4 fixture whose unit has -ffast-math on its command line.
inline std::string k4_cheats_binary() {
  const char* from_environment = std::getenv("AISP_K4_CHEATS_BINARY");
  return from_environment != nullptr ? from_environment : AISP_K4_CHEATS_BINARY;
}
// aisp_cheats_clock: pairs whose binary replaces clock_gettime (Note [two clocks]).
inline std::string clock_cheats_binary() {
  const char* from_environment = std::getenv("AISP_CLOCK_CHEATS_BINARY");
  return from_environment != nullptr ? from_environment : AISP_CLOCK_CHEATS_BINARY;
}
#endif

using testing::command_result;

// stdout only: the suite's JSON listing must not mix with progress lines.
inline command_result run_command(const std::string& command) { return testing::run_command(command, false); }

// `targets` judged by aisp_cheats into `dir` (a short run, no history), taken again once when
// only a load-sensitive check failed; the results.json (discarded JSON when none) and the output.
struct judged_run {
  nlohmann::json results;
  command_result run;
};

inline judged_run judge_with_one_retake(const std::string& targets, const std::string& dir, const std::string& max_time = "0.3",
                                        const std::string& more_options = "") {
  judged_run judged;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::filesystem::remove_all(dir);
    judged.run = run_command(cheats_binary() + " bench run --targets " + targets + " --max-time " + max_time +
                             " --min-time 0.05 --quiet --history none " + more_options + " --artifacts-dir " + dir + " 2>&1");
    if (attempt == 0 && testing::failed_only_load_sensitive(dir + "/results.json")) continue;
    break;
  }
  std::ifstream file(dir + "/results.json");
  judged.results = nlohmann::json::parse(file, nullptr, false);
  return judged;
}

// Every row code of VALIDITY.md, in its order (103).
inline const std::vector<std::string>& validity_codes() {
  static const std::vector<std::string> codes{
      "T1", "T2", "T3", "T4", "T5", "T6", "T7",
      "O1", "O2", "O3", "O4", "O5", "O6", "O7", "O8", "O9", "O10",
      "W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "W10", "W11", "W12",
      "L1", "L2", "L3", "L4", "L5", "L6", "L7",
      "M1", "M2", "M3", "M4", "M5", "M6", "M7",
      "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10",
      "K1", "K2", "K3", "K4", "K5", "K6", "K7",
      "D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8",
      "E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10", "E11", "E12",
      "S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8",
      "V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8",
      "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8"};
  return codes;
}

inline bool is_validity_code(const std::string& code) {
  static const std::set<std::string> known(validity_codes().begin(), validity_codes().end());
  return known.count(code) > 0;
}

// Rows whose cheat sits in the pair's declaration, its reference or its baseline, not in the
// optimized variant: their code may land on any variant, the baseline's included.
inline bool cheat_is_in_the_pair(const std::string& code) {
  // E3: a baseline on fewer threads than the pair declares (Note [declared threads used]).
  static const std::set<std::string> pair_level{"E3", "E4", "O6", "S2", "S8", "T4", "V2", "V3"};
  return pair_level.count(code) > 0;
}

// One registered fixture and the code of its "cheat:<code>" tag ("" when it has none).
struct fixture {
  std::string target;
  std::string code;
  int cheat_tags = 0;               // how many "cheat:" tags it carries: exactly one is right
  std::vector<std::string> checks;  // its "check:<name>" tags: checks the cheating variant must fail
  bool claims_speedup = false;      // tagged "claims:speedup" (Note [a cheat that planted no claim])
};

// gtest prints a parameter with this instead of its bytes.
inline void PrintTo(const fixture& f, std::ostream* out) { *out << f.target << " (cheat:" << f.code << ")"; }

struct fixture_listing {
  std::vector<fixture> fixtures;
  std::string error;  // why the listing could not be read; empty when it could
};

// The host fixtures ("cheats") or the GPU ones ("cheats_gpu") of aisp_cheats, or the K4 one
// ("cheats_k4") of its own binary.
inline fixture_listing list_fixtures(const std::string& group = "cheats", const std::string& binary = cheats_binary()) {
  fixture_listing listing;
  const auto run = run_command(binary + " bench list-targets --chapter " + group + " --json");
  const auto parsed = nlohmann::json::parse(run.output, nullptr, false);
  if (run.exit_code != 0 || parsed.is_discarded() || !parsed.is_array()) {
    listing.error = "`bench list-targets --chapter cheats --json` exited " +
                    std::to_string(run.exit_code) + " with: " + run.output;
    return listing;
  }
  for (const auto& item : parsed) {
    fixture f;
    f.target = item.value("target", "");
    for (const auto& tag : item.value("tags", nlohmann::json::array())) {
      const auto text = tag.get<std::string>();
      if (text.starts_with("check:")) f.checks.push_back(text.substr(6));
      if (text == "claims:speedup") f.claims_speedup = true;
      if (!text.starts_with("cheat:")) continue;
      f.code = text.substr(6);
      ++f.cheat_tags;
    }
    listing.fixtures.push_back(std::move(f));
  }
  return listing;
}

// ---- Mutation testing (scripts/mutation_check.sh) ----
// The assertions can be replayed on a results file that a suite run already wrote
// ($AISP_CHEAT_RESULTS / $AISP_GPU_CHEAT_RESULTS), with one check flipped to always-pass
// ($AISP_MUTANT_CHECK): a mutant that no assertion notices is a check no test needs.

[[nodiscard]] inline std::string environment_or(const char* name, const std::string& otherwise = "") {
  const char* value = std::getenv(name);
  return value != nullptr ? value : otherwise;
}

// Every result of the mutant check marked passed, as if the check could never fail.
inline void apply_mutant(nlohmann::json& results) {
  const auto mutant = environment_or("AISP_MUTANT_CHECK");
  if (mutant.empty() || !results.contains("pairs")) return;
  for (auto& pair : results["pairs"]) {
    for (auto& check : pair["checks"]) {
      if (check.value("check", "") == mutant) check["passed"] = true;
    }
  }
}

// The named check failed on the optimized variant (on any variant, the twin and "?" for a
// failed worker included, when the cheat sits in the pair itself).
[[nodiscard]] inline bool failed_check(const nlohmann::json& pair, const std::string& name, bool optimized_only) {
  for (const auto& check : pair.value("checks", nlohmann::json::array())) {
    if (check.value("passed", true) || check.value("check", "") != name) continue;
    if (!optimized_only || check.value("variant", "") == "optimized") return true;
  }
  return false;
}

}  // namespace aisp::cheat_testing

// Shared helpers for the tests that drive the aisp binary.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "verify/battery.hpp"

namespace aisp::testing {

struct command_result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// The aisp binary under test: $AISP_BINARY when set (a build carried to another machine),
// else the one this build made.
#ifdef AISP_BINARY
inline std::string aisp_binary() {
  const char* from_environment = std::getenv("AISP_BINARY");
  return from_environment != nullptr ? from_environment : AISP_BINARY;
}
#endif

// The test plugins' folder: $AISP_TEST_PLUGIN_DIR when set (plugins carried with the build), else this build's.
#ifdef AISP_TEST_PLUGIN_DIR
inline std::string test_plugin_dir() {
  const char* from_environment = std::getenv("AISP_TEST_PLUGIN_DIR");
  return from_environment != nullptr ? from_environment : AISP_TEST_PLUGIN_DIR;
}
#endif

// The source tree (pair files, examples): $AISP_SOURCE_DIR when set (a build carried to another
// machine runs in a copy of the tree at another path), else the one this build came from.
#ifdef AISP_SOURCE_DIR
inline std::string source_dir() {
  const char* from_environment = std::getenv("AISP_SOURCE_DIR");
  return from_environment != nullptr ? from_environment : AISP_SOURCE_DIR;
}
#endif

// Runs a shell command and captures what it printed: stdout and stderr together, or stdout
// alone (stderr then goes wherever the command sends it).
inline command_result run_command(const std::string& command, bool with_stderr = true) {
  command_result result;
  std::FILE* pipe = popen((with_stderr ? command + " 2>&1" : command).c_str(), "r");
  if (pipe == nullptr) return result;
  char chunk[4096];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) result.output += chunk;
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// A whole file as text ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether every speedup of a results.json is `faster`. Tests whose point is not the verdict retake
// a host run when the judge, rightly, found the loaded CI machine too noisy to call one (a
// baseline and its twin 16% apart on labs/host:transpose, twice in five clean-clone runs).
inline bool all_speedups_faster(const std::string& results_path) {
  const auto results = nlohmann::json::parse(read_file(results_path), nullptr, false);
  if (results.is_discarded()) return false;
  bool any = false;
  for (const auto& pair : results.value("pairs", nlohmann::json::array())) {
    for (const auto& speedup : pair.value("speedups", nlohmann::json::array())) {
      if (speedup.value("verdict", "") != "faster") return false;
      any = true;
    }
  }
  return any;
}

// Checks a loaded machine can fail on honest code (verify::checks::load_sensitive).
inline bool load_sensitive_check(const std::string& check) { return ::aisp::verify::checks::load_sensitive(check); }

// Whether the failed checks of a results.json (of `variant` only, where one is named) are all
// load-sensitive (and there is at least one): a test whose point is not those checks retakes
// such a run once.
inline bool failed_only_load_sensitive(const std::string& results_path, const std::string& variant = "") {
  const auto results = nlohmann::json::parse(read_file(results_path), nullptr, false);
  if (results.is_discarded()) return false;
  bool any = false;
  for (const auto& pair : results.value("pairs", nlohmann::json::array())) {
    for (const auto& check : pair.value("checks", nlohmann::json::array())) {
      if (check.value("passed", true) || (!variant.empty() && check.value("variant", "") != variant)) continue;
      if (!load_sensitive_check(check.value("check", ""))) return false;
      any = true;
    }
  }
  return any;
}

}  // namespace aisp::testing

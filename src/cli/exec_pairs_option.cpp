#include "cli/exec_pairs_option.hpp"

#include <cstdlib>
#include <filesystem>

#include "aisp/check.hpp"
#include "harness/plugin_loader.hpp"

namespace aisp::cli {

namespace fs = std::filesystem;

std::string prepare_exec_pairs(const std::string& pair_file) {
  std::error_code error;
  AISP_EXPECTS(!fs::is_directory(pair_file, error), "--exec: " + pair_file + " is a folder; name a pair file in it");
  AISP_EXPECTS(fs::is_regular_file(pair_file, error), "--exec: no pair file " + pair_file);
  const fs::path bridge = exec_bridge_path();
  AISP_EXPECTS(fs::is_regular_file(bridge, error), "--exec: the bridge " + bridge.string() + " is missing (build the aisp_exec target)");
  const char* earlier = std::getenv("AISP_EXEC_PAIRS");
  std::string files = earlier != nullptr ? earlier : "";
  files.append(files.empty() ? "" : ":").append(fs::canonical(pair_file).string());
  setenv("AISP_EXEC_PAIRS", files.c_str(), 1);
  return bridge.string();
}

}  // namespace aisp::cli

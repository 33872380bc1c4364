// profile.json files built from real Nsight Compute outputs captured on the H100
// (tests/unit/data/ncu/): what the profile diff and MCP show_profile tests read.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "profile/bottleneck.hpp"
#include "profile/ncu_report.hpp"

namespace aisp::testing {

// One variant's profile entry from a stored ncu details capture.
inline nlohmann::json profiled_variant(const std::string& name, const std::string& capture) {
  std::ifstream in(std::string(AISP_SOURCE_DIR) + "/tests/unit/data/ncu/" + capture);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& kernel : aisp::profile::parse_ncu_details(text.str())) {
    const auto metrics = aisp::profile::key_metrics(kernel);
    auto entry = aisp::profile::to_json(metrics);
    entry["bottleneck"] = aisp::profile::to_json(aisp::profile::classify(metrics));
    kernels.push_back(entry);
  }
  return {{"variant", name}, {"kernels", kernels}};
}

// A folder under the temp directory holding profile.json of one pair (ch08:loop_unrolling).
inline std::string write_profile(const std::string& name, const nlohmann::json& variants) {
  const auto dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::create_directories(dir);
  const nlohmann::json document = {{"pairs", nlohmann::json::array({{{"target", "ch08:loop_unrolling"}, {"variants", variants}}})}};
  std::ofstream(dir / "profile.json") << document.dump();
  return dir.string();
}

}  // namespace aisp::testing

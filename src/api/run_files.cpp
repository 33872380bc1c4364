#include <filesystem>
#include <fstream>
#include <regex>

#include "api/results_api.hpp"
#include "hw/ceilings.hpp"

namespace aisp::api {

using nlohmann::json;

json summarize_results(const std::string& results_path) {
  std::ifstream file(results_path);
  const auto results = json::parse(file, nullptr, false);
  if (!file || results.is_discarded() || !results.is_object()) throw api_error("cannot read the results at " + results_path);
  json pairs = json::array();
  for (const auto& pair : results.value("pairs", json::array())) {
    json failed = json::array();
    for (const auto& check : pair.value("checks", json::array())) {
      if (!check.value("passed", true))
        failed.push_back({{"check", check.value("check", "")}, {"variant", check.value("variant", "")},
                          {"codes", check.value("codes", json::array())}, {"detail", check.value("detail", "")}});
    }
    pairs.push_back({{"target", pair.value("target", "")},
                     {"status", pair.value("status", "")},
                     {"message", pair.value("message", "")},
                     {"goal", pair.value("goal", "speed")},
                     {"verdict_statistic", pair.value("verdict_statistic", "median")},
                     {"speedups", pair.value("speedups", json::array())},
                     {"failed_checks", failed}});
  }
  return {{"results", results_path}, {"started_at", results.value("started_at", "")}, {"pairs", pairs}};
}

json hardware_ceilings() {
  json cards = json::array();
  const auto folder = cache_directory() / "ceilings";
  std::error_code error;
  if (!std::filesystem::is_directory(folder, error)) return cards;
  static const std::regex name(R"((.+)-driver(\d+)\.json)");
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    std::smatch parts;
    const auto file_name = entry.path().filename().string();
    if (!std::regex_match(file_name, parts, name)) continue;
    std::ifstream file(entry.path());
    const auto stored = json::parse(file, nullptr, false);
    if (stored.is_discarded() || !stored.is_object() || !stored.contains("ceilings")) continue;
    cards.push_back({{"uuid", parts[1].str()},
                     {"driver", std::stoi(parts[2].str())},
                     {"file", entry.path().string()},
                     {"ceilings", to_json(ceiling_set_from_json(stored["ceilings"]))}});
  }
  return cards;
}

}  // namespace aisp::api

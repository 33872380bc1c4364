#include "results/quarantine.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "results/result_json.hpp"

namespace aisp {

std::vector<quarantine_entry> load_quarantine(const std::string& path) {
  std::vector<quarantine_entry> entries;
  AISP_EXPECTS(!std::filesystem::is_directory(path), "--quarantine-file " + path + " is a directory, not a file");
  std::ifstream file(path);
  if (!file.good()) return entries;
  const auto document = nlohmann::json::parse(file, nullptr, false);
  AISP_EXPECTS(!document.is_discarded() && document.contains("entries"), "malformed quarantine file " + path);
  for (const auto& e : document.at("entries")) {
    entries.push_back({e.at("target").get<std::string>(), e.at("codes").get<std::vector<std::string>>(),
                       e.at("reason").get<std::string>(), e.at("run").get<std::string>(), e.at("since").get<std::string>()});
  }
  return entries;
}

void save_quarantine(const std::string& path, const std::vector<quarantine_entry>& entries) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : entries) {
    list.push_back({{"target", e.target}, {"codes", e.codes}, {"reason", e.reason}, {"run", e.run}, {"since", e.since}});
  }
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  write_json_file(path, {{"schema", "aisp.quarantine"}, {"schema_version", 1}, {"entries", list}});
}

void update_quarantine(std::vector<quarantine_entry>& entries, const suite_result& suite) {
  for (const auto& pair : suite.pairs) {
    if (pair.status == "skip") continue;
    std::erase_if(entries, [&](const quarantine_entry& e) { return e.target == pair.target; });
    if (!pair.flagged) continue;
    quarantine_entry entry{pair.target, {}, pair.message, suite.artifacts_dir, suite.started_at};
    for (const auto& check : pair.checks) {
      for (const auto& code : check.codes) {
        if (std::find(entry.codes.begin(), entry.codes.end(), code) == entry.codes.end()) entry.codes.push_back(code);
      }
    }
    entries.push_back(std::move(entry));
  }
}

}  // namespace aisp

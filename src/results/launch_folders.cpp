#include "results/launch_folders.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace aisp {

namespace fs = std::filesystem;

namespace {

constexpr const char* manifest_name = "launch.json";  // runner/rank_host.hpp's launch_manifest_name
constexpr std::string_view rank_prefix = "launch-rank-";

int rank_of(const fs::path& folder) {
  const auto name = folder.filename().string();
  try {
    return std::stoi(name.substr(rank_prefix.size()));
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

std::vector<std::string> expand_launch_folders(const std::vector<std::string>& folders) {
  std::vector<std::string> out;
  for (const auto& folder : folders) {
    const fs::path path(folder);
    if (!fs::is_directory(path) || fs::exists(path / "results.json") || fs::exists(path / manifest_name)) {
      out.push_back(folder);
      continue;
    }
    std::vector<fs::path> ranks;
    for (const auto& entry : fs::directory_iterator(path)) {
      if (entry.is_directory() && entry.path().filename().string().starts_with(rank_prefix) && rank_of(entry.path()) >= 0)
        ranks.push_back(entry.path());
    }
    if (ranks.empty()) {
      out.push_back(folder);  // neither: read_results_document says what is missing
      continue;
    }
    std::sort(ranks.begin(), ranks.end(), [](const fs::path& a, const fs::path& b) { return rank_of(a) < rank_of(b); });
    for (const auto& r : ranks) out.push_back(r.string());
  }
  return out;
}

std::optional<nlohmann::json> launch_only_document(const std::string& folder) {
  const fs::path path(folder);
  if (!fs::is_directory(path) || fs::exists(path / "results.json") || !fs::exists(path / manifest_name)) return std::nullopt;
  const auto file = (path / manifest_name).string();
  std::ifstream in(file);
  auto manifest = nlohmann::json::parse(in, nullptr, false);
  if (manifest.is_discarded() || !manifest.is_object() || !manifest.contains("launch") || !manifest["launch"].is_object())
    throw std::runtime_error(file + " is not a launch manifest (truncated or not aisp's)");
  nlohmann::json document = {{"started_at", manifest.value("started_at", "")},
                             {"artifacts_dir", fs::canonical(path).string()},
                             {"aisp_version", manifest.value("aisp_version", "")},
                             {"launch", manifest},
                             {"pairs", nlohmann::json::array()}};
  if (manifest.contains("device") && manifest["device"].is_object()) document["device"] = manifest["device"];
  return document;
}

}  // namespace aisp

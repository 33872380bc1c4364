// A stored `aisp profile ncu` run through the results API (the MCP show_profile tool): each
// kernel's key metrics with the bottleneck verdict of this build's classifier, as `aisp profile
// classify` would give it, so an old capture is read with today's rules.
#include <filesystem>
#include <fstream>

#include "api/results_api.hpp"
#include "profile/bottleneck.hpp"
#include "profile/ncu_report.hpp"

namespace aisp::api {

using nlohmann::json;

json profile_report(const std::string& where, const std::string& target) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path file = fs::is_directory(where, error) ? fs::path(where) / "profile.json" : fs::path(where);
  std::ifstream in(file);
  if (!in) throw api_error("no profile at " + file.string() + " (make one with aisp profile ncu --targets ...)");
  const json document = json::parse(in, nullptr, false);
  if (document.is_discarded() || !document.is_object() || !document.contains("pairs"))
    throw api_error(file.string() + " is not a profile.json of aisp profile ncu");
  json pairs = json::array();
  for (const auto& pair : document["pairs"]) {
    if (!target.empty() && pair.value("target", "") != target) continue;
    json variants = json::array();
    for (const auto& row : pair.value("variants", json::array())) {
      json kept = row;
      for (auto& kernel : kept["kernels"]) kernel["bottleneck"] = profile::to_json(profile::classify(profile::metrics_from_json(kernel)));
      variants.push_back(std::move(kept));
    }
    pairs.push_back({{"target", pair.value("target", "")}, {"variants", variants}});
  }
  if (!target.empty() && pairs.empty()) throw api_error("the profile at " + file.string() + " has no pair " + target);
  return {{"profile", file.string()}, {"pairs", pairs}};
}

}  // namespace aisp::api

#include <filesystem>

#include "api/results_api.hpp"
#include "history/expectations.hpp"

namespace aisp::api {

using nlohmann::json;

json target_expectations(const std::string& target, const std::vector<std::string>& hardware_keys, const std::string& dir) {
  json out = json::object();
  for (const auto& key : hardware_keys) {
    if (out.contains(key)) continue;
    const auto file = (std::filesystem::path(dir) / (key + ".json")).string();
    const auto entries = load_expectations(file, key)["entries"];
    if (!entries.contains(target)) continue;
    for (const auto& [variant, expected] : entries[target].items()) {
      const auto speedup = expected.value("speedup", json::object());
      // The interval a run's CI is held against (Note [expectation tolerance] in expectations.cpp).
      const json band = {{"low", speedup.value("low", 0.0) * (1.0 - expectation_tolerance)},
                         {"high", speedup.value("high", 0.0) * (1.0 + expectation_tolerance)}};
      out[key][variant] = {{"speedup", speedup}, {"band", band}, {"median_s", expected.value("median_s", 0.0)},
                           {"provenance", expected.value("provenance", json::object())}};
    }
  }
  return out;
}

}  // namespace aisp::api

// A worker's timeline as JSON, so the judge can merge every variant's into one trace.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "audit/timeline.hpp"

namespace aisp {

[[nodiscard]] nlohmann::json timeline_to_json(const std::vector<timeline_activity>& activities);
// Throws nlohmann::json::exception on a malformed document.
[[nodiscard]] std::vector<timeline_activity> timeline_from_json(const nlohmann::json& j);

}  // namespace aisp

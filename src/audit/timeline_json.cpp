#include "audit/timeline_json.hpp"

namespace aisp {

nlohmann::json timeline_to_json(const std::vector<timeline_activity>& activities) {
  auto rows = nlohmann::json::array();
  for (const auto& a : activities) {
    rows.push_back({static_cast<int>(a.kind), a.name, a.start_ns, a.end_ns, a.device, a.stream, a.correlation, a.bytes,
                    a.device_launched, a.access_policy_window, a.launch_type});
  }
  return {{"columns", {"kind", "name", "start_ns", "end_ns", "device", "stream", "correlation", "bytes",
                       "device_launched", "access_policy_window", "launch_type"}},
          {"rows", rows}};
}

std::vector<timeline_activity> timeline_from_json(const nlohmann::json& j) {
  std::vector<timeline_activity> activities;
  for (const auto& row : j.at("rows")) {
    timeline_activity a;
    a.kind = static_cast<activity_kind>(row.at(0).get<int>());
    a.name = row.at(1).get<std::string>();
    a.start_ns = row.at(2).get<std::uint64_t>();
    a.end_ns = row.at(3).get<std::uint64_t>();
    a.device = row.at(4).get<std::uint32_t>();
    a.stream = row.at(5).get<std::uint32_t>();
    a.correlation = row.at(6).get<std::uint32_t>();
    a.bytes = row.at(7).get<std::uint64_t>();
    a.device_launched = row.at(8).get<bool>();
    a.access_policy_window = row.at(9).get<bool>();
    a.launch_type = row.at(10).get<int>();
    activities.push_back(std::move(a));
  }
  return activities;
}

}  // namespace aisp

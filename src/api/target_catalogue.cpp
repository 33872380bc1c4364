// The results API's questions that need no history: the registered pairs and the validity matrix.
#include <vector>

#include "aisp/registry.hpp"
#include "analysis/validity_catalogue.hpp"
#include "api/results_api.hpp"

namespace aisp::api {

using nlohmann::json;

json list_targets(std::string_view group) {
  json listing = json::array();
  for (const auto& p : registry::instance().pairs()) {
    if (!group.empty() && p.group() != group) continue;
    std::vector<std::string> variants;
    for (const auto& v : p.variants()) variants.push_back(v.name);
    listing.push_back({{"target", p.target()}, {"group", p.group()}, {"backend", p.where() == backend::cuda ? "cuda" : "host"},
                       {"variants", variants}, {"summary", p.summary_text()}, {"tags", p.tags()},
                       {"benchmark_workload", p.benchmark_workload().describe()},
                       // Note [short calls]: timed in graph mode unless --mode says otherwise.
                       {"short_calls", p.short_calls_reason().empty() ? json(nullptr) : json(p.short_calls_reason())},
          {"times_host_launches", p.host_launches_reason().empty() ? json(nullptr) : json(p.host_launches_reason())},
          // Note [declared threads]: null for one thread.
          {"host_threads", p.host_threads() == 1 ? json(nullptr) : json{{"count", p.host_threads()}, {"reason", p.host_threads_reason()}}}});
  }
  if (!group.empty() && listing.empty()) throw api_error("no targets in chapter or lab '" + std::string(group) + "'");
  return listing;
}

json validity_rows(std::string_view query) {
  const auto found = aisp::explain_check(query);
  if (found.empty())
    throw api_error("no validity row or check named '" + std::string(query) +
                    "' (a code such as T1 or S2, or a check name such as outliers; docs/validity.md)");
  json rows = json::array();
  for (const auto& row : found) {
    rows.push_back({{"query", query}, {"code", row.code}, {"issue", row.issue}, {"protection", row.protection},
                    {"fixture", row.fixture}, {"status", row.status}});
  }
  return rows;
}

}  // namespace aisp::api

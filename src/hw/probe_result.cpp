#include "hw/probe_result.hpp"

#include <algorithm>

namespace aisp {

void summarize_into(probe_result& result, std::vector<double> values) {
  result.repetitions = static_cast<int>(values.size());
  if (values.empty()) return;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  result.median = n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  result.min = values.front();
  result.max = values.back();
}

nlohmann::json to_json(const probe_result& r) {
  nlohmann::json j = {{"name", r.name}, {"group", r.group}, {"method", r.method}, {"size", r.size},
                      {"unit", r.unit}, {"median", r.median}, {"min", r.min}, {"max", r.max},
                      {"repetitions", r.repetitions}};
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

probe_result probe_result_from_json(const nlohmann::json& j) {
  probe_result r;
  r.name = j.value("name", "");
  r.group = j.value("group", "");
  r.method = j.value("method", "");
  r.size = j.value("size", "");
  r.unit = j.value("unit", "");
  r.median = j.value("median", 0.0);
  r.min = j.value("min", 0.0);
  r.max = j.value("max", 0.0);
  r.repetitions = j.value("repetitions", 0);
  r.error = j.value("error", "");
  return r;
}

}  // namespace aisp

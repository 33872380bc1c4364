#include "aisp/workload.hpp"

#include <string>

#include "aisp/check.hpp"

namespace aisp {

std::int64_t workload::get(std::string_view name) const {
  const auto found = params.find(name);
  AISP_EXPECTS(found != params.end(),
               "workload has no parameter '" + std::string(name) + "' (" + describe() + ")");
  return found->second;
}

std::string workload::describe() const {
  std::string text;
  for (const auto& [name, value] : params) {
    if (!text.empty()) text += ',';
    text += name + '=' + std::to_string(value);
  }
  return text;
}

std::string_view workload_kind_name(workload_kind kind) {
  switch (kind) {
    case workload_kind::benchmark: return "benchmark";
    case workload_kind::validation: return "validation";
    case workload_kind::held_out: return "held_out";
  }
  return "?";
}

}  // namespace aisp

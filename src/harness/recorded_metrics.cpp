#include "harness/recorded_metrics.hpp"

#include <algorithm>
#include <cmath>

#include "aisp/check.hpp"
#include "aisp/run_context.hpp"

namespace aisp {

void recorded_metrics::add(std::string_view metric, double value) {
  const auto name = [&] { return std::string(metric.substr(0, max_note_key_chars)); };  // for a failure's message or a new metric
  AISP_EXPECTS(!metric.empty() && metric.size() <= max_note_key_chars &&
                   std::all_of(metric.begin(), metric.end(),
                               [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }),
               "recorded metric '" + name() + "' must be 1 to " + std::to_string(max_note_key_chars) + " characters of [a-z0-9_]");
  AISP_EXPECTS(std::isfinite(value), "recorded metric '" + name() + "' got a value that is not finite");
  const auto known = values_.find(metric);
  AISP_EXPECTS(values_.size() < max_recorded_metrics || known != values_.end(),
               "recorded metric '" + name() + "' would be metric " + std::to_string(max_recorded_metrics + 1) + "; a variant may record " +
                   std::to_string(max_recorded_metrics));
  AISP_EXPECTS(this_call_ < max_recorded_values,
               "a call recorded more than " + std::to_string(max_recorded_values) + " values (run_context::record)");
  ++this_call_;
  if (known == values_.end()) {  // a new metric: its first call allocates, later ones find room
    auto& fresh = values_[name()];
    fresh.reserve(16 * max_recorded_values);
    fresh.push_back(value);
    return;
  }
  known->second.push_back(value);
}

void recorded_metrics::prepare(bool keep) {
  for (auto& [name, values] : values_) {
    if (!keep) values.clear();  // the storage stays
    // Rarely needed: a new metric starts with room for 16 calls, and clearing keeps the storage.
    if (values.capacity() - values.size() < max_recorded_values) values.reserve(2 * values.capacity() + max_recorded_values);
  }
}

recorded_values recorded_metrics::take() {
  recorded_values taken;
  for (auto& [name, values] : values_) {
    if (!values.empty()) taken[name] = values;
    values.clear();
  }
  return taken;
}

}  // namespace aisp

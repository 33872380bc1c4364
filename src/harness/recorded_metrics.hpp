// Note [recorded metrics]: what run() measured of each item a call served (run_context::record),
// kept by the worker per call and pooled by the judge over a variant's timed calls.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace aisp {

using recorded_values = std::map<std::string, std::vector<double>, std::less<>>;

// A metric named `*_s` is a time in seconds (a latency, which W12 compares and reports print as
// durations); any other is a count (`accepted_drafts`).
[[nodiscard]] inline bool is_time_metric(std::string_view metric) { return metric.ends_with("_s"); }

class recorded_metrics {
 public:
  // Appends to `metric`; contract_error for a malformed name, a non-finite value, or more than
  // the bounds of aisp/run_context.hpp allow in one call.
  void add(std::string_view metric, double value);
  // A call of run() begins: the per-call bound counts from here. Never allocates.
  void begin_call() { this_call_ = 0; }
  // Before a call, outside the timed window: unless `keep` (the calls of one request of timed
  // samples), the values so far are dropped; every metric seen gets room for a call's values, so
  // that add() does not allocate inside run() (the harness counts a timed call's allocations
  // against the variant: M1).
  void prepare(bool keep);
  // Everything recorded since the last take (metrics that got values), then forgotten; the
  // metrics' names and storage are kept.
  [[nodiscard]] recorded_values take();

 private:
  recorded_values values_;
  std::size_t this_call_ = 0;
};

}  // namespace aisp

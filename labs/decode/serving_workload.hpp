// labs/decode's serving pairs' workload as a trace (issue 21): the workload parameters of
// serving_pair_parts.cuh made into the requests the schedulers serve. Host-only, for the pairs
// and for the unit tests that model their schedules.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "aisp/workload.hpp"
#include "kv_pages.hpp"
#include "serving_scheduler.hpp"
#include "serving_trace.hpp"

namespace aisp::decode {

// ---- the trace (workload parameters -> requests) ----
// Prompt lengths uniform in [max / 4, max]; output lengths likewise, or, where the pair declares
// a positive `output_mean`, geometric of that mean in [1, max] (trace_config::output_mean). The
// trace's own prompt tokens are not used: the prompts are the `prompt` input, fresh every call
// (request r reads row r, its first prompt_tokens draws).
[[nodiscard]] inline trace_config trace_of(const workload& w) {
  trace_config c;
  c.requests = static_cast<int>(w.get("requests"));
  c.arrivals_per_s = static_cast<double>(w.get("rate"));
  c.prompt_max = static_cast<int>(w.get("prompt_max"));
  c.prompt_min = std::max(1, c.prompt_max / 4);
  c.output_max = static_cast<int>(w.get("output_max"));
  const auto mean = w.params.find("output_mean");
  c.output_mean = mean == w.params.end() ? 0.0 : static_cast<double>(mean->second);
  c.output_min = c.output_mean > 0.0 ? 1 : std::max(1, c.output_max / 4);
  c.vocab = 2;  // unused: no trace prompt token is read
  return c;
}

[[nodiscard]] inline std::vector<request_shape> shapes_of(const workload& w) {
  std::vector<request_shape> shapes;
  for (const auto& r : make_trace(trace_of(w))) shapes.push_back({r.arrival_s, static_cast<int>(r.prompt.size()), r.output_tokens});
  return shapes;
}

// ---- paged_kv_cache: the KV page pool (`kv_pages` pages of `page` positions) ----
[[nodiscard]] inline int longest_sequence(const workload& w) { return static_cast<int>(w.get("prompt_max") + w.get("output_max")); }

// The cache's pool, shared out as `how` says: slabs, as many as fit; or pages to `slots` sequences.
[[nodiscard]] inline kv_page_pool pool_of(const workload& w, kv_allocation how) {
  const auto pages = static_cast<int>(w.get("kv_pages"));
  const auto page = static_cast<int>(w.get("page"));
  const int slots = how == kv_allocation::slabs ? kv_page_pool::slabs_that_fit(pages, page, longest_sequence(w)) : static_cast<int>(w.get("slots"));
  if (slots < 1) throw std::invalid_argument("paged_kv_cache: kv_pages holds no slab of prompt_max + output_max positions");
  return {pages, page, slots, longest_sequence(w), how};
}

}  // namespace aisp::decode

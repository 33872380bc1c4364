#include "runner/drawn_size.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

namespace aisp {

std::optional<workload> draw_held_out_size(const pair& declared, std::mt19937_64& entropy) {
  std::vector<const workload*> small;
  for (const auto& w : declared.workloads()) {
    if (w.kind != workload_kind::benchmark) small.push_back(&w);
  }
  if (small.size() < 2) return std::nullopt;
  // Each parameter's values across the small sizes, in order.
  std::map<std::string, std::vector<std::int64_t>> values;
  for (const auto* w : small) {
    for (const auto& [name, value] : w->params) values[name].push_back(value);
  }
  workload drawn = *small.front();
  drawn.kind = workload_kind::held_out;
  std::map<std::vector<std::int64_t>, std::int64_t> drawn_for;  // tied parameters share a draw
  bool any_varies = false;
  for (const auto& [name, seen] : values) {
    if (seen.size() != small.size()) return std::nullopt;  // not every size names it: no envelope
    const auto [low, high] = std::minmax_element(seen.begin(), seen.end());
    if (*low == *high) continue;
    any_varies = true;
    if (const auto tied = drawn_for.find(seen); tied != drawn_for.end()) {
      drawn.params[name] = tied->second;
      continue;
    }
    std::int64_t step = 0;
    for (std::int64_t v : seen) step = std::gcd(step, v);
    step = std::max<std::int64_t>(step, 1);
    const std::int64_t first = (*low + step - 1) / step;
    const std::int64_t last = *high / step;
    std::uniform_int_distribution<std::int64_t> pick(first, std::max(first, last));
    const std::int64_t value = pick(entropy) * step;
    drawn.params[name] = value;
    drawn_for[seen] = value;
  }
  if (!any_varies) return std::nullopt;
  return drawn;
}

}  // namespace aisp

#include "runner/rank_checks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runner/judge_checks.hpp"
#include "stats/summary.hpp"

namespace aisp {
namespace {

// Note [rank skew]: ranks that meet in a collective finish within microseconds of each other,
// and host ranks without one differ by scheduling noise (a few %). A variant whose slowest rank
// takes 1.5x its fastest, and 1.5x more skew than the baseline's ranks show, does its work (or
// its waiting) unevenly: the kind of variant that only looks fast where rank 0 alone is timed.
constexpr double skew_limit = 1.5;

}  // namespace

void check_rank_skew(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  const variant_slot* baseline = nullptr;
  for (const auto& slot : slots) {
    if (slot.role == slot_role::baseline) baseline = &slot;
  }
  if (baseline == nullptr || baseline->rank_skews.empty()) return;
  const double baseline_skew = std::max(1.0, stats::median_of(baseline->rank_skews));
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate || slot.rank_skews.empty()) continue;
    const double skew = stats::median_of(slot.rank_skews);
    const bool skewed = skew > skew_limit && skew > skew_limit * baseline_skew;
    add_check(checks, verify::checks::rank_skew, slot.label, !skewed,
              fmt::format("median slowest/fastest rank time per sample {:.2f} (baseline {:.2f}); samples are the slowest rank's",
                          skew, baseline_skew));
  }
}

}  // namespace aisp

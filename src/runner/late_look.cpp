#include "runner/late_look.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runner/judge_checks.hpp"
#include "runner/sampling_rounds.hpp"

namespace aisp {
namespace {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace

// Note [late look]: a candidate slower after sampling than while sampled by more than the bound
// was fast only for as many calls as the judge takes; a baseline faster after by as much was slow
// only while it was sampled. Either lends the candidate a speedup its steady state does not have.
// Honest variants read within 1.2x either way (this machine's planted suite, 2026-12-04).
void check_late_look(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  for (const auto& slot : slots) {
    if (slot.role == slot_role::noise_twin || slot.late_look_s.size() < late_look_least_samples || slot.result.samples.empty()) continue;
    const double sampled = median_of(durations_of(slot));
    const double late = median_of(slot.late_look_s);
    if (sampled <= 0 || late <= 0) continue;
    const double ratio = late / sampled;
    const bool baseline = slot.role == slot_role::baseline;
    const bool passed = baseline ? ratio >= 1 / late_look_bound : ratio <= late_look_bound;
    add_check(checks, verify::checks::late_look, slot.label, passed,
              fmt::format("{} samples after sampling: median {:.4g} us a call against {:.4g} us while sampled ({:.2f}x){}", slot.late_look_s.size(),
                          late * 1e6, sampled * 1e6, ratio,
                          passed ? ""
                          : baseline ? fmt::format(": the baseline ran over {:g}x faster once the sampling was over; it was slow only while "
                                                   "sampled",
                                                   late_look_bound)
                                     : fmt::format(": over {:g}x slower once the sampling was over; it was fast only for as many calls as "
                                                   "the judge sampled",
                                                   late_look_bound)));
  }
}

}  // namespace aisp

#include "runner/late_look.hpp"

#include <fmt/format.h>

#include "runner/judge_checks.hpp"
#include "runner/sampling_rounds.hpp"
#include "stats/summary.hpp"

namespace aisp {

// Note [late look]: a candidate slower after sampling than while sampled by more than the bound
// was fast only for as many calls as the judge takes. The look runs one worker alone, where the
// sampling interleaved every worker's visits, and host variants read faster there: of the
// planted suite's 204 looks (this 2-core machine, 2026-12-04; 10 samples then) honest variants
// read 0.66-1.43x, and an honest PyTorch baseline 0.37x. So a candidate is held to 2x on 20
// samples, and a baseline faster after (one slow only while sampled) is shown, not failed: the
// look cannot tell it from the look's own bias.
void check_late_look(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  for (const auto& slot : slots) {
    if (slot.role == slot_role::noise_twin || slot.late_look_s.size() < late_look_least_samples || slot.result.samples.empty()) continue;
    const double sampled = stats::median_of(durations_of(slot));
    const double late = stats::median_of(slot.late_look_s);
    if (sampled <= 0 || late <= 0) continue;
    const double ratio = late / sampled;
    const bool passed = slot.role == slot_role::baseline || ratio <= late_look_bound;
    add_check(checks, verify::checks::late_look, slot.label, passed,
              fmt::format("{} samples after sampling: median {:.4g} us a call against {:.4g} us while sampled ({:.2f}x){}", slot.late_look_s.size(),
                          late * 1e6, sampled * 1e6, ratio,
                          passed ? ""
                                 : fmt::format(": over {:g}x slower once the sampling was over; it was fast only for as many calls as "
                                               "the judge sampled",
                                               late_look_bound)));
  }
}

}  // namespace aisp

// When to stop sampling a variant. See docs/architecture.md §2.4.
// Note [stopping on the CI of the median]: the spread of short kernels' samples never drops to
// 0.5% (7-10% at 7 us on the H100), but the CI of their median shrinks like 1/sqrt(n). So the
// rule watches the CI half-width, and also stops once doubling the samples no longer shrinks it.
// Note [sampling floor]: min_time_s is a floor on a variant's sampling time (its visits' wall time,
// fills and flushes included), against drift that a short burst of samples would not see. It was
// 0.5 s; at that floor every GPU pair of the lab had converged far below the 0.5% target (median
// CI half-widths of 0.1-0.26% in the H100 probe of 2026-11-27), so the floor, not the precision,
// set a third of the suite's time. `bench run` now uses 0.25 s: the CI target still decides.
// Note [sampling ceiling]: max_time_s was 15 s, nvbench's timeout. Only variants whose samples
// never settle reach it: host-launch loops, pageable or managed transfers, single-core host
// loops. On the H100 (2026-11-27) such variants took about 290 of the lab's 800 s. Replaying
// their recorded samples (scripts/replay_stopping_rule.py), a 5 s stop leaves CI half-widths of
// 2-10% where 15 s gave 2-4%; the smallest of those pairs' speedups is 1.7x, so no verdict can
// move. `bench run` stops at 5 s; `--max-time 15` buys the tighter interval. Each variant's
// stop reason is reported.
// Note [long calls]: a call of over max_time_s / min_samples (0.5 s at the defaults: a serving
// trace) cannot reach the minimum sample count by the ceiling, and failed S5 at the defaults
// (labs/decode:continuous_batching's 1.3 s calls got 7-9 samples at --max-time 12, H200,
// 2026-11-29). Too few samples void a verdict; a few more seconds do not, so below the minimum a
// variant whose pace reaches the minimum by short_of_samples_factor x max_time_s (30 s at the
// default: calls up to ~2.5 s) samples on to it. One that cannot reach it stops at max_time_s
// as before, with too few samples (S5): a 0.4 s call at --max-time 0.3
// (cheats:s5_too_few_samples: when every variant below the minimum sampled on, it reached 10
// samples with the extra verified visits), and no time spent on a variant that will fail anyway.
// The pace is what the remaining samples will cost: own time so far plus (min_samples - n) x
// next_sample_s. Own time divided by the samples misjudged it: a third of a CUDA pair's visits
// run under the device audit and yield no sample (Note [audited visits]), so early on, a 1.2 s
// call's pace read 3-4 s a sample and continuous_batching stopped at 6-8 samples again (H200
// GPU-435786a2, 2026-11-29). The caller passes a timed sample's cost with its share of the
// audited visits.
// Note [the mean known too]: the median's CI converged at ~30 samples on a candidate fast in two
// thirds of its calls and 4.5x slow in the rest (cheats:s2_fast_median_slow_mean), because its
// fast calls were alike; at 30 samples the share of slow ones it saw ran 13-55%, and hidden-cost
// (Note [hidden mean], which compares the means of each variant's fastest 95%) missed it in 3 of
// 12 runs on a loaded 2-core machine (2026-12-06). So the rule converges only when that trimmed
// mean is known too: its CI half-width (normal, from the kept samples' spread) within
// target_mean_rel_half_width of it. Samples whose spread is even (a kernel's, a noisy host
// loop's) meet the mean's 5% long before the median's 0.5%; only a variant whose calls fall in
// modes apart samples on, to the ceiling at worst. Stalling watches the worse of the two, each
// against its own target. And the rule converges only from least_samples_for_the_mean samples:
// under a heavy load (two busy CPUs beside the suite's judge on a 2-core machine) that candidate
// reached its minimum of 10 samples in its minimum time with no slow call among them, both
// intervals read as points, and it stopped as a 1.50x "faster" (2026-12-06): a third of calls
// slow shows in none of 10 samples 1.7% of the time, in none of 20 three times in 10,000. Replayed
// on every device run archived in docs/results/raw (3,768 variants), the mean's target moved no
// stop and 20 samples added 5% to the sampling time (30 would add 7%): the variants of calls over
// ~25 ms that converged at 10 (scripts/replay_stopping_rule.py, 2026-12-06).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace aisp::stats {

// S5: the fewest samples a variant gives a verdict's CI; `bench run --min-samples` may raise it,
// never lower it (a CI from 3 samples claims more than it measured).
inline constexpr std::size_t least_samples_for_a_verdict = 10;
// The fewest samples a variant converges on (Note [the mean known too]).
inline constexpr std::size_t least_samples_for_the_mean = 20;

struct stopping_config {
  std::size_t min_samples = least_samples_for_a_verdict;
  double min_time_s = 0.25;              // sampling time spent on the variant (Note [sampling floor])
  double target_rel_half_width = 0.005;  // CI half-width / median
  double target_mean_rel_half_width = 0.05;  // the trimmed mean's CI half-width / it (Note [the mean known too])
  double max_time_s = 5.0;  // Note [sampling ceiling]
  // Note [long calls]: below min_samples, a variant on pace to reach it stops only at this many
  // times max_time_s.
  double short_of_samples_factor = 6.0;
  double confidence = 0.95;
  // Stalled: after the samples doubled, the half-width is still above this fraction of what
  // it was (an ideal 1/sqrt(2) shrink would give 0.71).
  double stall_ratio = 0.95;
};

enum class stop_reason { keep_going, converged, stalled, timed_out };

[[nodiscard]] std::string_view stop_reason_name(stop_reason reason);

class stopping_rule {
 public:
  explicit stopping_rule(stopping_config config = {});

  // Call after each batch with all samples so far and the sampling time spent. Once it
  // returns anything but keep_going, it keeps returning that.
  stop_reason update(std::span<const double> samples, double elapsed_s) { return update(samples, elapsed_s, elapsed_s); }
  // The minimum time is met on the variant's own sampling time; the limit on `charged_s` (at
  // least its own: Note [visit length] in sampling_rounds.cpp). `next_sample_s`, where the
  // caller knows it (> 0), is the own time one more sample will cost, visits that yield no
  // samples included (Note [long calls]); else the pace so far, own_s per sample.
  stop_reason update(std::span<const double> samples, double own_s, double charged_s, double next_sample_s = 0);
  [[nodiscard]] double last_rel_half_width() const { return last_rel_half_width_; }
  [[nodiscard]] double last_mean_rel_half_width() const { return last_mean_rel_half_width_; }
  [[nodiscard]] const stopping_config& config() const { return config_; }

 private:
  stopping_config config_;
  stop_reason decided_ = stop_reason::keep_going;
  std::size_t checkpoint_count_ = 0;
  double checkpoint_shortfall_ = 0;
  double last_rel_half_width_ = 0;
  double last_mean_rel_half_width_ = 0;
};

}  // namespace aisp::stats

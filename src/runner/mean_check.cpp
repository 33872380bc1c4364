#include "runner/mean_check.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "results/terminal_table.hpp"
#include "runner/judge_checks.hpp"
#include "runner/sampling_rounds.hpp"
#include "stats/summary.hpp"

namespace aisp {
namespace {

// Note [hidden mean]
// Speedups are ratios of medians, robust to the noise of a shared machine. A candidate fast in
// most calls and slow in a third of them (each under the outliers check's 5x the median) keeps a
// fast median while its mean, the time a stream of calls takes, is slower than the baseline's: it
// read 1.64x "faster", and 1832 calls/s against a true 904, with every check passed (red team,
// round five, 2026-12-04). A candidate whose median is at least 5% under the baseline's while its
// mean is over the baseline's fails: its median claims a speedup the calls, in sum, do not have;
// one whose mean confirms under half of its median's gain is inconclusive, not faster.
// "Over" is beyond noise: by more than the baseline's twin (the same code in another worker) is
// over or under the baseline's own mean, by 3% at least and 15% at most. On the points alone an
// honest pair against itself failed on a loaded CI machine, its median 1.11x "faster" and its mean
// 0.99x (2026-12-06); a bootstrap CI of the means' ratio missed the planted cost under the suite's
// load (1.12x, CI [0.94, 1.31]), where the twin's mean sat 0.89-1.18x the baseline's over 17
// runs, and once 1.38x on a busy machine: past 15% the twin measures a disturbance, not the noise
// a mean over the baseline's must clear.
// Nor by less than honest code's mean is uncertain (Note [the means' own noise]): the 95% CI
// half-width of the baseline's trimmed mean, or its twin's where wider, times sqrt(2) (two such
// means compared). An honest Python pair whose variants run the same computation read a median
// 1.05x "faster" and a mean 3.4% slower (109.4 against 105.8 us, samples whose means sat a third
// over their medians), over the twin's 3% (2026-12-06); its means were known to ~5% each (Note
// [the mean known too]), so 3.4% was noise. The candidate's own spread is not counted: a cost in
// some of its calls widens it, and would buy itself the margin.
// The means leave out each variant's slowest 5% of samples, so that a preemption or two on a
// loaded machine (which outliers and contended judge) cannot move them; a cost in a third of the
// calls stays in.
// Note [soaked mean]: the trimmed means miss a cost in fewer calls than they trim, or than the
// samples hold: a candidate 30-80 times slower in 4% of its calls (cheats:s2_rare_slow_calls_under_the_trim)
// converged on 20 samples with no slow call among them half the time, and its 4 in 100 sat in the
// trimmed 5% otherwise: 1.50x "faster" (2026-12-06), where its calls took 2.2 fast calls on average
// against the baseline's 1.5. The late look's soak (Note [late look], sampling_rounds.cpp) is
// hundreds of calls back to back, and a cost in some calls shows in its wall time a call whatever
// its share. But a soak repeats the inputs in place, and honest variants gain from that unevenly:
// accuracy_honest:bf16_rows_reordered read 4.01x by its medians and 7.60x by its soaks (the
// baseline's soak 4x its median, the candidate's 2x). So each variant's soak is read against its
// own median (its stream ratio), and the candidate's ratio against the baseline's: a candidate
// whose median claims the speedup while its stream ratio exceeds the baseline's by more than that
// speedup times 1 + soak_margin fails hidden-cost on the host: scaled as the baseline's stream
// scales, its calls take longer than the baseline's. Honest host pairs' candidate-over-baseline
// ratios read 0.52-1.06, and up to 1.23 beside a busy loop (accuracy_honest:*, 2-core machine,
// 2026-12-06), so the margin is 50%: the planted candidate (4% of calls at 40 units) read 2.2-3.0
// against 1.5 x 1.5 = 2.25, and at 80 units (4.2 by count) it is held to more.
// On the device the samples flush the L2 and the soak does not, and a baseline that gains more
// from a warm cache would read as that: the ratios are reported there, not judged, until a device
// run measures the lab's honest ones.
constexpr double soak_margin = 0.5;
constexpr double median_claim = 1.05;
constexpr double least_mean_margin = 0.03;
constexpr double most_mean_margin = 0.15;

double trimmed_mean(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return stats::trimmed_mean_of_sorted(values);
}

// The baseline's median and trimmed mean over a candidate's; nullopt with fewer than 2 samples.
struct against_baseline {
  double median = 0, base_median = 0, mean = 0, base_mean = 0;
};

// Note [the means' own noise]: sqrt(2) x the widest relative CI half-width of the baseline's and
// its twin's trimmed means.
double honest_means_half_width(const std::vector<variant_slot>& slots) {
  double widest = 0;
  for (const auto& slot : slots) {
    if (slot.role != slot_role::baseline && slot.role != slot_role::noise_twin) continue;
    auto values = durations_of(slot);
    std::sort(values.begin(), values.end());
    widest = std::max(widest, stats::trimmed_mean_rel_half_width(values));
  }
  return std::sqrt(2.0) * widest;
}

std::optional<against_baseline> read_against(const variant_slot& baseline, const variant_slot& candidate) {
  const auto base_values = durations_of(baseline);
  const auto values = durations_of(candidate);
  if (base_values.size() < 2 || values.size() < 2) return std::nullopt;
  return against_baseline{stats::summarize(values).median, stats::summarize(base_values).median, trimmed_mean(values),
                          trimmed_mean(base_values)};
}

// How far the twin's trimmed mean is from the baseline's, as a share, or the means' own
// uncertainty where that is more, within the margins' bounds.
double mean_margin(const std::vector<variant_slot>& slots, double base_mean, double means_half_width) {
  double margin = std::max(least_mean_margin, means_half_width);
  for (const auto& slot : slots) {
    if (slot.role != slot_role::noise_twin || base_mean <= 0) continue;
    if (const auto values = durations_of(slot); values.size() >= 2) margin = std::max(margin, std::abs(trimmed_mean(values) / base_mean - 1));
  }
  return std::min(margin, most_mean_margin);
}

}  // namespace

void check_hidden_cost(const std::vector<variant_slot>& slots, std::vector<check_result>& checks, bool soak_judged) {
  const auto baseline = std::find_if(slots.begin(), slots.end(), [](const variant_slot& s) { return s.role == slot_role::baseline; });
  if (baseline == slots.end()) return;
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate) continue;
    const auto read = read_against(*baseline, slot);
    if (!read) continue;
    const double margin = mean_margin(slots, read->base_mean, honest_means_half_width(slots));
    const bool claims = read->median * median_claim <= read->base_median;
    const bool hidden = claims && read->mean > read->base_mean * (1 + margin);
    // Note [soaked mean]: 0 where a variant had no soak (calls too long for a look).
    const bool soaked = slot.soak_call_s > 0 && baseline->soak_call_s > 0;
    // Each variant's stream ratio (soak a call over its median), the candidate's over the baseline's.
    const double stream_excess = soaked ? (slot.soak_call_s / read->median) / (baseline->soak_call_s / read->base_median) : 0;
    const double speedup = read->base_median / read->median;
    const bool soak_hidden = soak_judged && claims && stream_excess > speedup * (1 + soak_margin);
    const std::string soak_detail =
        soaked ? fmt::format("; back to back in the late look {} a call against {}: {:.2f} of its median against {:.2f} of the "
                             "baseline's ({:.2f}x, {})",
                             format_duration(slot.soak_call_s), format_duration(baseline->soak_call_s), slot.soak_call_s / read->median,
                             baseline->soak_call_s / read->base_median, stream_excess,
                             soak_judged ? fmt::format("judged over the speedup times {:.2f}", 1 + soak_margin) : "reported only on the device")
               : "";
    add_check(checks, verify::checks::hidden_cost, slot.label, !hidden && !soak_hidden,
              fmt::format("median {} against the baseline's {} ({:.2f}x); mean of the fastest 95% {} against {} ({:.2f}x; the noise "
                          "margin {:.0f}%: the twin's distance or the means' CIs, within 3-15%){}{}",
                          format_duration(read->median), format_duration(read->base_median), read->base_median / read->median,
                          format_duration(read->mean), format_duration(read->base_mean), read->base_mean / read->mean, 100 * margin,
                          soak_detail,
                          hidden || soak_hidden ? ": faster by the median, slower on average beyond noise (a cost in some calls the median hides)"
                                                : ""));
  }
}

std::string unconfirmed_by_the_mean(const variant_slot& baseline, const variant_slot& candidate) {
  const auto read = read_against(baseline, candidate);
  if (!read) return "";
  const double by_median = read->base_median / read->median;
  const double by_mean = read->base_mean / read->mean;
  if (by_median <= 1 || by_mean >= 1 + (by_median - 1) / 2) return "";
  return fmt::format("the medians give {:.2f}x, the calls' means (each variant's fastest 95%) {:.2f}x, under half that gain: a cost in "
                     "some of the candidate's calls that the median hides (Note [hidden mean])",
                     by_median, by_mean);
}

}  // namespace aisp

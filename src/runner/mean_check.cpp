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
// The means leave out each variant's slowest 5% of samples, so that a preemption or two on a
// loaded machine (which outliers and contended judge) cannot move them; a cost in a third of the
// calls stays in.
constexpr double median_claim = 1.05;
constexpr double least_mean_margin = 0.03;
constexpr double most_mean_margin = 0.15;

double trimmed_mean(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto kept = stats::trimmed_mean_kept(values.size());
  double sum = 0;
  for (std::size_t i = 0; i < kept; ++i) sum += values[i];
  return sum / static_cast<double>(kept);
}

// The baseline's median and trimmed mean over a candidate's; nullopt with fewer than 2 samples.
struct against_baseline {
  double median = 0, base_median = 0, mean = 0, base_mean = 0;
};

std::optional<against_baseline> read_against(const variant_slot& baseline, const variant_slot& candidate) {
  const auto base_values = durations_of(baseline);
  const auto values = durations_of(candidate);
  if (base_values.size() < 2 || values.size() < 2) return std::nullopt;
  return against_baseline{stats::summarize(values).median, stats::summarize(base_values).median, trimmed_mean(values),
                          trimmed_mean(base_values)};
}

// How far the twin's trimmed mean is from the baseline's, as a share, within the margins' bounds.
double mean_margin(const std::vector<variant_slot>& slots, double base_mean) {
  double margin = least_mean_margin;
  for (const auto& slot : slots) {
    if (slot.role != slot_role::noise_twin || base_mean <= 0) continue;
    if (const auto values = durations_of(slot); values.size() >= 2) margin = std::max(margin, std::abs(trimmed_mean(values) / base_mean - 1));
  }
  return std::min(margin, most_mean_margin);
}

}  // namespace

void check_hidden_cost(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  const auto baseline = std::find_if(slots.begin(), slots.end(), [](const variant_slot& s) { return s.role == slot_role::baseline; });
  if (baseline == slots.end()) return;
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate) continue;
    const auto read = read_against(*baseline, slot);
    if (!read) continue;
    const double margin = mean_margin(slots, read->base_mean);
    const bool hidden = read->median * median_claim <= read->base_median && read->mean > read->base_mean * (1 + margin);
    add_check(checks, verify::checks::hidden_cost, slot.label, !hidden,
              fmt::format("median {} against the baseline's {} ({:.2f}x); mean of the fastest 95% {} against {} ({:.2f}x; the noise "
                          "margin {:.0f}%: the twin's distance, within 3-15%){}",
                          format_duration(read->median), format_duration(read->base_median), read->base_median / read->median,
                          format_duration(read->mean), format_duration(read->base_mean), read->base_mean / read->mean, 100 * margin,
                          hidden ? ": faster by the median, slower on average beyond noise (a cost in some calls the median hides)" : ""));
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

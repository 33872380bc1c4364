#include "stats/stopping_rule.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "aisp/check.hpp"
#include "stats/median_ci.hpp"
#include "stats/summary.hpp"

namespace aisp::stats {

std::string_view stop_reason_name(stop_reason reason) {
  switch (reason) {
    case stop_reason::keep_going: return "keep-going";
    case stop_reason::converged: return "converged";
    case stop_reason::stalled: return "stalled";
    case stop_reason::timed_out: return "timed-out";
  }
  return "unknown";
}

stopping_rule::stopping_rule(stopping_config config) : config_(config) {
  AISP_EXPECTS(config_.confidence > 0.0 && config_.confidence < 1.0,
               "confidence must lie in (0, 1)");
  AISP_EXPECTS(config_.target_rel_half_width > 0 && config_.target_mean_rel_half_width > 0, "target half-widths must be positive");
  AISP_EXPECTS(config_.stall_ratio > 0, "stall ratio must be positive");
}

stop_reason stopping_rule::update(std::span<const double> samples, double own_s, double charged_s, double next_sample_s) {
  if (decided_ != stop_reason::keep_going) return decided_;

  const bool out_of_time = std::max(own_s, charged_s) >= config_.max_time_s;
  const bool minimums_met =
      samples.size() >= config_.min_samples && own_s >= config_.min_time_s;
  if (!minimums_met || samples.empty()) {
    // The pair's share never cuts a variant below its minimum sample count: a sibling that
    // hogs the CPUs (a spinning helper thread) would otherwise fail an honest baseline's
    // sample-count (S5) on a loaded 2-core machine. Only its own time can (CI, 2026-11-28),
    // and below the minimum, where the minimum is within reach, only at the later ceiling
    // (Note [long calls]).
    const double ceiling_s = config_.max_time_s * std::max(1.0, config_.short_of_samples_factor);
    const double n = static_cast<double>(samples.size());
    const double reach_s = next_sample_s > 0 ? own_s + next_sample_s * (static_cast<double>(config_.min_samples) - n)
                           : samples.empty() ? 2 * ceiling_s  // no pace yet: out of reach until a sample says otherwise
                                             : own_s / n * static_cast<double>(config_.min_samples);
    const bool own_out_of_time = own_s >= (reach_s <= ceiling_s ? ceiling_s : config_.max_time_s);
    if (samples.size() < config_.min_samples ? own_out_of_time : out_of_time) decided_ = stop_reason::timed_out;
    return decided_;
  }

  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const double median = quantile_of_sorted(sorted, 0.5);
  AISP_EXPECTS(median > 0, "the stopping rule needs a positive median");
  const interval ci = median_confidence_interval(sorted, config_.confidence);
  last_rel_half_width_ = ci.half_width() / median;
  last_mean_rel_half_width_ = trimmed_mean_rel_half_width(sorted, config_.confidence);  // `sorted`: ascending
  // How far each interval is from its target (Note [the mean known too]).
  const double median_shortfall = last_rel_half_width_ / config_.target_rel_half_width;
  const double mean_shortfall = last_mean_rel_half_width_ / config_.target_mean_rel_half_width;
  const double shortfall = std::max(median_shortfall, mean_shortfall);
  const bool enough_for_the_mean = samples.size() >= least_samples_for_the_mean;

  // Priority when several hold at once: converged, then stalled, then timed out. A variant
  // precise enough with fewer than least_samples_for_the_mean samples goes on sampling; below that
  // count the mean's interval is itself a guess, so no stall is read on it there.
  if (shortfall <= 1 && enough_for_the_mean) {
    decided_ = stop_reason::converged;
    return decided_;
  }
  const bool judged_on_the_mean = mean_shortfall > median_shortfall;
  const bool stall_judged = shortfall > 1 && (enough_for_the_mean || !judged_on_the_mean);
  if (stall_judged && checkpoint_count_ == 0) {
    checkpoint_count_ = samples.size();
    checkpoint_shortfall_ = shortfall;
  } else if (stall_judged && samples.size() >= 2 * checkpoint_count_) {
    // Doubling n should shrink the half-width by about 1/sqrt(2); if it did not, more samples
    // only buy drift (thermal, clocks), not precision.
    if (shortfall > config_.stall_ratio * checkpoint_shortfall_) {
      decided_ = stop_reason::stalled;
      return decided_;
    }
    checkpoint_count_ = samples.size();
    checkpoint_shortfall_ = shortfall;
  }
  if (out_of_time) decided_ = stop_reason::timed_out;
  return decided_;
}

}  // namespace aisp::stats

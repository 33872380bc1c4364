// Robust summary of one variant's samples (seconds per iteration).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace aisp::stats {

struct sample_summary {
  std::size_t count = 0;
  double median = 0;
  double q1 = 0;
  double q3 = 0;
  double iqr = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double cv = 0;         // stddev / mean
  double robust_cv = 0;  // (iqr / 1.349) / median: the spread of a normal with that IQR
  std::size_t outliers = 0;  // samples beyond the 1.5 IQR fences (reported, never dropped: S2)
};

// Throws contract_error on an empty span.
[[nodiscard]] sample_summary summarize(std::span<const double> samples);

// Quantile with linear interpolation between order statistics (Hyndman-Fan type 7).
// `sorted` must be sorted ascending and non-empty; q in [0, 1].
[[nodiscard]] double quantile_of_sorted(std::span<const double> sorted, double q);

// The middle element (the upper one of an even count), 0 when empty: a quick median of check
// statistics, where interpolating between two values says nothing more.
[[nodiscard]] double median_of(std::vector<double> values);

// How many of n samples a trimmed mean keeps: all but the slowest 5% (at least one), so that a
// preemption or two on a loaded machine cannot move it while a cost in a third of the calls stays
// in (Note [hidden mean], runner/mean_check.cpp; Note [the mean known too], stopping_rule.hpp).
[[nodiscard]] std::size_t trimmed_mean_kept(std::size_t n);

// The mean of the trimmed_mean_kept(n) fastest of `sorted` (ascending, non-empty).
[[nodiscard]] double trimmed_mean_of_sorted(std::span<const double> sorted);

// The relative CI half-width of the trimmed mean of `sorted` (ascending): normal, from the kept
// samples' spread; 0 with fewer than 2 samples.
[[nodiscard]] double trimmed_mean_rel_half_width(std::span<const double> sorted, double confidence = 0.95);

}  // namespace aisp::stats

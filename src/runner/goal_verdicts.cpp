#include "runner/goal_verdicts.hpp"

#include <nlohmann/json.hpp>

namespace aisp {
namespace {

nlohmann::json estimate_json(const stats::ratio_estimate& estimate) {
  return {{"point", estimate.point}, {"low", estimate.low}, {"high", estimate.high}};
}

}  // namespace

std::string goal_name(goal what) {
  switch (what) {
    case goal::speed: return "speed";
    case goal::memory: return "memory";
    case goal::throughput: return "throughput";
    case goal::latency: return "latency";
  }
  return "speed";
}

verdict_statistic statistic_for(const pair& declared) {
  if (declared.goal_of() == goal::latency) return {0.99, "p99"};
  return {};
}

stats::ratio_estimate statistic_ratio(const verdict_statistic& statistic, std::span<const double> numerator,
                                      std::span<const double> denominator, const stats::bootstrap_config& config) {
  if (statistic.quantile == 0.5) return stats::bootstrap_median_ratio(numerator, denominator, config);
  return stats::bootstrap_quantile_ratio(numerator, denominator, statistic.quantile, config);
}

void record_goal_metrics(const pair& declared, std::span<const double> durations, variant_result& variant,
                         const stats::bootstrap_config& config) {
  if (durations.empty()) return;
  if (declared.goal_of() == goal::latency) {
    variant.goal_metrics = {{"p50_s", estimate_json(stats::bootstrap_quantile(durations, 0.5, config))},
                            {"p99_s", estimate_json(stats::bootstrap_quantile(durations, 0.99, config))}};
  } else if (declared.goal_of() == goal::throughput) {
    // Calls per second: the median's CI turned over (a shorter call is a higher rate).
    const auto median = stats::bootstrap_quantile(durations, 0.5, config);
    variant.goal_metrics = {{"calls_per_s", {{"point", 1.0 / median.point}, {"low", 1.0 / median.high}, {"high", 1.0 / median.low}}}};
  }
}

}  // namespace aisp

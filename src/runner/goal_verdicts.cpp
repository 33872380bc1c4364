#include "runner/goal_verdicts.hpp"

#include <fmt/format.h>
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
  if (!declared.judged_metric().empty()) {
    const double percent = 100 * declared.judged_quantile();
    return {declared.judged_quantile(), fmt::format("{} p{:g}", declared.judged_metric(), percent), declared.judged_metric()};
  }
  if (declared.goal_of() == goal::latency) return {0.99, "p99", ""};
  return {};
}

stats::ratio_estimate statistic_ratio(const verdict_statistic& statistic, std::span<const double> numerator,
                                      std::span<const double> denominator, const stats::bootstrap_config& config) {
  if (statistic.quantile == 0.5) return stats::bootstrap_median_ratio(numerator, denominator, config);
  return stats::bootstrap_quantile_ratio(numerator, denominator, statistic.quantile, config);
}

void record_goal_metrics(const pair& declared, const workload& work, std::span<const double> durations, variant_result& variant,
                         const stats::bootstrap_config& config) {
  if (durations.empty()) return;
  if (declared.goal_of() == goal::latency) {
    variant.goal_metrics = {{"p50_s", estimate_json(stats::bootstrap_quantile(durations, 0.5, config))},
                            {"p99_s", estimate_json(stats::bootstrap_quantile(durations, 0.99, config))}};
  } else if (declared.goal_of() == goal::throughput) {
    // Calls per second: the median's CI turned over (a shorter call is a higher rate).
    const auto median = stats::bootstrap_quantile(durations, 0.5, config);
    const auto rate = [&](double per_call) {
      return nlohmann::json{{"point", per_call / median.point}, {"low", per_call / median.high}, {"high", per_call / median.low}};
    };
    variant.goal_metrics = {{"calls_per_s", rate(1.0)}};
    // Note [items]: what a call delivers, at the size the durations were measured at.
    if (const double items = declared.items_at(work); items > 0) {
      variant.goal_metrics["items_per_s"] = rate(items);
      variant.goal_metrics["item"] = declared.item_name();
    }
  }
}

void record_recorded_metrics(std::span<variant_result* const> variants, const variant_result& baseline,
                             const stats::bootstrap_config& config) {
  for (variant_result* variant : variants) {
    for (const auto& [metric, values] : variant->recorded) {
      if (values.empty()) continue;
      nlohmann::json entry = {{"count", values.size()},
                              {"mean", estimate_json(stats::bootstrap_mean(values, config))},
                              {"p50", estimate_json(stats::bootstrap_quantile(values, 0.5, config))},
                              {"p99", estimate_json(stats::bootstrap_quantile(values, 0.99, config))}};
      const auto base = baseline.recorded.find(metric);
      if (variant != &baseline && base != baseline.recorded.end() && !base->second.empty())
        entry["p99_ratio"] = estimate_json(stats::bootstrap_quantile_ratio(base->second, values, 0.99, config));
      if (variant->goal_metrics.is_null()) variant->goal_metrics = nlohmann::json::object();
      variant->goal_metrics["recorded"][metric] = std::move(entry);
    }
  }
}

}  // namespace aisp

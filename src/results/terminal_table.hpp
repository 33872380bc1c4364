// The terminal view of a suite result: one row per candidate variant. Formats only.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "results/pair_result.hpp"

namespace aisp {

[[nodiscard]] std::string render_table(const suite_result& suite);
// "7.12 us", "1.234 ms", "2.5 s"
[[nodiscard]] std::string format_duration(double seconds);
// A recorded metric's value (Note [recorded metrics]): a name ending in `_s` is a time in
// seconds; any other is a count, printed as a number.
[[nodiscard]] std::string format_recorded(std::string_view metric, double value);
// A recorded metric's estimates in goal_metrics.recorded: "mean 2.1 ms [2.0 ms, 2.2 ms], p50 ...,
// p99 ..." (the mean where the entry has one). The terminal table and every report show this.
[[nodiscard]] std::string recorded_estimates(std::string_view metric, const nlohmann::json& entry);

}  // namespace aisp

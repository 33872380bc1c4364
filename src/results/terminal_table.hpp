// The terminal view of a suite result: one row per candidate variant. Formats only.
#pragma once

#include <string>
#include <string_view>

#include "results/pair_result.hpp"

namespace aisp {

[[nodiscard]] std::string render_table(const suite_result& suite);
// "7.12 us", "1.234 ms", "2.5 s"
[[nodiscard]] std::string format_duration(double seconds);
// A recorded metric's value (Note [recorded metrics]): a name ending in `_s` is a time in
// seconds; any other is a count, printed as a number.
[[nodiscard]] std::string format_recorded(std::string_view metric, double value);

}  // namespace aisp

// Option checks whose errors read as sentences: CLI11's PositiveNumber and NonNegativeNumber
// answer "Value -1 not in range 0.000000 to 1797693134862315708145274237317043567980...".
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

namespace aisp::cli {

// A finite number that `accept` takes; the error says what it wants: "wants <wanted>, not 'x'".
template <class Accept>
CLI::Validator number_check(Accept accept, const std::string& wanted, const std::string& description) {
  return CLI::Validator(
      [accept, wanted](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool number = end != text.c_str() && *end == '\0' && std::isfinite(value);
        return number && accept(value) ? "" : "wants " + wanted + ", not '" + text + "'";
      },
      description);
}

inline CLI::Validator number_above(double floor, bool floor_allowed, const std::string& wanted) {
  return number_check([floor, floor_allowed](double v) { return v > floor || (floor_allowed && v == floor); }, wanted,
                      floor_allowed ? "NONNEGATIVE" : "POSITIVE");
}

// A number in [low, high], as "FLOAT in [low, high]" in --help.
inline CLI::Validator number_between(double low, double high) {
  const std::string range = "a number from " + CLI::detail::to_string(low) + " to " + CLI::detail::to_string(high);
  return number_check([low, high](double v) { return v >= low && v <= high; }, range,
                      "in [" + CLI::detail::to_string(low) + ", " + CLI::detail::to_string(high) + "]");
}

inline const CLI::Validator positive_number = number_above(0, false, "a number above 0");

// A whole number of 0 to 2^64 - 1, written in digits: CLI11 reads "-3" into an unsigned option
// as 2^64 - 3 (a --seed of -3 was accepted as 18446744073709551613).
inline const CLI::Validator unsigned_integer(
    [](std::string& text) -> std::string {
      const bool digits = !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
      const bool fits = digits && (text.size() < 20 || text <= "18446744073709551615");
      return fits ? "" : "wants a whole number from 0 to 18446744073709551615, not '" + text + "'";
    },
    "UINT");
inline const CLI::Validator non_negative_number = number_above(0, true, "a number of 0 or more");

}  // namespace aisp::cli

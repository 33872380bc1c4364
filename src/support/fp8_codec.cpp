#include "support/fp8_codec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace aisp {
namespace {

struct fp8_layout {
  int mantissa_bits;
  int exponent_bias;
  bool ieee_specials;  // e5m2: the top exponent holds inf and NaN; e4m3: only S.1111.111 is NaN
  std::uint8_t nan_bits;
  std::uint8_t max_finite_bits;
};

constexpr fp8_layout layout_of(fp8_format format) {
  return format == fp8_format::e4m3 ? fp8_layout{3, 7, false, 0x7F, 0x7E}
                                    : fp8_layout{2, 15, true, 0x7F, 0x7B};
}

float decode(std::uint8_t bits, const fp8_layout& f) {
  const bool negative = (bits & 0x80u) != 0;
  const int exponent = (bits & 0x7F) >> f.mantissa_bits;
  const int mantissa = bits & ((1 << f.mantissa_bits) - 1);
  const int top_exponent = (0x7F >> f.mantissa_bits);
  float magnitude;
  if (f.ieee_specials && exponent == top_exponent) {
    magnitude = mantissa == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else if (!f.ieee_specials && (bits & 0x7F) == 0x7F) {
    magnitude = std::numeric_limits<float>::quiet_NaN();
  } else if (exponent == 0) {  // subnormal: mantissa x 2^(1 - bias - mantissa bits)
    magnitude = std::ldexp(static_cast<float>(mantissa), 1 - f.exponent_bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<float>((1 << f.mantissa_bits) | mantissa),
                           exponent - f.exponent_bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

// The values of the non-negative codes 0 .. 127, in increasing order up to the largest finite
// one (for a sign-magnitude format the code order is the value order).
std::array<float, 128> positive_values_of(fp8_format format) {
  std::array<float, 128> values{};
  for (int code = 0; code < 128; ++code) values[code] = decode(static_cast<std::uint8_t>(code), layout_of(format));
  return values;
}

const std::array<float, 128>& positive_values(fp8_format format) {
  static const std::array<std::array<float, 128>, 2> tables = {positive_values_of(fp8_format::e4m3),
                                                               positive_values_of(fp8_format::e5m2)};
  static_assert(static_cast<int>(fp8_format::e4m3) == 0 && static_cast<int>(fp8_format::e5m2) == 1);
  return tables[static_cast<std::size_t>(format)];
}

std::uint8_t encode(float value, fp8_format format) {
  const fp8_layout f = layout_of(format);
  if (std::isnan(value)) return f.nan_bits;
  const std::uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  const float magnitude = std::fabs(value);
  const auto& values = positive_values(format);
  if (magnitude >= values[f.max_finite_bits]) return sign | f.max_finite_bits;  // saturate
  // The first code whose value is >= magnitude, then the nearer of it and the one below (the
  // distances are exact in double; a tie goes to the even code, as cvt.rn does).
  const auto first_not_below = std::lower_bound(values.begin(), values.begin() + f.max_finite_bits, magnitude);
  const auto high = static_cast<int>(first_not_below - values.begin());
  if (high == 0) return sign;
  const int low = high - 1;
  const double above = static_cast<double>(values[high]) - magnitude;
  const double below = static_cast<double>(magnitude) - values[low];
  const int nearest = above < below ? high : below < above ? low : (low % 2 == 0 ? low : high);
  return static_cast<std::uint8_t>(sign | nearest);
}

}  // namespace

// From the table: decode()'s ldexp per element made a host refill of ch16's 235M fp8 weights
// take seconds.
float fp8_bits_to_float(std::uint8_t bits, fp8_format format) {
  const float magnitude = positive_values(format)[bits & 0x7Fu];
  return (bits & 0x80u) != 0 ? -magnitude : magnitude;
}

std::uint8_t float_to_fp8_bits(float value, fp8_format format) { return encode(value, format); }

}  // namespace aisp

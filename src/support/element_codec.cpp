#include "support/element_codec.hpp"

#include "support/fp8_codec.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace aisp {
namespace {

constexpr std::uint32_t f32_poison_bits = 0x7FC0DEADu;
constexpr std::uint64_t f64_poison_bits = 0x7FF8DEADDEADDEADull;
constexpr std::uint16_t f16_poison_bits = 0x7EADu;
constexpr std::uint16_t bf16_poison_bits = 0x7FADu;
constexpr std::int32_t i32_poison = static_cast<std::int32_t>(0xDEADBEEFu);
constexpr std::int64_t i64_poison = static_cast<std::int64_t>(0xDEADBEEFDEADBEEFull);
constexpr std::uint8_t u8_poison = 0xA5u;
// -128: outside the [-127, 127] a stored i8 saturates to, so no written value equals it.
constexpr std::int8_t i8_poison = -128;

[[nodiscard]] std::int8_t saturated_i8(double value) {
  return static_cast<std::int8_t>(std::clamp(std::nearbyint(value), -127.0, 127.0));
}
constexpr std::uint8_t fp8_poison_bits = 0x7Fu;  // a NaN in both 8-bit formats (their only payload-free choice)

template <class T>
T read_at(const void* base, std::size_t index) {
  T value;
  std::memcpy(&value, static_cast<const unsigned char*>(base) + index * sizeof(T), sizeof(T));
  return value;
}

template <class T>
void write_at(void* base, std::size_t index, T value) {
  std::memcpy(static_cast<unsigned char*>(base) + index * sizeof(T), &value, sizeof(T));
}

template <class T>
void fill_with(void* base, std::size_t count, T value) {
  for (std::size_t i = 0; i < count; ++i) write_at(base, i, value);
}

}  // namespace

std::uint16_t float_to_half_bits(float value) {
  // Round to nearest even, with subnormals, infinities and NaN.
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits >= 0x7F800000u) {
    return static_cast<std::uint16_t>(sign | (abs_bits > 0x7F800000u ? 0x7E00u : 0x7C00u));
  }
  if (abs_bits >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // overflow
  if (abs_bits < 0x38800000u) {  // subnormal or zero in half
    const float magnitude = std::bit_cast<float>(abs_bits);
    const auto scaled = static_cast<std::uint32_t>(std::nearbyint(magnitude * 16777216.0f));
    return static_cast<std::uint16_t>(sign | scaled);
  }
  const std::uint32_t rounded = abs_bits + 0x0FFFu + ((abs_bits >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float half_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) / 16777216.0f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

float_fields float_fields_of(dtype type) {
  switch (type) {
    case dtype::f64: return {64, 52, 11};
    case dtype::f32: return {32, 23, 8};
    case dtype::f16: return {16, 10, 5};
    case dtype::bf16: return {16, 7, 8};
    case dtype::e4m3: return {8, 3, 4};
    case dtype::e5m2: return {8, 2, 5};
    case dtype::i32:
    case dtype::i64:
    case dtype::u8:
    case dtype::i8: return {};
  }
  return {};
}

double load_as_double(dtype type, const void* base, std::size_t index) {
  switch (type) {
    case dtype::f64: return read_at<double>(base, index);
    case dtype::f32: return read_at<float>(base, index);
    case dtype::f16: return half_bits_to_float(read_at<std::uint16_t>(base, index));
    case dtype::bf16: return bf16_bits_to_float(read_at<std::uint16_t>(base, index));
    case dtype::i32: return read_at<std::int32_t>(base, index);
    case dtype::i64: return static_cast<double>(read_at<std::int64_t>(base, index));
    case dtype::u8: return read_at<std::uint8_t>(base, index);
    case dtype::i8: return read_at<std::int8_t>(base, index);
    case dtype::e4m3: return fp8_bits_to_float(read_at<std::uint8_t>(base, index), fp8_format::e4m3);
    case dtype::e5m2: return fp8_bits_to_float(read_at<std::uint8_t>(base, index), fp8_format::e5m2);
  }
  return 0;
}

double derived_value(dtype type, double value, double scale) {
  unsigned char element[8] = {};
  store_derived(type, element, 0, value, scale);
  return load_as_double(type, element, 0);
}

void store_derived(dtype type, void* base, std::size_t index, double value, double scale) {
  store_from_double(type, base, index, scale * value);
  const double rounded = load_as_double(type, base, index);
  if (rounded != 0.0 && std::fabs(rounded) < dtype_smallest_normal(type)) store_from_double(type, base, index, std::copysign(0.0, rounded));
}

void store_from_double(dtype type, void* base, std::size_t index, double value) {
  switch (type) {
    case dtype::f64: write_at(base, index, value); return;
    case dtype::f32: write_at(base, index, static_cast<float>(value)); return;
    case dtype::f16:
      write_at(base, index, float_to_half_bits(static_cast<float>(value)));
      return;
    case dtype::bf16:
      write_at(base, index, float_to_bf16_bits(static_cast<float>(value)));
      return;
    case dtype::i32: write_at(base, index, static_cast<std::int32_t>(value)); return;
    case dtype::i64: write_at(base, index, static_cast<std::int64_t>(value)); return;
    case dtype::u8: write_at(base, index, static_cast<std::uint8_t>(value)); return;
    case dtype::i8: write_at(base, index, saturated_i8(value)); return;
    case dtype::e4m3:
      write_at(base, index, float_to_fp8_bits(static_cast<float>(value), fp8_format::e4m3));
      return;
    case dtype::e5m2:
      write_at(base, index, float_to_fp8_bits(static_cast<float>(value), fp8_format::e5m2));
      return;
  }
}

void fill_poison(dtype type, void* base, std::size_t count) {
  switch (type) {
    case dtype::f64: fill_with(base, count, f64_poison_bits); return;
    case dtype::f32: fill_with(base, count, f32_poison_bits); return;
    case dtype::f16: fill_with(base, count, f16_poison_bits); return;
    case dtype::bf16: fill_with(base, count, bf16_poison_bits); return;
    case dtype::i32: fill_with(base, count, i32_poison); return;
    case dtype::i64: fill_with(base, count, i64_poison); return;
    case dtype::u8: fill_with(base, count, u8_poison); return;
    case dtype::i8: fill_with(base, count, i8_poison); return;
    case dtype::e4m3:
    case dtype::e5m2: fill_with(base, count, fp8_poison_bits); return;
  }
}

bool is_poison(dtype type, const void* base, std::size_t index) {
  switch (type) {
    case dtype::f64: return read_at<std::uint64_t>(base, index) == f64_poison_bits;
    case dtype::f32: return read_at<std::uint32_t>(base, index) == f32_poison_bits;
    case dtype::f16: return read_at<std::uint16_t>(base, index) == f16_poison_bits;
    case dtype::bf16: return read_at<std::uint16_t>(base, index) == bf16_poison_bits;
    case dtype::i32: return read_at<std::int32_t>(base, index) == i32_poison;
    case dtype::i64: return read_at<std::int64_t>(base, index) == i64_poison;
    case dtype::u8: return read_at<std::uint8_t>(base, index) == u8_poison;
    case dtype::i8: return read_at<std::int8_t>(base, index) == i8_poison;
    case dtype::e4m3:
    case dtype::e5m2: return read_at<std::uint8_t>(base, index) == fp8_poison_bits;
  }
  return false;
}

}  // namespace aisp

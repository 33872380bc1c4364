// Converts between a buffer's dtype and fp64, element by element, and knows each dtype's
// poison pattern. Host-only: no CUDA headers, so the verifier is unit-tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "aisp/dtype.hpp"

namespace aisp {

// The exponent and mantissa fields of a dtype's bit pattern (width in bits); none for integers.
struct float_fields {
  int width_bits = 0;
  int mantissa_bits = 0;
  int exponent_bits = 0;
};
[[nodiscard]] float_fields float_fields_of(dtype type);

[[nodiscard]] double load_as_double(dtype type, const void* base, std::size_t index);
void store_from_double(dtype type, void* base, std::size_t index, double value);
// A derived input's element (Note [derived inputs] in aisp/buffer_spec.hpp): `value` rounded to
// `type`, and flushed to a signed zero where that is subnormal: the harness never draws subnormal
// inputs (S-checks fail on them), and an fp8 copy of uniform values would hold ~1.6% of them.
// `scale` multiplies the value first (an int8 copy of values in [-1, 1) scaled by 127).
[[nodiscard]] double derived_value(dtype type, double value, double scale = 1.0);
// Stores derived_value(type, value, scale) at `index`, rounding once (a refill derives
// hundreds of millions of fp8 elements).
void store_derived(dtype type, void* base, std::size_t index, double value, double scale = 1.0);

// Note [poison]: outputs are filled with this pattern before each verified call; an element
// that still holds it was never written (O10). Floats get a NaN with a recognisable payload, so
// even a comparison that forgot the poison check fails on NaN.
void fill_poison(dtype type, void* base, std::size_t count);
[[nodiscard]] bool is_poison(dtype type, const void* base, std::size_t index);

[[nodiscard]] std::uint16_t float_to_half_bits(float value);
[[nodiscard]] float half_bits_to_float(std::uint16_t bits);
[[nodiscard]] std::uint16_t float_to_bf16_bits(float value);
[[nodiscard]] float bf16_bits_to_float(std::uint16_t bits);

}  // namespace aisp

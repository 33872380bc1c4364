// Element types that the harness can own, fill, poison and compare.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace aisp {

// e4m3 and e5m2: the 8-bit floats of Hopper's tensor cores (OCP FP8; e4m3 has no infinities).
// i8: signed 8-bit integers (quantized weights); a value stored into it rounds to nearest and
// saturates to [-127, 127], the symmetric range of int8 quantization.
enum class dtype : std::uint8_t { f64, f32, f16, bf16, i32, i64, u8, e4m3, e5m2, i8 };

[[nodiscard]] std::size_t dtype_size(dtype type);
[[nodiscard]] std::string_view dtype_name(dtype type);
[[nodiscard]] bool dtype_is_float(dtype type);
// The smallest positive normal value of a float type (a nonzero value below it is subnormal);
// 0 for the integer types.
[[nodiscard]] double dtype_smallest_normal(dtype type);
// The largest finite value `type` holds (448 for e4m3, 127 for i8): how far a scaled copy reaches.
[[nodiscard]] double dtype_largest_finite(dtype type);
// Throws contract_error for an unknown name.
[[nodiscard]] dtype dtype_from_name(std::string_view name);

}  // namespace aisp

#include "aisp/dtype.hpp"

#include <string>

#include "aisp/check.hpp"

namespace aisp {

std::size_t dtype_size(dtype type) {
  switch (type) {
    case dtype::f64: return 8;
    case dtype::f32: return 4;
    case dtype::f16: return 2;
    case dtype::bf16: return 2;
    case dtype::i32: return 4;
    case dtype::i64: return 8;
    case dtype::u8: return 1;
    case dtype::i8: return 1;
    case dtype::e4m3: return 1;
    case dtype::e5m2: return 1;
  }
  return 0;
}

std::string_view dtype_name(dtype type) {
  switch (type) {
    case dtype::f64: return "f64";
    case dtype::f32: return "f32";
    case dtype::f16: return "f16";
    case dtype::bf16: return "bf16";
    case dtype::i32: return "i32";
    case dtype::i64: return "i64";
    case dtype::u8: return "u8";
    case dtype::i8: return "i8";
    case dtype::e4m3: return "e4m3";
    case dtype::e5m2: return "e5m2";
  }
  return "?";
}

bool dtype_is_float(dtype type) {
  return type == dtype::f64 || type == dtype::f32 || type == dtype::f16 || type == dtype::bf16 ||
         type == dtype::e4m3 || type == dtype::e5m2;
}

double dtype_largest_finite(dtype type) {
  switch (type) {
    case dtype::f64: return 0x1.fffffffffffffp1023;
    case dtype::f32: return 0x1.fffffep127;
    case dtype::bf16: return 0x1.fep127;
    case dtype::f16: return 65504.0;
    case dtype::e4m3: return 448.0;
    case dtype::e5m2: return 57344.0;
    case dtype::i32: return 2147483647.0;
    case dtype::i64: return 9223372036854775807.0;
    case dtype::u8: return 255.0;
    case dtype::i8: return 127.0;
  }
  return 0;
}

double dtype_smallest_normal(dtype type) {
  switch (type) {
    case dtype::f64: return 0x1p-1022;
    case dtype::f32:
    case dtype::bf16: return 0x1p-126;  // bf16 keeps fp32's exponent range
    case dtype::f16: return 0x1p-14;
    case dtype::e4m3: return 0x1p-6;
    case dtype::e5m2: return 0x1p-14;
    case dtype::i32:
    case dtype::i64:
    case dtype::u8:
    case dtype::i8: return 0;
  }
  return 0;
}

dtype dtype_from_name(std::string_view name) {
  for (dtype candidate : {dtype::f64, dtype::f32, dtype::f16, dtype::bf16, dtype::i32,
                          dtype::i64, dtype::u8, dtype::e4m3, dtype::e5m2, dtype::i8}) {
    if (dtype_name(candidate) == name) return candidate;
  }
  std::string known;
  for (dtype candidate : {dtype::f64, dtype::f32, dtype::f16, dtype::bf16, dtype::i32, dtype::i64, dtype::u8, dtype::e4m3, dtype::e5m2,
                          dtype::i8})
    known += (known.empty() ? "" : ", ") + std::string(dtype_name(candidate));
  AISP_EXPECTS(false, "unknown dtype '" + std::string(name) + "' (known: " + known + ")");
  return dtype::f32;
}

}  // namespace aisp

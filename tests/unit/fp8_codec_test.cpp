// The host fp8 codec against NVIDIA's own conversions (cuda_fp8.h, host-callable): every code
// decodes to the value CUDA gives, and a dense sweep of floats (ties, subnormals, saturation,
// signed zeros, inf, NaN) encodes to the code CUDA's satfinite conversion gives.
#include <gtest/gtest.h>

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "aisp/dtype.hpp"
#include "support/element_codec.hpp"
#include "support/fp8_codec.hpp"
#include "verify/tolerance.hpp"

namespace aisp {
namespace {

__nv_fp8_interpretation_t cuda_kind(fp8_format format) {
  return format == fp8_format::e4m3 ? __NV_E4M3 : __NV_E5M2;
}

float cuda_decode(std::uint8_t bits, fp8_format format) {
  const __half_raw raw = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(bits), cuda_kind(format));
  return __half2float(__half(raw));
}

std::uint8_t cuda_encode(float value, fp8_format format) {
  return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(value, __NV_SATFINITE, cuda_kind(format)));
}

class fp8_codec : public ::testing::TestWithParam<fp8_format> {};

TEST_P(fp8_codec, every_code_decodes_to_the_value_cuda_gives) {
  for (int code = 0; code < 256; ++code) {
    SCOPED_TRACE(code);
    const float ours = fp8_bits_to_float(static_cast<std::uint8_t>(code), GetParam());
    const float theirs = cuda_decode(static_cast<std::uint8_t>(code), GetParam());
    if (std::isnan(theirs)) {
      EXPECT_TRUE(std::isnan(ours));
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(ours), std::bit_cast<std::uint32_t>(theirs));
    }
  }
}

TEST_P(fp8_codec, every_finite_code_round_trips) {
  for (int code = 0; code < 256; ++code) {
    const float value = fp8_bits_to_float(static_cast<std::uint8_t>(code), GetParam());
    if (!std::isfinite(value)) continue;
    EXPECT_EQ(float_to_fp8_bits(value, GetParam()), code) << code;
  }
}

TEST_P(fp8_codec, a_dense_sweep_of_floats_encodes_to_the_code_cuda_gives) {
  std::vector<float> values = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(), 1e30f, -1e30f, 1e-30f};
  // Every code's value and the midpoints between neighbours (the ties), nudged both ways.
  for (int code = 0; code < 127; ++code) {
    const float a = fp8_bits_to_float(static_cast<std::uint8_t>(code), GetParam());
    const float b = fp8_bits_to_float(static_cast<std::uint8_t>(code + 1), GetParam());
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    const float mid = (a + b) / 2;
    for (float v : {a, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      values.push_back(v);
      values.push_back(-v);
    }
  }
  // And a geometric sweep over the whole range, past saturation.
  for (float v = 1e-7f; v < 1e6f; v *= 1.0007f) {
    values.push_back(v);
    values.push_back(-v);
  }
  for (const float v : values) {
    ASSERT_EQ(float_to_fp8_bits(v, GetParam()), cuda_encode(v, GetParam())) << v;
  }
  EXPECT_TRUE(std::isnan(fp8_bits_to_float(float_to_fp8_bits(std::nanf(""), GetParam()), GetParam())));
}

INSTANTIATE_TEST_SUITE_P(formats, fp8_codec, ::testing::Values(fp8_format::e4m3, fp8_format::e5m2),
                         [](const auto& param_info) { return param_info.param == fp8_format::e4m3 ? "e4m3" : "e5m2"; });

TEST(fp8_dtypes, are_one_byte_floats_with_a_nan_poison_and_a_named_default_tolerance) {
  for (const dtype type : {dtype::e4m3, dtype::e5m2}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    EXPECT_EQ(dtype_size(type), 1u);
    EXPECT_TRUE(dtype_is_float(type));
    EXPECT_EQ(dtype_from_name(dtype_name(type)), type);
    std::uint8_t bytes[3] = {};
    fill_poison(type, bytes, 3);
    EXPECT_TRUE(is_poison(type, bytes, 1));
    EXPECT_TRUE(std::isnan(load_as_double(type, bytes, 2)));
    store_from_double(type, bytes, 0, 0.3);
    EXPECT_FALSE(is_poison(type, bytes, 0));
    EXPECT_NEAR(load_as_double(type, bytes, 0), 0.3, 0.3 / 8);  // within half a spacing
    // The smallest normal is the first code with a nonzero exponent field: 0x08 (e4m3), 0x04 (e5m2).
    const std::uint8_t first_normal = type == dtype::e4m3 ? 0x08 : 0x04;
    EXPECT_EQ(dtype_smallest_normal(type),
              fp8_bits_to_float(first_normal, type == dtype::e4m3 ? fp8_format::e4m3 : fp8_format::e5m2));
    const auto tol = verify::default_tolerance(type);
    EXPECT_GT(tol.rtol, 0);
    EXPECT_NE(tol.reason.find(dtype_name(type)), std::string::npos);
  }
}

}  // namespace
}  // namespace aisp

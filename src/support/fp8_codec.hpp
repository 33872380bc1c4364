// The two 8-bit float formats of Hopper's tensor cores (OCP FP8), to and from fp32 on the host:
// e4m3 (the "fn" variant: no infinities, NaN = S.1111.111, max 448) and e5m2 (IEEE-like: inf and
// NaN, max 57344). Host-only: no CUDA headers, so the verifier is unit-tested without a GPU (the
// test checks every code and a dense sweep of floats against cuda_fp8.h).
#pragma once

#include <cstdint>

namespace aisp {

enum class fp8_format : std::uint8_t { e4m3, e5m2 };

[[nodiscard]] float fp8_bits_to_float(std::uint8_t bits, fp8_format format);
// Round to nearest, ties to even; out-of-range values and infinities saturate to the largest
// finite value of their sign (what kernels get from cvt.satfinite), NaN stays NaN.
[[nodiscard]] std::uint8_t float_to_fp8_bits(float value, fp8_format format);

}  // namespace aisp

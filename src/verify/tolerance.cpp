#include "verify/tolerance.hpp"

#include <algorithm>

namespace aisp::verify {

tolerance default_tolerance(dtype type) {
  switch (type) {
    case dtype::f64: return {1e-9, 1e-12, 1e-9, "fp64 default"};
    case dtype::f32: return {1e-5, 1e-8, 1e-5, "fp32 default"};
    case dtype::f16: return {1e-3, 1e-5, 1e-2, "fp16 default"};
    case dtype::bf16: return {1.6e-2, 1e-5, 1e-2, "bf16 default"};
    // 8-bit floats: 3 (e4m3) and 2 (e5m2) mantissa bits round by up to 1/16 and 1/8 of a value;
    // rtol is twice that, atol the smallest subnormal, the L2 bound ~2x a rounding's RMS.
    case dtype::e4m3: return {0.125, 0x1p-9, 0.08, "e4m3 default"};
    case dtype::e5m2: return {0.25, 0x1p-16, 0.16, "e5m2 default"};
    case dtype::i32:
    case dtype::i64:
    case dtype::u8:
    case dtype::i8: return {0, 0, 0, "integers are exact"};
  }
  return {};
}

namespace {

// Note [declared tolerance ceiling]: a declared tolerance that leaves the L2 bound 0 (Python's
// p.tolerance does) gets its rtol as one, at least its dtype's default and at most the ceiling,
// so its element-wise bounds never stand alone (a large atol passes anything).
tolerance with_l2_bound(tolerance declared, dtype output_type) {
  if (declared.max_rel_l2 <= 0) {
    declared.max_rel_l2 = std::min(max_declared_rel_l2, std::max(default_tolerance(output_type).max_rel_l2, declared.rtol));
  }
  return declared;
}

}  // namespace

tolerance effective_tolerance(const pair& declared, dtype output_type) {
  if (declared.tolerance_of()) return with_l2_bound(*declared.tolerance_of(), output_type);
  return default_tolerance(output_type);
}

tolerance effective_tolerance(const pair& declared, dtype output_type, std::string_view variant_name) {
  for (const auto& v : declared.variants()) {
    if (v.name == variant_name && v.precision_tolerance) return with_l2_bound(*v.precision_tolerance, output_type);
  }
  return effective_tolerance(declared, output_type);
}

}  // namespace aisp::verify

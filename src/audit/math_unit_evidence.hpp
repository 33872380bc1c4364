// Which math units a variant's kernels really use (class 4 of issue 15: the math unit judged must
// not be self-declared). Own kernels: the tensor instructions in their machine code, read with
// `cuobjdump -sass` from the binary that holds them (HMMA/HGMMA by input type, QGMMA for fp8).
// Library kernels: the input type their names carry (cuBLAS's "nvjet_sm90_<A><B><D>_...": t bf16,
// h fp16, e/q fp8, s fp32; "tf32" anywhere). Pure parsing is host-only and unit-tested.
#pragma once

#include <istream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "aisp/pair.hpp"

namespace aisp {

// What one kernel's SASS shows: the tensor units it uses (none: an empty set), and how much of its
// FP32 arithmetic flushes subnormals (Note [device fast math], runner/math_unit_checks.cpp).
struct kernel_sass {
  std::set<math_unit> units;
  int fp32_ops = 0;     // FADD, FMUL, FFMA instructions
  int flushed_ops = 0;  // of them, .FTZ
  // Built flush-to-zero (nvcc --use_fast_math, --ftz=true): three quarters or more of at least two
  // FP32 operations; an intrinsic's own (__expf's multiply) is one among plain ones.
  [[nodiscard]] bool flushes_subnormals() const { return flushed_ops >= 2 && 4 * flushed_ops >= 3 * fp32_ops; }
  bool operator==(const kernel_sass&) const = default;
};

// Kernel (mangled name) -> what its SASS shows.
using sass_math_table = std::map<std::string, kernel_sass, std::less<>>;

[[nodiscard]] sass_math_table parse_sass_math_units(std::istream& sass);

// Adds `from` to `into`; a kernel in both (say, one cubin per architecture) gets the union of
// its units.
void merge_sass_tables(sass_math_table& into, const sass_math_table& from);

// The table of `executable`, from `cuobjdump -sass` of each embedded cubin, in parallel (found on
// PATH or in /usr/local/cuda/bin); computed once per executable and process. nullopt, with `why`,
// when cuobjdump is unavailable.
[[nodiscard]] const sass_math_table* sass_math_units_of(const std::string& executable, std::string& why);

// The unit a library kernel's name shows; nullopt when the name does not say.
[[nodiscard]] std::optional<math_unit> library_kernel_math_unit(std::string_view name);

// Bits of precision a unit keeps of its inputs (fp32 SIMT: 24; tf32: 11; ...), for "lower than".
[[nodiscard]] int math_unit_mantissa_bits(math_unit unit);

}  // namespace aisp

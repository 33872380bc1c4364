// Default tolerances by dtype (VALIDITY.md); a pair's override replaces them, with its reason.
#pragma once

#include <string_view>

#include "aisp/dtype.hpp"
#include "aisp/pair.hpp"

namespace aisp::verify {

[[nodiscard]] tolerance default_tolerance(dtype type);
[[nodiscard]] tolerance effective_tolerance(const pair& declared, dtype output_type);
// A variant that declares a precision change is held to its own declared tolerance; others (and
// labels that name no variant, such as "baseline_twin") to the pair's.
[[nodiscard]] tolerance effective_tolerance(const pair& declared, dtype output_type, std::string_view variant_name);

}  // namespace aisp::verify

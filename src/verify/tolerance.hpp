// Default tolerances by dtype (VALIDITY.md); a pair's override replaces them, with its reason.
#pragma once

#include "aisp/dtype.hpp"
#include "aisp/pair.hpp"

namespace aisp::verify {

[[nodiscard]] tolerance default_tolerance(dtype type);
[[nodiscard]] tolerance effective_tolerance(const pair& declared, dtype output_type);

}  // namespace aisp::verify

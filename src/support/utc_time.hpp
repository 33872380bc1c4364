// The wall-clock time in UTC, as text, for results and manifests.
#pragma once

#include <string>

namespace aisp {

// Now, formatted by strftime's `format` (default ISO 8601, e.g. 2026-11-28T01:30:00Z).
[[nodiscard]] std::string utc_now(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace aisp

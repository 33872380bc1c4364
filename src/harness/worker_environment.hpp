// Note [worker environment]: the environment variables a variant changed in its own worker, and
// those its worker's child programs run under, for `worker-state` (runner/worker_state_checks.cpp).
#pragma once

#include <nlohmann/json.hpp>

namespace aisp {

// {"own": {NAME: value, or null where unset}, "programs": {...}}: the worker's environment
// against itself at the first call (the worker's first reading, before any variant code but the
// pair file's), and each child program's starting environment against that same first reading.
[[nodiscard]] nlohmann::json environment_changes();

}  // namespace aisp

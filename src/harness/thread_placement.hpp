// Note [thread placement] (harness/thread_placement.cpp): threads of a worker, or of its child
// programs, that run on other CPUs, under another scheduling policy or at a lower priority than
// the worker started with.
#pragma once

#include <nlohmann/json.hpp>

namespace aisp {

// {"apart": N, "example": "..."}: how many live threads of this process and its child processes
// have a CPU affinity mask, a scheduling policy or a nice value (higher) other than this process's
// first reading of its own, and one of them.
[[nodiscard]] nlohmann::json threads_placed_apart();

}  // namespace aisp

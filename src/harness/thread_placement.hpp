// Note [thread placement] (harness/thread_placement.cpp): threads of a worker, or of its child
// programs, that run on other CPUs, or under another scheduling policy, than the worker started with.
#pragma once

#include <nlohmann/json.hpp>

namespace aisp {

// {"apart": N, "example": "..."}: how many live threads of this process and its child processes
// have a CPU affinity mask or a scheduling policy other than this process's first reading of its
// own, and one of them.
[[nodiscard]] nlohmann::json threads_placed_apart();

}  // namespace aisp

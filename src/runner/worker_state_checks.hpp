// Note [worker state]: the settings a variant changed in its own worker (harness/worker_state.hpp).
#pragma once

#include <vector>

#include "runner/variant_slot.hpp"
#include "results/pair_result.hpp"

namespace aisp {

// A baseline (or its twin) that turned a setting toward slower code than its worker started
// with, and a candidate declaring no precision change that turned one toward less precise math,
// fail worker-state.
// Shared files are judged on host pairs (Note [shared state]); a Python pair that declares why
// its calls turn torch's switches (switches_in_calls) is not judged on the counted settings.
void check_worker_state(const pair& declared, const std::vector<variant_slot>& slots, std::vector<check_result>& checks);

}  // namespace aisp

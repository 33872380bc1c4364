// Note [watched python state]: how a Python worker's interpreter-wide and torch-wide settings are
// read for `worker-state` (Note [worker state] in src/runner/worker_state_checks.cpp).
#pragma once

#include <string>

namespace aisp::python {

// Calls aisp._bridge.state_watch() once, before any pair file is imported, and keeps what it
// returns: the readers (builtins with their arguments) and torch's functions as they are. ""
// or why not, in one line.
[[nodiscard]] std::string keep_state_watch();

// One group's readings ("torch", "python") as a JSON object's text; torch's group also lists the
// watched functions that are no longer the objects kept ("rebound_functions"). "{}" before
// keep_state_watch() or where nothing of the group is kept.
const char* read_watched_state(const std::string& group);

}  // namespace aisp::python

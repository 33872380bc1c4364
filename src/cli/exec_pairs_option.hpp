// `--exec FILE`: executable pair files judged through the executable-pairs bridge plugin (Note
// [executable pairs] in src/exec_bridge/exec_pairs.cpp).
#pragma once

#include <string>

namespace aisp::cli {

// Puts `pair_file` in $AISP_EXEC_PAIRS (so workers and sub-commands see it) and returns the
// bridge plugin's path to load. Throws contract_error, in one line, when either is missing.
[[nodiscard]] std::string prepare_exec_pairs(const std::string& pair_file);

}  // namespace aisp::cli

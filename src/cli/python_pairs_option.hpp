// `--python FILE`: Python pair files judged through the Python bridge plugin (Note [python
// bridge] in src/python_bridge/python_pairs.cpp).
#pragma once

#include <string>

namespace aisp::cli {

// Prepares this process (and the workers and sub-commands it starts, through the environment)
// to load `pair_file`'s pairs: finds the interpreter ($AISP_PYTHON, else /usr/bin/python3, else
// python3 on PATH), reads its libpython, prefix and path from it, and returns the bridge
// plugin's path to load. Throws contract_error, in one line, when any of it is missing.
[[nodiscard]] std::string prepare_python_pairs(const std::string& pair_file);

}  // namespace aisp::cli

// Note [live program environment] (harness/program_environment.cpp): the environment a child
// program runs under now, read from its memory, where /proc/<pid>/environ keeps only the one it
// started with.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace aisp {

// The "NAME=value" entries of process `pid`'s environ array as it stands; nullopt where it cannot
// be read (no symbol for it, another architecture's program, memory this process may not read).
[[nodiscard]] std::optional<std::vector<std::string>> live_environment(long pid);

}  // namespace aisp

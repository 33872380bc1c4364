// Note [confined programs]: what an executable pair's program may not do on top of its worker's
// sandbox, which it inherits (src/runner/worker_sandbox.hpp).
#pragma once

#include <array>
#include <cstddef>

#include <linux/filter.h>

namespace aisp::exec {

// The filter, made before fork: installing it in the child allocates nothing.
struct program_filter {
  std::array<sock_filter, 16> instructions{};
  std::size_t length = 0;
};
[[nodiscard]] program_filter make_program_filter();

// In the forked child, before exec: async-signal-safe. False where seccomp refused it (the
// child then execs without it; the worker's own filter still holds).
bool confine_program(const program_filter& filter);

}  // namespace aisp::exec

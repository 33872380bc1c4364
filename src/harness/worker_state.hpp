// Note [worker state] (runner/worker_state_checks.cpp): process-wide settings a variant can
// change in its own worker that change how fast the same code runs: glibc's mmap threshold
// (mallopt), PyTorch's backends (torch.backends.mkldnn.enabled, TF32...). The worker reads them at
// start, after setup() and after every visit; the judge compares.
#pragma once

#include <nlohmann/json.hpp>

// A bridge (the Python one) adds a probe of its own: `probe` returns a JSON object's text of
// named settings, read outside any timed window. Exported by the aisp executable.
extern "C" void aisp_register_state_probe(const char* name, const char* (*probe)());

namespace aisp {

// {"allocator": {...}, "shared_files": [...] (with `shared_files`: a GPU worker's /proc/self/maps
// is long, and shared-state judges host pairs only), <each registered probe's name>: {...}}.
// `inputs`: the host inputs' ranges, whose pages must still be writable (a variant that made them
// read-only ran its own fault handler inside the harness's fill).
[[nodiscard]] nlohmann::json read_worker_state(bool shared_files, const std::vector<std::pair<const void*, std::size_t>>& inputs = {});

}  // namespace aisp

// Note [shared host buffers]: an executable pair's variant runs in another process (Note
// [executable pairs] in src/exec_bridge/exec_pairs.cpp), which must read and write the harness's
// own host buffers, not copies: fresh inputs, output fills, digests and late-write checks stay
// the harness's. So those pairs' host buffers are memfd files mapped shared; the bridge hands
// their descriptors to the variant's process, which maps the same pages.
#pragma once

#include <cstddef>

namespace aisp {

// `bytes` (a multiple of the page size) of zeroed shared memory backed by a memfd.
[[nodiscard]] void* allocate_shared_host(std::size_t bytes);
// Unmaps and closes memory from allocate_shared_host; false (and nothing done) for any other pointer.
bool release_shared_host(void* pointer);
// The memfd behind the allocation that starts at `pointer`, -1 for any other pointer.
[[nodiscard]] int shared_host_fd(const void* pointer);

}  // namespace aisp

// The same for aisp's own run-time modules (the executable-pairs bridge resolves it against the
// aisp executable).
extern "C" int aisp_host_buffer_fd(const void* pointer);

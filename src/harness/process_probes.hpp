// Cheap readings of the worker process taken around the verified call: what run() left behind
// that the contract forbids (threads, allocations, environment or priority changes, writes to
// stdout, page faults, child processes, scheduling policy and CPU affinity). They only read;
// nothing is changed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aisp {

struct process_snapshot {
  std::size_t threads = 0;
  std::uint64_t allocations = 0;     // operator new calls so far (see allocation_counter)
  std::uint64_t environment_hash = 0;
  int priority = 0;                  // nice value
  long long stdout_bytes = 0;        // bytes written to fd 1 (a private file in the worker)
  long long minor_faults = 0;
  long long major_faults = 0;
  std::size_t children = 0;          // live child processes of the worker (issue 16: forked helpers)
  int scheduler = 0;                 // the main thread's scheduling policy (SCHED_OTHER, ...)
  std::uint64_t affinity_hash = 0;   // the main thread's CPU affinity mask, hashed
};

[[nodiscard]] process_snapshot take_process_snapshot();
[[nodiscard]] std::uint64_t allocation_count();

}  // namespace aisp

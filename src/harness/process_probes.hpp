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
  std::uint64_t c_allocations = 0;   // malloc-family calls by this thread so far
  std::uint64_t mappings = 0;        // mmap calls by this thread so far
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

// Note [worker CPU time]: the worker's wall clock, its whole CPU time (every thread) and the
// CPU time of the thread that serves the judge. Across each sample's timed span (the samplers
// read it there, after the harness's own fill threads have joined), process CPU time beyond the
// serving thread's is what other threads did: helpers started in setup(), spinning loads. While
// the worker waits for the judge's next request it should do nothing at all.
struct cpu_reading {
  double wall_s = 0;
  double process_cpu_s = 0;
  double thread_cpu_s = 0;
};
[[nodiscard]] cpu_reading take_cpu_reading();
[[nodiscard]] std::uint64_t allocation_count();

}  // namespace aisp

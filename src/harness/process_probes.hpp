// Cheap readings of the worker process taken around the verified call: what run() left behind
// that the contract forbids (threads, allocations, environment or priority changes, writes to
// stdout, page faults, scheduling policy and CPU affinity). They only read;
// nothing is changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace aisp {

struct process_snapshot {
  std::size_t threads = 0;
  std::size_t children = 0;          // live child processes (Note [compilers in the sandbox])
  std::uint64_t allocations = 0;     // operator new calls so far (see allocation_counter)
  std::uint64_t c_allocations = 0;   // malloc-family calls by this thread so far
  std::uint64_t mappings = 0;        // mmap calls by this thread so far
  const void* last_allocator_caller = nullptr;  // the code that made this thread's latest C allocation or mmap
  std::uint64_t environment_hash = 0;
  int priority = 0;                  // nice value: the highest of the worker's and its live children's
  long long stdout_bytes = 0;        // bytes written to fd 1 (a private file in the worker)
  long long minor_faults = 0;
  long long major_faults = 0;
  int scheduler = 0;                 // the main thread's scheduling policy (SCHED_OTHER, ...)
  std::uint64_t affinity_hash = 0;   // the main thread's CPU affinity mask, hashed
};

[[nodiscard]] process_snapshot take_process_snapshot();

// Note [other threads' runtime]: the process clock minus the thread clock drifts by 15-30 us
// between two readings of a process with one thread (730 us on a loaded 2-core machine, 2026-11-27),
// so a 20 us rule cannot stand on it. Each other live thread's own runtime (schedstat, ns) can:
// a process with no other thread reads nothing at all.
using thread_runtimes = std::vector<std::pair<long, std::uint64_t>>;  // tid, ns; sorted by tid
[[nodiscard]] thread_runtimes other_thread_runtimes();
// CPU the other threads used between two readings. A thread gone by the second reading ran
// after the first to exit: its share is what the process clock says beyond the survivors'.
[[nodiscard]] double cpu_between(const thread_runtimes& first, const thread_runtimes& second, double process_other_s);
// A timed span's other-thread CPU: the survivors' own runtimes (cpu_between) plus what the
// process clock saw beyond them, past `slack_s` of its reading noise: a thread that was started
// and joined inside the span is in neither list, only in the process clock.
[[nodiscard]] double span_cpu_of_other_threads(const thread_runtimes& first, const thread_runtimes& second,
                                               double process_other_s, double slack_s);
// How many threads ran for `at_least_s` or more between two readings (a thread that came and
// went in between is not counted: the process clock sees its CPU, span_cpu_of_other_threads).
[[nodiscard]] int threads_busy_between(const thread_runtimes& first, const thread_runtimes& second, double at_least_s);
// Whether a thread other than the caller is running or waiting for a CPU (state R in
// /proc/self/task/<tid>/stat): a helper starved of CPU is runnable, not idle.
[[nodiscard]] bool another_thread_runnable();

// Note [allocation counter]: harness code that runs inside run()'s window on the serving thread
// (the synchronize after the calls, the audit's CUPTI callbacks) takes its own C allocations and
// mappings back off the thread's counters when the scope ends.
class uncounted_allocations {
 public:
  uncounted_allocations();
  ~uncounted_allocations();
  uncounted_allocations(const uncounted_allocations&) = delete;
  uncounted_allocations& operator=(const uncounted_allocations&) = delete;

 private:
  std::uint64_t c_allocations_;
  std::uint64_t mappings_;
  const void* caller_;
};

// "libcupti.so.13 (cuptiFoo+0x10)" for a code address of this process; "" for none.
[[nodiscard]] std::string describe_code_address(const void* address);

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
// The CPU time of the worker's child processes so far: every thread of the live ones (and of
// theirs), and the reaped ones'. A variant of an executable pair computes in a process of its
// own (Note [executable pairs]), which the process clock does not see (Note [host idle]).
[[nodiscard]] double children_cpu_s();
// The same reading thread by thread: every live child process's threads (and their children's),
// and the reaped children's CPU as one sum.
struct child_threads {
  thread_runtimes live;  // tid, ns; sorted by tid
  double reaped_s = 0;
  // Note [program page faults] (host_sampler.cpp): the live child processes' minor page faults
  // and the reaped ones'.
  long long minor_faults = 0;
  [[nodiscard]] double cpu_s() const;  // what children_cpu_s() reads
};
[[nodiscard]] child_threads read_child_threads();
// Every live thread of this process and of its child processes (and theirs): tid and whether it
// belongs to a child process.
[[nodiscard]] std::vector<std::pair<long, bool>> process_tree_threads();
// Note [waiting visits] (runner/contention_check.cpp): the CPU time every thread of process `pid`
// and of its descendants has had so far, and the time they spent runnable on a run queue waiting
// for a CPU (schedstat's first two fields). Threads that exited are no longer counted.
struct schedule_times {
  std::uint64_t ran_ns = 0;
  std::uint64_t waited_ns = 0;
};
[[nodiscard]] schedule_times process_tree_schedule(long pid);
// Note [executable pair threads] (runner/sampling_rounds.cpp): between two readings, the child
// processes' CPU, their busiest thread's (an executable pair's program: the thread that serves
// the request) and how many of their threads ran for `at_least_s` or more.
struct child_span {
  double cpu_s = 0;
  double busiest_thread_s = 0;
  int busy_threads = 0;
};
[[nodiscard]] child_span child_threads_between(const child_threads& first, const child_threads& second, double at_least_s);
[[nodiscard]] std::uint64_t allocation_count();

// Note [floating-point environment] (runner/judge_checks.cpp): this thread's SSE control word
// (MXCSR) without its sticky exception flags: flush-to-zero, denormals-are-zero, the rounding mode
// and the exception masks. 0 on a machine without one (not x86-64).
[[nodiscard]] unsigned floating_point_mode();

// Note [armed timers] (runner/judge_checks.cpp): the process's interval timers armed (real,
// virtual, profiling) and POSIX timers created (/proc/self/timers), whose signals interrupt the
// timed thread.
[[nodiscard]] int armed_timers();

}  // namespace aisp

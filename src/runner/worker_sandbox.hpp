// Note [worker sandbox]: every worker runs a variant's code, and every worker is a sibling
// process of one user, so without a fence a candidate can fork helpers that load the CPUs,
// SIGSTOP or renice the baseline, or write forged answers into the judge's channel. Two seccomp
// filters fence it (x86-64 only; elsewhere the worker reports the sandbox as unavailable):
//
// 1. Before exec, in the judge's forked child, so that the static initializers of pair files
//    already run inside it: no new process (clone without CLONE_THREAD, fork, vfork), no signal,
//    trace, renice, re-pin, rlimit or page migration aimed at any process but the worker itself.
// 2. In the worker's main(), once the reply channel is private and before any pair code runs:
//    no exec, no write to the channel except from the judge's own system-call instruction (the
//    filter compares the instruction pointer), no duplicate, close or splice of the channel, no
//    io_uring, no SIGSYS handler and no PR_SET_DUMPABLE. The worker also makes itself
//    non-dumpable, so that siblings cannot open its /proc/<pid>/mem or fds.
//
// A forbidden call traps: it fails with EPERM and the worker's SIGSYS handler counts it by kind;
// the counts travel with every probe, and the judge fails the pair (`sandbox`). A forbidden call
// before main() (a static initializer) finds no handler, and the kernel kills the worker with
// SIGSYS; the judge names the sandbox in the crash. Code in the worker's own address space can
// still call the judge's reply function with forged content; the parent's own clock bounds what
// such an answer can claim (`wall-clock`).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aisp::sandbox {

// What a denied call tried to do; the filter's return data.
enum class denial : std::uint16_t {
  new_process = 1,
  signal_other,
  trace_other,
  renice_other,
  repin_other,
  exec,
  channel_write,
  channel_copy,
  sigsys_handler,
  dumpable,
  timestamp_counter,
  perf_event,
  speculation_control,
  huge_pages,
};
inline constexpr std::size_t denial_kinds = 15;

[[nodiscard]] std::string_view denial_name(denial kind);
// The VALIDITY.md row a denial belongs to.
[[nodiscard]] std::string_view denial_code(denial kind);

// Set by the judge in a worker's environment when its pair may start processes (Note [compilers
// in the sandbox]); the worker then leaves exec out of stage 2 and becomes its orphans' reaper.
inline constexpr std::string_view worker_subprocess_variable = "AISP_WORKER_SUBPROCESSES";

// Stage 1, in the forked child before execve: async-signal-safe (no allocation, no locks).
// Returns false where seccomp is unavailable; the child then execs unconfined and the worker
// reports it.
// `allow_processes` (Note [compilers in the sandbox]): leave out the rules against starting a process.
bool confine_before_exec(pid_t self, bool allow_processes = false);

// Stage 2, in the worker's main() before any request: `reply_fd` is the private channel.
// Returns "" when confined, else why not.
// `allow_exec`: leave out the rule against exec (a compiler run by a pair that said so).
[[nodiscard]] std::string confine_worker(int reply_fd, bool allow_exec = false);

// Writes all of `bytes` to the channel through the one system-call instruction stage 2 allows.
// Returns false on an error other than EINTR.
bool write_reply(int reply_fd, const void* bytes, std::size_t count);

// Calls denied so far in this process, as "name x count" entries.
struct denial_count {
  denial kind;
  std::uint64_t count;
};
[[nodiscard]] std::vector<denial_count> denials_so_far();

// Whether a worker that died by `signal` was stopped by the sandbox (SIGSYS).
[[nodiscard]] bool killed_by_sandbox(int signal);

}  // namespace aisp::sandbox

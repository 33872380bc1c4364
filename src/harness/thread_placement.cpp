#include "harness/thread_placement.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "harness/process_probes.hpp"

namespace aisp {

// Note [thread placement]
// The worker's own affinity was read (scheduling-change), not its other threads' nor its
// programs': an executable baseline program pinned its two threads to one CPU (sched_setaffinity,
// or started under `taskset -c 0`) while its candidate spread them, 1.97x "faster" for the same
// program; a Python baseline pinned torch's pool threads to one CPU in setup() and its calling
// thread inside each call only, 2.73x (red team twelve, 2026-12-05). The judge places the
// workers; every thread of a worker and of its programs keeps the worker's starting mask, and a
// variant whose threads were pinned apart (whichever way) fails scheduling-change. Read between
// visits, so a calling thread pinned only inside calls is seen through the threads it works with
// (a pool pinned in setup); one that pins and restores its own thread inside every call is not.
// The scheduling policy likewise: the worker's was read, not its programs' threads', and a
// baseline program may put itself under SCHED_IDLE or SCHED_BATCH (red team fifteen noticed; on
// a loaded machine SCHED_IDLE runs only when nothing else would). Any thread under another policy
// than the worker started with fails too, and so does one reniced below the worker's starting
// priority (Note [children's priority] read the main threads' nice values only).
namespace {

std::string cpus_of(const cpu_set_t& set) {
  std::string listed;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) listed += fmt::format("{}{}", listed.empty() ? "" : ",", cpu);
  return listed;
}

// The thread's policy without SCHED_RESET_ON_FORK; -1 where it cannot be read (a thread gone).
int policy_of(pid_t tid) {
  const int policy = sched_getscheduler(tid);
  return policy < 0 ? -1 : policy & ~SCHED_RESET_ON_FORK;
}

// The thread's own nice value (Linux keeps one a thread); below any real one where unreadable.
int nice_of(pid_t tid) {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  return errno == 0 ? nice : -100;
}

std::string policy_name(int policy) {
  switch (policy) {
    case SCHED_OTHER: return "SCHED_OTHER";
    case SCHED_BATCH: return "SCHED_BATCH";
    case SCHED_IDLE: return "SCHED_IDLE";
    case SCHED_FIFO: return "SCHED_FIFO";
    case SCHED_RR: return "SCHED_RR";
    default: return std::to_string(policy);
  }
}

}  // namespace

nlohmann::json threads_placed_apart() {
  static const cpu_set_t at_start = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    return set;
  }();
  static const int policy_at_start = policy_of(0);
  static const int nice_at_start = nice_of(0);
  int apart = 0;
  std::string example;
  for (const auto& [tid, in_child] : process_tree_threads()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::string how;
    if (sched_getaffinity(static_cast<pid_t>(tid), sizeof set, &set) == 0 && !CPU_EQUAL(&set, &at_start)) {
      how = fmt::format("on CPUs {} (the worker started on {})", cpus_of(set), cpus_of(at_start));
    } else if (const int policy = policy_of(static_cast<pid_t>(tid)); policy >= 0 && policy != policy_at_start) {
      how = fmt::format("under scheduling policy {} (the worker started under {})", policy_name(policy), policy_name(policy_at_start));
    } else if (const int nice = nice_of(static_cast<pid_t>(tid)); nice > nice_at_start) {
      how = fmt::format("at nice {} (the worker started at {})", nice, nice_at_start);
    }
    if (how.empty()) continue;
    if (apart++ == 0) example = fmt::format("thread {} of the {} {}", tid, in_child ? "program" : "worker", how);
  }
  return {{"apart", apart}, {"example", example}};
}

}  // namespace aisp

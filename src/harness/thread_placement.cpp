#include "harness/thread_placement.hpp"

#include <sched.h>

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
namespace {

std::string cpus_of(const cpu_set_t& set) {
  std::string listed;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) listed += fmt::format("{}{}", listed.empty() ? "" : ",", cpu);
  return listed;
}

}  // namespace

nlohmann::json threads_placed_apart() {
  static const cpu_set_t at_start = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    return set;
  }();
  int apart = 0;
  std::string example;
  for (const auto& [tid, in_child] : process_tree_threads()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(static_cast<pid_t>(tid), sizeof set, &set) != 0 || CPU_EQUAL(&set, &at_start)) continue;
    if (apart++ == 0)
      example = fmt::format("thread {} of the {} on CPUs {} (the worker started on {})", tid, in_child ? "program" : "worker",
                            cpus_of(set), cpus_of(at_start));
  }
  return {{"apart", apart}, {"example", example}};
}

}  // namespace aisp

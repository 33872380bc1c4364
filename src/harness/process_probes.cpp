#include "harness/process_probes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>

#include <atomic>
#include <cstdlib>
#include <new>

extern char** environ;

namespace aisp {
namespace {

// Note [allocation counter]: the aisp binary replaces the global operator new so the worker
// can tell whether run() allocated (S7, M1). Counting is one relaxed atomic increment.
std::atomic<std::uint64_t> allocations_so_far{0};

// opendir/readdir, not std::filesystem: the probe itself must not go through operator new,
// or it would count its own allocations as run()'s.
std::size_t count_threads() {
  std::size_t count = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return 0;
  while (const dirent* entry = readdir(tasks)) count += entry->d_name[0] != '.';
  closedir(tasks);
  return count;
}

// Every thread's /proc children list (space-separated pids), read with a stack buffer.
std::size_t count_children() {
  std::size_t count = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return 0;
  while (const dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    char path[300];  // d_name holds up to 255 bytes
    std::snprintf(path, sizeof(path), "/proc/self/task/%s/children", entry->d_name);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char text[512];
    bool in_pid = false;
    for (ssize_t got; (got = read(fd, text, sizeof(text))) > 0;) {
      for (ssize_t i = 0; i < got; ++i) {
        const bool digit = text[i] >= '0' && text[i] <= '9';
        count += digit && !in_pid;
        in_pid = digit;
      }
    }
    close(fd);
  }
  closedir(tasks);
  return count;
}

std::uint64_t hash_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  std::uint64_t hash = 1469598103934665603ull;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) hash = (hash ^ (CPU_ISSET(cpu, &set) ? 0x9Eu : 0x11u)) * 1099511628211ull;
  return hash;
}

std::uint64_t hash_environment() {
  std::uint64_t hash = 1469598103934665603ull;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    for (const char* c = *entry; *c != '\0'; ++c) hash = (hash ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
    hash = (hash ^ 0xFFu) * 1099511628211ull;
  }
  return hash;
}

}  // namespace

cpu_reading take_cpu_reading() {
  const auto seconds = [](clockid_t clock) {
    timespec now{};
    clock_gettime(clock, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  };
  return {seconds(CLOCK_MONOTONIC), seconds(CLOCK_PROCESS_CPUTIME_ID), seconds(CLOCK_THREAD_CPUTIME_ID)};
}

double other_threads_cpu_s() {
  const auto reading = take_cpu_reading();
  return reading.process_cpu_s - reading.thread_cpu_s;
}

std::uint64_t allocation_count() { return allocations_so_far.load(std::memory_order_relaxed); }

process_snapshot take_process_snapshot() {
  process_snapshot snapshot;
  snapshot.threads = count_threads();
  snapshot.allocations = allocation_count();
  snapshot.environment_hash = hash_environment();
  snapshot.priority = getpriority(PRIO_PROCESS, 0);
  snapshot.stdout_bytes = static_cast<long long>(lseek(STDOUT_FILENO, 0, SEEK_END));
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  snapshot.minor_faults = usage.ru_minflt;
  snapshot.major_faults = usage.ru_majflt;
  snapshot.children = count_children();
  snapshot.scheduler = sched_getscheduler(0);
  snapshot.affinity_hash = hash_affinity();
  return snapshot;
}

}  // namespace aisp

// The replaced allocation functions (see Note [allocation counter]).
void* operator new(std::size_t bytes) {
  aisp::allocations_so_far.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

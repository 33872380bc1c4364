#include "harness/process_probes.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

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

std::uint64_t hash_environment() {
  std::uint64_t hash = 1469598103934665603ull;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    for (const char* c = *entry; *c != '\0'; ++c) hash = (hash ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
    hash = (hash ^ 0xFFu) * 1099511628211ull;
  }
  return hash;
}

}  // namespace

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

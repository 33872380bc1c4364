#include "runner/run_interruption.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <ctime>

namespace aisp {

namespace {

std::atomic<int> interrupting_signal{0};
std::atomic<long long> first_signal_ns{0};

// Fixed slots, not a container: the handler reads them.
constexpr std::size_t most_worker_groups = 256;
std::array<std::atomic<pid_t>, most_worker_groups> worker_groups{};

long long monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec;
}

void say(const char* text, std::size_t length) { [[maybe_unused]] const auto wrote = ::write(STDERR_FILENO, text, length); }

void note_interruption(int signal) {
  const long long now = monotonic_ns();
  if (interrupting_signal.load() == 0) {
    interrupting_signal.store(signal);
    first_signal_ns.store(now);
    // Said at once: the pair under way may take a moment to end, and a silent terminal reads as
    // an ignored Ctrl-C (a user's walkthrough, 2026-12-04).
    static constexpr char said[] = "\naisp: interrupted: ending the pair under way, then saving the run (again to stop at once)\n";
    say(said, sizeof said - 1);
    return;
  }
  if (now - first_signal_ns.load() < 1'000'000'000LL) return;  // the same signal, delivered to the group too
  for (auto& group : worker_groups) {
    if (const pid_t leader = group.load(); leader > 0) kill(-leader, SIGKILL);
  }
  std::signal(signal, SIG_DFL);
  raise(signal);
}

}  // namespace

interruption_watch::interruption_watch()
    : previous_int_(std::signal(SIGINT, note_interruption)), previous_term_(std::signal(SIGTERM, note_interruption)) {
  interrupting_signal.store(0);
}

interruption_watch::~interruption_watch() {
  std::signal(SIGINT, previous_int_);
  std::signal(SIGTERM, previous_term_);
}

int interruption_watch::signal() const { return interrupting_signal.load(); }

int run_interruption() { return interrupting_signal.load(); }

void register_worker_group(pid_t leader) {
  for (auto& group : worker_groups) {
    pid_t empty = 0;
    if (group.compare_exchange_strong(empty, leader)) return;
  }
}

void unregister_worker_group(pid_t leader) {
  for (auto& group : worker_groups) {
    pid_t expected = leader;
    if (group.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace aisp

#include "harness/late_write_barrier.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>

#include "aisp/check.hpp"

namespace aisp {
namespace {

// The fault handler reads these: fixed storage, no allocation, lock-free.
constexpr std::size_t max_ranges = 64;
struct slot {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<bool> written{false};
};
std::array<slot, max_ranges> slots;
std::atomic<std::size_t> slots_in_use{0};
struct sigaction previous_action {};
std::atomic<bool> handler_installed{false};

void on_fault(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const std::size_t used = slots_in_use.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < used; ++i) {
    auto& s = slots[i];
    const auto begin = s.begin.load(std::memory_order_acquire);
    const auto end = s.end.load(std::memory_order_acquire);
    if (address < begin || address >= end) continue;
    s.written.store(true, std::memory_order_release);
    // Writable again: the faulting store is retried on return and succeeds.
    mprotect(reinterpret_cast<void*>(begin), end - begin, PROT_READ | PROT_WRITE);
    return;
  }
  // Not ours: the fault goes where it would have gone without the barrier.
  if ((previous_action.sa_flags & SA_SIGINFO) != 0 && previous_action.sa_sigaction != nullptr) {
    previous_action.sa_sigaction(signal, info, context);
    return;
  }
  if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN && previous_action.sa_handler != nullptr) {
    previous_action.sa_handler(signal);
    return;
  }
  // Default action: restore it and return; the faulting instruction runs again and kills the
  // process as it would have.
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal, &fallback, nullptr);
}

void install_handler() {
  if (handler_installed.exchange(true)) return;
  struct sigaction action {};
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  AISP_EXPECTS(sigaction(SIGSEGV, &action, &previous_action) == 0, "could not install the late-write fault handler");
}

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

late_write_barrier::late_write_barrier(std::vector<guarded_range> ranges) : ranges_(std::move(ranges)) {
  AISP_EXPECTS(ranges_.size() <= max_ranges, "too many outputs for the late-write barrier");
  install_handler();
  const std::size_t page = page_size();
  for (auto& r : ranges_) {
    AISP_EXPECTS(reinterpret_cast<std::uintptr_t>(r.data) % page == 0, "output " + r.name + " is not page-aligned");
    r.bytes = (r.bytes + page - 1) / page * page;
  }
}

void late_write_barrier::arm() {
  AISP_EXPECTS(!armed_ && slots_in_use.load() == 0, "one armed late-write barrier at a time");
  for (std::size_t i = 0; i < ranges_.size(); ++i) {
    const auto begin = reinterpret_cast<std::uintptr_t>(ranges_[i].data);
    slots[i].written.store(false, std::memory_order_relaxed);
    slots[i].begin.store(begin, std::memory_order_relaxed);
    slots[i].end.store(begin + ranges_[i].bytes, std::memory_order_relaxed);
  }
  slots_in_use.store(ranges_.size(), std::memory_order_release);
  armed_ = true;
  for (const auto& r : ranges_)
    AISP_EXPECTS(mprotect(r.data, r.bytes, PROT_READ) == 0, "could not make output " + r.name + " read-only");
}

std::vector<std::string> late_write_barrier::release() {
  std::vector<std::string> written;
  if (!armed_) return written;
  armed_ = false;
  for (std::size_t i = 0; i < ranges_.size(); ++i) {
    mprotect(ranges_[i].data, ranges_[i].bytes, PROT_READ | PROT_WRITE);
    if (slots[i].written.load(std::memory_order_acquire)) written.push_back(ranges_[i].name);
  }
  slots_in_use.store(0, std::memory_order_release);
  return written;
}

late_write_barrier::~late_write_barrier() { static_cast<void>(release()); }

}  // namespace aisp

// V1/T6 planted in the worker's clock without defining a symbol (Note [slow worker clock]): glibc
// reads CLOCK_MONOTONIC through the vDSO's clock_gettime, whose address it keeps in a data
// pointer of the dynamic linker's read-only-after-start globals. The candidate's setup() points
// that slot at a function of its own, which takes the time the candidate hid off every reading;
// each run() hides half of what it really took. The same code as the baseline reads 2x "faster"
// unless something outside the clock counts the span: the CPU's timestamp counter does. A red
// team's plugin did this (round six, 2026-12-04); this is our own writing of its idea.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

using clock_reader = int (*)(clockid_t, timespec*);

clock_reader vdso_reader = nullptr;
std::atomic<long long> hidden_ns{0};

long long ns_of(const timespec& t) { return static_cast<long long>(t.tv_sec) * 1'000'000'000LL + t.tv_nsec; }

int slowed_reader(clockid_t clock, timespec* now) {
  const int status = vdso_reader(clock, now);
  if (status != 0 || clock != CLOCK_MONOTONIC) return status;
  const long long shown = ns_of(*now) - hidden_ns.load();
  now->tv_sec = static_cast<time_t>(shown / 1'000'000'000LL);
  now->tv_nsec = static_cast<long>(shown % 1'000'000'000LL);
  return status;
}

// The slot in the dynamic linker's globals that holds the vDSO's clock_gettime, pointed at ours.
void swap_the_slot(run_context&) {
  if (vdso_reader != nullptr) return;
  void* vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
  auto* globals = static_cast<unsigned char*>(dlsym(RTLD_DEFAULT, "_rtld_global_ro"));
  auto* reader = vdso != nullptr ? reinterpret_cast<clock_reader>(dlsym(vdso, "__vdso_clock_gettime")) : nullptr;
  if (globals == nullptr || reader == nullptr) throw std::runtime_error("planted: no vDSO clock slot on this machine");
  for (std::size_t offset = 0; offset < 4096; offset += sizeof(void*)) {
    clock_reader held = nullptr;
    std::memcpy(&held, globals + offset, sizeof held);
    if (held != reader) continue;
    const auto page_size = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    auto* page = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(globals + offset) & ~(page_size - 1));
    if (mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) break;
    vdso_reader = reader;
    const clock_reader ours = &slowed_reader;
    std::memcpy(globals + offset, &ours, sizeof ours);
    mprotect(page, page_size, PROT_READ);
    return;
  }
  throw std::runtime_error("planted: the vDSO clock slot was not found");
}

// The baseline's loop, timed on the kernel's clock itself; half of it hidden from the worker's.
void honest_then_hide_half(run_context& ctx) {
  timespec before{};
  timespec after{};
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &before);
  apply(affine_math, ctx.as<const float>("x"), ctx.as<float>("y"), 0, elements_of(ctx, "x"));
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &after);
  hidden_ns.fetch_add((ns_of(after) - ns_of(before)) / 2);
}

pair slowed_clock_pair() {
  pair declared = elementwise_declaration("cheats:t6_worker_clock_slowed_through_the_vdso_slot", "T6");
  declared.add_variant(honest_baseline())
      .add_variant(cheating_variant("the baseline's loop; setup() points glibc's vDSO clock slot at a reader that hides half of "
                                    "every call",
                                    honest_then_hide_half, swap_the_slot))
      .tag("check:wall-clock");
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::slowed_clock_pair());

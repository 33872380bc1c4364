// Note [protected inputs] (src/harness/worker_state.cpp): a variant that leaves its input
// read-only between calls, with a fault handler of its own, runs that handler inside the
// harness's untimed fill of fresh inputs (red team eight's computed the answer there, page by
// page: 112.8x, round eight, 2026-12-04). This fixture plants the mechanism only: its handler
// opens each faulting page again, run() does the honest loop and locks the input once more; it
// fails worker-state whatever the handler would compute.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

std::uintptr_t locked_begin = 0;
std::uintptr_t locked_end = 0;
struct sigaction before_ours {};

void open_the_page(int signal, siginfo_t* info, void* context) {
  const auto at = reinterpret_cast<std::uintptr_t>(info->si_addr);
  if (at >= locked_begin && at < locked_end) {
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    mprotect(reinterpret_cast<void*>(at & ~(page - 1)), page, PROT_READ | PROT_WRITE);
    return;
  }
  if ((before_ours.sa_flags & SA_SIGINFO) != 0 && before_ours.sa_sigaction != nullptr) {
    before_ours.sa_sigaction(signal, info, context);
    return;
  }
  sigaction(signal, &before_ours, nullptr);  // not ours: the fault happens again, handled as before
}

void lock_the_input(run_context& ctx) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(ctx.as<const float>("x"));
  const auto end = begin + elements_of(ctx, "x") * sizeof(float);
  locked_begin = (begin + page - 1) & ~(page - 1);
  locked_end = end & ~(page - 1);
  if (locked_end <= locked_begin) return;
  mprotect(reinterpret_cast<void*>(locked_begin), locked_end - locked_begin, PROT_READ);
}

void install_and_lock(run_context& ctx) {
  struct sigaction ours {};
  ours.sa_sigaction = open_the_page;
  ours.sa_flags = SA_SIGINFO;
  sigemptyset(&ours.sa_mask);
  sigaction(SIGSEGV, &ours, &before_ours);
  lock_the_input(ctx);
}

void honest_then_lock(run_context& ctx) {
  apply(affine_math, ctx.as<const float>("x"), ctx.as<float>("y"), 0, elements_of(ctx, "x"));
  lock_the_input(ctx);
}

pair protected_input_pair() {
  pair declared = elementwise_declaration("cheats:x7_input_locked_between_calls", "X7");
  declared.add_variant(honest_baseline())
      .add_variant(cheating_variant("the honest loop; its input read-only between calls, its own SIGSEGV handler opening each page "
                                    "the harness's fill writes",
                                    honest_then_lock, install_and_lock))
      .tag("check:worker-state");
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::protected_input_pair());

// S8 through a timer (Note [armed timers]): the baseline's setup() arms a profiling timer whose
// SIGPROF handler spins on the timed thread, so the baseline (and its twin, which runs the same
// code) is taxed in every call, timed or truth, on the timed thread itself; the candidate runs the
// same loop untaxed. Only armed-timers sees it. Run: aisp_cheats bench run --targets cheats:s8_baseline_taxed_by_a_timer
#include <signal.h>
#include <sys/time.h>

#include <chrono>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// Half of each millisecond of CPU the timed thread spends goes to this handler.
void burn_half_a_millisecond(int) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(500);
  while (std::chrono::steady_clock::now() < until) {
  }
}

void arm_the_tax(run_context&) {
  struct sigaction action {};
  action.sa_handler = burn_half_a_millisecond;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPROF, &action, nullptr);
  const itimerval every_millisecond{{0, 1000}, {0, 1000}};
  setitimer(ITIMER_PROF, &every_millisecond, nullptr);
}

void disarm_the_tax(run_context&) {
  const itimerval off{};
  setitimer(ITIMER_PROF, &off, nullptr);
}

[[nodiscard]] pair taxed_baseline_pair() {
  pair declared = elementwise_declaration("cheats:s8_baseline_taxed_by_a_timer", "S8", affine_math);
  declared.summary(cheat_summary("S8", "the baseline's setup arms a profiling timer whose handler spins on its timed thread"))
      .add_variant(variant{"baseline", "planted cheat: honest loop, taxed by the SIGPROF handler its setup arms", honest_run(affine_math),
                           arm_the_tax, disarm_the_tax, {}, {}, {}, {}, {}})
      .add_variant("optimized", "the same loop, untaxed", honest_run(affine_math));
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::taxed_baseline_pair().tag("check:armed-timers"));

// V1 planted in the clock: this binary defines clock_gettime, so the dynamic linker binds every
// steady_clock::now() of the process to it, the harness's own timing included. A variant's
// setup() then warps its worker's clock: the candidate's runs at half speed (its times halve),
// or the baseline's at triple speed (its times triple). Note [two clocks]: every worker of this
// binary reports the replaced clock at start, and the pair fails wall-clock. It lives in a binary
// of its own (aisp_cheats_clock): the replacement reaches every pair of the binary it is in.
// Run: aisp_cheats_clock bench run --targets cheats_clock
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// The warp: after setup() sets it, monotonic time runs at `rate` from the moment it was set.
double rate = 1.0;
timespec warp_start{};

double seconds_of(const timespec& t) { return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec); }

void start_warp(double new_rate) {
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &warp_start);
  rate = new_rate;
}

void halve_own_clock(run_context&) { start_warp(0.5); }
void triple_own_clock(run_context&) { start_warp(3.0); }

}  // namespace
}  // namespace aisp::cheats

extern "C" int clock_gettime(clockid_t clock, timespec* now) {
  const auto status = static_cast<int>(syscall(SYS_clock_gettime, clock, now));
  if (status != 0 || clock != CLOCK_MONOTONIC || aisp::cheats::rate == 1.0) return status;
  const double start = aisp::cheats::seconds_of(aisp::cheats::warp_start);
  const double warped = start + aisp::cheats::rate * (aisp::cheats::seconds_of(*now) - start);
  now->tv_sec = static_cast<time_t>(warped);
  now->tv_nsec = static_cast<long>((warped - static_cast<double>(now->tv_sec)) * 1e9);
  return status;
}

namespace {

aisp::pair clock_fixture(const char* target, aisp::variant baseline, aisp::variant optimized) {
  auto declared = aisp::cheats::elementwise_declaration(target, "V1");
  declared.summary(aisp::cheats::cheat_summary("V1", "a worker's clock warped by the binary's own clock_gettime"))
      .add_variant(std::move(baseline))
      .add_variant(std::move(optimized))
      .tag("check:wall-clock");
  return declared;
}

}  // namespace

AISP_REGISTER(clock_fixture("cheats_clock:v1_candidate_clock_at_half_speed", aisp::cheats::honest_baseline(),
                            aisp::cheats::cheating_variant("halves its own clock in setup()",
                                                           aisp::cheats::honest_run(aisp::cheats::affine_math),
                                                           aisp::cheats::halve_own_clock)));
AISP_REGISTER(clock_fixture("cheats_clock:v1_baseline_clock_at_triple_speed",
                            aisp::variant{"baseline", "honest loop, with its clock tripled in setup()",
                                          aisp::cheats::honest_run(aisp::cheats::affine_math), aisp::cheats::triple_own_clock,
                                          {}, {}, {}, {}, {}, {}},
                            aisp::cheats::cheating_variant("honest loop", aisp::cheats::honest_run(aisp::cheats::affine_math))));

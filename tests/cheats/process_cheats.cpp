// Planted cheats of issue 16's first slice: setup() leaves the worker changed in ways that reach
// the other workers or the timing (a helper process, a re-pinned CPU set, another scheduling
// policy). run() itself is honest; each must fail with its row's code.
// Run: aisp_cheats bench run --targets cheats
#include <sched.h>
#include <unistd.h>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// ---- L5: a helper process forked in setup() (it could load the CPUs or signal the others) ----
void fork_a_helper(run_context&) {
  if (fork() == 0) {
    sleep(3);
    _exit(0);
  }
}

// ---- E3: the worker pins itself to one CPU ----
void pin_to_one_cpu(run_context&) {
  cpu_set_t current;
  CPU_ZERO(&current);
  if (sched_getaffinity(0, sizeof(current), &current) != 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &current)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  sched_setaffinity(0, sizeof(one), &one);
}

// ---- E3: the worker switches itself to SCHED_BATCH ----
void batch_scheduling(run_context&) {
  sched_param param{};
  param.sched_priority = 0;
  sched_setscheduler(0, SCHED_BATCH, &param);
}

}  // namespace
}  // namespace aisp::cheats

namespace cheats = aisp::cheats;

AISP_REGISTER(cheats::elementwise_pair("cheats:l5_forks_a_helper_in_setup", "L5",
                                       cheats::cheating_variant("forks a helper process in setup()",
                                                                cheats::honest_run(cheats::affine_math), cheats::fork_a_helper)));
AISP_REGISTER(cheats::elementwise_pair("cheats:e3_pins_itself_to_one_cpu", "E3",
                                       cheats::cheating_variant("pins the worker to one CPU in setup()",
                                                                cheats::honest_run(cheats::affine_math), cheats::pin_to_one_cpu)));
AISP_REGISTER(cheats::elementwise_pair("cheats:e3_batch_scheduling", "E3",
                                       cheats::cheating_variant("switches the worker to SCHED_BATCH in setup()",
                                                                cheats::honest_run(cheats::affine_math), cheats::batch_scheduling)));

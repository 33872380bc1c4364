// S8 through a perf event (Note [sampled worker], src/runner/worker_sandbox.cpp): the baseline's
// setup() opens a software CPU-clock event on its own thread, sampling every 25 us, so the kernel
// interrupts every call of the baseline (and its twin, which runs the same code), with no thread,
// timer or signal of its own; the candidate runs the same loop unsampled (red team nine: 1.9x,
// 2.1x from a Python baseline, round nine, 2026-12-05). The sandbox refuses the call.
// The same for a speculation mitigation and for refused huge pages.
// Run: aisp_cheats bench run --targets cheats:s8_baseline_sampled_by_a_perf_event,cheats:s8_baseline_disables_store_bypass
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

int sampler = -1;

void open_the_sampler(run_context&) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 25000;  // ns of CPU time: an interrupt every 25 us of the timed thread's work
  attr.sample_type = PERF_SAMPLE_IP;
  attr.exclude_kernel = 1;
  sampler = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

void close_the_sampler(run_context&) {
  if (sampler >= 0) close(sampler);
  sampler = -1;
}

[[nodiscard]] pair sampled_baseline_pair() {
  pair declared = elementwise_declaration("cheats:s8_baseline_sampled_by_a_perf_event", "S8", affine_math);
  declared.summary(cheat_summary("S8", "the baseline's setup opens a perf event that samples its timed thread every 25 us"))
      .add_variant(variant{"baseline", "planted cheat: honest loop, interrupted by the perf event its setup opens",
                           honest_run(affine_math), open_the_sampler, close_the_sampler, {}, {}, {}, {}, {}})
      .add_variant("optimized", "the same loop, unsampled", honest_run(affine_math));
  return declared;
}

// Note [speculation controls] (src/runner/worker_sandbox.cpp): the baseline's setup disables
// speculative store bypass for its thread, so every load waits for older stores' addresses.
void disable_store_bypass(run_context&) { prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, PR_SPEC_DISABLE, 0, 0); }

[[nodiscard]] pair mitigated_baseline_pair() {
  pair declared = elementwise_declaration("cheats:s8_baseline_disables_store_bypass", "S8", affine_math);
  declared.summary(cheat_summary("S8", "the baseline's setup turns a speculation mitigation on for its own thread"))
      .add_variant(variant{"baseline", "planted cheat: honest loop, under speculative store bypass disabled",
                           honest_run(affine_math), disable_store_bypass, {}, {}, {}, {}, {}, {}})
      .add_variant("optimized", "the same loop, unmitigated", honest_run(affine_math));
  return declared;
}

// Note [refused huge pages] (src/runner/worker_sandbox.cpp): the baseline's setup keeps its
// worker's memory in 4 KiB pages, by advice on a buffer of its own or for the whole process.
alignas(1 << 21) unsigned char scratch[1 << 22];

void refuse_huge_pages_for_the_scratch(run_context&) { madvise(scratch, sizeof scratch, MADV_NOHUGEPAGE); }
void refuse_huge_pages_for_the_worker(run_context&) { prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0); }

[[nodiscard]] pair small_pages_baseline_pair(std::string target, const char* how, stage_fn refuse) {
  pair declared = elementwise_declaration(std::move(target), "S8", affine_math);
  declared.summary(cheat_summary("S8", std::string("the baseline's setup refuses transparent huge pages ") + how))
      .add_variant(variant{"baseline", "planted cheat: honest loop, its memory in 4 KiB pages", honest_run(affine_math), std::move(refuse),
                           {}, {}, {}, {}, {}, {}})
      .add_variant("optimized", "the same loop, in pages the kernel chooses", honest_run(affine_math));
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::sampled_baseline_pair().tag("check:sandbox"));
AISP_REGISTER(aisp::cheats::mitigated_baseline_pair().tag("check:sandbox"));
AISP_REGISTER(aisp::cheats::small_pages_baseline_pair("cheats:s8_baseline_advises_no_huge_pages", "for a buffer of its own (madvise)",
                                                      aisp::cheats::refuse_huge_pages_for_the_scratch)
                  .tag("check:sandbox"));
AISP_REGISTER(aisp::cheats::small_pages_baseline_pair("cheats:s8_baseline_disables_huge_pages", "for its whole worker (PR_SET_THP_DISABLE)",
                                                      aisp::cheats::refuse_huge_pages_for_the_worker)
                  .tag("check:sandbox"));

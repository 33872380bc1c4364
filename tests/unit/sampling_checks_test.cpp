// The judge's sampling checks on a slot built by hand: the paths no planted cheat can reach on
// a lent card (a thermally throttled GPU: the card's state is never changed), the worker-CPU
// thresholds by backend (Note [worker CPU time]) and a host worker off the CPU (Note [host idle]).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/late_look.hpp"
#include "runner/run_config.hpp"
#include "runner/sampling_rounds.hpp"
#include "runner/variant_slot.hpp"
#include "stats/summary.hpp"

namespace {

using aisp::check_result;

aisp::variant_slot slot_with_samples(std::size_t count, double seconds) {
  aisp::variant_slot slot;
  slot.label = "optimized";
  for (std::size_t i = 0; i < count; ++i) {
    aisp::sample_record record;
    record.duration_s = seconds * (1.0 + 0.001 * static_cast<double>(i % 7));
    record.host_wall_s = record.duration_s + 10e-6;
    record.cost_s = record.host_wall_s;
    slot.result.samples.push_back(record);
  }
  std::vector<double> durations;
  for (const auto& s : slot.result.samples) durations.push_back(s.duration_s);
  slot.result.stats = aisp::stats::summarize(durations);
  return slot;
}

bool failed(const std::vector<check_result>& checks, const std::string& name) {
  for (const auto& c : checks) {
    if (c.check == name && !c.passed) return true;
  }
  return false;
}

TEST(check_sampling, samples_under_a_thermal_clock_event_fail_thermal_throttle) {
  auto slot = slot_with_samples(100, 1e-3);
  slot.thermal_samples = 40;
  std::vector<check_result> checks;
  aisp::check_sampling(slot, aisp::run_config{}, true, checks);
  EXPECT_TRUE(failed(checks, "thermal-throttle"));
  slot.thermal_samples = 2;  // one in fifty: a visit that straddled a clock change, not a pattern
  checks.clear();
  aisp::check_sampling(slot, aisp::run_config{}, true, checks);
  EXPECT_FALSE(failed(checks, "thermal-throttle"));
}

// Whether one of the slot's CPU checks (check_worker_cpu, check_host_idle) fails `name`.
using slot_check = void (*)(const aisp::variant_slot&, bool, std::vector<check_result>&);
bool fails(slot_check check, const aisp::variant_slot& slot, bool on_gpu, const std::string& name) {
  std::vector<check_result> checks;
  check(slot, on_gpu, checks);
  return failed(checks, name);
}

TEST(check_worker_cpu, a_host_pair_allows_far_less_helper_cpu_than_a_cuda_pair) {
  auto slot = slot_with_samples(100, 1e-3);
  slot.cpu.visit_wall_s = 1.0;
  slot.cpu.other_threads_cpu_s = 0.2;  // 20%: CUDA's own threads reach this; a host pair has none
  EXPECT_TRUE(fails(aisp::check_worker_cpu, slot, false, "worker-cpu"));
  EXPECT_FALSE(fails(aisp::check_worker_cpu, slot, true, "worker-cpu"));
  slot.cpu.other_threads_cpu_s = 0.6;
  EXPECT_TRUE(fails(aisp::check_worker_cpu, slot, true, "worker-cpu"));
}

// A short run (the planted-cheat suite's --max-time 0.3): a host worker reads its other threads'
// own runtimes (next to nothing with none), so a helper that did most of the work, or a share of
// every call, fails from 0.1 ms, under the old 1 ms floor; an honest worker's microseconds do
// not, and a CUDA pair keeps its own threads' allowance (5 ms).
TEST(check_worker_cpu, a_host_helper_fails_a_short_run_from_a_tenth_of_a_millisecond) {
  auto slot = slot_with_samples(10, 1e-4);
  const struct {
    double wall_s, helper_s;
  } helpers[] = {{0.96e-3, 0.79e-3},  // cheats:l5_helper_does_the_call_after_return, 2026-12-03
                 {1.0e-3, 0.3e-3}};   // a share of every call: under half the span
  for (const auto& [wall_s, helper_s] : helpers) {
    slot.cpu.visit_wall_s = wall_s;
    slot.cpu.other_threads_cpu_s = helper_s;
    EXPECT_TRUE(fails(aisp::check_worker_cpu, slot, false, "worker-cpu")) << helper_s;
    EXPECT_FALSE(fails(aisp::check_worker_cpu, slot, true, "worker-cpu")) << helper_s;
    for (const double honest_s : {8e-6, 0.0}) {
      slot.cpu.other_threads_cpu_s = honest_s;
      EXPECT_FALSE(fails(aisp::check_worker_cpu, slot, false, "worker-cpu")) << honest_s;
    }
  }
}

// Note [declared threads]: a pair on n threads lets the others use up to 1.05 (n - 1) spans.
TEST(check_worker_cpu, a_declared_pool_may_use_its_threads_and_no_more) {
  auto slot = slot_with_samples(100, 1e-3);
  slot.cpu.visit_wall_s = 0.1;
  slot.cpu.other_threads_cpu_s = 0.09;  // one helper busy for 90% of the span
  EXPECT_TRUE(fails(aisp::check_worker_cpu, slot, false, "worker-cpu"));
  std::vector<check_result> checks;
  aisp::check_worker_cpu(slot, false, checks, 2);
  EXPECT_FALSE(failed(checks, "worker-cpu"));
  slot.cpu.other_threads_cpu_s = 0.2;  // three helpers' worth of a two-thread declaration
  checks.clear();
  aisp::check_worker_cpu(slot, false, checks, 2);
  ASSERT_TRUE(failed(checks, "worker-cpu"));
  EXPECT_NE(checks.front().detail.find("more than the 2 declared threads' 1 others could"), std::string::npos) << checks.front().detail;
  checks.clear();
  aisp::check_worker_cpu(slot, false, checks, 4);
  EXPECT_FALSE(failed(checks, "worker-cpu"));
  // Three helpers on a loaded 2-core machine stay within one span of CPU, yet three ran.
  slot.cpu.other_threads_cpu_s = 0.08;
  slot.cpu.busy_other_threads = 3;
  checks.clear();
  aisp::check_worker_cpu(slot, false, checks, 2);
  ASSERT_TRUE(failed(checks, "worker-cpu"));
  EXPECT_NE(checks.front().detail.find("3 threads besides the one running the variant worked"), std::string::npos) << checks.front().detail;
  slot.cpu.busy_other_threads = 1;
  checks.clear();
  aisp::check_worker_cpu(slot, false, checks, 2);
  EXPECT_FALSE(failed(checks, "worker-cpu"));
}

// Note [host idle]: 0.120 s of timed spans, 1 ms of sleep after ~50 us of work a call (the
// planted cheat) leaves 0.004 s of CPU; an honest host variant is on the CPU the whole span.
TEST(check_host_idle, a_host_variant_that_sleeps_through_its_spans_fails_and_an_honest_one_passes) {
  auto slot = slot_with_samples(100, 1e-3);
  slot.cpu.visit_wall_s = 0.120;
  slot.cpu.process_cpu_s = 0.004;
  std::vector<check_result> host;
  aisp::check_host_idle(slot, false, host);
  ASSERT_TRUE(failed(host, "host-idle"));
  EXPECT_NE(host.front().detail.find("0.004 s of CPU in 0.120 s of timed spans (3%)"), std::string::npos) << host.front().detail;
  slot.cpu.process_cpu_s = 0.118;
  EXPECT_FALSE(fails(aisp::check_host_idle, slot, false, "host-idle"));
  slot.cpu.process_cpu_s = 0.036;  // 30%: preempted on a loaded machine, still over a quarter
  EXPECT_FALSE(fails(aisp::check_host_idle, slot, false, "host-idle"));
}

// Note [declared threads used]: the threads beside the caller of a variant on n declared threads
// carry their share of the work: the honest two-thread pools read 0.37-0.53 of the spans, a
// serial baseline under the pair's 2 threads 0; a pool that never used its fourth thread fails.
TEST(check_threads_used, a_variant_on_fewer_threads_than_it_declares_fails) {
  aisp::worker_cpu_time cpu;
  cpu.visit_wall_s = 0.4;
  const auto fails_with = [&cpu](int threads) {
    std::vector<check_result> checks;
    aisp::check_threads_used(cpu, threads, false, "baseline", checks);
    return failed(checks, "threads-used");
  };
  cpu.other_threads_cpu_s = 0.0;  // torch.set_num_threads(1) under the pair's 2
  EXPECT_TRUE(fails_with(2));
  EXPECT_FALSE(fails_with(1));  // one declared thread: nothing to use beside the caller
  cpu.other_threads_cpu_s = 0.15;
  cpu.busy_other_threads = 1;
  EXPECT_FALSE(fails_with(2));
  EXPECT_TRUE(fails_with(4));  // one of three helpers ever worked
  cpu.other_threads_cpu_s = 0.02;  // a helper that wakes now and then: 5% of the spans
  EXPECT_TRUE(fails_with(2));
  cpu.visit_wall_s = 1e-3;  // a few samples: too coarse to judge
  EXPECT_FALSE(fails_with(2));
}

// Note [executable pair threads]: an executable pair's program is judged on its own threads
// beside its busiest one; the worker's threads (its caller only waits) say nothing.
TEST(check_threads_used, an_executable_program_on_fewer_threads_than_declared_fails) {
  aisp::worker_cpu_time cpu;
  cpu.visit_wall_s = 0.4;
  cpu.other_threads_cpu_s = 0.0;  // the worker's caller waits for the reply
  const auto fails_with = [&cpu](int threads) {
    std::vector<check_result> checks;
    aisp::check_threads_used(cpu, threads, true, "baseline", checks);
    return failed(checks, "threads-used");
  };
  cpu.busy_child_threads = 1;  // the program's one thread did it all
  cpu.child_helpers_cpu_s = 0.0;
  EXPECT_TRUE(fails_with(2));
  EXPECT_FALSE(fails_with(1));
  cpu.busy_child_threads = 2;  // two threads, the second carrying its share
  cpu.child_helpers_cpu_s = 0.18;
  EXPECT_FALSE(fails_with(2));
  EXPECT_TRUE(fails_with(3));  // a third never worked
  cpu.child_helpers_cpu_s = 0.01;  // an interpreter's housekeeping thread, not a share of the work
  EXPECT_TRUE(fails_with(2));
}

// Note [late look]: a candidate slower after sampling by over 2x was fast only while sampled; a
// baseline's look is shown, not failed; a look of under 20 samples is not judged.
TEST(check_late_look, a_variant_whose_speed_changed_after_sampling_fails) {
  std::vector<aisp::variant_slot> slots;
  slots.push_back(slot_with_samples(100, 1e-4));
  slots.push_back(slot_with_samples(100, 1e-4));
  slots[0].role = aisp::slot_role::baseline;
  slots[0].label = "baseline";
  slots[1].role = aisp::slot_role::candidate;
  const auto judged = [&](double candidate_late_s, double baseline_late_s, std::size_t late_samples) {
    slots[1].late_look_s.assign(late_samples, candidate_late_s);
    slots[0].late_look_s.assign(late_samples, baseline_late_s);
    std::vector<check_result> checks;
    aisp::check_late_look(slots, checks);
    return checks;
  };
  EXPECT_FALSE(failed(judged(1.9e-4, 0.6e-4, 20), "late-look"));
  auto checks = judged(3e-4, 1e-4, 20);
  ASSERT_TRUE(failed(checks, "late-look"));
  EXPECT_NE(checks.back().detail.find("fast only for as many calls as the judge sampled"), std::string::npos) << checks.back().detail;
  EXPECT_EQ(checks.back().variant, "optimized");
  checks = judged(1e-4, 0.3e-4, 20);  // shown, not failed: a look alone reads faster (Note [late look])
  EXPECT_FALSE(failed(checks, "late-look"));
  EXPECT_NE(checks.front().detail.find("(0.30x)"), std::string::npos) << checks.front().detail;
  EXPECT_TRUE(judged(3e-4, 0.4e-4, 19).empty()) << "19 late samples are not judged";
}

// A long sampling's heartbeat line: each worker's samples and its median's CI, and which stopped.
TEST(sampling_state, names_each_workers_samples_ci_and_whether_it_stopped) {
  std::vector<aisp::variant_slot> slots;
  slots.push_back(slot_with_samples(100, 1e-3));
  slots.back().label = "baseline";
  slots.back().stopped = aisp::stats::stop_reason::converged;
  slots.push_back(slot_with_samples(2, 1e-3));
  const auto line = aisp::sampling_state(slots, 15.2, 0.95);
  EXPECT_EQ(line.rfind("15 s in: baseline 100 samples (median's CI ±", 0), 0u) << line;
  EXPECT_NE(line.find("%, stopped), optimized 2 samples (too few for a CI)"), std::string::npos) << line;
}

TEST(check_host_idle, a_gpu_variant_and_a_run_under_2_ms_are_not_judged) {
  auto slot = slot_with_samples(100, 1e-3);
  slot.cpu.visit_wall_s = 0.120;
  slot.cpu.process_cpu_s = 0.0;  // a CUDA worker's host waits for the device: device-idle's side
  EXPECT_FALSE(fails(aisp::check_host_idle, slot, true, "host-idle"));
  slot.cpu.visit_wall_s = 1.9e-3;  // a few samples: too coarse to judge
  EXPECT_FALSE(fails(aisp::check_host_idle, slot, false, "host-idle"));
  slot.cpu.visit_wall_s = 2.1e-3;
  EXPECT_TRUE(fails(aisp::check_host_idle, slot, false, "host-idle"));
}

}  // namespace

namespace {

// Note [two clocks]: judged over the worker's whole run, so one odd first visit is not a failure.
TEST(reported_clock, fails_only_when_most_of_the_workers_audited_samples_disagree) {
  aisp::variant_slot slot;
  slot.label = "baseline";
  slot.reported_vs_audit = {12, 2, "reported 182.1 us, the audit's event timestamps span 159.5 us"};
  std::vector<check_result> checks;
  aisp::check_reported_clock(slot, checks);
  EXPECT_TRUE(checks.empty());
  slot.reported_vs_audit.off = 7;
  aisp::check_reported_clock(slot, checks);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].check, "wall-clock");
  EXPECT_FALSE(checks[0].passed);
  EXPECT_NE(checks[0].detail.find("7 of 12"), std::string::npos) << checks[0].detail;
}

}  // namespace

namespace {

aisp::variant_slot slot_at(double sampling_s, aisp::stats::stop_reason stopped) {
  aisp::variant_slot slot;
  slot.result.sampling_s = sampling_s;
  slot.stopped = stopped;
  return slot;
}

}  // namespace

// Note [paced stopped variants]: a stopped slow baseline visits only while it is not ahead of the
// busiest variant still sampling; variants still sampling always visit.
TEST(paced_stopped_variants, a_stopped_variant_visits_only_while_it_is_not_ahead_of_the_running_ones) {
  using aisp::stats::stop_reason;
  std::vector<aisp::variant_slot> slots;
  slots.push_back(slot_at(2.7, stop_reason::converged));   // a 0.27 s baseline, done after 10 samples
  slots.push_back(slot_at(0.12, stop_reason::keep_going));  // fast variants still short of their floor
  slots.push_back(slot_at(0.05, stop_reason::keep_going));
  slots.push_back(slot_at(0.10, stop_reason::stalled));    // stopped, behind the busiest running one
  EXPECT_EQ(aisp::slots_to_visit(slots), (std::vector<bool>{false, true, true, true}));
  slots[1].result.sampling_s = 2.8;  // the running ones caught up: the baseline visits again
  EXPECT_EQ(aisp::slots_to_visit(slots), (std::vector<bool>{true, true, true, true}));
  for (auto& slot : slots) slot.stopped = stop_reason::converged;  // nobody running: the rounds are over
  EXPECT_EQ(aisp::slots_to_visit(slots), (std::vector<bool>{false, false, false, false}));
}

// Note [visit order]: over 2n rounds every slot visits at every position twice, and every slot
// visits right after every other the same number of times as right before it.
TEST(visit_order, gives_every_slot_every_position_and_both_neighbours_alike) {
  for (std::size_t slots : {std::size_t{2}, std::size_t{3}, std::size_t{4}}) {
    std::vector<std::vector<int>> at_position(slots, std::vector<int>(slots, 0));
    std::vector<std::vector<int>> follows(slots, std::vector<int>(slots, 0));
    for (int round = 0; round < static_cast<int>(2 * slots); ++round) {
      const auto order = aisp::visit_order(slots, round);
      ASSERT_EQ(order.size(), slots);
      for (std::size_t position = 0; position < slots; ++position) {
        ++at_position[order[position]][position];
        if (position > 0) ++follows[order[position]][order[position - 1]];
      }
    }
    for (std::size_t slot = 0; slot < slots; ++slot) {
      for (std::size_t position = 0; position < slots; ++position) EXPECT_EQ(at_position[slot][position], 2) << slots << " slots";
      for (std::size_t other = 0; other < slots; ++other) EXPECT_EQ(follows[slot][other], follows[other][slot]) << slots << " slots";
    }
  }
  // The lone candidate of a pair (slot 1 of baseline, candidate, twin) is no longer always in the middle.
  EXPECT_NE(aisp::visit_order(3, 2)[1], 1u);
}

#include "runner/pair_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "audit/build_flags.hpp"
#include "audit/timeline_json.hpp"
#include "harness/plugin_loader.hpp"
#include "harness/recorded_metrics.hpp"
#include "profile/chrome_trace.hpp"
#include "runner/goal_verdicts.hpp"
#include "runner/challenge_battery.hpp"
#include "runner/late_look.hpp"
#include "runner/call_reuse.hpp"
#include "runner/contention_check.hpp"
#include "runner/judge_checks.hpp"
#include "runner/worker_state_checks.hpp"
#include "runner/mean_check.hpp"
#include "runner/memory_fit.hpp"
#include "runner/math_unit_checks.hpp"
#include "runner/physics_checks.hpp"
#include "runner/python_pair_checks.hpp"
#include "runner/rank_checks.hpp"
#include "runner/rank_group.hpp"
#include "runner/sampling_rounds.hpp"
#include "runner/benchmark_challenges.hpp"
#include "runner/slot_threads.hpp"
#include "runner/timeline_checks.hpp"
#include "runner/timing_choice.hpp"
#include "runner/traffic_check.hpp"
#include "runner/verification_phase.hpp"
#include "runner/worker_protocol.hpp"
#include "support/readable_error.hpp"
#include "stats/verdict.hpp"
#include "support/paths.hpp"

namespace aisp {
namespace {

std::vector<variant_slot> plan_slots(const pair_request& request, const run_config& config) {
  const pair& declared = *request.declared;
  std::vector<variant_slot> slots;
  auto stopping = config.stopping;  // Note [goals]: a p99 needs its samples
  if (declared.goal_of() == goal::latency) stopping.min_samples = std::max(stopping.min_samples, latency_min_samples);
  const auto add = [&](std::string label, const variant& runs, slot_role role) {
    variant_slot slot;
    slot.label = std::move(label);
    slot.runs = &runs;
    slot.role = role;
    slot.rule = stats::stopping_rule(stopping);
    slot.result.name = slot.label;
    slot.result.summary = runs.summary;
    slot.result.precision = runs.precision;
    slot.result.library = runs.library;
    slot.result.math = runs.math;
    slot.result.host_threads = declared.threads_of(runs);
    slots.push_back(std::move(slot));
  };
  const variant& baseline = declared.find_variant("baseline");
  if (!config.without_baseline) add("baseline", baseline, slot_role::baseline);
  if (config.aa_test) {
    add("baseline_as_candidate", baseline, slot_role::candidate);
  } else {
    for (const auto& v : declared.variants()) {
      if (v.name == "baseline") continue;
      const bool chosen = request.candidates.empty() ||
                          std::find(request.candidates.begin(), request.candidates.end(), v.name) != request.candidates.end();
      if (chosen) add(v.name, v, slot_role::candidate);
    }
  }
  if (config.without_baseline) return slots;  // `bench verify --without-baseline`: the named variants alone
  // Note [noise floor]: a second baseline worker, with its own buffers exactly as a candidate
  // has, measures how different two identical variants look in this very run.
  add("baseline_twin", baseline, slot_role::noise_twin);
  return slots;
}

// Note [anonymous workers]: nothing a worker can see says which slot it is. The logs were named
// for their slots (baseline_twin.log, readable through /proc/self/fd/2) and the workers were
// started in slot order (the twin the last pid and the newest log): a baseline could learn it was
// the twin and run at full speed there only, so the noise floor held while the baseline itself
// was slowed (red team eight, 2026-12-04). Workers start in a secret order, each logging to
// workerN.log by that order, and the logs take their slots' names once the workers are gone.
// Multi-GPU rank groups keep the names by slot and rank (their launchers name the logs).
// `log_names`: each log's name while its worker runs and afterwards, filled as the workers start
// (a worker that fails its init still has its log renamed).
void start_workers(const pair& declared, std::vector<variant_slot>& slots, const run_config& config, const std::string& pair_dir,
                   std::vector<std::pair<std::string, std::string>>& log_names) {
  std::vector<std::size_t> start_order(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) start_order[i] = i;
  std::shuffle(start_order.begin(), start_order.end(), std::mt19937_64(secret_seed()));
  for (std::size_t started = 0; started < start_order.size(); ++started) {
    auto& slot = slots[start_order[started]];
    const std::string log_stem = pair_dir + "/" + slot.label;
    if (declared.gpus() > 1) {
      // Note [launch]: a rank host logs its ranks at the same place under its own folder.
      const auto log_name = std::filesystem::path(pair_dir).filename().string() + "/" + slot.label;
      slot.worker = std::make_unique<rank_group>(declared, config.executable, log_stem, config.device, config.launch.get(), log_name);
    }
    else {
      const std::string log_while_running = fmt::format("{}/worker{}.log", pair_dir, started);
      auto worker = std::make_unique<worker_process>(config.executable, log_while_running, false, !subprocess_reason(declared).empty());
      worker->name_variant(slot.label);
      slot.worker = std::move(worker);
      log_names.emplace_back(log_while_running, log_stem + ".log");
    }
  }
  // Each worker creates its CUDA context and starts its audit on its own: side by side.
  for_each_slot_concurrently(all_slots(slots), config.judge_threads, [&](variant_slot& slot) {
    const auto reply = slot.worker->request({{"op", "init"},
                                             {"target", declared.target()},
                                             {"plugins", config.plugins},
                                             {"l2_flush", config.l2_flush},
                                             {"launch_gate", config.launch_gate},
                                             {"variant", slot.runs->name},
                                             {"mode", timing_mode_name(config.mode)},
                                             {"seed", config.seed},
                                             {"device", config.device},
                                             {"audit", config.audit},
                                             {"trace", !config.trace_dir.empty()}},
                                            config.worker_timeout_s);
    AISP_EXPECTS(reply.value("protocol", 0) == protocol::version,
                 fmt::format("the worker of {} speaks protocol {}, this judge {} (docs/worker_protocol.md)", slot.label,
                             reply.value("protocol", 0), protocol::version));
    slot.audit_state = reply.value("audit", "off");
    slot.result.sandbox = reply.value("sandbox", "off");
    slot.init_reply = reply;
  });
}

// Note [peer ratio]: a pair may carry one vendor-library variant (peer_<library>), timed in the
// same run and interleaved like every variant. Each variant's ratio to it is the peer's median
// over the variant's, with a bootstrap CI: 0.72 reads "72% of cuBLAS".
void record_peer_ratios(std::vector<variant_slot>& slots, const stats::bootstrap_config& bootstrap) {
  const variant_slot* peer = nullptr;
  for (const auto& slot : slots) {
    if (slot.role == slot_role::candidate && slot.label.starts_with("peer_")) peer = &slot;
  }
  if (peer == nullptr || peer->result.samples.empty()) return;
  const auto peer_times = durations_of(*peer);
  for (auto& slot : slots) {
    if (slot.role == slot_role::noise_twin || &slot == peer || slot.result.samples.empty()) continue;
    slot.result.vs_peer = stats::bootstrap_median_ratio(peer_times, durations_of(slot), bootstrap);
  }
}

// What the verdict compares for a slot: its per-call times, or the values its run() recorded under
// the metric the pair is judged by (Note [judged by a recorded metric]).
std::vector<double> judged_values(const verdict_statistic& statistic, const variant_slot& slot) {
  if (statistic.recorded_metric.empty()) return durations_of(slot);
  const auto found = slot.result.recorded.find(statistic.recorded_metric);
  return found == slot.result.recorded.end() ? std::vector<double>{} : found->second;
}

// Why a verdict on a tail (a latency pair's p99, or a recorded metric's quantile: Note [judged by
// a recorded metric]) has no verdict yet: too few values in some variant. "" = enough.
std::string too_few_for_a_tail(const pair& declared, const verdict_statistic& statistic, std::size_t fewest) {
  const bool tail = declared.goal_of() == goal::latency || !statistic.recorded_metric.empty();
  if (!tail || fewest >= latency_min_samples) return "";
  const char* what = statistic.recorded_metric.empty() ? "samples" : "recorded values";
  return fmt::format("the verdict is on {}, which needs at least {} {} a variant, and one had {}: give the pair more time (--max-time)",
                     statistic.name, latency_min_samples, what, fewest);
}

void decide_verdicts(const pair& declared, pair_result& result, std::vector<variant_slot>& slots, const run_config& config) {
  const variant_slot* baseline = nullptr;
  const variant_slot* twin = nullptr;
  for (const auto& slot : slots) {
    if (slot.role == slot_role::baseline) baseline = &slot;
    if (slot.role == slot_role::noise_twin) twin = &slot;
  }
  stats::bootstrap_config bootstrap;
  bootstrap.seed = config.seed;
  // Note [goals]: the statistic the verdict compares, and the goal's own figures per variant.
  const auto statistic = statistic_for(declared);
  result.goal = goal_name(declared.goal_of());
  result.verdict_statistic = statistic.name;
  result.verdict_statistic_why = declared.judged_reason();
  result.latency_trades = declared.latency_trades();
  result.data_dependent_launches = declared.data_dependent_launches_reason();
  for (auto& slot : slots) record_goal_metrics(declared, result.benchmark, durations_of(slot), slot.result, bootstrap);
  std::vector<variant_result*> measured;
  for (auto& slot : slots) measured.push_back(&slot.result);
  record_recorded_metrics(measured, baseline->result, bootstrap);
  const auto baseline_values = judged_values(statistic, *baseline);
  const auto twin_values = judged_values(statistic, *twin);
  const bool judgeable = !baseline_values.empty() && !twin_values.empty();
  if (judgeable) result.noise = statistic_ratio(statistic, baseline_values, twin_values, bootstrap);
  result.noise_floor = judgeable ? stats::noise_floor_of(*result.noise) : 0.0;
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate) continue;
    speedup_result speedup;
    speedup.variant = slot.label;
    const auto values = judged_values(statistic, slot);
    if (judgeable && !values.empty()) speedup.speedup = statistic_ratio(statistic, baseline_values, values, bootstrap);
    const bool gated = config.phase == verify_phase::gate;
    const bool invalid = gated && (!slot.result.verified || !baseline->result.verified);
    const bool too_few = slot.result.samples.size() < config.stopping.min_samples ||
                         baseline->result.samples.size() < config.stopping.min_samples;
    speedup.verdict_reason =
        too_few_for_a_tail(declared, statistic, std::min({values.size(), baseline_values.size(), twin_values.size()}));
    if (speedup.verdict_reason.empty()) speedup.verdict_reason = stats::disturbed_noise_reason(*result.noise, speedup.speedup);
    if (too_few && speedup.verdict_reason.empty())
      speedup.verdict_reason = fmt::format("fewer timed samples than the minimum {} (a longer --max-time takes more)", config.stopping.min_samples);
    const auto decided = stats::decide(speedup.speedup, result.noise_floor, config.verdicts);
    if (speedup.verdict_reason.empty() && decided == stats::verdict::faster && statistic.name == "median")
      speedup.verdict_reason = unconfirmed_by_the_mean(*baseline, slot);  // Note [hidden mean]
    speedup.verdict = invalid                           ? "invalid"
                      : !speedup.verdict_reason.empty() ? "inconclusive"
                                                        : std::string(stats::verdict_name(decided));
    if (speedup.verdict_reason.empty()) speedup.verdict_reason = stats::decision_reason(decided, speedup.speedup, result.noise_floor, config.verdicts);
    if (invalid) speedup.verdict_reason.clear();
    result.speedups.push_back(speedup);
  }
  record_peer_ratios(slots, bootstrap);
}

// Under the gate (the default) a failed check fails the pair and voids its verdicts; under
// detect and quarantine the failures are recorded and the pair is flagged, not failed.
void mark_verification(pair_result& result, std::vector<variant_slot>& slots, const run_config& config) {
  for (auto& slot : slots) {
    slot.result.verified = slot.role != slot_role::noise_twin;
    for (const auto& check : result.checks) {
      if (check.variant == slot.label && !check.passed) slot.result.verified = false;
    }
  }
  for (const auto& check : result.checks) {
    if (check.passed) continue;
    result.flagged = true;
    if (result.message.empty()) result.message = check.variant + " " + check.check + ": " + check.detail;
  }
  if (result.flagged && config.phase == verify_phase::gate) {
    result.status = "fail";
    result.failure_kind = "verify";
  }
}

// V3: the declared minimum bytes can never exceed every buffer moved once, or once a step for a
// pair whose steps depend on each other (Note [sequential passes]: the passes and why are stated).
void check_declared_work(const pair& declared, const workload& benchmark, const work_amount& work,
                         std::vector<check_result>& checks) {
  const double buffer_bytes = declared.buffer_bytes(benchmark);
  const double passes = declared.passes_at(benchmark);
  const std::string passes_note =
      declared.passes_reason().empty() ? "" : fmt::format(" x {:.0f} sequential passes ({})", passes, declared.passes_reason());
  // No bytes at all switches off the traffic check (W3) that holds a variant skipping its work
  // (a red team's graph-mode variant that ran one call's kernels a captured batch, 2026-12-03).
  if (!(work.bytes > 0)) {
    add_check(checks, verify::checks::declared_work, "baseline", false,
              fmt::format("declared no bytes per iteration (all buffers together hold {:.0f}): declare the fewest bytes one call must "
                          "move (its inputs read once, its outputs written once), which the traffic check holds every variant to",
                          buffer_bytes));
    return;
  }
  add_check(checks, verify::checks::declared_work, "baseline", passes >= 1.0 && work.bytes <= buffer_bytes * passes * 1.001,
            fmt::format("declared {:.0f} bytes per iteration; all buffers together hold {:.0f}{}", work.bytes, buffer_bytes, passes_note));
}

// E4: the pair's workers and the judge's copies must fit in what is free, before any worker
// allocates; the check records the need either way. Returns the problem, "" when it fits.
std::string check_memory_fit(const pair& declared, const workload& benchmark, int workers, const device_availability& device,
                             std::vector<check_result>& checks) {
  std::vector<memory_need> needs{host_memory_need(declared, benchmark, workers, host_available_memory())};
  if (declared.where() == backend::cuda) {
    needs.push_back(device_memory_need(declared, benchmark, workers,
                                       device.free_device_memory ? device.free_device_memory() : std::nullopt));
  }
  for (const auto& need : needs) {
    const auto problem = memory_fit_problem(need);
    add_check(checks, verify::checks::memory_fit, "baseline", problem.empty(), problem.empty() ? describe(need) : problem);
    if (!problem.empty()) return problem;
  }
  return "";
}

// K4, per translation unit: the pair's unit carries what the build's compiler launcher saw
// (scripts/record_math_flags: the command's math switches, host and nvcc, and math pragmas in
// the source). A unit built without the launcher falls back to the switches every unit of the
// binary recorded (-frecord-gcc-switches, host code only), so any unit's -ffast-math counts.
void check_build_symmetry(const pair& declared, const run_config& config, std::vector<check_result>& checks) {
  // Note [plugin build symmetry] (audit/build_flags.hpp): a plugin's whole binary.
  if (const auto& recorded = declared.build_math_flags(); recorded && recorded->starts_with(plugin_math_record_prefix)) {
    const std::string found = recorded->substr(std::string_view(plugin_math_record_prefix).size());
    add_check(checks, verify::checks::build_symmetry, "optimized", found.empty(),
              *recorded == plugin_unrecorded
                  ? "the plugin recorded no compile switches, so its units' math flags cannot be checked: build it with "
                    "find_package(aisp) and aisp_add_benchmark (docs/tutorial.md), or add -frecord-gcc-switches (nvcc: "
                    "-Xcompiler=-frecord-gcc-switches)"
                  : found.empty() ? "every unit of the plugin was built optimized and without value-changing host math switches"
                                  : found);
    return;
  }
  if (const auto& recorded = declared.build_math_flags()) {
    const std::string found = describe_unit_math_record(*recorded);
    add_check(checks, verify::checks::build_symmetry, "optimized", found.empty(),
              found.empty() ? "the pair's translation unit was built without value-changing math switches or pragmas"
                            : "the pair's translation unit was built with " + found);
    return;
  }
  static const auto flags = unsafe_math_flags(recorded_compile_switches(config.executable));
  std::string found;
  for (const auto& f : flags) found += (found.empty() ? "" : " ") + f;
  add_check(checks, verify::checks::build_symmetry, "optimized", flags.empty(),
            flags.empty() ? "unit not recorded; every unit of the binary built with the same host math flags"
                          : "unit not recorded; a unit of the binary was built with " + found);
}

// --trace: every audited worker's timeline, merged into one Chrome/Perfetto trace of the pair.
void write_pair_trace(const pair& declared, std::vector<variant_slot>& slots, const run_config& config,
                      const std::string& pair_dir) {
  std::vector<trace_lane> lanes;
  for (auto& slot : slots) {
    if (slot.audit_state != "on") continue;
    const std::string file = pair_dir + "/" + slot.label + ".timeline.json";
    slot.worker->request({{"op", "timeline"}, {"file", file}}, config.worker_timeout_s);
    std::ifstream in(file);
    lanes.push_back({slot.label, timeline_from_json(nlohmann::json::parse(in))});
    in.close();
    std::filesystem::remove(file);
  }
  if (lanes.empty()) return;
  const auto trace = chrome_trace(lanes, {{"target", declared.target()}, {"mode", timing_mode_name(config.mode)},
                                          {"seed", config.seed}});
  write_chrome_trace(config.trace_dir + "/" + file_safe(declared.target()) + ".trace.json", trace);
}

// SOL % and the physics gate, against the GPU's ceilings or, for a host pair, the host's copy
// bandwidth (measured once, between pairs, while nothing else runs).
void check_speed_of_light(const pair& declared, pair_result& result, std::vector<variant_slot>& slots,
                          const device_availability& device) {
  std::vector<variant_result*> variants;
  for (auto& slot : slots) variants.push_back(&slot.result);
  if (declared.where() == backend::cuda) {
    // A multi-GPU pair declares the whole world's work (Note [ranks]).
    assess_speed_of_light(result.work, device.ceilings.for_gpus(declared.gpus()), variants, result.roofline, result.checks,
                          declared.path_of());
  } else {
    static const ceiling_set host = host_ceilings();
    assess_speed_of_light(result.work, host, variants, result.roofline, result.checks);
  }
}

// W12, Note [recorded metrics]: a variant whose slowest served item waited far longer than the
// baseline's slowest (its worst recorded latency over 1.5x the baseline's worst, any metric in
// seconds) starved an item, however good its throughput or median. A count (`accepted_drafts`)
// is no latency, and more of it is no starvation. A metric the pair trades by design is held to
// its declared factor instead (Note [declared latency trade]).
// The baseline's worst is taken over the baseline and its noise twin, the same code: on a light
// trace the worst TTFT of one moved 2.25x from the other's in a run (labs/decode:chunked_prefill,
// H200, 2026-12-02), so one instance's worst is no bound; the twin is not judged itself.
constexpr double starved_item_factor = 1.5;

void check_latency_tails(const pair& declared, std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  const variant_slot* baseline = nullptr;
  for (const auto& slot : slots) {
    if (slot.role == slot_role::baseline) baseline = &slot;
  }
  if (baseline == nullptr) return;
  const auto baseline_worst = [&](const std::string& metric) {
    double worst = 0;
    for (const auto& slot : slots) {
      if (slot.role != slot_role::baseline && slot.role != slot_role::noise_twin) continue;
      if (const auto found = slot.result.recorded.find(metric); found != slot.result.recorded.end() && !found->second.empty())
        worst = std::max(worst, *std::max_element(found->second.begin(), found->second.end()));
    }
    return worst;
  };
  for (const auto& slot : slots) {
    if (slot.role == slot_role::baseline || slot.role == slot_role::noise_twin) continue;
    for (const auto& [metric, values] : slot.result.recorded) {
      if (!is_time_metric(metric)) continue;
      const auto base = baseline->result.recorded.find(metric);
      if (values.empty() || base == baseline->result.recorded.end() || base->second.empty()) continue;
      const latency_trade* trade = declared.traded_latency(metric);
      const double factor = trade != nullptr ? trade->worst_factor : starved_item_factor;
      const double worst = *std::max_element(values.begin(), values.end());
      const double base_worst = baseline_worst(metric);
      add_check(checks, verify::checks::latency_tail, slot.label, worst <= factor * base_worst,
                fmt::format("{}: the worst of {} recorded values is {:.4g}, the baseline's worst {:.4g} (with its twin's; {:.2f}x; at "
                            "most {}x{})",
                            metric, values.size(), worst, base_worst, base_worst > 0 ? worst / base_worst : 0.0, factor,
                            trade != nullptr ? ", a declared trade: " + trade->why : ""));
    }
  }
}

// The benchmark size: load, sample interleaved, energy window, the full-size comparison with the
// baseline, the sampling and timeline checks and SOL.
void run_benchmark_size(const judge_scope& scope, pair_result& result, std::vector<variant_slot>& slots,
                        const device_availability& device, const progress_fn& progress, phase_timer& phases) {
  const pair& declared = scope.declared;
  const run_config& config = scope.config;
  load_benchmark(scope, slots);
  phases.lap("load");
  progress(fmt::format("{}: sampling {} workers interleaved", declared.target(), slots.size()));
  std::vector<bool> baseline_levels;
  for (const auto& slot : slots)
    if (slot.role == slot_role::baseline) baseline_levels = slot.wide_levels_passed;
  sampling_challenges challenges(scope, slots, baseline_levels);  // Note [challenges during sampling]
  run_sampling_rounds(
      slots, config, device.read_telemetry, result.checks, declared.where() == backend::host,
      [&](const std::string& state) { progress(fmt::format("{}: sampling, {}", declared.target(), state)); },
      [&](int round) { challenges.between_rounds(round); });
  challenges.judge(benchmark_of(declared, config));
  for (auto& slot : slots)
    if (slot.role == slot_role::baseline) slot.scattered_during_sampling = challenges.asked_any();
  phases.lap("sampling");
  check_input_reuse(slots, declared, config, result.checks);  // Note [input reuse]
  phases.lap("input_reuse");
  check_batch_reuse(slots, declared, config, result.checks);  // Note [batch reuse]
  phases.lap("batch_reuse");
  if (!config.verify_only) check_contention(slots, result.checks);  // Note [contended visits]
  for (auto& slot : slots) slot.result.other_work_cpus = others_cpus(slot.load);
  if (declared.gpus() > 1 && !config.verify_only) check_rank_skew(slots, result.checks);
  phases.lap("contention");
  // The GPU's energy counter says nothing about a host pair's calls (it read idle watts x host time).
  if (declared.where() == backend::cuda) measure_energy(slots, config, device.read_telemetry);
  phases.lap("energy");
  verify_against_baseline(scope, slots, phases);
  check_traffic(declared, result.work, slots, config, result.checks);
  phases.lap("traffic");
  for (auto& slot : slots) {
    summarize_slot(slot, result.work, device.default_sm_clock_mhz, config.stopping.confidence);
    if (!config.verify_only)
      check_sampling(slot, config, declared.where() == backend::cuda, result.checks, declared.goal_of() == goal::latency,
                     declared.threads_of(*slot.runs));
    if (!config.verify_only && declared.where() == backend::host) check_worker_clock(slot, result.checks);  // Note [slow worker clock]
    if (!config.verify_only && declared.where() == backend::host)  // Note [declared threads used]
      check_threads_used(slot.cpu, declared.threads_of(*slot.runs), is_exec_pair(declared.target()), slot.label, result.checks);
    check_reported_clock(slot, result.checks);
    check_device_timeline(declared, result.benchmark, slot, result.checks);
    check_access_policy(declared, slot.access_policy, "a visit of timed samples", slot.label, result.checks);
    if (declared.where() == backend::cuda) check_math_unit(declared, slot, config, result.checks);
    check_library_precision(*slot.runs, slot.library_precision, "a visit of timed samples", slot.label, result.checks);
    if (declared.where() == backend::cuda) slot.result.device_audit = summarize_device_audit(slot);
    if (declared.where() == backend::cuda && config.audit) check_audit_coverage(slot, result.checks);
  }
  check_fp_environment(slots, result.checks);  // Note [floating-point environment]
  check_worker_state(declared, slots, result.checks);  // Notes [worker state], [shared state]
  if (declared.where() == backend::cuda) check_device_fast_math(slots, config, result.checks);  // Note [device fast math]
  check_armed_timers(slots, result.checks);    // Note [armed timers]
  if (!config.verify_only && declared.gpus() <= 1) check_late_look(slots, result.checks);  // Note [late look]
  if (!config.verify_only && declared.goal_of() != goal::latency && declared.judged_metric().empty())
    check_hidden_cost(slots, result.checks, declared.where() == backend::host);  // Notes [hidden mean], [soaked mean]
  if (!config.verify_only) check_speed_of_light(declared, result, slots, device);
  if (!config.verify_only) check_latency_tails(declared, slots, result.checks);
  phases.lap("checks");
}

// A worker that failed ends the pair: skipped where the run's timing mode cannot time it (graph
// capture refused), failed with its kind otherwise, and the worker that died named.
void record_worker_failure(const worker_failure& failure, const std::vector<variant_slot>& slots, pair_result& result) {
  if (failure.kind() == worker_failure_kind::unsupported) {
    result.status = "skip";
    result.message = without_source_locations(failure.what());
    result.checks.clear();
    return;
  }
  result.status = "fail";
  result.failure_kind = std::string(worker_failure_name(failure.kind()));
  std::string dead = "?";  // the worker that died (or hung, and was killed) is the one already reaped
  for (const auto& slot : slots) {
    if (slot.worker && slot.worker->pid() <= 0) dead = slot.label;
  }
  result.message = dead == "?" ? std::string(failure.what()) : fmt::format("variant {}: {}", dead, failure.what());
  if (failure.kind() == worker_failure_kind::timeout) add_check(result.checks, verify::checks::worker_timeout, dead, false, failure.what());
  if (failure.kind() == worker_failure_kind::sandbox) add_check(result.checks, verify::checks::sandbox_kill, dead, false, failure.what());
}

}  // namespace

workload benchmark_of(const pair& declared, const run_config& config) {
  workload work = declared.benchmark_workload();
  for (const auto& [name, value] : config.benchmark_override) {
    AISP_EXPECTS(work.params.count(name) > 0, declared.target() + " has no benchmark parameter '" + name + "' (it has " +
                                                  work.describe() + ")");
    AISP_EXPECTS(value > 0, "--size " + name + " must be positive");
    work.params[name] = value;
  }
  return work;
}

pair_result run_pair(const pair_request& request, const run_config& given,
                     const device_availability& device, const progress_fn& progress) {
  const pair& declared = *request.declared;
  const auto started = std::chrono::steady_clock::now();
  pair_result result;
  result.target = declared.target();
  result.backend = declared.where() == backend::cuda ? "cuda" : "host";
  // Note [short calls]: the pair may ask for graph mode where the user left --mode alone.
  const timing_choice timing = timing_for(declared, given);
  run_config config = given;
  config.mode = timing.mode;
  config.launch_gate = timing.launch_gate;
  result.mode = declared.where() == backend::cuda ? std::string(timing_mode_name(config.mode)) : "host";
  result.mode_reason = timing.reason;
  result.launch_gate = timing.launch_gate;
  result.launch_gate_reason = timing.launch_gate_reason;
  result.host_threads = declared.host_threads();
  result.host_threads_reason = declared.host_threads_reason();
  if (!timing.reason.empty() && progress) progress(fmt::format("[mode] {}: graph mode, {}", declared.target(), timing.reason));
  result.benchmark = benchmark_of(declared, config);
  result.work = declared.work_of()(result.benchmark);
  result.aa_test = config.aa_test;
  result.tags = declared.tags();
  if (declared.where() == backend::cuda && !device.absence_reason.empty()) {
    result.status = "skip";
    result.message = device.absence_reason;
    return result;
  }
  if (declared.where() == backend::cuda) {
    auto why = declared.unsupported_on(device.compute_major, device.compute_minor);
    if (why.empty() && declared.gpus() > 1 && !config.launch) why = multi_gpu_absence(declared, config.device, device.gpu_count);
    if (!why.empty()) {
      result.status = "skip";
      result.message = std::move(why);
      return result;
    }
  }
  if (declared.gpus() > 1 && config.launch) {
    if (auto why = launched_absence(declared, *config.launch); !why.empty()) {
      result.status = "skip";
      result.message = std::move(why);
      return result;
    }
  }
  if (declared.gpus() > 1) result.ranks = rank_topology(declared, config.device, config.launch.get());
  const std::string pair_dir = config.artifacts_dir + "/" + file_safe(declared.target());
  std::filesystem::create_directories(pair_dir);
  auto slots = plan_slots(request, config);
  verify::reference_cache references(declared, config.judge_threads);
  const judge_scope scope{declared, config, pair_dir, result.checks, references};
  phase_timer phases(result.phase_s);
  std::vector<std::pair<std::string, std::string>> log_names;
  try {
    check_declared_work(declared, result.benchmark, result.work, result.checks);
    check_build_symmetry(declared, config, result.checks);
    if (auto memory_problem = check_memory_fit(declared, result.benchmark, static_cast<int>(slots.size()), device, result.checks);
        !memory_problem.empty()) {
      result.status = "fail";
      result.failure_kind = "memory";
      result.message = memory_problem;
      result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return result;
    }
    start_workers(declared, slots, config, pair_dir, log_names);
    phases.lap("workers");
    for (const auto& slot : slots) {
      if (slot.audit_state.starts_with("unavailable"))
        progress(fmt::format("[audit] {} {}: device audit {}: the pair fails device-audit (use --audit off to run without it)", declared.target(), slot.label, slot.audit_state));
    }
    progress(fmt::format("{}: verifying on {} small sizes{}", declared.target(), declared.workloads().size() - 1,
                         config.skip_battery ? "" : ", then the challenge battery"));
    verify_small_sizes(scope, slots, phases);
    // --small-sizes-only (for compute-sanitizer) stops here: no benchmark-size call at all.
    if (!config.small_sizes_only) run_benchmark_size(scope, result, slots, device, progress, phases);
    waive_runtime_checks(declared, result.checks);
    mark_verification(result, slots, config);
    if (!config.verify_only) decide_verdicts(declared, result, slots, config);
    phases.lap("verdicts");
    if (!config.trace_dir.empty() && declared.where() == backend::cuda) write_pair_trace(declared, slots, config, pair_dir);
  } catch (const worker_failure& failure) {
    record_worker_failure(failure, slots, result);
  } catch (const std::exception& error) {
    result.status = "fail";
    result.failure_kind = "exception";
    result.message = error.what();
  }
  for_each_slot_concurrently(all_slots(slots), config.judge_threads, [](variant_slot& slot) {
    if (slot.worker) slot.worker->shutdown();
  });
  for (const auto& [while_running, afterwards] : log_names) {
    std::error_code ignored;  // a log that could not take its name keeps the one it had
    std::filesystem::rename(while_running, afterwards, ignored);
  }
  for (auto& slot : slots) {
    if (slot.worker) check_sandbox(slot, result.checks);
    result.variants.push_back(std::move(slot.result));
  }
  phases.lap("shutdown");
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace aisp

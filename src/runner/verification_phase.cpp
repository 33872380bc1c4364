#include "runner/verification_phase.hpp"

#include <mutex>
#include <random>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "harness/plugin_loader.hpp"
#include "runner/benchmark_challenges.hpp"
#include "runner/candidate_accuracy.hpp"
#include "runner/challenge_battery.hpp"
#include "runner/drawn_size.hpp"
#include "runner/judge_checks.hpp"
#include "runner/pair_runner.hpp"
#include "runner/slot_threads.hpp"
#include "runner/worker_protocol.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"
#include "verify/golden_store.hpp"
#include "verify/reference_runner.hpp"
#include "verify/tolerance.hpp"

namespace aisp {
namespace {

// M2 is asked only where an input changed: an output scan of GiBs otherwise buys nothing.
bool any_unwritten(const pair& declared, const verified_outputs& call) {
  if (call.report.at("mutated_inputs").empty()) return false;
  const auto& outputs = call.outputs;
  for (const auto& spec : declared.buffers()) {
    if (spec.role != buffer_role::output) continue;
    const auto& raw = outputs.at(spec.name);
    for (std::size_t i = 0; i < raw.size() / dtype_size(spec.type); ++i) {
      if (is_poison(spec.type, raw.data(), i)) return true;
    }
  }
  return false;
}

// The validation size with the most output elements: the battery's workload.
const workload& battery_workload(const pair& declared) {
  const workload* chosen = nullptr;
  std::int64_t most = -1;
  for (const auto& w : declared.workloads()) {
    if (w.kind != workload_kind::validation) continue;
    std::int64_t elements = 0;
    for (const auto& spec : declared.buffers()) elements += spec.role == buffer_role::output ? spec.num_elements(w) : 0;
    if (elements > most) {
      most = elements;
      chosen = &w;
    }
  }
  return *chosen;
}

// O6: every variant fails the reference, and they all agree with the baseline.
void check_ground_truth(const judge_scope& scope, const workload& work, const std::string& label,
                        const std::map<std::string, raw_outputs>& outputs, const std::map<std::string, bool>& passed) {
  for (const auto& [name, ok] : passed) {
    if (ok) return;
  }
  if (!outputs.contains("baseline")) return;  // --without-baseline: nothing to agree with
  const auto baseline_values = widen_outputs(scope.declared, outputs.at("baseline"));
  std::vector<check_result> agreement;
  bool all_agree = true;
  for (const auto& [name, raw] : outputs) {
    if (name == "baseline") continue;
    all_agree = compare_outputs(scope.declared, work, raw, baseline_values, nullptr, verify::checks::reference, label, name, agreement) && all_agree;
  }
  if (all_agree && outputs.size() > 1) {
    add_check(scope.checks, verify::checks::ground_truth, "baseline", false,
              label + ": every variant disagrees with the reference the same way; suspect the reference");
  }
}

}  // namespace

// The reference against its stored golden; a missing golden is recorded when asked to.
// Goldens are kept for one fixed seed, whatever the run's (random by default) seed is: they watch
// the reference for drift, which does not depend on the inputs a run happens to draw.
void check_golden(const judge_scope& scope, verify::golden_store& goldens, const workload& work) {
  constexpr std::uint64_t golden_seed = 42;
  const auto key_of = [&](const std::string& output) {
    return verify::golden_store::key(scope.declared.target(), work.describe(), output, golden_seed);
  };
  // The seed-42 reference is extra fp64 work: computed only for a golden to check or record.
  bool wanted = scope.config.update_goldens;
  for (const auto& spec : scope.declared.buffers()) {
    wanted = wanted || (spec.role == buffer_role::output && goldens.find(key_of(spec.name)) != nullptr);
  }
  if (!wanted) return;
  const auto reference = scope.references.get(work, {golden_seed, input_values::declared, {}});
  for (const auto& [output, values] : *reference) {
    const auto key = key_of(output);
    const auto current = verify::fingerprint_of(values, golden_seed);
    if (const auto* golden = goldens.find(key)) {
      const auto drift = verify::golden_drift(*golden, current);
      add_check(scope.checks, verify::checks::golden, "reference", drift.empty(),
                drift.empty() ? key + ": matches its golden" : key + ": " + drift);
    } else if (scope.config.update_goldens) {
      goldens.put(key, current);
    }
  }
}

namespace {

// One small size: every variant (the baseline first) against the reference, with the probes.
// `drawn`: Note [drawn held-out size]; a size the baseline itself cannot run is not the pair's,
// so it is noted and skipped rather than failed (and then no variant's result on it counts).
void verify_size(const judge_scope& scope, std::vector<variant_slot>& slots, const workload& work, bool drawn,
                 verify::golden_store& goldens, accuracy_ledger& accuracy) {
  const auto reference = scope.references.get(work, {scope.config.seed, input_values::declared, {}});
  if (!drawn) check_golden(scope, goldens, work);
  const auto& kind = work.kind == workload_kind::held_out ? verify::checks::held_out : verify::checks::reference;
  const std::string label = fmt::format("{} {}{}", workload_kind_name(work.kind), work.describe(), drawn ? " (drawn at run time)" : "");
  std::map<std::string, raw_outputs> outputs;
  std::map<std::string, bool> passed;
  std::mutex results;
  const auto verify_slot = [&](variant_slot& slot, std::vector<check_result>& checks) {
    try {
      const auto load = slot.worker->request({{"op", "load"}, {"workload", protocol::workload_to_json(work)}}, scope.config.worker_timeout_s);
      check_setup(scope.declared, *slot.runs, load.at("load"), slot.label, checks);
      auto call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".small");
      const bool ok = compare_outputs(scope.declared, work, call.outputs, *reference, nullptr, kind, label, slot.label, checks);
      check_call_probes(call.report, slot.label, any_unwritten(scope.declared, call), checks,
                        is_exec_pair(scope.declared.target()), scope.declared.threads_of(*slot.runs));
      const std::lock_guard lock(results);
      passed[slot.label] = ok;
      outputs[slot.label] = std::move(call.outputs);
    } catch (const worker_failure& failure) {
      const bool baseline_refused = drawn && slot.role == slot_role::baseline && failure.kind() != worker_failure_kind::cuda &&
                                    failure.kind() != worker_failure_kind::crash && failure.kind() != worker_failure_kind::timeout &&
                                    failure.kind() != worker_failure_kind::sandbox &&
                                    failure.kind() != worker_failure_kind::interrupted;
      if (!baseline_refused) throw;
      const std::lock_guard lock(results);
      passed["baseline"] = false;
    }
  };
  auto chosen = verified_slots(slots);
  std::vector<check_result> found;
  if (drawn) {  // the baseline alone first: the others run the size only if it is the pair's
    for_each_slot_concurrently({chosen.front()}, found, 1, verify_slot);
    bool clean = passed["baseline"];
    for (const auto& c : found) clean = clean && c.passed;
    if (!clean) {
      check_result note;
      note.check = "drawn-size";
      note.variant = "baseline";
      note.detail = label + ": the baseline does not pass it, so it is not a size of this pair; skipped";
      scope.checks.push_back(note);
      return;
    }
    chosen.erase(chosen.begin());
  }
  for_each_slot_concurrently(chosen, found, scope.config.judge_threads, verify_slot);
  scope.checks.insert(scope.checks.end(), found.begin(), found.end());
  check_ground_truth(scope, work, label, outputs, passed);
  if (passed["baseline"]) accuracy.record(scope.declared, label, outputs, *reference);
}

}  // namespace

void verify_small_sizes(const judge_scope& scope, std::vector<variant_slot>& slots, phase_timer& phases) {
  verify::golden_store goldens(scope.config.golden_file);
  accuracy_ledger accuracy;
  for (const auto& work : scope.declared.workloads()) {
    if (work.kind == workload_kind::benchmark) continue;
    if (work.kind == workload_kind::held_out && scope.config.skip_held_out) continue;
    verify_size(scope, slots, work, false, goldens, accuracy);
  }
  if (!scope.config.skip_held_out) {
    std::mt19937_64 entropy(secret_seed());
    if (const auto drawn = draw_held_out_size(scope.declared, entropy)) verify_size(scope, slots, *drawn, true, goldens, accuracy);
  }
  accuracy.judge(scope.declared, scope.checks);
  for (auto& slot : slots) {
    if (slot.role != slot_role::baseline) continue;
    slot.small_size_errors = accuracy.baseline_errors();  // Note [accuracy at the benchmark size]
    slot.small_size_rounded_errors = accuracy.baseline_rounded_errors();  // Note [error under the rounding]
  }
  if (scope.config.update_goldens) goldens.save();
  phases.lap("small_sizes");
  if (scope.config.skip_battery) return;  // `bench verify --skip-battery` (sanitizer runs only)
  const workload& battery = battery_workload(scope.declared);
  const bool wide = wide_challenge_applies(scope.declared);
  wide_outcomes wide_results;
  std::mutex recorded;
  for_each_slot_concurrently(verified_slots(slots), scope.checks, scope.config.judge_threads, [&](variant_slot& slot, std::vector<check_result>& checks) {
    run_challenges(scope.with_checks(checks), slot, battery);
    if (!wide) return;
    auto outcome = run_wide_challenge(scope.with_checks(checks), slot, battery);
    const std::lock_guard lock(recorded);
    wide_results[slot.label] = std::move(outcome);
  });
  judge_wide_outcomes(wide_results, scope.checks);
  const auto waived = levels_waived_for_a_candidate(wide_results);  // Note [a copy's domain]
  for (auto& slot : slots) {  // Note [wide inputs at the benchmark size]
    if (slot.role != slot_role::baseline || !wide_results.contains(slot.label)) continue;
    slot.wide_levels_passed.clear();
    slot.wide_levels_error.clear();
    for (const auto& outcome : wide_results.at(slot.label)) {
      const std::size_t level = slot.wide_levels_passed.size();
      slot.wide_levels_passed.push_back(outcome.passed && !outcome.waived && !(level < waived.size() && waived[level]));
      slot.wide_levels_error.push_back(outcome.rel_l2);
    }
  }
  phases.lap("battery");
}

void load_benchmark(const judge_scope& scope, std::vector<variant_slot>& slots) {
  const auto work = protocol::workload_to_json(benchmark_of(scope.declared, scope.config));
  // Setup and warmup are not timed samples (setup_s and warmup_s are reported, never judged).
  // One worker at a time: a setup may time things on the GPU (an autotuned library peer), and a
  // neighbour's setup on the same card would decide for it (Note [autotune margin] in cublaslt_plan.hpp).
  constexpr unsigned one_at_a_time = 1;
  for_each_slot_concurrently(all_slots(slots), scope.checks, one_at_a_time, [&](variant_slot& slot, std::vector<check_result>& checks) {
    const auto reply = slot.worker->request({{"op", "load"}, {"workload", work}, {"benchmark", true}}, scope.config.worker_timeout_s);
    const auto& load = reply.at("load");
    if (slot.role != slot_role::noise_twin) check_setup(scope.declared, *slot.runs, load, slot.label, checks);
    note_worker_state(slot, reply);  // Note [floating-point environment]: after the benchmark size's setup()
    slot.result.setup_s = load.at("setup_s").get<double>();
    slot.result.buffer_bytes = load.value("buffer_bytes", std::size_t{0});
    slot.result.warmup_s = load.at("warmup_s").get<double>();
    slot.result.calls_per_sample = load.at("calls_per_sample").get<int>();
    slot.result.notes = protocol::notes_from_json(load.value("notes", nlohmann::json::object())).all();
  });
}

void verify_against_baseline(const judge_scope& scope, std::vector<variant_slot>& slots, phase_timer& phases) {
  variant_slot* baseline = nullptr;
  for (auto& slot : slots) {
    if (slot.role == slot_role::baseline) baseline = &slot;
  }
  AISP_EXPECTS(baseline != nullptr, "no baseline slot");
  const workload work = benchmark_of(scope.declared, scope.config);
  // Fresh inputs no variant has seen: a result kept from earlier calls is stale here (Note [fresh calls]).
  const std::uint64_t input_seed = secret_seed();
  // Every worker's full-size call side by side (same inputs); the comparisons once all are back.
  std::map<std::string, verified_outputs, std::less<>> calls;
  std::mutex returned;
  for_each_slot_concurrently(verified_slots(slots), scope.checks, scope.config.judge_threads, [&](variant_slot& slot, std::vector<check_result>& checks) {
    auto call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".benchmark", input_seed);
    check_call_probes(call.report, slot.label, slot.role != slot_role::baseline && any_unwritten(scope.declared, call), checks,
                      is_exec_pair(scope.declared.target()), scope.declared.threads_of(*slot.runs));
    const std::lock_guard lock(returned);
    calls.emplace(slot.label, std::move(call));
  });
  const auto expected = widen_outputs(scope.declared, calls.at(baseline->label).outputs);
  const std::string label = "benchmark " + work.describe();
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate) continue;
    compare_outputs(scope.declared, work, calls.at(slot.label).outputs, expected, nullptr, verify::checks::baseline_match, label,
                    slot.label, scope.checks);
    check_benchmark_accuracy(scope.declared, slot.label, calls.at(slot.label).outputs, expected, baseline->small_size_errors,
                             baseline->small_size_rounded_errors, scope.checks);
  }
  check_wide_at_the_benchmark_size(scope, slots, work, *baseline, !baseline->scattered_during_sampling);
  phases.lap("comparison");
  // The baseline worker answers every slot's timed calls, each shared call once.
  check_timed_calls(scope, slots, *baseline);
  phases.lap("timed_calls");
}

}  // namespace aisp

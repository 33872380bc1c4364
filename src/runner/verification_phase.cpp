#include "runner/verification_phase.hpp"

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "runner/challenge_battery.hpp"
#include "runner/judge_checks.hpp"
#include "runner/pair_runner.hpp"
#include "runner/worker_protocol.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"
#include "verify/golden_store.hpp"
#include "verify/reference_runner.hpp"
#include "verify/tolerance.hpp"

namespace aisp {
namespace {

bool any_unwritten(const pair& declared, const raw_outputs& outputs) {
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
void check_golden(const judge_scope& scope, verify::golden_store& goldens, const workload& work,
                  const verify::reference_outputs& reference) {
  for (const auto& [output, values] : reference) {
    const auto key = verify::golden_store::key(scope.declared.target(), work.describe(), output, scope.config.seed);
    const auto current = verify::fingerprint_of(values, scope.config.seed);
    if (const auto* golden = goldens.find(key)) {
      const auto drift = verify::golden_drift(*golden, current);
      add_check(scope.checks, verify::checks::golden, "reference", drift.empty(),
                drift.empty() ? key + ": matches its golden" : key + ": " + drift);
    } else if (scope.config.update_goldens) {
      goldens.put(key, current);
    }
  }
}

void verify_small_sizes(const judge_scope& scope, std::vector<variant_slot>& slots) {
  verify::golden_store goldens(scope.config.golden_file);
  for (const auto& work : scope.declared.workloads()) {
    if (work.kind == workload_kind::benchmark) continue;
    if (work.kind == workload_kind::held_out && scope.config.skip_held_out) continue;
    const auto reference = verify::compute_reference(scope.declared, work, {scope.config.seed, false, {}});
    check_golden(scope, goldens, work, reference);
    const auto& kind = work.kind == workload_kind::held_out ? verify::checks::held_out : verify::checks::reference;
    const std::string label = fmt::format("{} {}", workload_kind_name(work.kind), work.describe());
    std::map<std::string, raw_outputs> outputs;
    std::map<std::string, bool> passed;
    for (auto& slot : slots) {
      if (slot.role == slot_role::noise_twin) continue;
      const auto load = slot.worker->request({{"op", "load"}, {"workload", protocol::workload_to_json(work)}}, scope.config.worker_timeout_s);
      check_setup(load.at("load"), slot.label, scope.checks);
      auto call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".small");
      passed[slot.label] = compare_outputs(scope.declared, work, call.outputs, reference, nullptr, kind, label, slot.label, scope.checks);
      check_call_probes(call.report, slot.label, any_unwritten(scope.declared, call.outputs), scope.checks);
      outputs[slot.label] = std::move(call.outputs);
    }
    check_ground_truth(scope, work, label, outputs, passed);
  }
  if (scope.config.update_goldens) goldens.save();
  if (scope.config.skip_battery) return;  // `bench verify --skip-battery` (sanitizer runs only)
  const workload& battery = battery_workload(scope.declared);
  for (auto& slot : slots) {
    if (slot.role != slot_role::noise_twin) run_challenges(scope, slot, battery);
  }
}

void load_benchmark(const judge_scope& scope, std::vector<variant_slot>& slots) {
  const auto work = protocol::workload_to_json(benchmark_of(scope.declared, scope.config));
  for (auto& slot : slots) {
    const auto reply = slot.worker->request({{"op", "load"}, {"workload", work}}, scope.config.worker_timeout_s);
    const auto& load = reply.at("load");
    if (slot.role != slot_role::noise_twin) check_setup(load, slot.label, scope.checks);
    slot.result.setup_s = load.at("setup_s").get<double>();
    slot.result.buffer_bytes = load.value("buffer_bytes", std::size_t{0});
    slot.result.warmup_s = load.at("warmup_s").get<double>();
    slot.result.calls_per_sample = load.at("calls_per_sample").get<int>();
  }
}

void verify_against_baseline(const judge_scope& scope, std::vector<variant_slot>& slots) {
  variant_slot* baseline = nullptr;
  for (auto& slot : slots) {
    if (slot.role == slot_role::baseline) baseline = &slot;
  }
  AISP_EXPECTS(baseline != nullptr, "no baseline slot");
  const workload work = benchmark_of(scope.declared, scope.config);
  const auto base_call = verified_call(*baseline, scope.config, scope.pair_dir + "/baseline.benchmark");
  check_call_probes(base_call.report, baseline->label, false, scope.checks);
  const auto expected = widen_outputs(scope.declared, base_call.outputs);
  const std::string label = "benchmark " + work.describe();
  for (auto& slot : slots) {
    if (slot.role == slot_role::noise_twin) continue;
    if (slot.role == slot_role::candidate) {
      const auto call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".benchmark");
      compare_outputs(scope.declared, work, call.outputs, expected, nullptr, verify::checks::baseline_match, label, slot.label, scope.checks);
      check_call_probes(call.report, slot.label, any_unwritten(scope.declared, call.outputs), scope.checks);
    }
    check_timed_calls(scope, slot, expected);
  }
}

}  // namespace aisp

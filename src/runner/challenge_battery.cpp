#include "runner/challenge_battery.hpp"

#include <cmath>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "results/terminal_table.hpp"
#include "runner/judge_checks.hpp"
#include "runner/worker_protocol.hpp"
#include "stats/summary.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"
#include "support/spread_positions.hpp"
#include "verify/reference_runner.hpp"
#include "verify/pattern_matches.hpp"
#include "verify/compare.hpp"
#include "verify/tolerance.hpp"

namespace aisp {

std::uint64_t challenge_seed(const run_config& config, std::uint64_t salt) {
  return buffer_stream_id(config.seed ^ (0xC4A11E46Eull * (salt + 1)), "challenge");
}

namespace {

constexpr int jitter_positions = 8;

using expected_map = std::map<std::string, std::vector<double>, std::less<>>;

bool outputs_differ(const expected_map& a, const expected_map& b) { return a != b; }

const verify::check_kind& jitter_kind(buffer_meaning meaning, bool partial) {
  if (meaning == buffer_meaning::mask) return verify::checks::jitter_mask;
  if (meaning == buffer_meaning::kv_cache) return verify::checks::jitter_cache;
  return partial ? verify::checks::jitter_partial : verify::checks::jitter;
}

// The new value of a jittered element: a clear change that stays in the buffer's range.
double jittered(const buffer_spec& spec, double old_value) {
  if (spec.meaning == buffer_meaning::mask || spec.init == init_distribution::uniform_unit) return old_value > 0.5 ? 0.0 : 1.0;
  if (spec.init == init_distribution::small_integers) return old_value >= 0 ? old_value - 3 : old_value + 3;
  return old_value >= 0 ? old_value - 0.75 : old_value + 0.75;
}

// The value a store into a buffer of `type` keeps (the worker's buffers hold the dtype, not fp64).
double stored_value(dtype type, double value) {
  std::vector<unsigned char> element(dtype_size(type));
  store_from_double(type, element.data(), 0, value);
  return load_as_double(type, element.data(), 0);
}

// The shape the jitter positions spread over (shape_of); the ranks of a per-rank input are the
// outermost axis.
std::vector<std::int64_t> jitter_extents(const judge_scope& scope, const workload& work, const buffer_spec& spec) {
  std::vector<std::int64_t> extents;
  if (!spec.same_on_every_rank && scope.declared.gpus() > 1) extents.push_back(scope.declared.gpus());
  const auto shape = shape_of(spec, work, spec.num_elements(work));
  extents.insert(extents.end(), shape.begin(), shape.end());
  return extents;
}

void jitter_buffer(const judge_scope& scope, variant_slot& slot, const workload& work, const buffer_spec& spec,
                   verify::reference_inputs& inputs) {
  // Note [ranks]: positions over every rank's elements (the rank group routes each write).
  // Note [spread positions]: spread over every axis of the buffer's declared shape.
  const auto positions = spread_positions(challenge_seed(scope.config, 7) ^ buffer_stream_id(0, spec.name),
                                          jitter_extents(scope, work, spec), static_cast<std::size_t>(jitter_positions));
  // Every perturbation is known before the first is tried: their references start now, on other
  // cores, while the worker runs the calls.
  auto values = verify::generate_inputs(scope.declared, work, inputs).at(spec.name);
  std::vector<verify::reference_inputs> steps;
  std::vector<std::pair<double, double>> changes;  // old and new value of each step's element
  for (std::size_t position : positions) {
    const double old_value = values[position];
    const double new_value = jittered(spec, old_value);
    values[position] = stored_value(spec.type, new_value);
    steps.push_back(steps.empty() ? inputs : steps.back());
    steps.back().overrides.push_back({spec.name, position, new_value});
    changes.emplace_back(old_value, new_value);
    scope.references.prefetch(work, steps.back());
  }
  auto reference = scope.references.get(work, inputs);
  auto previous = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".jitter").outputs;
  int moved_and_right = 0;
  int stuck = 0;  // the reference moved, the output did not
  int wrong = 0;  // the output moved, but not to the reference
  std::string first_failure;
  for (std::size_t step = 0; step < steps.size(); ++step) {
    const std::size_t position = positions[step];
    const auto [old_value, new_value] = changes[step];
    slot.worker->request({{"op", "set_element"}, {"buffer", spec.name}, {"index", position}, {"value", new_value}},
                         scope.config.worker_timeout_s);
    const auto updated_reference = scope.references.get(work, steps[step]);
    auto call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".jitter");
    if (!outputs_differ(*updated_reference, *reference)) {  // this element does not matter to the math
      previous = std::move(call.outputs);
      continue;
    }
    std::vector<check_result> scratch;
    const bool right = compare_outputs(scope.declared, work, call.outputs, *updated_reference, nullptr,
                                       verify::checks::jitter, "", slot.label, scratch);
    if (right) {
      ++moved_and_right;
    } else if (same_bytes(call.outputs, previous)) {
      ++stuck;
      if (first_failure.empty()) first_failure = fmt::format("{}[{}] {} -> {} left the output unchanged", spec.name, position, old_value, new_value);
    } else {
      ++wrong;
      if (first_failure.empty()) first_failure = fmt::format("{}[{}] {} -> {}: {}", spec.name, position, old_value, new_value, scratch.back().detail);
    }
    reference = updated_reference;
    previous = std::move(call.outputs);
  }
  if (!steps.empty()) inputs = steps.back();
  const int failed = stuck + wrong;
  // Stuck for some elements while moving for others: part of the input is ignored.
  const int moved = moved_and_right + wrong;
  const bool partial = stuck > 0 && moved > 0;
  const auto& kind = stuck == 0 && failed > 0 ? verify::checks::jitter_wrong : jitter_kind(spec.meaning, partial);
  const auto detail = failed == 0 ? fmt::format("{}: {} perturbed elements, output followed each", spec.name, moved_and_right)
                                  : fmt::format("{} of {} perturbations failed ({} left the output unchanged); first: {}", failed,
                                                failed + moved_and_right, stuck, first_failure);
  add_check(scope.checks, kind, slot.label, failed == 0, detail);
  // Stuck for most, moved for fewer: also a cache keyed by the positions that moved it (it
  // recomputes only when one of them is perturbed), which `jitter` names. A cache keyed by x[0]
  // was caught only as W8 whenever the positions hit x[0] (1 run in ~125).
  if (&kind == &verify::checks::jitter_partial && stuck > moved) add_check(scope.checks, verify::checks::jitter, slot.label, false, detail);
}

void fresh_inputs_check(const judge_scope& scope, variant_slot& slot, const workload& work, bool warm,
                        const verify::reference_inputs& fresh, const verify::check_kind& kind) {
  slot.worker->request({{"op", "load"}, {"workload", protocol::workload_to_json(work)}, {"warmup", warm}},
                       scope.config.worker_timeout_s);
  if (warm) slot.worker->request({{"op", "sample"}, {"count", 3}}, scope.config.worker_timeout_s);
  slot.worker->request({{"op", "refill"}, {"seed", fresh.seed}}, scope.config.worker_timeout_s);
  const auto call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".fresh");
  const auto reference = scope.references.get(work, fresh);
  compare_outputs(scope.declared, work, call.outputs, *reference, nullptr, kind, std::string(kind.what), slot.label, scope.checks);
}

// JSON has no NaN: the worker's NaN arrives as null, and stays a NaN (a failure) here.
std::vector<double> json_values(const nlohmann::json& list) {
  std::vector<double> values;
  for (const auto& v : list) values.push_back(v.is_number() ? v.get<double>() : NAN);
  return values;
}

std::vector<verify::pattern_match> listed_pattern_matches(const nlohmann::json& fingerprint, const std::string& buffer) {
  std::vector<verify::pattern_match> listed;
  if (!fingerprint.contains("pattern_matches") || !fingerprint["pattern_matches"].contains(buffer)) return listed;
  for (const auto& row : fingerprint["pattern_matches"][buffer]) {
    verify::pattern_match match{row.at(0).get<std::size_t>(), std::nullopt};
    if (row.at(1).is_number()) match.value = row.at(1).get<double>();
    listed.push_back(match);
  }
  return listed;
}

// Note [non-integer challenge]: an exact-math pair is bitwise exact on small integers, and so is a
// TF32 or bf16 downgrade of it (small integers fit their mantissas). On non-integer inputs the
// downgrade shows: each output's relative L2 error against the fp64 reference must stay within
// what its own dtype's arithmetic leaves (a bound per dtype, ~100x its unit roundoff for fp32);
// TF32 leaves ~1e-3, bf16 ~1e-2.
double non_integer_bound(dtype type) {
  switch (type) {
    case dtype::f64: return 1e-12;
    case dtype::f32: return 3e-5;
    case dtype::f16: return 4e-3;
    case dtype::bf16: return 3e-2;
    default: return 0;  // integers and 8-bit floats: no bound finer than the pair's own tolerance
  }
}

void non_integer_challenge(const judge_scope& scope, variant_slot& slot, const workload& work) {
  const verify::reference_inputs inputs{challenge_seed(scope.config, 5), input_values::non_integers, {}};
  slot.worker->request({{"op", "refill"}, {"seed", inputs.seed}, {"values", "non_integers"}}, scope.config.worker_timeout_s);
  const auto call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".nonint", std::nullopt, secret_seed());
  const auto reference = scope.references.get(work, inputs);
  for (const auto& spec : scope.declared.buffers()) {
    if (spec.role != buffer_role::output || non_integer_bound(spec.type) == 0) continue;
    // A variant that declares its precision change is held to the tolerance it declared with it.
    const auto& declared_change = slot.runs->precision_tolerance;
    const tolerance relative = declared_change ? *declared_change
                                               : tolerance{1e300, 1e300, non_integer_bound(spec.type),
                                                           "non-integer challenge: relative L2 error of the dtype's own arithmetic"};
    const auto outcome = verify::compare_output(spec.name, spec.type, call.outputs.at(spec.name), reference->at(spec.name), relative);
    add_check(scope.checks, verify::checks::non_integers, slot.label, outcome.passed(),
              fmt::format("non-integer inputs: {}", outcome.describe()));
  }
}

}  // namespace

std::uint64_t secret_seed() {
  static thread_local std::mt19937_64 entropy{[] {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }()};
  return entropy();
}


void run_challenges(const judge_scope& scope, variant_slot& slot, const workload& work) {
  const verify::reference_inputs after_setup{challenge_seed(scope.config, 1), input_values::declared, {}};
  fresh_inputs_check(scope, slot, work, false, after_setup, verify::checks::fresh_after_setup);
  verify::reference_inputs current{challenge_seed(scope.config, 2), input_values::declared, {}};
  fresh_inputs_check(scope, slot, work, true, current, verify::checks::fresh_after_warmup);

  // Determinism: the same inputs twice. Reported, never failed: atomics legitimately reorder.
  const auto first = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".det");
  const auto second = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".det");
  check_result determinism;
  determinism.check = "determinism";
  determinism.variant = slot.label;
  determinism.detail = same_bytes(first.outputs, second.outputs) ? "bitwise identical on a re-run"
                                                                 : "re-run differs bitwise (allowed: reordered reductions)";
  scope.checks.push_back(determinism);

  for (const auto& spec : scope.declared.buffers()) {
    // A derived input follows its source's jitter (Note [derived inputs]); it is never jittered itself.
    if (spec.role == buffer_role::input && spec.derived_from.empty() && dtype_is_float(spec.type)) {
      jitter_buffer(scope, slot, work, spec, current);
    }
  }

  const verify::reference_inputs moved{challenge_seed(scope.config, 3), input_values::declared, {}};
  slot.worker->request({{"op", "readdress"}, {"seed", moved.seed}}, scope.config.worker_timeout_s);
  const auto call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".moved");
  compare_outputs(scope.declared, work, call.outputs, *scope.references.get(work, moved), nullptr,
                  verify::checks::new_address, "same data at new addresses", slot.label, scope.checks);

  if (scope.declared.is_exact_math()) {
    const verify::reference_inputs exact{challenge_seed(scope.config, 4), input_values::exact_integers, {}};
    slot.worker->request({{"op", "refill"}, {"seed", exact.seed}, {"values", "exact_integers"}}, scope.config.worker_timeout_s);
    // Note [challenge calls filled as timed ones] (benchmark_challenges.cpp)
    const auto exact_call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + ".exact", std::nullopt, secret_seed());
    const tolerance bitwise{0, 0, 0, "exact-integer challenge: bitwise"};
    compare_outputs(scope.declared, work, exact_call.outputs, *scope.references.get(work, exact), &bitwise,
                    verify::checks::exact_integers, "exact-integer inputs, bitwise", slot.label, scope.checks);
    non_integer_challenge(scope, slot, work);
  }
}

namespace {

// The baseline's answer for one verified call: values at the probe positions, and at
// every listed index any worker asked about, by buffer; and how long its call took.
struct call_truth {
  nlohmann::json values;
  std::map<std::string, std::map<std::size_t, double>, std::less<>> at_index;
  double call_s = 0;
};

using call_key = std::pair<std::uint64_t, std::uint64_t>;  // input seed, positions seed

call_key key_of(const nlohmann::json& fingerprint) {
  return {fingerprint.at("input_seed").get<std::uint64_t>(), fingerprint.at("positions_seed").get<std::uint64_t>()};
}

// One truth per distinct call (input seed and probe positions), asked once with the union of the
// indices the workers listed.
std::map<call_key, call_truth> truths_for(const judge_scope& scope, const std::vector<variant_slot>& slots, variant_slot& baseline) {
  std::map<call_key, std::map<std::string, std::set<std::size_t>>> asked;
  std::set<call_key> fresh;  // Note [input reuse]: verified on fresh inputs, a fixed-inputs pair too
  for (const auto& slot : slots) {
    if (slot.role == slot_role::noise_twin) continue;
    for (const auto& fingerprint : slot.timed_fingerprints) {
      if (fingerprint.value("fresh_inputs", false)) fresh.insert(key_of(fingerprint));
      auto& indices = asked[key_of(fingerprint)];
      for (const auto& spec : scope.declared.buffers()) {
        if (spec.role != buffer_role::output) continue;
        auto& listed = indices[spec.name];
        for (const auto& match : listed_pattern_matches(fingerprint, spec.name)) listed.insert(match.index);
      }
    }
  }
  std::map<call_key, call_truth> truths;
  for (const auto& [key, indices] : asked) {
    nlohmann::json extra = nlohmann::json::object();
    for (const auto& [name, listed] : indices) extra[name] = std::vector<std::size_t>(listed.begin(), listed.end());
    const auto reply = baseline.worker->request({{"op", "truth"},
                                                 {"input_seed", key.first},
                                                 {"positions_seed", key.second},
                                                 {"count", timed_call_probes},
                                                 {"extra", extra},
                                                 {"fresh_inputs", fresh.count(key) > 0}},
                                                scope.config.worker_timeout_s);
    auto& truth = truths[key];
    truth.values = reply.at("values");
    truth.call_s = reply.value("call_s", 0.0);
    for (const auto& [name, listed] : indices) {
      const auto values = json_values(reply.at("extra").at(name));
      std::size_t j = 0;
      for (const std::size_t index : listed) truth.at_index[name][index] = j < values.size() ? values[j++] : std::nan("");
    }
  }
  return truths;
}

std::string timed_call_problem(const judge_scope& scope, const variant_slot& slot, const nlohmann::json& fingerprint,
                               const call_truth& truth) {
  for (const auto& spec : scope.declared.buffers()) {
    if (spec.role != buffer_role::output) continue;
    const auto tol = verify::effective_tolerance(scope.declared, spec.type, slot.label);
    const auto listed = listed_pattern_matches(fingerprint, spec.name);
    std::vector<double> at_listed;
    for (const auto& match : listed) at_listed.push_back(truth.at_index.at(spec.name).at(match.index));
    const auto unwritten =
        verify::truly_unwritten_listed(fingerprint.at("unwritten").at(spec.name).get<std::size_t>(), listed, at_listed, tol);
    if (unwritten > 0) return fmt::format("{}: {} elements never written", spec.name, unwritten);
    const auto all_ranks = json_values(truth.values.at(spec.name));
    const auto got = json_values(fingerprint.at("probe_values").at(spec.name));
    // A host rank's own verified sample (rank_merge.cpp) reads its share of the ranks' joined truth.
    const std::size_t from = std::min(all_ranks.size(), fingerprint.value("rank", std::size_t{0}) * got.size());
    const std::vector<double> want(all_ranks.begin() + static_cast<std::ptrdiff_t>(from), all_ranks.end());
    const double floor = verify::finite_rms(want);  // the probes are a random sample: their RMS, the output's
    for (std::size_t j = 0; j < want.size() && j < got.size(); ++j) {
      if (!(std::abs(got[j] - want[j]) <= verify::element_bound(tol, want[j], floor)))
        return fmt::format("{} probe {}: the baseline gives {:.9g} on the same inputs, this call {:.9g}", spec.name, j, want[j],
                           got[j]);
    }
  }
  return {};
}

// Note [timed slower]
// A variant sees which request it serves (its worker's stdin buffer holds it: Note [verified
// after the call]), so a baseline could run slower in its timed samples than anywhere else and
// lend every candidate a speedup no correctness check sees. The truths for the verified samples
// are the baseline's calls too, taken as timed samples are (flush, launch gate, events, batch)
// but answering a "truth" request: where there are at least min_truths_timed and the
// baseline's timed median is over the bound x their median, it fails `timed-slower`. The truths
// run after sampling, one at a time, warm. On the device the two read alike: 0.82-1.11x over
// every single-GPU pair of the lab, labs/decode's host-launched loops and a PyTorch pair (H200
// GPU-3d9dcaf6, 2026-12-04; docs/results/raw/timed-slower-lab-h200-2026-12-04.txt.gz), so 1.3x. A host
// pair's timed samples share the CPUs with the rest of the machine: honest baselines read up to
// 1.70x in the planted suite's 0.3 s runs on a loaded 2-core machine, so 3x there.
constexpr std::size_t min_truths_timed = 5;
constexpr std::size_t min_timed_samples = 10;
constexpr double timed_slower_device_bound = 1.3;
constexpr double timed_slower_host_bound = 3.0;
// Note [interleaved truths] (sampling_rounds.cpp): a host baseline's truths taken between the
// rounds met the same load as its samples. 150 honest host baselines read 0.76-1.12x on them on
// the 2-core CI machine, loaded by a compiler beside the suites (the cheats suite's baselines and
// the integration suite's host runs, 2026-12-04), so 1.5x: `cheats:s2_baseline_two_and_a_half_times_slower_when_timed`
// reads 1.91-2.35x and fails (twice as slow read 1.46-1.91x: too near the bound for a fixture).
constexpr double interleaved_truth_host_bound = 1.5;

void check_timed_slower(const judge_scope& scope, const std::map<call_key, call_truth>& truths, const variant_slot& baseline) {
  std::vector<double> truth_s;
  const bool interleaved = scope.declared.where() == backend::host && baseline.interleaved_truth_s.size() >= min_truths_timed;
  if (interleaved) {
    truth_s = baseline.interleaved_truth_s;
  } else {
    for (const auto& [key, truth] : truths) {
      if (truth.call_s > 0) truth_s.push_back(truth.call_s);
    }
  }
  std::vector<double> timed_s;
  for (const auto& s : baseline.result.samples) timed_s.push_back(s.duration_s);
  // `bench verify` samples a token (3 calls): on a freshly started device machine, outside load
  // in its first minutes put ch01:batched_launches' three timed samples at 1.77x its truths (H200
  // GPU-8bf5ee84, 2026-12-04). A median is judged from min_timed_samples on, as S5 asks of a speedup.
  if (truth_s.size() < min_truths_timed || timed_s.size() < min_timed_samples) return;
  const double timed = stats::summarize(timed_s).median;
  const double untimed = stats::summarize(truth_s).median;
  const double ratio = untimed > 0 ? timed / untimed : 0.0;
  const double bound = scope.declared.where() == backend::cuda ? timed_slower_device_bound
                       : interleaved                            ? interleaved_truth_host_bound
                                                                : timed_slower_host_bound;
  add_check(scope.checks, verify::checks::timed_slower, baseline.label, ratio <= bound,
            fmt::format("timed median {} against {} in {} truth calls taken the same way{} ({:.2f}x; at most {:.2f}x)",
                        format_duration(timed), format_duration(untimed), truth_s.size(),
                        interleaved ? ", between the sampling rounds" : "", ratio, bound));
}

}  // namespace

void check_timed_calls(const judge_scope& scope, const std::vector<variant_slot>& slots, variant_slot& baseline) {
  const auto truths = truths_for(scope, slots, baseline);
  check_timed_slower(scope, truths, baseline);
  for (const auto& slot : slots) {
    if (slot.role == slot_role::noise_twin) continue;
    for (const auto& fingerprint : slot.timed_fingerprints) {
      const auto problem = timed_call_problem(scope, slot, fingerprint, truths.at(key_of(fingerprint)));
      add_check(scope.checks, verify::checks::timed_call, slot.label, problem.empty(),
                problem.empty() ? fmt::format("timed sample {} verified", fingerprint.at("index").get<int>())
                                : fmt::format("timed sample {}: {}", fingerprint.at("index").get<int>(), problem));
    }
  }
}

}  // namespace aisp

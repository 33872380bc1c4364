#include "runner/benchmark_challenges.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runner/challenge_battery.hpp"
#include "runner/slot_threads.hpp"
#include "support/scattered_values.hpp"

namespace aisp {

std::string challenge_inputs::name() const { return scattered.empty() ? input_values_name(values) : "scattered"; }

// Note [scattered challenge values]
// Every challenge level is recognisable from a few of its elements (all of them wide, or on a
// grid, or not integers), so a candidate that reads its inputs can run honest code on exactly the
// challenge calls: red team seventeen's row mode took the minimum unless x[0] * 16 was a whole
// number (103.7x), and its i0 ran a 5-term series unless one of the first 64 inputs was past 1
// (12.9x), every check passing (2026-12-05). So after the levels, one more call at the benchmark
// size: the declared draws, but for scattered_per_level elements of each input a level,
// at secret positions, that carry the asked levels' values (scaled, non-integer, or a copy of an
// element a few places before, so two values of a row repeat without either standing out). A
// test of a few elements finds none of them, and the fast code then answers them wrong; a
// candidate must look at every input to find them, and one that does and answers them rightly
// is correct code (a fast path for inputs in range is an honest optimisation). Judged like the
// levels: each candidate's relative L2 distance from the baseline's answer. Half the scattered
// repeats copy an element 16 to 2^16 places back (log-uniform): with all of them at most 16 apart,
// a candidate that compared every element with the 16 before it and ran the exact code only then
// stayed wrong on repeats farther apart, which no call asked (red team seventeen's lead).
std::vector<input_values> scattered_levels(const pair& declared, const std::vector<bool>& baseline_levels) {
  std::vector<input_values> asked;
  for (std::size_t level = 0; level < std::size(wide_levels) && level < baseline_levels.size(); ++level)
    if (baseline_levels[level]) asked.push_back(wide_levels[level]);
  if (declared.is_exact_math()) asked.push_back(input_values::non_integers);
  std::vector<input_values> carried;
  for (const auto level : asked)
    if (std::any_of(declared.buffers().begin(), declared.buffers().end(), [level](const buffer_spec& spec) { return scatters(spec, level); }))
      carried.push_back(level);
  return carried;
}

namespace {

std::string scattered_label(const std::vector<input_values>& levels) {
  std::string names;
  for (const auto level : levels) {
    const std::string what = level == input_values::repeated       ? "repeats"
                             : level == input_values::non_integers ? "non-integers"
                                                                   : fmt::format("x{:g}", wide_input_scale(level));
    names += fmt::format("{}{} {}", names.empty() ? "" : ", ", scattered_per_level, what);
  }
  return "declared inputs but for, at secret places in each, " + names;
}

// The check a challenge call judges: `non-integers` where it carries nothing else.
const verify::check_kind& check_of(const challenge_inputs& inputs) {
  const auto only_non_integers = [](const std::vector<input_values>& levels) {
    return std::all_of(levels.begin(), levels.end(), [](input_values v) { return v == input_values::non_integers; });
  };
  const bool non_integers =
      inputs.scattered.empty() ? inputs.values == input_values::non_integers : only_non_integers(inputs.scattered);
  return non_integers ? verify::checks::non_integers : verify::checks::wide_inputs;
}

}  // namespace

// Note [challenge calls filled as timed ones]
// Every verified call poisoned the outputs first, and seven timed calls in eight get a random
// pattern instead (Note [fresh calls], harness/call_fill.hpp): a candidate that ran its exact
// code only where its outputs held the poison, and a shortcut right only on the declared draws
// elsewhere, met the exact code in every challenge and the shortcut in most timed calls, whose
// inputs the shortcut gets right. So the calls of the challenges that look for such shortcuts
// (wide, wider, repeated, scattered, non-integer and exact-integer inputs, at both sizes) get
// the random pattern, from a secret seed, that most timed calls get: a candidate can no longer
// tell them from those, and one that runs its shortcut on pattern-filled outputs answers every
// such challenge with it. (Never the poison there: the timed calls it marks are too few to time
// a shortcut on.) An element left unwritten then holds random bytes, a wrong value to the
// comparison rather than an unwritten one. The other verified calls keep the poison: their
// inputs are the declared draws, which such a shortcut answers rightly anyway.

challenge_answers ask_verified_workers(const judge_scope& scope, std::vector<variant_slot>& slots, const challenge_inputs& inputs,
                                        std::uint64_t seed, const std::string& tag) {
  // Note [challenge refills on the device] (buffer_store.cpp): no reference reads these inputs.
  nlohmann::json refill = {{"op", "refill"}, {"seed", seed}, {"values", input_values_name(inputs.values)}, {"where_they_live", true}};
  for (const auto level : inputs.scattered) refill["scattered"].push_back(input_values_name(level));
  challenge_answers answers;
  std::mutex returned;
  for_each_slot_concurrently(verified_slots(slots), scope.checks, scope.config.judge_threads, [&](variant_slot& slot, std::vector<check_result>&) {
    slot.worker->request(refill, scope.config.worker_timeout_s);
    auto call = verified_call(slot, scope.config, scope.pair_dir + "/" + slot.label + "." + tag + "." + inputs.name(), std::nullopt,
                              secret_seed());
    // The declared inputs back (a fixed-inputs pair's own): the samples, truths and traffic read them next.
    slot.worker->request({{"op", "restore_inputs"}, {"seed", secret_seed()}}, scope.config.worker_timeout_s);
    const std::lock_guard lock(returned);
    answers.emplace(slot.label, std::move(call.outputs));
  });
  return answers;
}

std::map<std::string, wide_outcome> against_the_baseline(const judge_scope& scope, const std::vector<variant_slot>& slots,
                                                         const challenge_answers& answers, double baseline_rel_l2) {
  std::map<std::string, wide_outcome> outcomes;
  const variant_slot* baseline = nullptr;
  for (const auto& slot : slots) baseline = slot.role == slot_role::baseline ? &slot : baseline;
  if (baseline == nullptr || !answers.contains(baseline->label)) return outcomes;
  const auto truth = widen_outputs(scope.declared, answers.at(baseline->label));
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate || !answers.contains(slot.label)) continue;
    wide_outcome outcome;
    for (const auto& spec : scope.declared.buffers()) {
      if (spec.role != buffer_role::output) continue;
      const auto& expected = truth.at(spec.name);
      if (!std::all_of(expected.begin(), expected.end(), [](double v) { return std::isfinite(v); })) continue;
      add_comparison(outcome, compare_by_l2(scope.declared, spec, slot.label, answers.at(slot.label).at(spec.name), expected), "");
    }
    if (outcome.detail.empty()) continue;
    if (!outcome.passed && within_the_baselines_error(outcome, baseline_rel_l2)) {  // Note [honest reorders]
      outcome.passed = true;
      outcome.detail += honest_reorder_note(baseline_rel_l2);  // the baseline's small-size error
    }
    outcomes.emplace(slot.label, std::move(outcome));
  }
  return outcomes;
}

// Note [wide inputs at the benchmark size]
// The wide challenge runs at one small size, and a candidate can tell the sizes apart: a red
// team's candidate computed torch.special.i0 by a 4-term series, right only on [-1, 1), at the
// benchmark size alone and the exact code at every other size, and read 24.2x faster with every
// check passing: at the benchmark size every input is drawn from [-1, 1) (round thirteen,
// 2026-12-05). So the levels the baseline passed at the small size are asked again at the
// benchmark size, of every verified worker on the same wide inputs. No fp64 reference is
// computed at that size: the baseline's answer is the truth there, as for baseline-match, and a
// candidate whose relative L2 distance from it passes its bound fails `wide-inputs`. An output
// the baseline leaves non-finite at that size is not the pair's domain there and judges nobody.
void check_wide_at_the_benchmark_size(const judge_scope& scope, std::vector<variant_slot>& slots, const workload& work,
                                      const variant_slot& baseline, bool scattered_call) {
  const auto& baseline_levels = baseline.wide_levels_passed;
  std::vector<challenge_inputs> asked;
  std::vector<double> errors;  // the baseline's small-size error at each asked level (0: none known)
  for (std::size_t level = 0; level < std::size(wide_levels) && level < baseline_levels.size(); ++level)
    if (baseline_levels[level] && reshapes_some(scope.declared, wide_levels[level])) {
      asked.push_back({wide_levels[level], {}});
      errors.push_back(level < baseline.wide_levels_error.size() ? baseline.wide_levels_error[level] : 0.0);
    }
  // Note [non-integers at the benchmark size]: an exact-math pair's non-integer challenge ran at
  // one small size, and red team sixteen's candidate sorted each row by counting its small-integer
  // values at the benchmark size alone (torch.sort everywhere else): 4.66x with every check
  // passing (2026-12-05). Asked again here like the wide levels, against the baseline's answer.
  if (scope.declared.is_exact_math()) asked.push_back({input_values::non_integers, {}});
  if (auto scattered = scattered_levels(scope.declared, baseline_levels); scattered_call && !scattered.empty())
    asked.push_back({input_values::declared, std::move(scattered)});
  std::uint64_t salt = 16;
  for (std::size_t i = 0; i < asked.size(); ++i) {
    const auto& inputs = asked[i];
    const auto answers = ask_verified_workers(scope, slots, inputs, challenge_seed(scope.config, salt++), "benchmark");
    const std::string label = !inputs.scattered.empty()                      ? scattered_label(inputs.scattered)
                              : inputs.values == input_values::non_integers ? std::string("non-integer inputs")
                                                                            : level_label(inputs.values);
    for (const auto& [candidate, outcome] : against_the_baseline(scope, slots, answers, i < errors.size() ? errors[i] : 0.0))
      add_check(scope.checks, check_of(inputs), candidate, outcome.passed,
                fmt::format("benchmark {}, {}, against the baseline's answer: {}", work.describe(), label, outcome.detail));
  }
}

// Note [challenges during sampling]
// The benchmark size's challenges run after the sampling, so a candidate could take its shortcut
// in every sampled call and its exact code from some point after them (a count of calls, a pause
// longer than any between samples): the late look (sampling_rounds.cpp) catches a candidate slower
// later, not one right later. So the scattered call (Note [scattered challenge values]) is also
// asked between the sampling rounds, at rounds drawn as a reservoir draws: after round r >= 1
// with chance 1 / (r + 1), so the last call asked is as likely to follow any round as any other,
// however many there are (about ln(rounds) - 0.4 are asked, at most most_calls: three). Every
// verified worker answers each, and each candidate is held to the baseline's answer once sampling
// is over; the scattered call after the sampling is then not asked again. (Six a run from round
// 0, with the x1024 level, took the local suites from 1,610 s to 1,771 s on this 2-core machine,
// 2026-12-05: hence from round 1, at most three, and the one after sampling only where none came.)
sampling_challenges::sampling_challenges(const judge_scope& scope, std::vector<variant_slot>& slots, const std::vector<bool>& baseline_levels)
    : scope_(scope), slots_(slots), inputs_{input_values::declared, scattered_levels(scope.declared, baseline_levels)} {}

void sampling_challenges::between_rounds(int round) {
  if (inputs_.scattered.empty() || round == 0 || static_cast<int>(rounds_.size()) >= most_calls) return;
  if (secret_seed() % static_cast<std::uint64_t>(round + 1) != 0) return;
  rounds_.push_back(round);
  answers_.push_back(ask_verified_workers(scope_, slots_, inputs_, secret_seed(), fmt::format("sampling{}", round)));
  // A fixed-inputs pair's timed calls never change its inputs, and the challenge changed them and
  // put them back: one untimed call on them, so the next round times the pair's calls, not a
  // variant's first look at inputs that changed (a fixed-inputs baseline that redoes its work on
  // changed inputs read three outliers in fifteen samples, cheats:o2_baseline_burns_on_fresh_inputs,
  // 2026-12-06). Other pairs' timed calls draw fresh inputs each time anyway.
  if (scope_.declared.has_fixed_inputs())
    for (auto* slot : verified_slots(slots_))
      slot->worker->request({{"op", "soak"}, {"count", 1}, {"most_s", 1.0}}, scope_.config.worker_timeout_s);
}

void sampling_challenges::judge(const workload& work) const {
  std::map<std::string, wide_outcome> judged;
  for (std::size_t call = 0; call < answers_.size(); ++call) {
    for (auto& [candidate, outcome] : against_the_baseline(scope_, slots_, answers_[call], 0.0)) {
      auto& kept = judged[candidate];
      if (!kept.passed) continue;  // the first failure speaks
      kept.passed = outcome.passed;
      kept.detail = outcome.passed ? outcome.detail : fmt::format("after round {}: {}", rounds_[call], outcome.detail);
    }
  }
  for (const auto& [candidate, outcome] : judged)
    add_check(scope_.checks, check_of(inputs_), candidate, outcome.passed,
              fmt::format("benchmark {}, {} calls between the sampling rounds ({}), {}, against the baseline's answer: {}",
                          work.describe(), answers_.size(), fmt::join(rounds_, ", "), scattered_label(inputs_.scattered),
                          outcome.passed ? "every call within its bound; the last: " + outcome.detail : outcome.detail));
}

}  // namespace aisp

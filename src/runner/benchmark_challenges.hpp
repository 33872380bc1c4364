// The domain challenges asked at the benchmark size, where the baseline's answer is the truth:
// the levels the baseline passed at the small size (Note [wide inputs at the benchmark size]),
// one call with a few of their values scattered among declared draws (Note [scattered challenge
// values]), and such calls between the sampling rounds (Note [challenges during sampling]).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/candidate_accuracy.hpp"
#include "runner/judge_checks.hpp"
#include "runner/verification_phase.hpp"
#include "support/seeded_fill.hpp"
#include "verify/battery.hpp"

namespace aisp {

// What one challenge call's inputs hold: `values` everywhere, and for a scattered call a few
// elements of each of the `scattered` levels among them.
struct challenge_inputs {
  input_values values = input_values::declared;
  std::vector<input_values> scattered;
  // The output files' infix: the level's name, or "scattered".
  [[nodiscard]] std::string name() const;
};

// The levels a scattered call carries for a pair whose baseline passed `baseline_levels` (one
// flag a wide level) at the small size, and an exact-math pair's non-integers, where they
// scatter into some input; empty: no scattered call.
[[nodiscard]] std::vector<input_values> scattered_levels(const pair& declared, const std::vector<bool>& baseline_levels);

// Every verified worker's outputs for one call on `inputs` drawn from `seed`, by slot label; the
// outputs are filled as a timed call's (Note [challenge calls filled as timed ones]), and the
// declared inputs are back afterwards.
using challenge_answers = std::map<std::string, raw_outputs, std::less<>>;
[[nodiscard]] challenge_answers ask_verified_workers(const judge_scope& scope, std::vector<variant_slot>& slots,
                                                     const challenge_inputs& inputs, std::uint64_t seed, const std::string& tag);

// Each candidate's answers against the baseline's, held to its relative L2 bound, raised to
// honest_reorder_factor times `baseline_rel_l2` (the baseline's small-size error at the level,
// Note [honest reorders]; 0: none), by candidate label; an output the baseline left non-finite
// judges nobody, and a candidate with nothing judged is absent.
[[nodiscard]] std::map<std::string, wide_outcome> against_the_baseline(const judge_scope& scope, const std::vector<variant_slot>& slots,
                                                                       const challenge_answers& answers, double baseline_rel_l2);

// Note [wide inputs at the benchmark size]: the levels the baseline passed at the small size, run
// again by every verified worker (loaded at the benchmark size) on the same wide inputs, each
// candidate held to its L2 bound against the baseline's answer; then the scattered call. The
// inputs are refilled with declared values afterwards. `baseline`: its slot, with whether it
// passed each level at the small size and its error there; `scattered`: whether to ask the
// scattered call too (not where the sampling asked it already).
void check_wide_at_the_benchmark_size(const judge_scope& scope, std::vector<variant_slot>& slots, const workload& work,
                                      const variant_slot& baseline, bool scattered = true);

// Note [challenges during sampling]: scattered calls between the sampling rounds, at rounds no
// variant can foresee, judged once sampling is over.
class sampling_challenges {
 public:
  sampling_challenges(const judge_scope& scope, std::vector<variant_slot>& slots, const std::vector<bool>& baseline_levels);
  // After a round's visits (the first excepted): with chance 1 / (round + 1), and at most
  // most_calls times, one scattered call of every verified worker.
  void between_rounds(int round);
  // One `wide-inputs` (or `non-integers`) check a candidate, over every call taken.
  void judge(const workload& work) const;
  [[nodiscard]] bool asked_any() const { return !answers_.empty(); }

 private:
  static constexpr int most_calls = 3;
  judge_scope scope_;
  std::vector<variant_slot>& slots_;
  challenge_inputs inputs_;
  std::vector<int> rounds_;
  std::vector<challenge_answers> answers_;
};

}  // namespace aisp

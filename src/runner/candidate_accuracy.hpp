// Two checks that hold a candidate to the baseline's accuracy and to the baseline's domain:
// a candidate far less accurate than the baseline on the same inputs, where the pair's own
// tolerance would let it pass (Note [accuracy against the baseline]), and a candidate right only
// on the inputs the harness usually draws (Note [wide inputs]).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/judge_checks.hpp"
#include "runner/verification_phase.hpp"
#include "support/seeded_fill.hpp"
#include "verify/compare.hpp"

namespace aisp {

// ---- Note [accuracy against the baseline] ----

// A candidate is held to accuracy_factor times the baseline's relative L2 error at a size, and
// never below its dtype's default bound on it (default_tolerance's max_rel_l2).
inline constexpr double accuracy_factor = 16.0;

struct size_error {
  std::string size;  // "validation n=1000"
  double candidate = 0;
  double baseline = 0;
};

// Whether a candidate's errors show a regression: over max(accuracy_factor x the baseline's, floor)
// at more than half of two or more sizes. The detail names the worst size; nullopt when none.
[[nodiscard]] std::optional<std::string> accuracy_regression(const std::vector<size_error>& errors, double floor);

// Every size's relative L2 errors against the reference, by candidate and output; judged once the
// small sizes are all verified. Sizes whose baseline failed the reference are not recorded.
class accuracy_ledger {
 public:
  void record(const pair& declared, const std::string& size, const std::map<std::string, raw_outputs>& outputs,
              const std::map<std::string, std::vector<double>, std::less<>>& reference);
  void judge(const pair& declared, std::vector<check_result>& checks) const;
  // The baseline's largest relative L2 error at the small sizes, by output (Note [accuracy at the
  // benchmark size]).
  [[nodiscard]] std::map<std::string, double> baseline_errors() const;
  // Note [error under the rounding]: the baseline's largest relative L1 distance at the small
  // sizes from the reference rounded to the output's dtype, by narrow float output.
  [[nodiscard]] const std::map<std::string, double>& baseline_rounded_errors() const { return rounded_errors_; }

 private:
  std::map<std::string, std::map<std::string, std::vector<size_error>>> errors_;  // candidate, output
  std::map<std::string, double> rounded_errors_;
};

// Note [error under the rounding]: the unit roundoff of an output dtype narrower than fp32 (bf16
// 2^-8, fp16 2^-11, e4m3 2^-4, e5m2 2^-3); 0 for fp32, fp64 and the integers.
[[nodiscard]] double narrow_unit_roundoff(dtype type);

// Note [accuracy at the benchmark size]: a candidate held to the baseline's accuracy whose
// benchmark-size outputs are further from the baseline's than accuracy_factor + 1 times the
// baseline's largest small-size error (never below its dtype's default) fails `accuracy`.
// Note [error under the rounding]: for a narrow float output, also its mean distance from the
// baseline's there (relative L1, which rounding does not mask on average) held to accuracy_factor + 1
// times the baseline's small-size distance from the rounded reference, never below u / 16.
void check_benchmark_accuracy(const pair& declared, const std::string& candidate, const raw_outputs& outputs,
                              const std::map<std::string, std::vector<double>, std::less<>>& baseline_outputs,
                              const std::map<std::string, double>& baseline_errors,
                              const std::map<std::string, double>& baseline_rounded_errors, std::vector<check_result>& checks);

// ---- Note [wide inputs] ----

struct wide_outcome {
  bool passed = true;
  std::string detail;
  // The largest relative L2 error of its outputs, and whether every failure was only that (no
  // NaN, Inf or unwritten element): Note [honest reorders].
  double rel_l2 = 0.0;
  bool only_rel_l2 = true;
  // Not asked: the variant answers from a derived copy the level overflows (Note [a copy's domain]).
  bool waived = false;
};

// One outcome a level of wide inputs (x8, then x128), by variant label.
using wide_outcomes = std::map<std::string, std::vector<wide_outcome>>;

// Whether the pair gets the wide challenge: an input widens, and no input is derived (a derived
// input's scale was chosen for the declared range, Note [derived inputs]).
[[nodiscard]] bool wide_challenge_applies(const pair& declared);

// A verified call at each level of wide inputs, its relative L2 error held to the variant's
// bound (NaN, Inf and unwritten elements fail too); records nothing.
[[nodiscard]] std::vector<wide_outcome> run_wide_challenge(const judge_scope& scope, variant_slot& slot, const workload& work);

// At each level: a candidate that fails what the baseline passes fails `wide-inputs`; where the
// baseline fails too, the level is not the pair's domain, and that is noted for every variant.
void judge_wide_outcomes(const wide_outcomes& by_variant, std::vector<check_result>& checks);

// The levels some candidate was not asked (Note [a copy's domain]): not asked again at the
// benchmark size, where every worker gets the same inputs.
[[nodiscard]] std::vector<bool> levels_waived_for_a_candidate(const wide_outcomes& by_variant);

// The challenge's levels, in order: x8, x128, x1024, repeated values, offset values (Notes [wide
// inputs], [repeated values], [offset inputs]).
inline constexpr input_values wide_levels[] = {input_values::wide, input_values::wider, input_values::widest, input_values::repeated,
                                               input_values::offset};
// Note [honest reorders]: a candidate whose error at a level passes its bound, or stays within
// this many times the baseline's own error there, is right at that level.
inline constexpr double honest_reorder_factor = 4.0;
// Whether `outcome` is right at a level where the baseline's error was `baseline_rel_l2`.
[[nodiscard]] bool within_the_baselines_error(const wide_outcome& outcome, double baseline_rel_l2);
// What a detail says of a candidate passed by that rule.
[[nodiscard]] std::string honest_reorder_note(double baseline_rel_l2);
// Adds one output's comparison to a level's outcome.
void add_comparison(wide_outcome& outcome, const verify::comparison& compared, const std::string& label);
// Whether `level` reshapes some input of the pair.
[[nodiscard]] bool reshapes_some(const pair& declared, input_values level);
// "inputs x8", "inputs on the middles of eighths (repeated values)".
[[nodiscard]] std::string level_label(input_values level);
// The relative L2 distance of one output from `reference` (a fp64 truth, or another variant's
// outputs widened), bounded by nothing.
[[nodiscard]] double relative_l2(const buffer_spec& spec, const raw_outputs& outputs, const std::vector<double>& reference);
// A challenge's output held to the variant's relative L2 bound: every effective tolerance has one
// (Note [declared tolerance ceiling]); integers' is 0, and they keep their declared bounds.
[[nodiscard]] verify::comparison compare_by_l2(const pair& declared, const buffer_spec& spec, const std::string& variant,
                                               const std::vector<unsigned char>& actual, const std::vector<double>& expected);

}  // namespace aisp

#include "runner/copy_domain.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "runner/candidate_accuracy.hpp"
#include "runner/challenge_battery.hpp"
#include "runner/judge_checks.hpp"
#include "runner/variant_slot.hpp"
#include "verify/compare.hpp"
#include "verify/tolerance.hpp"

namespace aisp {

// Note [a copy's domain]
// A derived copy scaled for the drawn range (int8 codes at 127, an fp8 KV cache at 448 times a
// value in [-1, 1)) cannot hold a wide level's values, so that level is not the domain of a
// variant that answers from the copy: ch16:gemv_int8_weights' candidate, ch18:fp8_kv_decode's
// (whose fp8 K moved a 64x sharper softmax by 13% of its output before its copies were calibrated
// to the cache's range, H100 2026-12-06). Such a level was once waived for the whole pair, so a
// pair that declared a scaled copy nothing reads switched the wide levels off for a candidate
// right only on [-1, 1) (cheats:v5_range_shortcut_beside_a_scaled_copy, 2026-12-06). Now the level
// is waived only for a variant that answers from the copy, not from the values the level widens:
// its outputs move past its tolerance when the copy alone is drawn again, and stay (to the bit, or
// within its own run-to-run spread) when every element of the source moves within the copy's
// rounding cell, the copy unchanged. A variant that looks at the copy but answers from the source
// moves there: cheats:v5_range_shortcut_beside_a_checked_copy answers from the copy only when the
// copy disagrees with the source. Every other variant meets the level as any other (the copy then
// holds what the overflow rounds to, which it does not read), and a level waived for some
// candidate is not asked again at the benchmark size or at secret places, where every worker
// gets the same inputs (Note [wide inputs at the benchmark size]).

namespace {

using widened = std::map<std::string, std::vector<double>, std::less<>>;

// Whether `outputs` are further from `drawn` than the variant's own tolerance allows anywhere.
bool moved(const pair& declared, const std::string& variant, const raw_outputs& outputs, const widened& drawn) {
  for (const auto& spec : declared.buffers()) {
    if (spec.role != buffer_role::output) continue;
    const auto own = verify::effective_tolerance(declared, spec.type, variant);
    if (!verify::compare_output(spec.name, spec.type, outputs.at(spec.name), drawn.at(spec.name), own).passed()) return true;
  }
  return false;
}

// The largest relative L2 distance of `outputs` from `drawn`, over the outputs.
double distance(const pair& declared, const raw_outputs& outputs, const widened& drawn) {
  double largest = 0;
  for (const auto& spec : declared.buffers())
    if (spec.role == buffer_role::output) largest = std::max(largest, relative_l2(spec, outputs, drawn.at(spec.name)));
  return largest;
}

}  // namespace

std::vector<std::string> overflowing_derived_inputs(const pair& declared, input_values level) {
  std::vector<std::string> past;
  for (const auto& derived : declared.buffers()) {
    if (derived.derived_from.empty()) continue;
    const auto& source = declared.find_buffer(derived.derived_from);
    if (widens(source, level) && reshaped_magnitude(level, source.type) * std::fabs(derived.derived_scale) > dtype_largest_finite(derived.type))
      past.push_back(derived.name);
  }
  return past;
}

bool copy_readers::answers_from(const std::string& copy) {
  if (const auto found = known_.find(copy); found != known_.end()) return found->second;
  const auto& source = scope_.declared.find_buffer(copy).derived_from;
  const auto seed = challenge_seed(scope_.config, 40);
  const auto timeout = scope_.config.worker_timeout_s;
  const auto outputs_after = [&](const nlohmann::json& change, const char* tag) {
    slot_.worker->request({{"op", "refill"}, {"seed", seed}, {"values", "declared"}}, timeout);
    if (!change.is_null()) slot_.worker->request(change, timeout);
    return verified_call(slot_, scope_.config, scope_.pair_dir + "/" + slot_.label + "." + tag, std::nullopt, secret_seed()).outputs;
  };
  const auto as_drawn = outputs_after(nullptr, "copy-probe");
  const auto drawn = widen_outputs(scope_.declared, as_drawn);
  const nlohmann::json redraw{{"op", "redraw_copy_alone"}, {"buffer", copy}, {"seed", challenge_seed(scope_.config, 41)}};
  bool answers = moved(scope_.declared, slot_.label, outputs_after(redraw, "copy-redrawn"), drawn);
  if (answers) {
    // The source moved within the copy's rounding: a variant that reads only the copies sees the
    // same inputs, and its outputs stay to the bit, or within its own run-to-run spread.
    const auto again = outputs_after(nullptr, "copy-probe-again");
    const nlohmann::json move{{"op", "move_source_within_its_copies"}, {"buffer", source}};
    const auto with_source_moved = outputs_after(move, "source-moved");
    answers = same_bytes(with_source_moved, as_drawn) ||
              (!same_bytes(again, as_drawn) &&
               distance(scope_.declared, with_source_moved, drawn) <= 4.0 * distance(scope_.declared, again, drawn));
  }
  return known_[copy] = answers;
}

}  // namespace aisp
